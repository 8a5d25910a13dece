"""``bench_direct``'s shapes: a heatweb template, and the same objects made directly.

A shape is a network with a subnet and tiers of servers. A tier has N
servers, each on a port of its own (``ports``) or on the network (Nova makes
the port), and may have a security group with one rule (on its ports). The
template of a shape keeps every server's ``metadata`` on the parameter
``marker``: the update changes it from "1" to "2", which Nova changes in
place.

``Direct`` does each phase with openstacksdk alone, as fast as a script can:
every independent call at once (threads), each port's server started as
soon as its port is made, waits read by one server list per poll.
"""
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import yaml

CIDR = "10.77.0.0/22"  # room for 100 servers and their ports


class _Dumper(yaml.SafeDumper):
    """Each repeated value written out again: heatweb, as Heat, refuses many YAML aliases."""

    def ignore_aliases(self, data):
        return True


@dataclass(frozen=True)
class Tier:
    name: str
    count: int
    ports: bool = True
    security_group: bool = False


@dataclass(frozen=True)
class Shape:
    name: str
    tiers: tuple
    layout: str = "flat"  # flat | nested (a template resource per tier) | group

    @property
    def servers(self):
        return sum(tier.count for tier in self.tiers)


SHAPES = {
    "servers20": Shape("servers20", (Tier("s", 20),)),
    "servers100": Shape("servers100", (Tier("s", 100),)),
    "tiers": Shape("tiers", (Tier("web", 4, security_group=True),
                             Tier("app", 4, security_group=True),
                             Tier("db", 2, security_group=True)), layout="nested"),
    "group20": Shape("group20", (Tier("g", 20, ports=False),), layout="group"),
}

SG_RULE = {"direction": "ingress", "protocol": "tcp", "port_range_min": 22,
           "port_range_max": 22, "remote_ip_prefix": "0.0.0.0/0"}


def _server(image, flavor, network):
    return {"type": "OS::Nova::Server", "properties": {
        "image": image, "flavor": flavor, "networks": [network],
        "metadata": {"marker": {"get_param": "marker"}}}}


def _tier_resources(tier, *, image, flavor, net, subnet):
    """A tier's resources (``net``/``subnet``: the functions naming them where used)."""
    out = {}
    if tier.security_group:
        out[f"{tier.name}_sg"] = {"type": "OS::Neutron::SecurityGroup",
                                  "properties": {"rules": [SG_RULE]}}
    for i in range(tier.count):
        if tier.ports:
            port = {"network": net, "fixed_ips": [{"subnet": subnet}]}
            if tier.security_group:
                port["security_groups"] = [{"get_resource": f"{tier.name}_sg"}]
            out[f"{tier.name}_port{i}"] = {"type": "OS::Neutron::Port", "properties": port}
            network = {"port": {"get_resource": f"{tier.name}_port{i}"}}
        else:
            network = {"network": net}
        out[f"{tier.name}{i}"] = _server(image, flavor, network)
    return out


