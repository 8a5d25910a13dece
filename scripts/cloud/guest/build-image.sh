#!/usr/bin/env bash
# scripts/cloud/guest/build-image.sh BASE [busybox|agent|debian]: a guest of the one-machine
# cloud, built from Debian's packages and cached under BASE/guests (called by
# scripts/cloud-up for both kinds).
#
# The guest is Debian's cloud kernel (its .deb unpacked, never installed on the host)
# and an initramfs of busybox-static, the host's curl with its libraries, 11 virtio
# and isofs modules, and ./init (reads Nova's config drive, runs a shell user_data).
# It lands in BASE/guests/image-KEY/{vmlinuz,initrd.cpio.gz}; KEY hashes what went into
# it (the kernel package and version, busybox's and curl's versions, init and this
# script), so a change of any of them builds a new one; BASE/guests/image points at
# the current one. Prints the image directory.
#
# The agent kind (BASE/guests/agent-image-KEY, BASE/guests/agent-image) is the same plus
# Debian's python3.11-minimal, libpython3.11-minimal and libpython3.11-stdlib (their
# .debs unpacked, byte-compiled by that python; no tests, docs, IDLE or Tk) and
# heatweb's own in-instance agent (softwareconfig/agent: heatweb_agent.py and its
# hooks) with ./agent-start, which init runs to start the agent from the config drive.
# KEY hashes those packages' versions and the agent's files too.
# The debian kind (a debootstrap disk booted with this kernel and initramfs) is
# ./build-debian.sh's.
# Installs the host packages it and the guest driver need when one is missing
# (qemu-system-x86 qemu-utils busybox-static genisoimage cpio socat curl).
set -euo pipefail
BASE=$(realpath -m "$1")
KIND=${2:-busybox}
HERE="$(cd "$(dirname "$0")" && pwd)"
AGENT_SRC=$(realpath "$HERE/../../../softwareconfig/agent")
PY_PKGS=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib)
case $KIND in
    debian) exec "$HERE/build-debian.sh" "$BASE" ;;
    busybox) PREFIX=image ;;
    agent) PREFIX=agent-image ;;
    *) echo "usage: $0 BASE [busybox|agent|debian]" >&2; exit 2 ;;
esac
G=$BASE/guests
mkdir -p "$G"
say() { echo "guest image: $*" >&2; }

sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
missing=()
for pair in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils /bin/busybox:busybox-static \
            genisoimage:genisoimage cpio:cpio socat:socat curl:curl; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Another apt on the host (a second checkout's build beside this one) is waited for,
    # not a failure.
    APT_LOCK=(-o DPkg::Lock::Timeout=300)
    $sudo apt-get "${APT_LOCK[@]}" install -y -q --no-install-recommends "${missing[@]}" >"$G/apt.log" 2>&1 \
        || { $sudo apt-get "${APT_LOCK[@]}" update -q >>"$G/apt.log" 2>&1 \
             && $sudo apt-get "${APT_LOCK[@]}" install -y -q --no-install-recommends "${missing[@]}" >>"$G/apt.log" 2>&1; } \
        || { tail -20 "$G/apt.log" >&2; say "apt-get install ${missing[*]} failed"; exit 1; }
fi

kernel_package() {
    apt-cache depends linux-image-cloud-amd64 2>/dev/null \
        | awk '/Depends: linux-image-/ && !n {print $2; n = 1}'  # no early exit: SIGPIPE
}
KPKG=$(kernel_package)
if [ -z "$KPKG" ]; then
    $sudo apt-get update -q >"$G/apt.log" 2>&1 || true
    KPKG=$(kernel_package)
fi
[ -n "$KPKG" ] || { say "no linux-image-cloud-amd64 in apt's lists"; exit 1; }
KVERSION=$(apt-cache show "$KPKG" | awk '/^Version:/ && !n {print $2; n = 1}')
pkg_version() { apt-cache show "$1" 2>/dev/null | awk '/^Version:/ && !n {print $2; n = 1}'; }
agent_inputs() {  # what the agent kind adds: the python packages' versions, the agent
    [ "$KIND" = agent ] || return 0
    for p in "${PY_PKGS[@]}"; do echo "$p $(pkg_version "$p")"; done
    cat "$HERE/agent-start" "$AGENT_SRC/heatweb_agent.py" "$AGENT_SRC"/hooks/*
}
key=$( { echo "$KPKG $KVERSION"; dpkg-query -W busybox-static curl; cat "$HERE/init" "$0";
         agent_inputs; } | sha256sum | cut -c1-12)
OUT=$G/$PREFIX-$key
if [ -f "$OUT/initrd.cpio.gz" ] && [ -f "$OUT/vmlinuz" ]; then
    ln -sfn "$PREFIX-$key" "$G/$PREFIX"
    echo "$OUT"
    exit 0
fi

say "building $OUT ($KPKG $KVERSION)"
W=$(mktemp -d "$G/build.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$G/debs" "$W/kpkg"
# A package's .deb, from the cache under $G/debs or fetched into it (never installed).
cached_deb() {  # PACKAGE VERSION
    local deb
    deb=$(find "$G/debs" -name "${1}_${2//:/%3a}_*.deb" | sort | tail -1)
    if [ -z "$deb" ]; then
        (cd "$G/debs" && apt-get download "$1=$2" >/dev/null 2>"$W/download.err") \
            || { cat "$W/download.err" >&2; say "apt-get download $1 failed"; return 1; }
        deb=$(find "$G/debs" -name "${1}_${2//:/%3a}_*.deb" | sort | tail -1)
    fi
    echo "$deb"
}
# The host's shared libraries the given programs load, copied into the root $R.
host_libraries() {  # FILE...
    local f l
    for f in "$@"; do
        ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /ld-linux/{print $1}'
    done | sort -u | while read -r l; do
        [ -f "$R$l" ] || install -D "$(readlink -f "$l")" "$R$l"
    done
}
deb=$(cached_deb "$KPKG" "$KVERSION") || exit 1
dpkg-deb -x "$deb" "$W/kpkg"
KVER=$(ls "$W/kpkg/lib/modules")
MODDIR=$W/kpkg/lib/modules/$KVER/kernel

R=$W/root
mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,mnt,lib/modules,root}
cp /bin/busybox "$R/bin/busybox"
for a in $(/bin/busybox --list); do
    [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"
done
# Templates say #!/bin/bash: give them ash.
printf '#!/bin/sh\nexec /bin/sh "$@"\n' > "$R/bin/bash"; chmod +x "$R/bin/bash"
# The real curl: Heat's curl_cli uses options busybox wget lacks.
install -D /usr/bin/curl "$R/usr/bin/curl"
host_libraries /usr/bin/curl
mkdir -p "$R/etc/ssl/certs"
# Modules in load order (each after what its modinfo depends= names).
: > "$R/etc/modules.order"
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
         virtio_blk failover net_failover virtio_net cdrom isofs; do
    f=$(find "$MODDIR" \( -name "$m.ko" -o -name "$m.ko.xz" \) -print -quit)
    [ -n "$f" ] || continue  # built into this kernel
    case $f in *.xz) xz -dc "$f" > "$R/lib/modules/$m.ko" ;; *) cp "$f" "$R/lib/modules/$m.ko" ;; esac
    echo "$m" >> "$R/etc/modules.order"
done
cat > "$R/etc/udhcpc.sh" <<'EOF'
#!/bin/sh
case "$1" in
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/${mask:-24}" dev "$interface"
    for r in $router; do ip route add default via "$r"; break; done
    : > /etc/resolv.conf
    for d in $dns; do echo "nameserver $d" >> /etc/resolv.conf; done ;;
esac
exit 0
EOF
chmod +x "$R/etc/udhcpc.sh"
echo "root:x:0:0:root:/root:/bin/sh" > "$R/etc/passwd"
echo "root:x:0:" > "$R/etc/group"
printf '127.0.0.1 localhost\n' > "$R/etc/hosts"
install -m 755 "$HERE/init" "$R/init"
ln -s ../../bin/busybox "$R/usr/bin/env"  # hooks say #!/usr/bin/env python3

if [ "$KIND" = agent ]; then
    # Debian's python3.11, unpacked into the root; its libraries from the host (as curl's).
    mkdir -p "$W/py"
    for p in "${PY_PKGS[@]}"; do
        deb=$(cached_deb "$p" "$(pkg_version "$p")") || exit 1
        dpkg-deb -x "$deb" "$W/py"
    done
    PYLIB=usr/lib/python3.11
    rm -rf "$W/py/$PYLIB"/{test,idlelib,tkinter,turtledemo,lib2to3,ensurepip,pydoc_data} \
           "$W/py/usr/share"
    cp -a "$W/py/usr/." "$R/usr/"
    ln -sf python3.11 "$R/usr/bin/python3"
    # Byte-compiled by that interpreter, each .pyc in place of its .py (-b): the guest
    # never compiles at boot, and the initramfs the kernel unpacks under TCG is smaller.
    PYTHONHOME="$R/usr" "$R/usr/bin/python3.11" -m compileall -q -b -j 0 "$R/$PYLIB" >/dev/null
    find "$R/$PYLIB" -name '*.py' -delete
    find "$R/$PYLIB" -name __pycache__ -prune -exec rm -rf {} +
    host_libraries "$R/usr/bin/python3.11" "$R/$PYLIB"/lib-dynload/*.so
    # heatweb's agent, as in the repository, and what starts it from the config drive.
    mkdir -p "$R/usr/lib/heatweb-agent" "$R/var/lib/heatweb-agent"
    cp "$AGENT_SRC/heatweb_agent.py" "$R/usr/lib/heatweb-agent/"
    cp -r "$AGENT_SRC/hooks" "$R/usr/lib/heatweb-agent/hooks"
    chmod +x "$R/usr/lib/heatweb-agent/hooks"/*
    install -m 755 "$HERE/agent-start" "$R/usr/lib/heatweb-agent/agent-start"
fi

mkdir -p "$W/out"
cp "$W"/kpkg/boot/vmlinuz-* "$W/out/vmlinuz"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/out/initrd.cpio.gz"
printf 'kernel %s %s\n' "$KPKG" "$KVERSION" > "$W/out/MANIFEST"
dpkg-query -W busybox-static curl >> "$W/out/MANIFEST"
if [ "$KIND" = agent ]; then
    for p in "${PY_PKGS[@]}"; do printf '%s\t%s\n' "$p" "$(pkg_version "$p")"; done
    echo "heatweb-agent $(sha256sum "$AGENT_SRC/heatweb_agent.py" | cut -c1-12)"
fi >> "$W/out/MANIFEST"
rm -rf "$OUT"
mv "$W/out" "$OUT"
ln -sfn "$PREFIX-$key" "$G/$PREFIX"
# Earlier builds of this kind (running guests keep their open files).
find "$G" -maxdepth 1 -name "$PREFIX-*" ! -name "$PREFIX-$key" -exec rm -rf {} +
say "built $OUT ($(du -sh "$OUT" | cut -f1))"
echo "$OUT"
