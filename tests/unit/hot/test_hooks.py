"""Hook (breakpoint) matching in an environment's resource_registry, as Heat reads it."""
import pytest

from heatweb.exceptions import InvalidBreakPointHook
from stacks.hot.environment import child_environment
from stacks.hot.hooks import HOOK_TYPES, check_hooks, child_resources, \
    hook_description, hook_resources, matches_hook

RESOURCES = {
    "web": {"hooks": ["pre-create", "pre-update"]},
    "db_*": {"hooks": "pre-delete"},
    "*_cache": {"hooks": "post-create"},
    "nested": {"inner": {"hooks": "pre-create"}, "hooks": "pre-update"},
    "grp*": {"0": {"hooks": "pre-create"}},
    "grp1": {"1": {"hooks": "pre-update"}},
}


@pytest.mark.parametrize("name,hook,expected", [
    ("web", "pre-create", True),
    ("web", "pre-update", True),
    ("web", "pre-delete", False),
    ("webby", "pre-create", False),
    ("db_main", "pre-delete", True),
    ("db_main", "pre-create", False),
    ("db", "pre-delete", False),
    ("redis_cache", "post-create", True),
    ("nested", "pre-update", True),
    ("nested", "pre-create", False),
    ("inner", "pre-create", False),  # only inside the nested stack
    ("WEB", "pre-create", False),  # names are case-sensitive
])
def test_matches_hook(name, hook, expected):
    assert matches_hook(RESOURCES, name, hook) is expected


def test_no_registry_matches_nothing():
    assert hook_resources({}) == {}
    assert hook_resources({"resource_registry": {"OS::X": "x.yaml"}}) == {}
    assert not matches_hook(hook_resources({"parameters": {}}), "web", "pre-create")


def test_child_resources_take_the_owner_entry_and_matching_wildcards():
    assert child_resources(RESOURCES, "nested") == {"inner": {"hooks": "pre-create"}}
    assert child_resources(RESOURCES, "grp1") == {"0": {"hooks": "pre-create"},
                                                  "1": {"hooks": "pre-update"}}
    assert child_resources(RESOURCES, "grp7") == {"0": {"hooks": "pre-create"}}
    assert child_resources(RESOURCES, "web") == {}
    child = child_environment({"resource_registry": {"resources": RESOURCES}},
                              resource_name="nested")
    assert matches_hook(hook_resources(child), "inner", "pre-create")
    assert child_environment({"resource_registry": {"resources": RESOURCES}},
                             resource_name="web") == {"resource_registry": {"resources": {}}}


def test_exact_owner_entry_wins_over_a_wildcard():
    resources = {"n*": {"a": {"hooks": "pre-create"}}, "nest": {"a": {"hooks": "pre-update"}}}
    assert child_resources(resources, "nest") == {"a": {"hooks": "pre-update"}}


@pytest.mark.parametrize("registry", [
    {"resources": {"web": {"hooks": "pre-create"}}},
    {"resources": {"web": {"hooks": list(HOOK_TYPES)}}},
    {"resources": {"nested": {"inner": {"hooks": ["pre-delete"]}}}},
    {"OS::Thing": "thing.yaml"},
    None,
])
def test_valid_hooks_pass(registry):
    check_hooks(registry)


@pytest.mark.parametrize("value", ["pre-crate", ["pre-create", "during-create"], 3, {"a": 1}])
def test_invalid_hooks_are_refused_with_heats_text(value):
    registry = {"resources": {"nested": {"inner": {"hooks": value}}}}
    with pytest.raises(InvalidBreakPointHook) as raised:
        check_hooks(registry)
    assert raised.value.message == (
        f'Invalid hook type "{value}" for resource breakpoint, acceptable hook types are: '
        "('pre-create', 'pre-update', 'pre-delete', 'post-create', 'post-update', "
        "'post-delete')")
    assert raised.value.status == 400


def test_event_texts_are_heats():
    assert hook_description("pre-create") == (
        "CREATE", "CREATE paused until Hook pre-create is cleared", "Hook pre-create is cleared")
    assert hook_description("post-delete")[1] == "DELETE paused until Hook post-delete is cleared"
