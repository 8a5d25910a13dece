"""Heat's in-place update of a server's ``networks``: which ports stay, go and come."""
from stacks.resources.server_networks import entry_ids, plan

NET, SUB_A, SUB_B = "net-id", "subnet-a", "subnet-b"
P0 = {"port": "p0", "network": NET, "subnets": [SUB_A], "fixed_ips": ["11.11.11.3"]}
P1 = {"port": "p1", "network": NET, "subnets": [SUB_A], "fixed_ips": ["11.11.11.33"]}
P2 = {"port": "p2", "network": NET, "subnets": [SUB_A], "fixed_ips": ["11.11.11.4"]}
NAMES = {("network", "the_net"): NET, ("subnet", "a"): SUB_A, ("subnet", "b"): SUB_B,
         ("port", "p0"): "p0"}


def ids(*entries):
    return [entry_ids(e, lambda kind, name: NAMES.get((kind, name), name)) for e in entries]


def test_an_entry_that_pins_what_the_server_has_changes_nothing():
    old = ids({"network": "the_net"})
    for new in ({"network": "the_net", "fixed_ip": "11.11.11.3"}, {"subnet": "a"},
                {"port": "p0"}, {"network": "the_net", "subnet": "a"}):
        assert plan(old, ids(new), [P0]) == ([], []), new


def test_another_subnet_detaches_the_old_port_and_attaches_one_there():
    detach, attach = plan(ids({"subnet": "a"}), ids({"subnet": "b"}), [P0])
    assert detach == ["p0"]
    assert attach == [{"port": None, "network": None, "subnet": SUB_B, "fixed_ip": None}]


def test_reordered_entries_keep_every_port():
    old = ids({"network": "the_net"}, {"network": "the_net", "fixed_ip": "11.11.11.33"},
              {"subnet": "a"})
    new = ids({"subnet": "a"}, {"network": "the_net"}, {"network": "the_net", "subnet": "a"})
    assert plan(old, new, [P0, P1, P2]) == ([], [])


def test_a_removed_entry_is_detached_and_a_port_made_elsewhere_is_left_alone():
    other = {"port": "x", "network": "other", "subnets": [], "fixed_ips": []}
    old = ids({"network": "the_net"}, {"port": "p1"})
    assert plan(old, ids({"port": "p1"}), [P0, P1, other]) == (["p0"], [])
