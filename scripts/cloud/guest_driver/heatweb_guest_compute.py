"""``heatweb-nova-compute``: nova-compute with the guest driver as ``nova.virt.heatweb_guest``.

Nova imports ``compute_driver`` as ``nova.virt.<value>``; this launcher puts
heatweb_guest_driver there first, so ``compute_driver = heatweb_guest.GuestDriver``
loads it from this package, with nothing copied into Nova's tree.
"""
import sys


def main():
    # nova.cmd.compute first: it picks the concurrency mode (threading or eventlet)
    # before anything else of Nova is imported.
    from nova.cmd import compute

    import heatweb_guest_driver

    sys.modules["nova.virt.heatweb_guest"] = heatweb_guest_driver
    return compute.main()


if __name__ == "__main__":
    sys.exit(main())
