from stacks.models.event import Event
from stacks.models.resource import Resource
from stacks.models.stack import Stack
from stacks.models.template import RawTemplate

try:  # the simulated cloud's tables
    from stacks.cloud.models import *  # noqa: F401,F403
except ImportError:  # pragma: no cover - only while the cloud package is being written
    pass

__all__ = ["Event", "RawTemplate", "Resource", "Stack"]
