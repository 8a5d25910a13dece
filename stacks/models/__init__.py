from stacks.models.consent import StackConsent
from stacks.models.drift import DriftReport
from stacks.models.event import Event
from stacks.models.holds import CloudHold
from stacks.models.locks import LockRecord, LockWindow
from stacks.models.resource import Resource
from stacks.models.snapshot import Snapshot
from stacks.models.stack import Stack
from stacks.models.template import RawTemplate
from stacks.models.wait_conditions import WaitConditionSignal

from stacks.cloud.models import SimFault, SimImage, SimObject, SimServer  # the simulated cloud's tables

__all__ = ["CloudHold", "DriftReport", "Event", "LockRecord", "LockWindow", "RawTemplate", "Resource", "SimFault", "SimImage", "SimObject", "SimServer", "Snapshot", "Stack", "StackConsent", "WaitConditionSignal"]
