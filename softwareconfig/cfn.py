"""heatweb's CloudFormation metadata API (what Heat's heat-api-cfn serves a server's
os-collect-config, and heat-cfntools' ``cfn-init`` / ``cfn-hup``): ``DescribeStackResource``,
EC2-signed with the key pair of a ``POLL_SERVER_CFN`` server or of an
``AWS::IAM::AccessKey`` (``stacks.resources.stack_user.ensure_keypair``).

Who may read: the request's ``AWSAccessKeyId`` names the resource whose plugin data holds
it; in Keystone mode Keystone checks the signature (``/v3/ec2tokens``) and the credential
must be that resource's stack user's; without Keystone heatweb checks it with the secret it
keeps (``heatweb.ec2_signature``). As Heat's stack users, a server's key reads its own
resource only (Heat's ``_authorize_stack_user``); an access key any resource of its stack
(Heat's ``AWS::IAM::User`` without ``Policies``). Errors are heat-api-cfn's (``CfnError``: an
AWS error code, message and HTTP status).
"""
from heatweb import ec2_signature, keystone, stack_users
from heatweb.exceptions import EntityNotFound
from stacks.hot.cfn_template import stack_arn
from stacks.resources import stack_user
from stacks.resources.base import ResourceFailure
from stacks.selectors import resource_by_access_key, stack_resource
from softwareconfig.services import resource_metadata


class CfnError(Exception):
    """One of heat-api-cfn's errors (``heat.api.aws.exception``)."""

    def __init__(self, code, message, status=400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def _missing(name):
    return CfnError("MissingParameter", f"The request is missing a required parameter: "
                                        f"{name}")


ACCESS_DENIED = ("AccessDenied", "User is not authorized to perform action", 403)
ACCESS_KEY_TYPE = "AWS::IAM::AccessKey"


def _signed_resource(*, params, verb, host, path):
    """The resource whose key signed the request (CfnError when none did)."""
    access, signature = params.get("AWSAccessKeyId"), params.get("Signature")
    if not access or not signature:
        raise CfnError("MissingAuthenticationToken", "Request must contain either a valid "
                       "(registered) AWS access key ID or X.509 certificate", 403)
    res = resource_by_access_key(access)
    if res is None:
        raise CfnError("InvalidClientTokenId", "The X.509 certificate or AWS Access Key ID "
                       "provided does not exist in our records", 403)
    data = res.plugin_data or {}
    if keystone.enabled() and data.get(stack_user.USER_ID):
        unsigned = {k: v for k, v in params.items() if k != "Signature"}
        try:
            identity = stack_users.ec2_signature_identity(
                access=access, signature=signature, verb=verb, host=host, path=path,
                params=unsigned)
        except keystone.KeystoneError as error:
            raise CfnError("InternalFailure", str(error), 500) from None
        if identity is None or identity[0] != data[stack_user.USER_ID]:
            raise CfnError(*ACCESS_DENIED)
    elif not ec2_signature.signature_matches(_secret(data), verb=verb, host=host,
                                             path=path, params=params):
        raise CfnError("SignatureDoesNotMatch", "The request signature we calculated does "
                       "not match the signature you provided", 403)
    return res


def _secret(data):
    """The clear secret key ('' when it does not decrypt: another SECRET_KEY's)."""
    try:
        return stack_user.secret_key(data) or ""
    except ResourceFailure:
        return ""


def _names_stack(stack, name):
    """StackName as heat-api-cfn takes it: the stack's name, id or ARN."""
    return name in (stack.name, str(stack.pk)) or name.endswith(f"/{stack.name}/{stack.pk}")


def _readable(signer, name):
    """The resource ``name`` when the signing resource's key may read it: its own; any of
    its stack for an access key."""
    if name == signer.name:
        return signer
    if signer.type != ACCESS_KEY_TYPE:
        raise CfnError(*ACCESS_DENIED)
    try:
        return stack_resource(signer.stack, name)
    except EntityNotFound:  # heat-api-cfn's answer to the engine's ResourceNotFound
        raise CfnError("InvalidParameterValue", f"The Resource ({name}) could not be "
                                                f"found.") from None


def describe_stack_resource(*, params, verb, host, path):
    """``DescribeStackResource``: the ``StackResourceDetail`` of the signing server's
    resource, its metadata as the Orchestration API shows it (deployments and
    ``os-collect-config`` included)."""
    action = params.get("Action")
    if not action:
        raise _missing("Action")
    if action != "DescribeStackResource":
        raise CfnError("InvalidAction", f"The action or operation requested is invalid: "
                       f"{action}")
    res = _signed_resource(params=params, verb=verb, host=host, path=path)
    for name in ("StackName", "LogicalResourceId"):
        if not params.get(name):
            raise _missing(name)
    stack = res.stack
    if not _names_stack(stack, params["StackName"]):
        raise CfnError(*ACCESS_DENIED)
    res = _readable(res, params["LogicalResourceId"])
    return {
        "Description": "",
        "LastUpdatedTimestamp": res.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "StackId": stack_arn(stack_name=stack.name, stack_id=stack.pk,
                             project_id=stack.project_id),
        "StackName": stack.name,
        "ResourceStatus": res.state,
        "ResourceStatusReason": res.status_reason,
        "ResourceType": res.type,
        "Metadata": resource_metadata(res, stack.project_id),
        "PhysicalResourceId": res.physical_resource_id,
        "LogicalResourceId": res.name,
    }
