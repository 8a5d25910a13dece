"""``AWS::RDS::DBInstance``: Heat's built-in MySQL database instance.

Heat 27 has no plugin for it: its global environment maps the type to a template of
its installation (etc/heat/templates/AWS_RDS_DBInstance.yaml), so it is a template
resource. heatweb ships that template (``templates/AWS_RDS_DBInstance.yaml``) and
registers the type as a template resource on it: its properties are the template's
parameters (types, defaults, allowed values, all changed in place, as Heat derives
them), its attributes the template's outputs.
"""
from pathlib import Path

from stacks.resources.base import ResourcePlugin
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property
from stacks.resources.stack import TemplateResource

DB_TYPE = "AWS::RDS::DBInstance"
TEMPLATE = Path(__file__).with_name("templates") / "AWS_RDS_DBInstance.yaml"


def template_parameter(kind="String", **kwargs):
    """A property as Heat makes one of a template parameter: updated in place, required
    unless the parameter has a default."""
    return Property(kind, update_allowed=True, required="default" not in kwargs, **kwargs)


@register
class DBInstance(TemplateResource):
    """A MySQL database on its own instance (Heat's built-in template): the instance
    (image ``F19-x86_64-cfntools``, the flavor ``DBInstanceClass`` names: ``db.m1.small``
    is ``m1.small``), a security group opening ``Port``, ICMP and SSH, and a wait
    condition the instance signals (cfn-signal) once ``DBName`` and its user
    ``MasterUsername`` are made. Attributes ``Endpoint.Address`` (the instance's
    address) and ``Endpoint.Port``. Every property changes in place (the child stack is
    updated with it)."""

    type_name = DB_TYPE
    template_file = None
    template_body = TEMPLATE.read_text()
    allow_unknown_properties = False
    properties_schema = {
        "AllocatedStorage": template_parameter(),
        "DBInstanceClass": template_parameter(),
        "DBName": template_parameter(),
        "DBSecurityGroups": template_parameter("List", default=[]),
        "Engine": template_parameter(constraints=(AllowedValues(("MySQL",)),)),
        "MasterUsername": template_parameter(),
        "MasterUserPassword": template_parameter(),
        "Port": template_parameter(default="3306"),
        "KeyName": template_parameter(default=""),
    }
    attributes_schema = {
        "Endpoint.Address": Attribute("The instance's address (the template's output)."),
        "Endpoint.Port": Attribute("The database's port (the template's output)."),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        # the declared schema (Heat's, from the parameters), not the template's names only
        return ResourcePlugin.validate_properties.__func__(cls, raw,
                                                           resource_name=resource_name)
