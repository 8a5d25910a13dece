"""Which resources an update leaves out of its traversal (stacks.services.settled)."""
from types import SimpleNamespace

from stacks.definitions import build_definition
from stacks.services.settled import settled_resources


def template(**changes):
    resources = {name: {"type": "OS::Heat::None", "properties": {"marker": "a"}}
                 for name in ("alone", "other", "base", "user")}
    resources["user"]["depends_on"] = "base"
    for name, props in changes.items():
        resources[name] = {**resources.get(name, {"type": "OS::Heat::None"}),
                           "properties": props}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def raw(pk, tpl, environment=None):
    return SimpleNamespace(pk=pk, template=tpl, environment=environment or {}, files={})


def rows(**overrides):
    made = {}
    for pk, name in enumerate(("alone", "other", "base", "user"), start=1):
        fields = dict(pk=pk, name=name, type="OS::Heat::None", status="COMPLETE",
                      action="CREATE", engine_id=None, replaced_by_id=None, template_id=1,
                      requires=[3] if name == "user" else [])
        made[name] = SimpleNamespace(**{**fields, **overrides.get(name, {})})
    return made


def settled(new, *, current=None, old=None, environment=None, old_environment=None):
    current = current or rows()
    definition = build_definition(new, environment={})
    new_requires = {res.pk: [3] if name == "user" else [] for name, res in current.items()
                    if name in new["resources"]}
    return {name for name, res in current.items() if res.pk in settled_resources(
        current=current, definition=definition, raw=raw(2, new, environment),
        old_raw=raw(1, old or template(), environment if old_environment is None
                    else old_environment), new_requires=new_requires,
        existing_requires={r.pk: r.requires for r in current.values()})}


def test_a_lone_resource_defined_as_before_gets_no_node():
    assert settled(template(other={"marker": "b"})) == {"alone"}


def test_resources_in_a_dependency_get_their_nodes():
    assert not {"base", "user"} & settled(template())


def test_a_failed_held_or_older_resource_gets_its_node():
    assert settled(template(), current=rows(alone={"status": "FAILED"})) == {"other"}
    assert settled(template(), current=rows(alone={"engine_id": 7})) == {"other"}
    assert settled(template(), current=rows(alone={"template_id": None})) == {"other"}


def test_a_changed_environment_or_parameters_section_updates_every_node():
    assert settled(template(), environment={"parameters": {"x": 1}},
                   old_environment={}) == set()
    with_parameter = {**template(), "parameters": {"x": {"type": "string", "default": "a"}}}
    assert settled(with_parameter) == set()


def test_an_update_hook_pauses_an_unchanged_resource_so_it_keeps_its_node():
    hooks = {"resource_registry": {"resources": {"alone": {"hooks": "pre-update"}}}}
    assert settled(template(), environment=hooks) == {"other"}
