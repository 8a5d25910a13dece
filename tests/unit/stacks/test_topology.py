"""The topology's layout and icon families (pure Python)."""
from types import SimpleNamespace

from stacks.topology import NODE_W, family, layout


def resource(name, requires=(), type_="OS::Heat::TestResource", state="CREATE_COMPLETE"):
    return SimpleNamespace(pk=name, name=name, type=type_, state=state, requires=list(requires))


def test_families_of_resource_types():
    assert [family(t) for t in (
        "OS::Nova::Server", "OS::Glance::Image", "OS::Neutron::Net", "OS::Neutron::Port",
        "OS::Heat::SoftwareConfig", "OS::Heat::SoftwareDeployment", "OS::Heat::Stack",
        "child.yaml", "OS::Heat::ResourceGroup", "OS::Heat::AutoScalingGroup",
        "OS::Heat::TestResource")] == [
        "server", "image", "network", "port", "config", "deployment", "stack", "stack",
        "group", "group", "other"]


def test_a_chain_of_1000_resources_is_laid_out_without_recursion():
    rows = [resource("r0")] + [resource(f"r{i}", [f"r{i - 1}"]) for i in range(1, 1000)]
    graph = layout(list(reversed(rows)))
    columns = {n.name: n.column for n in graph.nodes}
    assert columns["r0"] == 0 and columns["r999"] == 999
    assert len(graph.edges) == 999
    assert graph.width > 999 * NODE_W


def test_dependencies_by_name_draw_edges_for_resources_not_created_yet():
    rows = [resource("net", state="CREATE_IN_PROGRESS"),
            resource("server", state="INIT_COMPLETE")]
    graph = layout(rows, {"net": [], "server": ["net"]})
    assert len(graph.edges) == 1
    assert {n.name: n.column for n in graph.nodes} == {"net": 0, "server": 1}
