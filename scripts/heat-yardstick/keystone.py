"""What upstream Heat needs in the cloud's Keystone, for ``scripts/heat-yardstick-up``.

Runs in the yardstick's virtualenv (openstacksdk comes with openstack-heat).
Looks before it creates, so running it twice changes nothing:

* the ``heat`` service user (Default domain) with ``admin`` on the ``service``
  project: keystone_authtoken's and the trustee's user;
* the ``heat`` domain and its admin ``heat_domain_admin`` (``admin`` on the
  domain): Heat's stack-user domain;
* the roles ``heat_stack_owner`` and ``heat_stack_user``.

No service and no endpoint is registered in the catalog: heatweb's tests read
the catalog, and the bench reaches Heat's API by its URL.
"""
import argparse

import openstack


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--auth-url", default="http://127.0.0.1:5000/v3")
    parser.add_argument("--admin-password", required=True)
    parser.add_argument("--password", required=True, help="of the two users made here")
    args = parser.parse_args()
    conn = openstack.connect(load_yaml_config=False, load_envvars=False,
                             auth_url=args.auth_url, username="admin",
                             password=args.admin_password, project_name="admin",
                             user_domain_name="Default", project_domain_name="Default",
                             region_name="RegionOne", identity_api_version="3")
    idn = conn.identity
    admin = idn.find_role("admin", ignore_missing=False)
    for name in ("heat_stack_owner", "heat_stack_user"):
        idn.find_role(name) or idn.create_role(name=name)
    service = idn.find_project("service", domain_id="default", ignore_missing=False)
    heat = idn.find_user("heat", domain_id="default") or idn.create_user(
        name="heat", password=args.password, domain_id="default",
        default_project_id=service.id)
    idn.update_user(heat, password=args.password)
    idn.assign_project_role_to_user(service, heat, admin)
    domain = idn.find_domain("heat") or idn.create_domain(
        name="heat", description="Stack projects and users (heat-yardstick)")
    domain_admin = idn.find_user("heat_domain_admin", domain_id=domain.id) or idn.create_user(
        name="heat_domain_admin", password=args.password, domain_id=domain.id)
    idn.update_user(domain_admin, password=args.password)
    idn.assign_domain_role_to_user(domain, domain_admin, admin)
    print(f"heat user {heat.id}, domain heat {domain.id}, domain admin {domain_admin.id}")


if __name__ == "__main__":
    main()
