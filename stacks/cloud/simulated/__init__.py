"""The simulated cloud, a package shaped as the OpenStack driver is: ``objects`` at the
bottom (one ``SimObject`` row per generic object), one module per service on it, and
``cloud.SimulatedCloud`` composing them on top. Nothing imports back up."""
from stacks.cloud.simulated.cloud import SimulatedCloud

__all__ = ["SimulatedCloud"]
