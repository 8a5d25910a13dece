"""``AWS::ElasticLoadBalancing::LoadBalancer``: Heat's built-in haproxy load balancer.

As Heat's (heat/engine/resources/aws/lb/loadbalancer.py), the load balancer is a
child stack of one ``AWS::EC2::Instance`` that runs haproxy, with the haproxy
configuration in the instance's ``AWS::CloudFormation::Init`` metadata (written by
cfn-init at boot, re-read by cfn-hup when the metadata changes) and a wait
condition the instance signals once haproxy runs. The configuration is made from
``Listeners`` (the first one), ``HealthCheck`` and the addresses of ``Instances``.

Heat's nested template also has ``latency_watcher``, an ``AWS::CloudWatch::Alarm``
(an Aodh alarm in Heat 27) that the instance pushes its haproxy latency to with
``cfn-push-stats``. The template here is Heat's without the alarm and without that
crontab line, as a Heat operator writes it for Heat's ``loadbalancer_template`` option
on a cloud without Aodh (Heat's default template is refused there:
``ResourceTypeUnavailable`` for the alarm) or with Aodh 23, which refuses the alarm's
``threshold`` rule at create.
"""
from dataclasses import dataclass

from heatweb.exceptions import StackValidationFailed
from stacks.resources.base import cloud_call
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, PropertyError
from stacks.resources.stack import ChildStackResource
from stacks.resources.nested_stacks import nested

LB_TYPE = "AWS::ElasticLoadBalancing::LoadBalancer"
# The parent's parameters Heat hands to the nested stack when the parent declares them.
PARENT_PARAMETERS = ("KeyName", "LbFlavor", "LBTimeout", "LbImageId")
HAPROXY_CFG = "/etc/haproxy/haproxy.cfg"


@dataclass(frozen=True)
class NotImplementedProperty(Property):
    """Heat's ``implemented=False``: in the schema, refused when given."""

    name: str = ""

    def coerce(self, value):
        raise PropertyError(f"Property {self.name} not implemented yet")


def _not_implemented(kind, name):
    return NotImplementedProperty(kind, description="Not Implemented.", name=name)


def _required(kind, description, **kwargs):
    return Property(kind, description=description, required=True, **kwargs)


HEALTH_CHECK = {
    "HealthyThreshold": _required("Integer", "The number of consecutive health probe "
                                  "successes required before moving the instance to the "
                                  "healthy state."),
    "Interval": _required("Integer", "The approximate interval, in seconds, between health "
                          "checks of an individual instance."),
    "Target": _required("String", "The port being checked."),
    "Timeout": _required("Integer", "Health probe timeout, in seconds."),
    "UnhealthyThreshold": _required("Integer", "The number of consecutive health probe "
                                    "failures required before moving the instance to the "
                                    "unhealthy state"),
}
LISTENER = {
    "InstancePort": _required("Integer", "TCP port on which the instance server is "
                              "listening."),
    "LoadBalancerPort": _required("Integer", "The external load balancer port number."),
    "Protocol": _required("String", "The load balancer transport protocol to use.",
                          constraints=(AllowedValues(("TCP", "HTTP")),)),
    "SSLCertificateId": _not_implemented("String", "SSLCertificateId"),
    "PolicyNames": _not_implemented("List", "PolicyNames"),
}


def _cfn_file(content, mode="000400"):
    return {"content": content, "mode": mode, "owner": "root", "group": "root"}


def _join(*parts):
    return {"Fn::Join": ["", list(parts)]}


STACK_ID, REGION, HANDLE = {"Ref": "AWS::StackId"}, {"Ref": "AWS::Region"}, {"Ref": "WaitHandle"}
CFN_INIT = ("/opt/aws/bin/cfn-init -s ", STACK_ID, "    -r LB_instance ",
            "    --region ", REGION)
