"""The OpenStack cloud: the driver composed of one mixin per service, through openstacksdk.

Chosen with ``HEATWEB_CLOUD=openstack``; the connection comes from
``clouds.yaml`` (``OS_CLOUD``, ``OS_CLIENT_CONFIG_FILE``) or the ``OS_*``
variables, as for OpenStack's own tools. Every call goes through
``stacks.cloud.openstack.calls`` (retries, the cloud's refusals as
``CloudError``); each service's calls are a module of this package
(``compute``, ``image``, ``network``, ``identity``, ``block_storage``,
``object_store``, ``key_manager``, ``alarming``, ``messaging``, ``dns``, ``quotas``), the
generic objects of every kind ``objects``. This class holds what they share: the connection, the
sessions of stack trusts, and the ids looked up by name.

Every object this driver creates carries its ``creation_key`` (Nova metadata
``heatweb_creation_key``, Glance property of that name, Neutron tag
``heatweb-key:<key>``), and a create first looks for it.
"""
import threading
import time
import weakref

import openstack
from django.conf import settings
from keystoneauth1 import exceptions as ksa_exceptions

from heatweb.keystone import session_for_stack, session_for_user
from heatweb.stack_users import user_session
from stacks.cloud.driver import CloudDriver
from stacks.cloud.openstack.alarming import AlarmingCalls
from stacks.cloud.openstack.block_storage import BlockStorageCalls
from stacks.cloud.openstack.calls import call
from stacks.cloud.openstack.compute import ComputeCalls
from stacks.cloud.openstack.dns import DnsCalls
from stacks.cloud.openstack.identity import IdentityCalls
from stacks.cloud.openstack.image import ImageCalls
from stacks.cloud.openstack.key_manager import KeyManagerCalls
from stacks.cloud.openstack.messaging import MessagingCalls
from stacks.cloud.openstack.network import NetworkCalls
from stacks.cloud.openstack.object_store import ObjectStoreCalls
from stacks.cloud.openstack.objects import ObjectCalls
from stacks.cloud.openstack.quotas import QuotaCalls
from stacks.cloud.openstack.workflow import WorkflowCalls

# How long an image's or flavor's id found by name is reused: a batch of
# creates looks each name up once, not once per server.
LOOKUP_SECONDS = 60
# The drivers acting through sessions (stack trusts): gone with their session.
_by_session = weakref.WeakKeyDictionary()
_by_session_lock = threading.Lock()


def _on_session(session):
    return OpenStackCloud(openstack.connection.Connection(
        session=session, region_name=settings.HEATWEB.get("OS_REGION") or None))


class OpenStackCloud(BlockStorageCalls, ObjectStoreCalls, KeyManagerCalls, AlarmingCalls,
                     MessagingCalls, DnsCalls, WorkflowCalls, NetworkCalls, IdentityCalls,
                     QuotaCalls, ComputeCalls, ImageCalls, ObjectCalls, CloudDriver):
    """A real OpenStack cloud (Nova, Glance, Neutron, Keystone, Cinder, Swift, Barbican,
    Octavia, Aodh, Zaqar, Designate, Mistral) through openstacksdk."""

    @property
    def parallel_calls(self):
        """A batch's calls overlap: each is a round trip to a service (settings)."""
        return max(1, int(settings.HEATWEB.get("CLOUD_PARALLEL_CALLS", 10)))

    def __init__(self, connection=None):
        self._connection = connection
        self._lock = threading.Lock()
        self._ids = {}  # (finder, name) -> (id, found at), see _looked_up
        self._lookup_lock = threading.Lock()

    def _looked_up(self, finder, name):
        """The id of the image or flavor ``name`` (a name or an id), looked up at most once a
        ``LOOKUP_SECONDS``."""
        key = (finder.__name__, name)
        # One lookup at a time: a batch's creates, side by side in threads, would each
        # look the name up at once before the first had stored it.
        with self._lookup_lock:
            found = self._ids.get(key)
            if found is None or time.monotonic() - found[1] > LOOKUP_SECONDS:
                found = self._ids[key] = (call(finder, name, ignore_missing=False).id,
                                          time.monotonic())
            return found[0]

    def find_boot_source(self, kind, name_or_id):
        finder = self.conn.image.find_image if kind == "image" else \
            self.conn.compute.find_flavor
        return self._looked_up(finder, name_or_id)

    def for_stack(self, stack):
        """In Keystone mode, this cloud in the owner's project through the stack's trust.

        Outside it (or for a stack made without a trust) the driver's own
        credentials (``OS_CLOUD``) are used. One driver per trust session.
        """
        session = session_for_stack(stack) if stack is not None else None
        if session is None:
            return self
        with _by_session_lock:
            driver = _by_session.get(session)
            if driver is None:
                driver = _by_session[session] = _on_session(session)
            return driver

    def for_user(self, user, project_id):
        """In Keystone mode, this cloud as the caller (their token, in ``project_id``), as
        Heat looks a custom constraint's value up in the request's context: what the
        caller cannot see does not validate, whatever the driver's own credentials see."""
        session = session_for_user(user, project_id)
        return self if session is None else _on_session(session)

    def for_stack_user(self, user_id, password, project_id):
        """This cloud as a stack user, in the stack's user project (Heat's Zaqar client
        ``create_for_tenant(stack_user_project_id, _user_token())``)."""
        return _on_session(user_session(user_id, password, project_id))

    def has_service(self, service_type):
        """Whether the catalog of the driver's own credentials has an endpoint of that type."""
        try:
            return bool(self.conn.session.get_endpoint(service_type=service_type,
                                                       interface="public"))
        except (ksa_exceptions.EndpointNotFound, ksa_exceptions.CatalogException):
            return False

    def has_network_extension(self, alias):
        """Neutron's extension list, asked at most once a ``LOOKUP_SECONDS``."""
        found = self._ids.get(("extensions",))
        if found is None or time.monotonic() - found[1] > LOOKUP_SECONDS:
            aliases = {ext.alias for ext in call(lambda: list(self.conn.network.extensions()))}
            found = self._ids[("extensions",)] = (aliases, time.monotonic())
        return alias in found[0]

    @property
    def conn(self):
        with self._lock:
            if self._connection is None:
                self._connection = openstack.connect(
                    cloud=settings.HEATWEB.get("OS_CLOUD") or None,
                    app_name=settings.HEATWEB.get("CLOUD_APP_NAME") or None)
            return self._connection
