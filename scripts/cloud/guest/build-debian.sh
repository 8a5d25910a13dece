#!/usr/bin/env bash
# scripts/cloud/guest/build-debian.sh BASE: the full Debian guest of the one-machine
# cloud (build-image.sh BASE debian runs this; scripts/cloud-up calls it), a qcow2 of
# Debian bookworm made with debootstrap from Debian's packages: systemd, cloud-init
# (ConfigDrive datasource only), python3, curl, socat, and heatweb's own in-instance
# agent (softwareconfig/agent) with a systemd unit starting it from the config drive
# (./agent-start, as in the agent guest). The guest boots with the busybox guest's
# kernel and initramfs, whose init switches to this disk's systemd (guest.root=/dev/vda).
#
# Two cached steps under BASE/guests:
#   debian-rootfs-KEY1/   the debootstrap tree (KEY1: suite, mirror, package list, this
#                         script's debootstrap line); ~2 min, done once
#   debian-image-KEY/     root.qcow2 + MANIFEST (KEY: KEY1 plus the files added to the
#                         tree: agent, agent-start, the units, cloud-init's settings);
#                         a copy of the tree, the files, mkfs.ext4 -d, qemu-img convert
# BASE/guests/debian-image points at the current one. Prints the image directory.
set -euo pipefail
BASE=$(realpath -m "$1")
HERE="$(cd "$(dirname "$0")" && pwd)"
AGENT_SRC=$(realpath "$HERE/../../../softwareconfig/agent")
G=$BASE/guests
mkdir -p "$G"
say() { echo "guest image (debian): $*" >&2; }

