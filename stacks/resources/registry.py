"""The resource type registry: type name → plugin class."""
from heatweb.exceptions import ResourceTypeNotFound
from stacks.resources.base import ResourcePlugin

_PLUGINS = {}


def register(cls):
    """Class decorator: make ``cls`` the plugin of ``cls.type_name``."""
    _PLUGINS[cls.type_name] = cls
    return cls


def get_plugin(type_name):
    try:
        return _PLUGINS[type_name]
    except KeyError:
        raise ResourceTypeNotFound(type_name=type_name) from None


def has_type(type_name):
    return type_name in _PLUGINS


def list_types():
    return sorted(_PLUGINS)


def plugin_or_base(type_name):
    """The plugin of ``type_name``, or the base plugin for a type not registered
    (a template resource's file name, an unknown or missing name)."""
    return _PLUGINS.get(type_name) or ResourcePlugin
