"""heatweb's OpenStackClient plugin: ``openstack stack lock`` / ``unlock``."""
