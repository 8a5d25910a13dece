from stacks.models.event import Event
from stacks.models.locks import LockRecord, LockWindow
from stacks.models.resource import Resource
from stacks.models.stack import Stack
from stacks.models.template import RawTemplate
from stacks.models.wait_conditions import WaitConditionSignal

from stacks.cloud.models import SimFault, SimImage, SimNetworkObject, SimServer  # the simulated cloud's tables

__all__ = ["Event", "LockRecord", "LockWindow", "RawTemplate", "Resource", "SimFault", "SimImage", "SimNetworkObject", "SimServer", "Stack", "WaitConditionSignal"]
