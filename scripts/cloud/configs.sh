# Configuration files of heatweb's one-machine cloud; sourced by scripts/cloud-up.
# Needs BASE, V (venv bin), PW, PG, MY, RABBIT, DB_* and VH_* set.

auth_section() {  # keystone_authtoken-style block for service user $1
    cat <<EOF
auth_url = http://127.0.0.1:5000
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $1
password = $PW
region_name = RegionOne
EOF
}

# Every one of these WSGI apps parses sys.argv with oslo.config and exits on
# gunicorn's own arguments, so gunicorn loads them through a wrapper that
# hides those arguments.
write_wsgi_wrappers() {
    local name module
    for pair in keystone_api:keystone.wsgi.api glance_api:glance.wsgi.api \
                placement_api:placement.wsgi.api nova_api:nova.wsgi.osapi_compute \
                neutron_api:neutron.wsgi.api; do
        name=${pair%%:*}; module=${pair#*:}
        printf 'import sys\n\nsys.argv = sys.argv[:1]\nfrom %s import application  # noqa: E402,F401\n' \
            "$module" > "$BASE/wsgi/$name.py"
    done
}

write_keystone_conf() {
    mkdir -p "$BASE/etc/keystone"
    cat > "$BASE/etc/keystone/keystone.conf" <<EOF
[DEFAULT]
log_file = $BASE/log/keystone.log
[database]
connection = $PG/$DB_KEYSTONE
[token]
provider = fernet
[fernet_tokens]
key_repository = $BASE/etc/keystone/fernet-keys
[fernet_receipts]
key_repository = $BASE/etc/keystone/fernet-keys
[credential]
key_repository = $BASE/etc/keystone/credential-keys
EOF
}

write_glance_conf() {
    mkdir -p "$BASE/etc/glance"
    cp "$BASE/venv/etc/glance/glance-api-paste.ini" "$BASE/etc/glance/"
    cat > "$BASE/etc/glance/glance-api.conf" <<EOF
[DEFAULT]
log_file = $BASE/log/glance-api.log
enabled_backends = fs:file
worker_self_reference_url = http://127.0.0.1:9292
[database]
connection = $PG/$DB_GLANCE
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = $BASE/images/
[os_glance_staging_store]
filesystem_store_datadir = $BASE/images/staging/
[os_glance_tasks_store]
filesystem_store_datadir = $BASE/images/tasks/
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
$(auth_section glance)
[paste_deploy]
flavor = keystone
EOF
}

write_placement_conf() {
    mkdir -p "$BASE/etc/placement"
    cat > "$BASE/etc/placement/placement.conf" <<EOF
[DEFAULT]
log_file = $BASE/log/placement.log
[placement_database]
connection = $PG/$DB_PLACEMENT
[api]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
$(auth_section placement)
EOF
}

# nova.conf is shared by every Nova service; nova-compute must not see any
# database settings (it goes through the conductor), so those live in
# nova-db.conf, loaded by api, conductor, scheduler and nova-manage only.
write_nova_conf() {
    mkdir -p "$BASE/etc/nova"
    cp "$BASE/venv/etc/nova/api-paste.ini" "$BASE/etc/nova/"
    cat > "$BASE/etc/nova/nova.conf" <<EOF
[DEFAULT]
log_dir = $BASE/log
state_path = $BASE/nova-state
instances_path = $BASE/nova-state/instances
transport_url = $RABBIT/$VH_NOVA
# The fake driver, plus a real QEMU guest for servers of the heatweb-guest image
# (scripts/cloud/guest_driver; nova-compute runs as heatweb-nova-compute to load it).
compute_driver = heatweb_guest.GuestDriver
mkisofs_cmd = genisoimage
host = heatweb-compute
my_ip = 127.0.0.1
graceful_shutdown_timeout = 5
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = $BASE/etc/nova/api-paste.ini
[oslo_concurrency]
lock_path = $BASE/locks
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
$(auth_section nova)
[service_user]
send_service_user_token = true
$(auth_section nova)
[placement]
$(auth_section nova)
[neutron]
$(auth_section neutron)
[glance]
region_name = RegionOne
[cinder]
os_region_name = RegionOne
[scheduler]
discover_hosts_in_cells_interval = 5
workers = 1
[conductor]
workers = 1
[vnc]
enabled = false
[oslo_messaging_notifications]
driver = noop
[heatweb_guest]
image_name = heatweb-guest
kernel = $BASE/guests/image/vmlinuz
initrd = $BASE/guests/image/initrd.cpio.gz
agent_image_name = heatweb-agent-guest
agent_initrd = $BASE/guests/agent-image/initrd.cpio.gz
debian_image_name = heatweb-debian-guest
debian_disk = $BASE/guests/debian-image/root.qcow2
state_dir = $BASE/guests/run
host_ports_file = $BASE/guests/host-ports
ports = 5000
max_booting = 2
EOF
    cat > "$BASE/etc/nova/nova-db.conf" <<EOF
[api_database]
connection = $PG/$DB_NOVA_API
[database]
connection = $PG/$DB_CELL1
EOF
    # Under gunicorn nova-api would log to gunicorn.log (the program's name).
    printf '[DEFAULT]\nlog_file = nova-api.log\n' > "$BASE/etc/nova/nova-api.conf"
}

write_neutron_conf() {
    mkdir -p "$BASE/etc/neutron/plugins/ml2"
    cp "$BASE/venv/etc/neutron/api-paste.ini" "$BASE/etc/neutron/"
    cat > "$BASE/etc/neutron/neutron.conf" <<EOF
[DEFAULT]
log_file = $BASE/log/neutron-api.log
core_plugin = ml2
service_plugins = router,trunk,qos
auth_strategy = keystone
transport_url = $RABBIT/$VH_NEUTRON
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
api_paste_config = $BASE/etc/neutron/api-paste.ini
[database]
connection = $MY/$DB_NEUTRON?charset=utf8mb4
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000
$(auth_section neutron)
[nova]
$(auth_section nova)
[oslo_concurrency]
lock_path = $BASE/locks
EOF
    cat > "$BASE/etc/neutron/plugins/ml2/ml2_conf.ini" <<'EOF'
[ml2]
type_drivers = flat,vlan,vxlan
tenant_network_types = vxlan
# heatweb_bindall (scripts/cloud/ml2_bindall, test-only) binds every port (as an
# OVS port), so servers boot on Neutron networks without an L2 agent; openvswitch
# after it binds nothing without its agent, but loads the trunk and QoS drivers
# (without it neutron-api does not boot with the trunk plugin).
mechanism_drivers = heatweb_bindall,openvswitch
extension_drivers = port_security,qos,tag_ports_during_bulk_creation
[ml2_type_vxlan]
vni_ranges = 1:1000
[ml2_type_vlan]
network_vlan_ranges = physnet1:100:200
[ml2_type_flat]
flat_networks = *
EOF
}

write_client_files() {
    "$V/python" "$HERE/bootstrap.py" clouds-yaml --password "$PW" > "$BASE/clouds.yaml"
    cat > "$BASE/adminrc" <<EOF
export OS_AUTH_URL=http://127.0.0.1:5000/v3
export OS_USERNAME=admin
export OS_PASSWORD=$PW
export OS_PROJECT_NAME=admin
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_IDENTITY_API_VERSION=3
export OS_REGION_NAME=RegionOne
export OS_CLIENT_CONFIG_FILE=$BASE/clouds.yaml
EOF
}
