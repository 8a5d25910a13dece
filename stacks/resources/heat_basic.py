"""Heat's own utility resource types: None, Value, RandomString, TestResource."""
import random
import secrets
import string

from heatweb.exceptions import StackValidationFailed

from stacks.resources.base import ResourceFailure, ResourcePlugin, wait_cookie
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range


@register
class NoneResource(ResourcePlugin):
    """A resource that does nothing: any properties are accepted and updated in place.

    Useful as a placeholder, e.g. to disable a resource through the
    environment's ``resource_registry``.
    """

    type_name = "OS::Heat::None"
    allow_unknown_properties = True


@register
class ValueResource(ResourcePlugin):
    """Holds a value, typed by ``type``, exposed as the ``value`` attribute."""

    type_name = "OS::Heat::Value"
    properties_schema = {
        "value": Property("Any", description="The value to hold.", required=True,
                          update_allowed=True),
        "type": Property("String", description="The type of the value.",
                         update_allowed=True,
                         constraints=(AllowedValues(("string", "number", "comma_delimited_list",
                                                     "json", "boolean")),)),
    }
    attributes_schema = {"value": Attribute("The value, typed as ``type`` says.")}

    def get_attribute(self, name, *path):
        if name != "value":
            return None
        value = self.properties.get("value")
        kind = self.properties.get("type")
        if kind == "number" and isinstance(value, str):
            value = float(value) if "." in value else int(value)
        elif kind == "comma_delimited_list" and isinstance(value, str):
            value = [v.strip() for v in value.split(",")]
        elif kind == "boolean" and isinstance(value, str):
            value = value.lower() in ("true", "1", "yes", "on")
        return value


_CLASSES = {"lettersdigits": string.ascii_letters + string.digits,
            "letters": string.ascii_letters, "lowercase": string.ascii_lowercase,
            "uppercase": string.ascii_uppercase, "digits": string.digits,
            "hexdigits": string.digits + "ABCDEF", "octdigits": string.octdigits}


@register
class RandomStringResource(ResourcePlugin):
    """A random string, generated once at create; its reference id and ``value`` is the string.

    Changing ``length``, ``salt``, ``sequence`` or ``character_classes``
    replaces it with a new string.
    """

    type_name = "OS::Heat::RandomString"
    properties_schema = {
        "length": Property("Integer", description="Length of the string.", default=32,
                           constraints=(Range(1, 512),)),
        "sequence": Property("String", description="Characters to choose from.",
                             constraints=(AllowedValues(tuple(_CLASSES)),)),
        "character_classes": Property("List", description="Classes of characters."),
        "character_sequences": Property("List", description="Sequences of characters."),
        "salt": Property("String", description="Change it to get a new string."),
    }
    attributes_schema = {"value": Attribute("The random string.")}

    @staticmethod
    def _pools(props):
        """(characters, minimum) of each class and sequence, as Heat's password generator
        takes them; ``sequence`` (deprecated) is a class with a minimum of 1."""
        classes = list(props.get("character_classes") or [])
        if props.get("sequence"):
            classes.append({"class": props["sequence"], "min": 1})
        sequences = props.get("character_sequences") or []
        if not classes and not sequences:
            classes = [{"class": "lettersdigits"}]
        pools = [(_CLASSES[c.get("class") or "lettersdigits"], int(c.get("min", 1)))
                 for c in classes]
        return [(s["sequence"], int(s.get("min", 1))) for s in sequences] + pools

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        where = f"Property error: resources.{resource_name}.properties"
        for key, item_key, allowed in (("character_classes", "class", _CLASSES),
                                       ("character_sequences", "sequence", None)):
            for item in props.get(key) or []:
                if not isinstance(item, dict) or set(item) - {item_key, "min"} or \
                        (item_key == "sequence" and not isinstance(item.get(item_key), str)):
                    raise StackValidationFailed(f"{where}.{key}: each entry is a map of "
                                                f"{item_key} and min")
                if allowed is not None and item.get(item_key, "lettersdigits") not in allowed:
                    raise StackValidationFailed(
                        f'{where}.{key}.{item_key}: "{item[item_key]}" is not an allowed '
                        f"value {sorted(allowed)}")
                if not isinstance(item.get("min", 1), int) or not 1 <= item.get("min", 1) <= 512:
                    raise StackValidationFailed(f"{where}.{key}.min: must be 1 to 512")
        length = props.get("length", 32)
        if isinstance(length, int) and \
                sum(minimum for _, minimum in cls._pools(props)) > length:
            raise StackValidationFailed("Length property cannot be smaller than combined "
                                        "character class and character sequence minimums")
        return props

    def handle_create(self):
        pools = self._pools(self.properties)
        length = self.properties.get("length", 32)
        chosen = [secrets.choice(chars) for chars, minimum in pools for _ in range(minimum)]
        every = "".join(sorted({c for chars, _ in pools for c in chars}))
        chosen += [secrets.choice(every) for _ in range(max(0, length - len(chosen)))]
        self.data["value"] = "".join(random.SystemRandom().sample(chosen, length))
        self.physical_id = self.data["value"]

    def get_attribute(self, name, *path):
        return self.data.get("value") if name == "value" else None


