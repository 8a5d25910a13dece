"""The resource type registry: type name → plugin class."""
from heatweb.exceptions import ResourceTypeNotFound
from stacks.resources.base import ResourcePlugin

_PLUGINS = {}
# Types known but not available here: type name -> callable raising ResourceTypeUnavailable
_UNAVAILABLE = {}


def register(cls):
    """Class decorator: make ``cls`` the plugin of ``cls.type_name``."""
    _PLUGINS[cls.type_name] = cls
    return cls


def register_unavailable(type_name, refuse):
    """Make ``type_name`` known but unavailable: ``refuse()`` raises Heat's error for it."""
    _UNAVAILABLE[type_name] = refuse


def get_plugin(type_name):
    try:
        return _PLUGINS[type_name]
    except KeyError:
        if type_name in _UNAVAILABLE:
            _UNAVAILABLE[type_name]()
        raise ResourceTypeNotFound(type_name=type_name) from None


def is_unavailable(type_name):
    return type_name in _UNAVAILABLE


def has_type(type_name):
    return type_name in _PLUGINS


def list_types():
    """The types users may see (not Heat's hidden, retired ones)."""
    return sorted(name for name, cls in _PLUGINS.items() if not cls.hidden)


def plugin_or_base(type_name):
    """The plugin of ``type_name``, or the base plugin for a type not registered
    (a template resource's file name, an unknown or missing name)."""
    return _PLUGINS.get(type_name) or ResourcePlugin