SUITE=bookworm
MIRROR=${HEATWEB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# python3-cffi-backend: debootstrap does not resolve virtual packages (cryptography's
# python3-cffi-backend-api-min), and cloud-init needs a configured cryptography.
# heat-cfntools (cfn-init) and puppet: what the cfn-init and puppet hooks of heatweb's
# agent run, as Heat's documented image has them for heat-agents' hooks.
# openssh-server: Heat's scenario tests log in as the image's user (an
# AWS::EC2::Instance's ec2-user) with the server's key pair, through the floating IP's
# forward the guest driver adds (docs/guests.md).
INCLUDE=systemd-sysv,udev,python3,python3-cffi-backend,cloud-init,curl,ca-certificates,socat,iproute2,netbase,isc-dhcp-client,heat-cfntools,puppet,openssh-server
DISK_MB=1200

for pair in debootstrap:debootstrap mkfs.ext4:e2fsprogs qemu-img:qemu-utils; do
    command -v "${pair%%:*}" >/dev/null && continue
    say "installing ${pair#*:}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
        --no-install-recommends "${pair#*:}" \
        >>"$G/apt.log" 2>&1 || { tail -20 "$G/apt.log" >&2; exit 1; }
done

key1=$(echo "debootstrap --variant=minbase --include=$INCLUDE $SUITE $MIRROR v1" \
       | sha256sum | cut -c1-12)
ROOTFS=$G/debian-rootfs-$key1
if [ ! -f "$ROOTFS/.complete" ]; then
    say "debootstrap $SUITE into $ROOTFS"
    rm -rf "$ROOTFS" "$ROOTFS.tmp"
    t0=$(date +%s)
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS.tmp" "$MIRROR" \
        >"$G/debootstrap.log" 2>&1 || { tail -20 "$G/debootstrap.log" >&2; exit 1; }
    rm -rf "$ROOTFS.tmp"/var/cache/apt/archives/*.deb "$ROOTFS.tmp"/var/lib/apt/lists/*_Packages
    mv "$ROOTFS.tmp" "$ROOTFS"
    touch "$ROOTFS/.complete"
    say "debootstrap took $(( $(date +%s) - t0 )) s"
    # Trees of other package lists but the newest one (another checkout's cloud-up may
    # still want it) go.
    # (grep finds nothing on a fresh machine: not a failure under pipefail)
    ls -1dt "$G"/debian-rootfs-* 2>/dev/null | { grep -v -e "-$key1\$" -e '\.tmp$' || true; } \
        | tail -n +2 | xargs -r rm -rf
fi

FILES=("$HERE/debian/"* "$HERE/agent-start" "$AGENT_SRC/heatweb_agent.py" "$AGENT_SRC"/hooks/*)
key=$( { echo "$key1 $DISK_MB"; cat "$0" "${FILES[@]}"; } | sha256sum | cut -c1-12)
OUT=$G/debian-image-$key
if [ -f "$OUT/root.qcow2" ]; then
    ln -sfn "debian-image-$key" "$G/debian-image"
    echo "$OUT"
    exit 0
fi
say "building $OUT"
W=$(mktemp -d "$G/build.XXXXXX")
trap 'rm -rf "$W"' EXIT
R=$W/root
cp -a "$ROOTFS" "$R"
rm -f "$R/.complete"
D=$HERE/debian

# The root is the first virtio disk (the busybox init mounts it); the config drive is
# mounted for the agent (cloud-init uses it mounted where it is).
cat > "$R/etc/fstab" <<'EOF'
/dev/vda / ext4 rw,noatime 0 0
LABEL=config-2 /mnt/config iso9660 ro,nofail,x-systemd.device-timeout=60 0 0
EOF
mkdir -p "$R/mnt/config"
echo guest > "$R/etc/hostname"
printf '127.0.0.1 localhost\n' > "$R/etc/hosts"
: > "$R/etc/machine-id"  # a fresh one each boot; cloud-init's instance is the server's uuid
install -m 644 "$D/90-heatweb.cfg" "$R/etc/cloud/cloud.cfg.d/90-heatweb.cfg"
install -m 644 "$D/ds-identify.cfg" "$R/etc/cloud/ds-identify.cfg"
# The NIC by DHCP from QEMU's slirp (systemd-networkd); cloud-init leaves the network
# alone (its network_data.json addresses are Neutron's, not slirp's).
install -m 644 "$D/20-eth.network" "$R/etc/systemd/network/20-eth.network"
# The 127.0.0.1:PORT relays to QEMU's guestfwd (what the busybox init does), the agent,
# and the console line the driver waits for.
install -D -m 755 "$D/relay" "$R/usr/lib/heatweb-guest/relay"
install -D -m 755 "$D/ready" "$R/usr/lib/heatweb-guest/ready"
mkdir -p "$R/usr/lib/heatweb-agent/hooks" "$R/var/lib/heatweb-agent"
cp "$AGENT_SRC/heatweb_agent.py" "$R/usr/lib/heatweb-agent/"
cp "$AGENT_SRC"/hooks/* "$R/usr/lib/heatweb-agent/hooks/"
chmod +x "$R/usr/lib/heatweb-agent/hooks"/*
install -m 755 "$HERE/agent-start" "$R/usr/lib/heatweb-agent/agent-start"
install -m 644 "$D"/*.service "$R/etc/systemd/system/"
systemctl --root="$R" enable systemd-networkd.service heatweb-guest-relay.service \
    heatweb-agent.service heatweb-guest-ready.service >/dev/null 2>&1
# What a test guest under TCG does not need at boot.
for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
            dpkg-db-backup.timer e2scrub_reap.service systemd-timesyncd.service \
            getty@tty1.service serial-getty@ttyS0.service cloud-config.service; do
    ln -sf /dev/null "$R/etc/systemd/system/$unit"
done
# sshd's host keys: each guest's own, made by cloud-init's ssh module at its first boot
# (ed25519 only: RSA key generation is slow under TCG), not the build's shared ones;
# cloud-init.service runs before sshd.service (Debian's alias of ssh.service).
rm -f "$R"/etc/ssh/ssh_host_*
find "$R/var/log" -type f -delete
rm -rf "$R/var/lib/cloud"/* "$R/tmp"/* "$R/var/cache/apt"/*.bin

mkdir -p "$W/out"
mkfs.ext4 -q -F -L guest-root -d "$R" "$W/root.img" "${DISK_MB}M"
qemu-img convert -f raw -O qcow2 "$W/root.img" "$W/out/root.qcow2"
{
    echo "debian $SUITE $MIRROR (debootstrap --variant=minbase, rootfs $key1)"
    echo "include $INCLUDE"
    echo "heatweb-agent $(sha256sum "$AGENT_SRC/heatweb_agent.py" | cut -c1-12)"
    chroot "$R" dpkg-query -W -f '${Package}\t${Version}\n'
} > "$W/out/MANIFEST"
rm -rf "$OUT"
mv "$W/out" "$OUT"
previous=$(readlink "$G/debian-image" || true)
ln -sfn "debian-image-$key" "$G/debian-image"
# Earlier builds but the one before (servers made from it keep it as their disks' base).
find "$G" -maxdepth 1 -name 'debian-image-*' ! -name "debian-image-$key" \
    ! -name "${previous:-none}" -exec rm -rf {} +
say "built $OUT ($(du -sh "$OUT/root.qcow2" | cut -f1))"
echo "$OUT"
