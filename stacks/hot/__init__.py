"""HOT templates: parsing, parameters, intrinsic functions, dependencies.

Pure Python: nothing here imports Django, so it is fast to test.
"""
from stacks.hot.loader import Limits, load_text
from stacks.hot.parameters import Parameters, ParamSchema
from stacks.hot.template import ResourceDefinition, Template
from stacks.hot.values import UNRESOLVED
from stacks.hot.versions import SUPPORTED_VERSIONS
from stacks.hot.yaql_expressions import YaqlLimits

__all__ = ["Limits", "ParamSchema", "Parameters", "ResourceDefinition", "SUPPORTED_VERSIONS",
           "Template", "UNRESOLVED", "YaqlLimits", "load_text"]
