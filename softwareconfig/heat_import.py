"""A Heat stack's software configs and deployments, imported with it (``manage.py
import_heat``): the rows Heat stored, its ids and times kept, for the configs and
deployments the stack's resources made. Registered with the import's store at start
(``SoftwareconfigConfig.ready``).
"""
from softwareconfig.models import SoftwareConfig, SoftwareDeployment
from stacks.services.heat_import.store import aware

CONFIG_TYPES = ("OS::Heat::SoftwareConfig", "OS::Heat::StructuredConfig",
                "OS::Heat::SoftwareComponent", "OS::Heat::MultipartMime",
                "OS::Heat::CloudConfig")
DEPLOYMENT_TYPES = ("OS::Heat::SoftwareDeployment", "OS::Heat::StructuredDeployment")


def software_import(stack, resources, source):
    """The configs and deployments the stack's resources made (their physical ids)."""
    config_ids = [r["nova_instance"] for r in resources
                  if r["type"] in CONFIG_TYPES and r["nova_instance"]]
    deployments = source.deployments([r["nova_instance"] for r in resources
                                      if r["type"] in DEPLOYMENT_TYPES and r["nova_instance"]])
    derived = {d["config_id"] for d in deployments if d["config_id"]} - set(config_ids)
    # Rows already here (an earlier import) are kept; the rest are written in bulk,
    # then given Heat's times (``auto_now_add`` sets the import's on create).
    configs = source.configs(sorted(set(config_ids) | derived))
    have = {str(pk) for pk in SoftwareConfig.objects.filter(
        pk__in=[c["id"] for c in configs]).values_list("pk", flat=True)}
    made = [_config_row(stack, c, derived) for c in configs if str(c["id"]) not in have]
    have = {str(pk) for pk in SoftwareDeployment.objects.filter(
        pk__in=[d["id"] for d in deployments]).values_list("pk", flat=True)}
    placed = [_deployment_row(stack, d) for d in deployments if str(d["id"]) not in have]
    for model, rows in ((SoftwareConfig, made), (SoftwareDeployment, placed)):
        created = [row.created_at for row in rows]
        model.objects.bulk_create(rows)
        for row, when in zip(rows, created):
            row.created_at = when
        model.objects.bulk_update(rows, ["created_at"], batch_size=500)


def _config_row(stack, config, derived):
    body = config["config"]
    return SoftwareConfig(
        id=config["id"], project_id=stack.project_id, name=config["name"] or "",
        group=config["group"] or "Heat::Ungrouped", config=body.get("config"),
        inputs=body.get("inputs") or [], outputs=body.get("outputs") or [],
        options=body.get("options") or {}, derived=config["id"] in derived,
        created_at=aware(config["created_at"]))


def _deployment_row(stack, dep):
    return SoftwareDeployment(
        id=dep["id"], project_id=stack.project_id, config_id=dep["config_id"],
        server_id=dep["server_id"], input_values=dep["input_values"],
        output_values=dep["output_values"], action=dep["action"] or "INIT",
        status=dep["status"] or "COMPLETE", status_reason=dep["status_reason"] or "",
        stack_user_project_id=dep["stack_user_project_id"] or "",
        updated_at=aware(dep["updated_at"]), created_at=aware(dep["created_at"]))
