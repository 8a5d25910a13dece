"""Rows in a Heat 27 database as Heat itself stores them: run with the Python of the
yardstick's venv (scripts/heat-yardstick-up), never imported by heatweb or its tests.

    BASE/venv/bin/python store_rows.py --config-file heat.conf < spec.json

Heat's own DB API (``heat.db.api``) and ``crypt.encrypt`` write the rows, so their
formats (JSON text columns, ``[method, token]`` hidden parameters under
``encrypted_param_names``, encrypted properties and redacted ``resource_data``) are
Heat's. The spec is a list of stacks (see tests/live/test_import_heat.py); prints
``{stack name: {resource name: heat resource id}}``.
"""
import json
import sys

from oslo_config import cfg

from heat.common import config as heat_config  # noqa: F401 - registers Heat's options
from heat.common import context as heat_context
from heat.common import crypt
from heat.db import api as db_api


def _template(ctx, stack):
    env = {"parameters": dict(stack.get("parameters", {})), "parameter_defaults": {},
           "resource_registry": {"resources": {}}, "event_sinks": []}
    hidden = stack.get("encrypt_hidden", [])
    if hidden:
        for name in hidden:
            env["parameters"][name] = list(crypt.encrypt(env["parameters"][name]))
        env["encrypted_param_names"] = list(hidden)
    files = db_api.raw_template_files_create(ctx, {"files": stack.get("files", {})})
    return db_api.raw_template_create(ctx, {"template": stack["template"], "files": None,
                                            "files_id": files.id, "environment": env})


def _props(ctx, data, encrypted):
    if data is None:
        return None
    values = {"data": crypt.encrypted_dict(data) if encrypted else data,
              "encrypted": encrypted}
    return db_api.resource_prop_data_create(ctx, values).id


def store(ctx, spec):
    made, ids = {}, {}
    for stack in spec:
        raw = _template(ctx, stack)
        # A trust Heat made (stored encrypted): heatweb cannot read or use it.
        creds = db_api.user_creds_create(heat_context.RequestContext(
            is_admin=True, trust_id="heat-trust-not-readable", project_id=stack["tenant"],
            trustor_user_id=stack.get("trustor_user_id") or "heat-trustor"))
        action, status = stack.get("state", "CREATE_COMPLETE").split("_", 1)
        values = {"id": stack["id"], "name": stack["name"], "raw_template_id": raw.id,
                  "username": stack.get("username"), "tenant": stack["tenant"],
                  "user_creds_id": creds["id"], "owner_id": stack.get("owner_id"),
                  "parent_resource_name": stack.get("parent_resource_name"),
                  "disable_rollback": True, "nested_depth": stack.get("nested_depth", 0),
                  "convergence": True, "action": action, "status": status,
                  "status_reason": f"Stack {action} completed successfully",
                  "stack_user_project_id": stack["tenant"]}
        db_api.stack_create(ctx, values)
        if stack.get("tags"):
            db_api.stack_tags_set(ctx, stack["id"], stack["tags"])
        names = {}
        for res in stack.get("resources", []):
            action, status = res.get("state", "CREATE_COMPLETE").split("_", 1)
            row = db_api.resource_create(ctx, {
                "name": res["name"], "stack_id": stack["id"], "root_stack_id": stack["root"],
                "physical_resource_id": res.get("physical_id"), "action": action, "status": status,
                "status_reason": "state changed", "rsrc_metadata": res.get("metadata", {}),
                "current_template_id": raw.id, "atomic_key": 1,
                "requires": [names[n] for n in res.get("requires", [])],
                "rsrc_prop_data_id": _props(ctx, res.get("properties"),
                                            stack.get("encrypt_properties", False))})
            names[res["name"]] = row.id
            if res.get("attributes"):  # the attribute cache, stored as Heat stores it
                attr_id = _props(ctx, res["attributes"], stack.get("encrypt_properties", False))
                assert db_api.resource_attr_id_set(ctx, row.id, 1, attr_id)
            for key, (value, redact) in res.get("data", {}).items():
                db_api.resource_data_set(ctx, row.id, key, value, redact=redact)
        for event in stack.get("events", []):
            db_api.event_create(ctx, {"stack_id": stack["id"], **event})
        for config in stack.get("software_configs", []):
            db_api.software_config_create(ctx, {**config, "tenant": stack["tenant"]})
        for deployment in stack.get("software_deployments", []):
            db_api.software_deployment_create(ctx, {**deployment, "tenant": stack["tenant"]})
        ids[stack["name"]] = names
    made.update(ids)
    return made


if __name__ == "__main__":
    cfg.CONF(sys.argv[1:], project="heat", prog="store_rows")
    print(json.dumps(store(heat_context.get_admin_context(), json.load(sys.stdin))))