# heat-cfntools' stats file lives in /tmp: haproxy needs an SELinux module to use it.
SELINUX_MODULE = _join(
    "module haproxy_tmp 1.0;\n",
    "require { type tmp_t; type haproxy_t;",
    "class sock_file { rename write create unlink link };",
    "class dir { write remove_name add_name };}\n",
    "allow haproxy_t ", "tmp_t:dir { write remove_name add_name };\n",
    "allow haproxy_t ", "tmp_t:sock_file { rename write create unlink link};\n")
BOOT_SCRIPT = (
    "#!/bin/bash -v\n",
    "# Helper function\n",
    "function error_exit\n", "{\n",
    "  /opt/aws/bin/cfn-signal -e 1 -r \"$1\" '", HANDLE, "'\n",
    "  exit 1\n", "}\n",
    *CFN_INIT, " || error_exit 'Failed to run cfn-init'\n",
    "# HAProxy+SELinux, https://www.mankier.com/8/haproxy_selinux \n",
    "# this is exported by selinux-policy >=3.12.1.196\n",
    "setsebool haproxy_connect_any 1\n",
    "# compile custom module to allow /tmp files and sockets access\n",
    "cd /root\n",
    "checkmodule -M -m -o haproxy_tmp.mod haproxy_tmp.te\n",
    "semodule_package -o haproxy_tmp.pp -m haproxy_tmp.mod\n",
    "semodule -i haproxy_tmp.pp\n",
    "touch /tmp/.haproxy-stats\n",
    "semanage fcontext -a -t haproxy_tmpfs_t /tmp/.haproxy-stats\n",
    "restorecon -R -v /tmp/.haproxy-stats\n",
    "# install cfn-hup crontab\n",
    "crontab /tmp/cfn-hup-crontab.txt\n",
    "# restart haproxy service to catch initial changes\n",
    "systemctl reload-or-restart haproxy.service\n",
    "# LB setup completed, signal success\n",
    "/opt/aws/bin/cfn-signal -e 0 -r \"LB server setup complete\" '", HANDLE, "'\n",
)


def _init_metadata(haproxy_cfg):
    """The instance's cfn-init configuration: packages, crond, cfn-hup and haproxy files."""
    hooks = _join("[cfn-init]\n", "triggers=post.update\n",
                  "path=Resources.LB_instance.Metadata\n",
                  "action=", *CFN_INIT, "\n", "runas=root\n", "\n",
                  "[reload]\n", "triggers=post.update\n",
                  "path=Resources.LB_instance.Metadata\n",
                  "action=systemctl reload-or-restart haproxy.service\n", "runas=root\n")
    files = {
        "/etc/cfn/cfn-credentials": _cfn_file(_join(
            "AWSAccessKeyId=", {"Ref": "CfnLBAccessKey"}, "\n",
            "AWSSecretKey=", {"Fn::GetAtt": ["CfnLBAccessKey", "SecretAccessKey"]}, "\n")),
        "/etc/cfn/cfn-hup.conf": _cfn_file(_join(
            "[main]\n", "stack=", STACK_ID, "\n",
            "credential-file=/etc/cfn/cfn-credentials\n",
            "region=", REGION, "\n", "interval=60\n")),
        "/etc/cfn/hooks.conf": _cfn_file(hooks),
        HAPROXY_CFG: _cfn_file(haproxy_cfg, mode="000644"),
        "/root/haproxy_tmp.te": _cfn_file(SELINUX_MODULE, mode="000600"),
        # Heat's also runs cfn-push-stats for its latency alarm (not here: no Aodh).
        "/tmp/cfn-hup-crontab.txt": _cfn_file(
            "MAIL=\"\"\n\n* * * * * /opt/aws/bin/cfn-hup -f\n", mode="000600"),
    }
    return {"AWS::CloudFormation::Init": {"config": {
        "packages": {"yum": {"haproxy": [], "socat": []}},
        "services": {"systemd": {"crond": {"enabled": "true", "ensureRunning": "true"}}},
        "files": files}}}


