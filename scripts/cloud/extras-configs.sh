# Configuration of the cloud's extra services; sourced by scripts/cloud/extras-up
# after configs.sh (auth_section). Needs BASE, V, PW, PG, MY, RABBIT, DB_*, VH_CINDER.

write_cinder_conf() {
    mkdir -p "$BASE/etc/cinder" "$BASE/cinder-state/volumes" "$BASE/cinder-backups"
    cp "$BASE/venv/etc/cinder/api-paste.ini" "$BASE/venv/etc/cinder/resource_filters.json" \
        "$BASE/etc/cinder/"
    cat > "$BASE/etc/cinder/cinder.conf" <<EOF
[DEFAULT]
log_dir = $BASE/log
state_path = $BASE/cinder-state
transport_url = $RABBIT/$VH_CINDER
auth_strategy = keystone
enabled_backends = fake
host = heatweb-volume
my_ip = 127.0.0.1
api_paste_config = $BASE/etc/cinder/api-paste.ini
resource_query_filters_file = $BASE/etc/cinder/resource_filters.json
graceful_shutdown_timeout = 5
osapi_volume_workers = 1
# cinder-backup: the POSIX driver into BASE/cinder-backups; 32 MiB chunks (the default is
# ~1.9 GB, read into memory at once), all-zero chunks skipped, no compression
backup_driver = cinder.backup.drivers.posix.PosixBackupDriver
backup_posix_path = $BASE/cinder-backups
backup_file_size = 33554432
backup_compression_algorithm = none
[database]
connection = $PG/$DB_CINDER
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
service_token_roles_required = true
$(auth_section cinder)
[service_user]
send_service_user_token = true
$(auth_section cinder)
[nova]
interface = public
$(auth_section nova)
[oslo_concurrency]
lock_path = $BASE/locks
[oslo_messaging_notifications]
driver = noop
# os-brick and Cinder run privileged calls through privsep: every process here is root,
# so its helper is started directly (the default goes through sudo and rootwrap)
[privsep_osbrick]
helper_command = $V/privsep-helper --config-file $BASE/etc/cinder/cinder.conf --privsep_context os_brick.privileged.default
[privsep]
helper_command = $V/privsep-helper --config-file $BASE/etc/cinder/cinder.conf --privsep_context cinder.privsep.sys_admin_pctxt
[key_manager]
backend = cinder.keymgr.conf_key_mgr.ConfKeyManager
fixed_key = $(printf '0%.0s' $(seq 64))
[fake]
volume_driver = heatweb_cinder_fake.ImageVolumeDriver
volume_backend_name = fake
target_helper = fake
EOF
    # Under gunicorn cinder-api would log to gunicorn.log (the program's name).
    printf '[DEFAULT]\nlog_file = cinder-api.log\n' > "$BASE/etc/cinder/cinder-api.conf"
    # cinder.wsgi.api reads its config files from sys.argv only.
    printf 'import sys\n\nsys.argv = [sys.argv[0], "--config-file", "%s", "--config-file", "%s"]\nfrom cinder.wsgi.api import application  # noqa: E402,F401\n' \
        "$BASE/etc/cinder/cinder.conf" "$BASE/etc/cinder/cinder-api.conf" > "$BASE/wsgi/cinder_api.py"
}

