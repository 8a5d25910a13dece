"""Imported first by heat-yardstick's heat-api and heat-engine launchers: each HTTP
request the process sends names the yardstick first in its User-Agent
(``heat-yardstick python-neutronclient``), so a benchmark counts Heat's requests
in the cloud's access logs by User-Agent, as it counts the other clients'.

Heat's own clients send ``python-novaclient``, ``python-neutronclient``,
``python-glanceclient``, ``python-keystoneclient``, ``heat-engine keystoneauth1/...``
and ``openstacksdk/...`` (app_name ``heat``), and Nova sends ``python-neutronclient``
to Neutron too: without the tag, Heat's Neutron requests could not be told from
Nova's. Only the header changes; the requests are Heat's own.
"""
import os

from requests.adapters import HTTPAdapter

AGENT = os.environ.get("HEAT_YARDSTICK_AGENT", "heat-yardstick")
_send = HTTPAdapter.send


def send(self, request, *args, **kwargs):
    request.headers["User-Agent"] = f"{AGENT} {request.headers.get('User-Agent', '')}".rstrip()
    return _send(self, request, *args, **kwargs)


HTTPAdapter.send = send