def nested_template(haproxy_cfg, *, with_key):
    """The child stack's template (CloudFormation format, as Heat's)."""
    parameters = {
        "LbImageId": {"Type": "String", "Default": "Fedora-Cloud-Base-20141203-21.x86_64"},
        "LbFlavor": {"Type": "String", "Default": "m1.small"},
        "LBTimeout": {"Type": "String", "Default": "600"},
        "SecurityGroups": {"Type": "CommaDelimitedList", "Default": []},
    }
    instance = {"ImageId": {"Ref": "LbImageId"}, "InstanceType": {"Ref": "LbFlavor"},
                "SecurityGroups": {"Ref": "SecurityGroups"},
                "UserData": {"Fn::Base64": _join(*BOOT_SCRIPT)}}
    if with_key:  # only when the parent stack has a KeyName parameter, as Heat
        parameters["KeyName"] = {"Type": "String"}
        instance["KeyName"] = {"Ref": "KeyName"}
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Built in HAProxy server using Fedora 21 x64 cloud image",
        "Parameters": parameters,
        "Resources": {
            "CfnLBUser": {"Type": "AWS::IAM::User"},
            "CfnLBAccessKey": {"Type": "AWS::IAM::AccessKey",
                               "Properties": {"UserName": {"Ref": "CfnLBUser"}}},
            "LB_instance": {"Type": "AWS::EC2::Instance",
                            "Metadata": _init_metadata(haproxy_cfg), "Properties": instance},
            "WaitHandle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
            "WaitCondition": {"Type": "AWS::CloudFormation::WaitCondition",
                              "DependsOn": "LB_instance",
                              "Properties": {"Handle": {"Ref": "WaitHandle"},
                                             "Timeout": {"Ref": "LBTimeout"}}},
        },
        "Outputs": {"PublicIp": {"Value": {"Fn::GetAtt": ["LB_instance", "PublicIp"]},
                                 "Description": "instance IP"}},
    }


def haproxy_config(properties, addresses):
    """haproxy.cfg as Heat writes it: the first listener, http only, one ``server`` line
    per instance address (``0.0.0.0`` for an instance not found)."""
    listener = properties["Listeners"][0]
    health = properties.get("HealthCheck")
    timeout_check = f"    timeout check {int(health['Timeout'])}s" if health else ""
    check = (f" check inter {health['Interval']}s fall {health['UnhealthyThreshold']}"
             f" rise {health['HealthyThreshold']}") if health else ""
    servers = "\n".join(f"    server server{n} {address}:{listener['InstancePort']}{check}"
                        for n, address in enumerate(addresses, start=1))
    return ("\nglobal\n    daemon\n    maxconn 256\n    stats socket /tmp/.haproxy-stats\n"
            "\ndefaults\n    mode http\n    timeout connect 5000ms\n"
            "    timeout client 50000ms\n    timeout server 50000ms\n"
            f"\nfrontend http\n    bind *:{listener['LoadBalancerPort']}\n"
            "    default_backend servers\n"
            "\nbackend servers\n    balance roundrobin\n    option http-server-close\n"
            f"    option forwardfor\n    option httpchk\n{timeout_check}\n"
            f"{servers}\n")


def server_address(server):
    """Heat's ``server_to_ipaddress``: the first address of the last network by name."""
    addresses = (server or {}).get("addresses") or {}
    for network in sorted(addresses, reverse=True):
        if addresses[network]:
            first = addresses[network][0]
            return first.get("addr") if isinstance(first, dict) else first
    return None


