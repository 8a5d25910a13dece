"""Boot-to-signal seconds of N guests at once (``scripts/cloud/guest-bench``): busybox
guests by default, ``--image heatweb-debian-guest`` for the full Debian guest (its
user_data run by cloud-init).

Runs in the cloud's venv. A listener on 127.0.0.1 (its port appended to
``BASE/guests/host-ports``, so the guest driver forwards it) records when each
guest's user_data POSTs; the servers are created through Nova's API as the demo
member, as heatweb would.
"""
import argparse
import base64
import os
import statistics
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import openstack


class Sink:
    """A listener on 127.0.0.1 that notes when each ``POST /<name>`` arrived."""

    def __init__(self):
        arrived = self.arrived = {}

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                arrived.setdefault(self.path.strip("/"), time.monotonic())
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def user_data(port, name):
    script = (f"#!/bin/sh\ncurl -s -X POST --retry 5 --retry-connrefused "
              f"http://127.0.0.1:{port}/{name}\n")
    return base64.b64encode(script.encode()).decode()


def qemu_left(ids):
    left = 0
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"qemu-system-x86_64") and b"-name" in argv \
                and argv[argv.index(b"-name") + 1].decode() in ids:
            left += 1
    return left


def run(conn, sink, net, count, timeout, image_name):
    image = conn.image.find_image(image_name)
    flavor = conn.compute.find_flavor("m1.tiny")
    tag = uuid.uuid4().hex[:6]
    names = [f"bench{tag}-{n}" for n in range(count)]
    load_before = os.getloadavg()
    started = time.monotonic()
    servers = [conn.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                          networks=[{"uuid": net.id}],
                                          user_data=user_data(sink.port, name))
               for name in names]
    deadline = started + timeout
    while time.monotonic() < deadline and not all(n in sink.arrived for n in names):
        time.sleep(0.2)
    load_after = os.getloadavg()
    got = sorted(sink.arrived[n] - started for n in names if n in sink.arrived)
    ids = {s.id for s in servers}
    for server in servers:
        conn.compute.delete_server(server.id)
    while qemu_left(ids) or any(conn.compute.find_server(i) for i in ids):
        time.sleep(1)
    if len(got) < count:
        return f"{count:3d} {image_name}: only {len(got)} signalled within {timeout} s"
    return (f"{count:3d} {image_name}: first {got[0]:5.1f} s,"
            f" median {statistics.median(got):5.1f} s, last {got[-1]:5.1f} s;"
            f" load average {load_before[0]:.1f} before,"
            f" {load_after[0]:.1f} at the last signal")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cloud", required=True)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--image", default="heatweb-guest")
    parser.add_argument("counts", nargs="+", type=int)
    args = parser.parse_args()
    os.environ["OS_CLIENT_CONFIG_FILE"] = f"{args.cloud}/clouds.yaml"
    conn = openstack.connect(cloud="heatweb-demo-member")
    sink = Sink()
    with open(f"{args.cloud}/guests/host-ports", "a") as f:
        f.write(f"{sink.port}\n")
    net = conn.network.create_network(name=f"bench-{uuid.uuid4().hex[:6]}")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.48.0.0/24")
    try:
        for count in args.counts:
            print(run(conn, sink, net, count, args.timeout, args.image), flush=True)
    finally:
        conn.network.delete_network(net.id)


if __name__ == "__main__":
    main()
