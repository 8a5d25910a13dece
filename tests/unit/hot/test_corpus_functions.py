"""Functions the template corpus showed were not as Heat's: make_url's escaping and parts,
resource_facade (an unknown value outside a child stack, the parent's facade inside)."""
import pytest

from heatweb.exceptions import StackValidationFailed
from stacks.hot import Template
from stacks.hot.values import UNRESOLVED


def resolve(snippet, version="2018-08-31", facade=None):
    tmpl = Template.parse({"heat_template_version": version})
    params = tmpl.parameters({})
    params.facade = facade
    return tmpl.resolve(snippet, params, None)


@pytest.mark.parametrize(("parts", "url"), [
    ({"scheme": "https", "host": "example.com", "port": 8080, "path": "/v1/items",
      "query": {"limit": "10", "marker": "a b"}, "fragment": "top"},
     "https://example.com:8080/v1/items?limit=10&marker=a+b#top"),
    ({"scheme": "http", "host": "::1", "username": "u s", "password": "p@ss"},
     "http://u%20s:p%40ss@[::1]"),
    ({"scheme": "http", "host": "[fe80::1]", "port": "80", "path": "/a b"},
     "http://[fe80::1]:80/a%20b"),
    ({"host": "h", "query": {"path": "/x/y"}}, "//h?path=/x/y"),
])
def test_make_url_escapes_each_part_as_heat(parts, url):
    assert resolve({"make_url": parts}) == url


@pytest.mark.parametrize(("parts", "message"), [
    ({"host": "h", "colour": "red"}, 'Invalid arguments to "make_url": colour'),
    ({"host": "h", "port": 70000}, "Invalid URL port 70000"),
    ({"host": "h", "port": "http"}, 'Invalid URL port "http"'),
    ({"host": "h", "query": ["a"]}, 'The "query" argument to "make_url" must be a map'),
    ({"scheme": "http:", "host": "h"}, "should not contain ':'"),
])
def test_make_url_refuses_what_heat_refuses(parts, message):
    with pytest.raises(StackValidationFailed, match=message):
        resolve({"make_url": parts})


def test_resource_facade_is_the_parent_resource_or_unknown():
    facade = {"metadata": {"role": "cache"}, "deletion_policy": "Retain", "update_policy": {}}
    assert resolve({"resource_facade": "metadata"}, facade=facade) == {"role": "cache"}
    assert resolve({"resource_facade": "deletion_policy"}, facade=facade) == "Retain"
    assert resolve({"resource_facade": "metadata"}) is UNRESOLVED
    with pytest.raises(StackValidationFailed, match="should be one of: metadata"):
        resolve({"resource_facade": "properties"}, facade=facade)


def test_str_replace_writes_values_as_heat():
    snippet = {"str_replace": {"template": "a=A b=B c=C n=N", "params": {
        "A": {"z": 1, "y": [2]}, "B": True, "C": None, "N": 3}}}
    assert resolve(snippet) == 'a={"y": [2], "z": 1} b=True c= n=3'