@register
class LoadBalancer(ChildStackResource):
    """A load balancer: a nested stack with an instance running haproxy (Heat's built-in
    one). It forwards the first of ``Listeners`` (``LoadBalancerPort`` to each of
    ``Instances`` on ``InstancePort``) with ``HealthCheck``'s probes; the haproxy
    configuration is the instance's cfn-init metadata, and the instance signals a wait
    condition once haproxy runs (an image with heat-cfntools, haproxy, socat and cronie).
    ``Instances`` and ``SecurityGroups`` change in place (the new configuration is
    written to the metadata, cfn-hup reloads haproxy). The parent's ``KeyName``,
    ``LbFlavor``, ``LBTimeout`` and ``LbImageId`` parameters, when it has them, are
    passed on. ``DNSName``: the instance's address; the other attributes are empty, as
    in Heat. Ref: the resource's name."""

    type_name = LB_TYPE
    properties_schema = {
        "AvailabilityZones": Property("List", description="The Availability Zones in which "
                                      "to create the load balancer.", required=True),
        "HealthCheck": Property("Map", description="An application health check for the "
                                "instances.", schema=HEALTH_CHECK),
        "Instances": Property("List", description="The list of instance IDs load balanced.",
                              update_allowed=True),
        "Listeners": Property("List", description="One or more listeners for this load "
                              "balancer.", required=True,
                              schema=Property("Map", schema=LISTENER)),
        "AppCookieStickinessPolicy": _not_implemented("String", "AppCookieStickinessPolicy"),
        "LBCookieStickinessPolicy": _not_implemented("String", "LBCookieStickinessPolicy"),
        "SecurityGroups": Property("List", description="List of Security Groups assigned on "
                                   "current LB.", update_allowed=True),
        "Subnets": _not_implemented("List", "Subnets"),
    }
    attributes_schema = {
        "CanonicalHostedZoneName": Attribute("The name of the hosted zone that is associated "
                                             "with the LoadBalancer.", "string"),
        "CanonicalHostedZoneNameID": Attribute("The ID of the hosted zone name that is "
                                               "associated with the LoadBalancer.", "string"),
        "DNSName": Attribute("The DNS name for the LoadBalancer.", "string"),
        "SourceSecurityGroup.GroupName": Attribute("The security group that you can use as "
                                                   "part of your inbound rules for your "
                                                   "LoadBalancer's back-end instances.",
                                                   "string"),
        "SourceSecurityGroup.OwnerAlias": Attribute("Owner of the source security group.",
                                                    "string"),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        for key in raw if isinstance(raw, dict) else ():
            if isinstance(cls.properties_schema.get(key), NotImplementedProperty) and \
                    raw[key] is not None:
                raise StackValidationFailed(f"Property error: resources.{resource_name}."
                                            f"properties: Property {key} not implemented yet")
        props = super().validate_properties(raw, resource_name=resource_name)
        health = props.get("HealthCheck")
        if isinstance(health, dict):
            try:
                shorter = float(health["Interval"]) < float(health["Timeout"])
            except (TypeError, ValueError):  # a value known only at create
                shorter = False
            if shorter:  # Heat's validate returns this map, shown as it is
                raise StackValidationFailed("{'Error': 'Interval must be larger than "
                                            "Timeout'}")
        return props

    @classmethod
    def schema_doc(cls):
        """As Heat's: the properties not implemented are not shown (nor in the type's
        template)."""
        doc = super().schema_doc()
        doc["properties"] = {k: v for k, v in doc["properties"].items()
                             if not isinstance(cls.properties_schema[k],
                                               NotImplementedProperty)}
        return doc

    def _parent_parameters(self):
        params = nested.stack_parameters(self.context.stack_id)
        return {name: params[name] for name in PARENT_PARAMETERS if name in params.schemas}

    def _addresses(self):
        instances = [str(i) for i in self.properties.get("Instances") or []]
        listed = cloud_call(self.context.cloud.server_list, instances) if instances else {}
        return [server_address(listed.get(i)) or "0.0.0.0" for i in instances]

    def _template(self):
        cfg = haproxy_config(self.properties, self._addresses()) \
            if self.properties.get("Instances") else ""
        with_key = "KeyName" in self._parent_parameters()
        return nested_template(cfg, with_key=with_key)

    def _parameters(self):
        params = self._parent_parameters()
        if self.properties.get("SecurityGroups") is not None:
            params["SecurityGroups"] = self.properties["SecurityGroups"]
        return params

    def get_reference_id(self):
        return self.name

    def attributes(self):
        outputs, _ = nested.nested_outputs(self.physical_id) if self.physical_id else ({}, {})
        values = {name: "" for name in self.attributes_schema}
        values["DNSName"] = outputs.get("PublicIp")
        return values

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        return attrs.get(name)

    def get_attribute(self, name, *path):
        return self.attributes().get(name)