def _network():
    return {"net": {"type": "OS::Neutron::Net"},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": CIDR, "ip_version": 4}}}


MARKER = {"marker": {"type": "string", "default": "1"}}


def template_and_files(shape, *, image, flavor):
    """The shape's template (YAML text) and its ``files``."""
    files = {}
    resources = _network()
    if shape.layout == "flat":
        for tier in shape.tiers:
            resources.update(_tier_resources(
                tier, image=image, flavor=flavor, net={"get_resource": "net"},
                subnet={"get_resource": "subnet"}))
    elif shape.layout == "nested":
        for tier in shape.tiers:
            child = {"heat_template_version": "2018-08-31",
                     "parameters": {**MARKER, "net": {"type": "string"},
                                    "subnet": {"type": "string"}},
                     "resources": _tier_resources(
                         tier, image=image, flavor=flavor, net={"get_param": "net"},
                         subnet={"get_param": "subnet"})}
            files[f"{tier.name}.yaml"] = yaml.dump(child, Dumper=_Dumper, sort_keys=False)
            resources[tier.name] = {"type": f"{tier.name}.yaml", "properties": {
                "marker": {"get_param": "marker"}, "net": {"get_resource": "net"},
                "subnet": {"get_resource": "subnet"}}}
    else:  # group: one ResourceGroup per tier, servers on the network
        for tier in shape.tiers:
            server = _server(image, flavor, {"network": {"get_resource": "net"}})
            resources[tier.name] = {"type": "OS::Heat::ResourceGroup", "depends_on": ["subnet"],
                                    "properties": {"count": tier.count,
                                                   "resource_def": server}}
    template = {"heat_template_version": "2018-08-31", "parameters": MARKER,
                "resources": resources}
    return yaml.dump(template, Dumper=_Dumper, sort_keys=False), files


class Direct:
    """One shape's objects, made and changed with openstacksdk alone (``conn``)."""

    def __init__(self, conn, shape, *, image, flavor, threads=10, poll=0.5):
        self.conn, self.shape = conn, shape
        self.image, self.flavor = image, flavor
        self.pool = ThreadPoolExecutor(max_workers=threads)
        self.poll = poll
        self.net = self.subnet = None
        self.groups = {}  # tier name -> security group id
        self.ports = []
        self.servers = []

    def _all(self, function, items):
        futures = [self.pool.submit(function, item) for item in items]
        try:
            return [future.result() for future in futures]
        except BaseException:
            # Nothing more is started, and what runs ends before anyone cleans up after.
            for future in futures:
                future.cancel()
            self.pool.shutdown(wait=True)
            raise

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)

    def create(self):
        image = self.conn.image.find_image(self.image, ignore_missing=False).id
        flavor = self.conn.compute.find_flavor(self.flavor, ignore_missing=False).id
        self.net = self.conn.network.create_network(name=f"{self.shape.name}-net").id
        self.subnet = self.conn.network.create_subnet(network_id=self.net, cidr=CIDR,
                                                      ip_version=4).id
        with_group = [t for t in self.shape.tiers if t.security_group]
        self.groups = dict(zip([t.name for t in with_group], self._all(
            self._security_group, with_group)))
        jobs = [(tier, i) for tier in self.shape.tiers for i in range(tier.count)]
        made = self._all(lambda job: self._port_and_server(*job, image=image, flavor=flavor),
                         jobs)
        self.ports = [port for port, _server in made if port]
        self.servers = [server for _port, server in made]
        self._wait("ACTIVE")

    def _security_group(self, tier):
        group = self.conn.network.create_security_group(name=f"{tier.name}-sg")
        self.conn.network.create_security_group_rule(security_group_id=group.id,
                                                     ethertype="IPv4", **SG_RULE)
        return group.id

    def _port_and_server(self, tier, i, *, image, flavor):
        port = None
        if tier.ports:
            fields = {"network_id": self.net, "fixed_ips": [{"subnet_id": self.subnet}]}
            if tier.security_group:
                fields["security_group_ids"] = [self.groups[tier.name]]
            port = self.conn.network.create_port(**fields).id
            network = {"port": port}
        else:
            network = {"uuid": self.net}
        server = self.conn.compute.create_server(
            name=f"{tier.name}{i}", image_id=image, flavor_id=flavor, networks=[network],
            metadata={"marker": "1"}).id
        return port, server

    def update(self):
        self._all(lambda server: self.conn.compute.set_server_metadata(server, marker="2"),
                  self.servers)

    def suspend(self):
        self._all(self.conn.compute.suspend_server, self.servers)
        self._wait("SUSPENDED")

    def resume(self):
        self._all(self.conn.compute.resume_server, self.servers)
        self._wait("ACTIVE")

    def delete(self):
        self._all(self.conn.compute.delete_server, self.servers)
        self._wait(None)
        self._all(self.conn.network.delete_port, self.ports)
        self._all(self.conn.network.delete_security_group, list(self.groups.values()))
        self.conn.network.delete_subnet(self.subnet)
        self.conn.network.delete_network(self.net)

    def _wait(self, status, timeout=900):
        """Until every server shows ``status`` (None: until none is listed), one list a poll."""
        wanted = set(self.servers)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            listed = {s.id: s.status for s in self.conn.compute.servers(details=True)
                      if s.id in wanted}
            if status is None and not listed:
                return
            failed = [i for i, st in listed.items() if st == "ERROR"]
            if failed:
                raise RuntimeError(f"{len(failed)} servers went to ERROR")
            if status is not None and len(listed) == len(wanted) and \
                    all(st == status for st in listed.values()):
                return
            time.sleep(self.poll)
        raise RuntimeError(f"servers not {status or 'deleted'} after {timeout} s")
