"""OpenStackClient plugin module (entry point ``openstack.cli.extension``).

heatweb speaks Heat's Orchestration API, so its client is heatclient's,
found in the catalog as the ``orchestration`` service.
"""
from heatclient.osc import plugin as heat_plugin

DEFAULT_API_VERSION = "1"
API_NAME = "heatweb"
API_VERSION_OPTION = "os_heatweb_api_version"
API_VERSIONS = {"1": "heatclient.v1.client.Client"}


def make_client(instance):
    """heatclient's orchestration client (the same one ``openstack stack`` uses)."""
    return heat_plugin.make_client(instance)


def build_option_parser(parser):
    parser.add_argument("--os-heatweb-api-version", metavar="<heatweb-api-version>",
                        default=DEFAULT_API_VERSION,
                        help=f"heatweb API version, default={DEFAULT_API_VERSION}")
    return parser