@register
class TestResource(ResourcePlugin):
    """A resource for testing the engine: waits, fails or forces replacement on request.

    ``wait_secs`` delays every action's completion (``action_wait_secs``
    per action overrides it) without blocking a worker; ``fail`` fails the
    action; ``update_replace`` makes any change a replacement. ``attr_wait_secs``
    (Rally's templates set it) is Heat's delay of each read of ``output``: Heat
    sleeps in the engine there; heatweb accepts it and never holds a worker or a
    request on an attribute, so the value is answered at once.
    """

    type_name = "OS::Heat::TestResource"
    properties_schema = {
        "value": Property("String", description="The value of the output attribute.",
                          default="test_string", update_allowed=True),
        "update_replace": Property("Boolean", description="Replace instead of updating.",
                                   default=False, update_allowed=True),
        "fail": Property("Boolean", description="Fail every action.", default=False,
                         update_allowed=True),
        "wait_secs": Property("Number", description="Seconds every action takes.", default=0,
                              update_allowed=True),
        "action_wait_secs": Property("Map", description="Seconds per action "
                                     "(create, update, delete, suspend, resume, check).",
                                     update_allowed=True),
        "client_name": Property("String", description="Ignored."),
        "entity_name": Property("String", description="Ignored."),
        "constraint_prop_secs": Property("Number", description="Ignored.", default=0),
        "attr_wait_secs": Property("Number", description="Number value for timeout during "
                                   "resolving output value (accepted; not waited).",
                                   default=0, update_allowed=True),
    }
    attributes_schema = {"output": Attribute("The ``value`` property.")}

    @classmethod
    def needs_replacement_for(cls, old_properties, new_properties, changed):
        return bool(new_properties.get("update_replace")) or cls.needs_replacement(changed)

    def _start(self, action):
        if self.properties.get("fail"):
            raise ResourceFailure(f"Test Resource failed {self.name}")
        seconds = (self.properties.get("action_wait_secs") or {}).get(action)
        return wait_cookie(seconds if seconds is not None else self.properties.get("wait_secs"))

    def handle_create(self):
        self.physical_id = self.physical_id or secrets.token_hex(8)
        return self._start("create")

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        return self._start("update")

    def handle_delete(self):
        seconds = (self.properties.get("action_wait_secs") or {}).get("delete")
        return wait_cookie(seconds or 0)

    def handle_suspend(self):
        return self._start("suspend")

    def handle_resume(self):
        return self._start("resume")

    def handle_check(self):
        return self._start("check")

    def get_attribute(self, name, *path):
        return self.properties.get("value") if name == "output" else None
