"""The simulated cloud: every service's objects as rows in this service's database.

``SimulatedCloud`` is composed of one mixin per service, as the OpenStack
driver is (``compute``: Nova's servers and kinds; ``image``: Glance;
``network``: Neutron; ``identity``: Keystone; ``quotas``; ``block_storage``:
Cinder; ``object_store``: Swift; ``key_manager``: Barbican;
``load_balancer``: Octavia; ``dns``: Designate; ``messaging``: Zaqar; ``workflow``: Mistral), on ``objects`` (one ``SimObject`` row per
generic object). Here: the catalog it simulates, and faults.
``inject_fault`` makes a named operation fail.
"""
from django.db import transaction
from django.db.models import F

from stacks.cloud.driver import CloudDriver, CloudError
from stacks.cloud.models import SimFault, SimImage, SimObject, SimServer
from stacks.cloud.simulated.block_storage import SimulatedCinder
from stacks.cloud.simulated.compute import SimulatedNova
from stacks.cloud.simulated.dns import SimulatedDesignate
from stacks.cloud.simulated.identity import SimulatedKeystone
from stacks.cloud.simulated.image import SimulatedGlance
from stacks.cloud.simulated.key_manager import SimulatedBarbican
from stacks.cloud.simulated.load_balancer import SimulatedOctavia
from stacks.cloud.simulated.messaging import SimulatedZaqar
from stacks.cloud.simulated.network import SimulatedNeutron
from stacks.cloud.simulated.object_store import SimulatedSwift
from stacks.cloud.simulated.objects import SimulatedObjects
from stacks.cloud.simulated.quotas import SimulatedQuotas
from stacks.cloud.simulated.task_reads import in_task, task_forget, task_read, task_scope
from stacks.cloud.simulated.workflow import SimulatedMistral


class SimulatedCloud(SimulatedNova, SimulatedGlance, SimulatedNeutron, SimulatedKeystone,
                     SimulatedQuotas, SimulatedCinder, SimulatedSwift, SimulatedBarbican,
                     SimulatedOctavia, SimulatedDesignate, SimulatedZaqar, SimulatedMistral,
                     SimulatedObjects,
                     CloudDriver):
    """A cloud held in the database (simulated; no real machines)."""

    # The services it simulates (its catalog, as Heat's availability checks see it).
    SERVICES = ("compute", "image", "network", "identity", "orchestration", "block-storage",
                "volumev3", "object-store", "key-manager", "load-balancer", "alarming", "dns",
                "messaging", "workflowv2")

    def has_service(self, service_type):
        return service_type in self.SERVICES

    def visible_to(self, kind, physical_id, *, project_id):
        """By the object's project, as a real cloud scopes a member's reads (a cloud admin,
        ``project_id`` None, sees every project's)."""
        table = {"server": SimServer, "image": SimImage}.get(kind, SimObject)
        rows = table.objects.filter(pk=physical_id, deleted_at__isnull=True)
        if table is SimObject:
            rows = rows.filter(kind=kind)
        if project_id is not None:
            rows = rows.filter(project_id=project_id)
        return rows.exists()

    # Faults ------------------------------------------------------------------------

    @staticmethod
    def task_reads():
        """One engine task's calls: whether any fault is injected, and a project's
        network for a server given none, are read once for all of them
        (``task_reads``)."""
        return task_scope()

    @staticmethod
    def inject_fault(operation, message="Simulated cloud failure", *, project_id="*", times=1):
        task_forget("faults injected")
        return SimFault.objects.create(operation=operation, message=message,
                                       project_id=project_id, remaining=times)

    @staticmethod
    def _faults_possible():
        """False in an engine task when no fault was injected as it began: none of its
        calls can then fail by one (read once per task)."""
        return not in_task() or task_read("faults injected", SimFault.objects.exists)

    @classmethod
    def _fault(cls, operation, project_id):
        if not cls._faults_possible():
            return  # none injected when the task began: no read per call
        faults = SimFault.objects.filter(operation=operation,
                                         project_id__in=("*", project_id or "*"))
        if not faults.exists():
            return  # the common case: one read, no transaction
        with transaction.atomic():
            fault = faults.order_by("id").first()
            if fault is None:
                return
            if fault.remaining == 1:
                fault.delete()
            elif fault.remaining > 1:
                SimFault.objects.filter(pk=fault.pk).update(remaining=F("remaining") - 1)
        raise CloudError(fault.message)
