"""The OpenStack driver, a package: ``calls`` at the bottom (retries, the cloud's refusals
as ``CloudError``), ``objects`` (the generic kinds) and one module per service on it, and
``cloud.OpenStackCloud`` composing them on top. Nothing imports back up."""
from stacks.cloud.openstack.cloud import OpenStackCloud

__all__ = ["OpenStackCloud"]
