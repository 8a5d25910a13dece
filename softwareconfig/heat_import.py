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
    for config in source.configs(sorted(set(config_ids) | derived)):
        if SoftwareConfig.objects.filter(pk=config["id"]).exists():
            continue
        body = config["config"]
        made = SoftwareConfig.objects.create(
            id=config["id"], project_id=stack.project_id, name=config["name"] or "",
            group=config["group"] or "Heat::Ungrouped", config=body.get("config"),
            inputs=body.get("inputs") or [], outputs=body.get("outputs") or [],
            options=body.get("options") or {}, derived=config["id"] in derived)
        SoftwareConfig.objects.filter(pk=made.pk).update(created_at=aware(config["created_at"]))
    for dep in deployments:
        if SoftwareDeployment.objects.filter(pk=dep["id"]).exists():
            continue
        SoftwareDeployment.objects.create(
            id=dep["id"], project_id=stack.project_id, config_id=dep["config_id"],
            server_id=dep["server_id"], input_values=dep["input_values"],
            output_values=dep["output_values"], action=dep["action"] or "INIT",
            status=dep["status"] or "COMPLETE", status_reason=dep["status_reason"] or "",
            stack_user_project_id=dep["stack_user_project_id"] or "",
            updated_at=aware(dep["updated_at"]))
        SoftwareDeployment.objects.filter(pk=dep["id"]).update(
            created_at=aware(dep["created_at"]))