write_swift_conf() {
    local S=$BASE/etc/swift name port
    rm -rf "$S"
    mkdir -p "$S" "$BASE/swift/node/d1"
    cat > "$S/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = heatweb
swift_hash_path_prefix = heatweb
[storage-policy:0]
name = Policy-0
default = yes
EOF
    for pair in account:6202 container:6201 object:6200; do
        name=${pair%%:*}; port=${pair#*:}
        cat > "$S/$name-server.conf" <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $port
workers = 0
swift_dir = $S
devices = $BASE/swift/node
mount_check = false
log_name = $name-server
[pipeline:main]
pipeline = $name-server
[app:$name-server]
use = egg:swift#$name
EOF
    done
    cat > "$S/proxy-server.conf" <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = 8080
workers = 0
swift_dir = $S
log_name = proxy-server
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging listing_formats tempurl authtoken keystoneauth copy dlo slo versioned_writes proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:tempurl]
use = egg:swift#tempurl
methods = GET HEAD PUT POST DELETE
[filter:copy]
use = egg:swift#copy
[filter:dlo]
use = egg:swift#dlo
[filter:slo]
use = egg:swift#slo
[filter:versioned_writes]
use = egg:swift#versioned_writes
allow_versioned_writes = true
[filter:keystoneauth]
use = egg:swift#keystoneauth
operator_roles = admin, member
reseller_admin_role = ResellerAdmin
[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
www_authenticate_uri = http://127.0.0.1:5000
delay_auth_decision = True
$(auth_section swift)
EOF
}

build_swift_rings() {  # one replica, one device per ring
    local S=$BASE/etc/swift name port
    for pair in account:6202 container:6201 object:6200; do
        name=${pair%%:*}; port=${pair#*:}
        (cd "$S" && "$V/swift-ring-builder" "$name.builder" create 8 1 1 \
            && "$V/swift-ring-builder" "$name.builder" add "r1z1-127.0.0.1:$port/d1" 100 \
            && { "$V/swift-ring-builder" "$name.builder" rebalance || true; })
        [ -f "$S/$name.ring.gz" ] || return 1
    done
}

write_barbican_conf() {
    local url="$MY/$DB_BARBICAN?charset=utf8mb4" kek
    mkdir -p "$BASE/etc/barbican"
    cp "$BASE/venv/etc/barbican/barbican-api-paste.ini" "$BASE/etc/barbican/"
    kek=$("$V/python" -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
    cat > "$BASE/etc/barbican/barbican.conf" <<EOF
[DEFAULT]
log_file = $BASE/log/barbican-api.log
host_href = http://127.0.0.1:9311
sql_connection = $url
db_auto_create = false
[database]
connection = $url
[queue]
enable = false
[keystone_notifications]
enable = false
[secretstore]
enabled_secretstore_plugins = store_crypto
[crypto]
enabled_crypto_plugins = simple_crypto
[simple_crypto_plugin]
kek = $kek
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
$(auth_section barbican)
EOF
    # barbican.wsgi.api hard-codes /etc/barbican: parse our file, load our paste file.
    cat > "$BASE/wsgi/barbican_api.py" <<EOF
import sys

sys.argv = sys.argv[:1]
from barbican import version  # noqa: E402
from barbican.common import config  # noqa: E402
from paste import deploy  # noqa: E402

config.CONF(["--config-file", "$BASE/etc/barbican/barbican.conf"], project="barbican",
            version=version.version_info.version_string())
application = deploy.loadapp("config:$BASE/etc/barbican/barbican-api-paste.ini")
EOF
}

write_octavia_conf() {
    local C=$BASE/etc/octavia/certs
    mkdir -p "$C" "$BASE/octavia-run"
    # Even with noop drivers the create flow signs an amphora certificate: a CA of our own.
    [ -f "$C/ca.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 3650 \
        -subj /CN=heatweb-octavia-ca -keyout "$C/ca.key" -out "$C/ca.pem" 2>/dev/null
    cat "$C/ca.pem" "$C/ca.key" > "$C/client.pem"
    cat > "$BASE/etc/octavia/octavia.conf" <<EOF
[DEFAULT]
log_dir = $BASE/log
transport_url = $RABBIT/$VH_OCTAVIA
graceful_shutdown_timeout = 5
[api_settings]
auth_strategy = keystone
enabled_provider_drivers = amphora:Amphora provider with noop backends
default_provider_driver = amphora
[database]
connection = $MY/$DB_OCTAVIA?charset=utf8mb4
[controller_worker]
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
# the noop network driver, answering a real subnet's Neutron network (test fixture
# scripts/cloud/octavia_fake: the noop one fails deleting a member that names a subnet)
network_driver = heatweb_noop_network_driver
volume_driver = volume_noop_driver
image_driver = image_noop_driver
loadbalancer_topology = SINGLE
workers = 1
amp_flavor_id = 1
amp_image_tag = amphora
amp_boot_network_list = 00000000-0000-0000-0000-000000000000
client_ca = $C/ca.pem
[haproxy_amphora]
server_ca = $C/ca.pem
client_cert = $C/client.pem
[task_flow]
jobboard_enabled = false
[certificates]
cert_manager = noop_cert_manager
cert_generator = local_cert_generator
ca_certificate = $C/ca.pem
ca_private_key = $C/ca.key
[driver_agent]
status_socket_path = $BASE/octavia-run/status.sock
stats_socket_path = $BASE/octavia-run/stats.sock
get_socket_path = $BASE/octavia-run/get.sock
[health_manager]
bind_ip = 127.0.0.1
bind_port = 5555
controller_ip_port_list = 127.0.0.1:5555
heartbeat_key = insecure
[oslo_concurrency]
lock_path = $BASE/locks
[oslo_messaging]
topic = octavia_prov
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
$(auth_section octavia)
[service_auth]
$(auth_section octavia)
[neutron]
$(auth_section octavia)
valid_interfaces = public
EOF
    printf '[DEFAULT]\nlog_file = octavia-api.log\n' > "$BASE/etc/octavia/octavia-api.conf"
    printf 'import sys\n\nsys.argv = [sys.argv[0], "--config-file", "%s", "--config-file", "%s"]\nfrom octavia.wsgi.api import application  # noqa: E402,F401\n' \
        "$BASE/etc/octavia/octavia.conf" "$BASE/etc/octavia/octavia-api.conf" > "$BASE/wsgi/octavia_api.py"
}
