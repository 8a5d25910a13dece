"""Stack users: Keystone users heatweb makes for the resources whose signals come from
outside with a password (Heat's ``StackUser``, ``stack_user_domain``).

In Keystone mode, a resource that needs one (a ``ZAQAR_SIGNAL`` wait condition handle or
software deployment, a ``ZAQAR_MESSAGE`` server) gets a user of its own, with a random
password, in the stack user domain (``HEATWEB_STACK_USER_DOMAIN``, default
``heatweb_stack_users``, made by heatweb's service user on first use, as Heat's
``heat-keystone-setup-domain``). The user's only role (``heat_stack_user``, Heat's
``stack_user_role``, made on first use too) is on the stack's user project: a project of
that domain named by the root stack's id (Heat's ``create_stack_domain_project``), shared
by the stack's nested stacks. The user is disabled while its resource is suspended and
enabled again at its resume, deleted with its resource; the project with the root stack (``stack_project_delete``, beside the stack's trust).

A server polling heat-api-cfn (``POLL_SERVER_CFN``) signs its requests with an EC2
credential of its stack user (``ec2_credential_create``, Heat's
``create_stack_domain_user_keypair``); heatweb has Keystone check the signature
(``ec2_signature_identity``, Keystone's ``/v3/ec2tokens``, as Heat's ``EC2Token``
middleware).

Every call is heatweb's service user's (an admin, as Heat's ``stack_domain_admin``), but
``user_session``, which logs in as the stack user itself.
"""
import hashlib
import json
import logging
import secrets
import string
import threading

from django.conf import settings
from keystoneauth1.identity import v3

from heatweb.keystone import TIMEOUT, KeystoneError, cached_session, keystone_message, \
    enabled, identity_url, service_session

log = logging.getLogger(__name__)

DOMAIN_DESCRIPTION = "heatweb's stack users (Heat's stack_user_domain)"
_ids = {}  # ("domain"|"role", name) -> Keystone id, found or made once a process
_ids_lock = threading.Lock()


def _call(method, path, *, ok=(200, 201, 204), **kwargs):
    response = getattr(service_session(), method)(identity_url() + path, raise_exc=False,
                                                   **kwargs)
    if response.status_code not in ok:
        raise KeystoneError(f"Keystone refused {method.upper()} {path.split('?')[0]}: "
                            f"{keystone_message(response)}")
    return response


def _found_or_made(kind, name, body, *, make=True):
    """The id of the domain or role ``name``, made if Keystone has none (a concurrent make
    answers 409: found again); None if it has none and ``make`` is false."""
    key = (kind, name)
    with _ids_lock:
        if key in _ids:
            return _ids[key]
    for _ in range(2):
        found = _call("get", f"/{kind}s", params={"name": name}).json()[f"{kind}s"]
        if found:
            break
        if not make:
            return None
        response = _call("post", f"/{kind}s", json={kind: {"name": name, **body}},
                         ok=(201, 409))
        if response.status_code == 201:
            found = [response.json()[kind]]
            break
    with _ids_lock:
        _ids[key] = found[0]["id"]
    return _ids[key]


def stack_domain_id(*, make=True):
    return _found_or_made("domain", settings.KEYSTONE["STACK_USER_DOMAIN"],
                          {"description": DOMAIN_DESCRIPTION, "enabled": True}, make=make)


def _role_id():
    return _found_or_made("role", settings.KEYSTONE["STACK_USER_ROLE"], {})


def _root_id(stack):
    while stack.parent_id:
        stack = stack.parent
    return str(stack.pk)


def _project_find(name, domain):
    found = _call("get", "/projects", params={"name": name, "domain_id": domain}).json()
    return (found["projects"] or [{}])[0].get("id")


def stack_project_id(stack):
    """The stack's user project (its root's), made on first need."""
    name, domain = _root_id(stack), stack_domain_id()
    project = _project_find(name, domain)
    if project:
        return project
    response = _call("post", "/projects", ok=(201, 409), json={"project": {
        "name": name, "domain_id": domain, "description": "Heat stack user project"}})
    return response.json()["project"]["id"] if response.status_code == 201 else \
        _project_find(name, domain)


def stack_project_delete(stack_uuid):
    """Delete a root stack's user project, if it has one (its users went with their
    resources). A failure is logged: the stack is gone all the same."""
    if not enabled():
        return False
    try:
        domain = stack_domain_id(make=False)
        project = domain and _project_find(str(stack_uuid), domain)
        if project:
            _call("delete", f"/projects/{project}", ok=(204, 404))
        return bool(project)
    except Exception as error:  # noqa: BLE001 - Keystone down: logged, as the trust's delete
        log.warning("could not delete the user project of stack %s: %s", stack_uuid, error)
        return False


def new_password():
    """A random password (Heat's ``generate_openstack_password``: 32 letters and digits)."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(32))


def user_create(stack, name, password):
    """A user named ``name`` (at most 64 characters, as Keystone's) in the stack user
    domain, whose one role is on the stack's user project: ``(user_id, project_id)``."""
    project = stack_project_id(stack)
    user = _call("post", "/users", json={"user": {
        "name": name[:64], "password": password, "domain_id": stack_domain_id(),
        "default_project_id": project, "enabled": True}}).json()["user"]["id"]
    _call("put", f"/projects/{project}/users/{user}/roles/{_role_id()}")
    return user, project


def user_enable(user_id, *, enabled):
    """Enable or disable a stack user (Heat's ``enable_stack_domain_user`` and
    ``disable_stack_domain_user``): a disabled user cannot log in, and Keystone revokes its
    tokens. One Keystone no longer has is left as it is."""
    if user_id:
        _call("patch", f"/users/{user_id}", ok=(200, 404),
              json={"user": {"enabled": bool(enabled)}})


def user_delete(user_id):
    """Delete a stack user; one Keystone no longer has counts as deleted."""
    if user_id:
        _call("delete", f"/users/{user_id}", ok=(204, 404))


def user_session(user_id, password, project_id):
    """A keystoneauth1 session logged in as the stack user, in its project (what Heat's
    ``_user_token`` gives the Zaqar client)."""
    return cached_session(f"stack-user:{user_id}:{project_id}", lambda: v3.Password(
        auth_url=identity_url(), user_id=user_id, password=password, project_id=project_id))


def credentials(user_id, password, project_id, *, username):
    """What a signal sender logs in with (Heat's ``_get_heat_signal_credentials``)."""
    return {"auth_url": identity_url(), "username": username[:64], "user_id": user_id,
            "password": password, "project_id": project_id, "domain_id": stack_domain_id(),
            "region_name": settings.KEYSTONE.get("REGION") or None}


def ec2_credential_create(user_id, project_id, access, secret):
    """An EC2 credential (``access``, ``secret``) of the stack user in its project: a
    Keystone credential of type ``ec2``, whose id Keystone derives from ``access``. It goes
    with its user."""
    _call("post", "/credentials", json={"credential": {
        "type": "ec2", "user_id": user_id, "project_id": project_id,
        "blob": json.dumps({"access": access, "secret": secret})}})


def ec2_credential_delete(access):
    """Delete the EC2 credential ``access`` (Keystone's id of it: the sha256 of
    ``access``); one already gone is no error."""
    _call("delete", f"/credentials/{hashlib.sha256(access.encode()).hexdigest()}",
          ok=(204, 404))


def ec2_signature_identity(*, access, signature, verb, host, path, params):
    """``(user_id, project_id)`` of the EC2 credential ``access`` when Keystone finds
    ``signature`` right for the request (``POST /v3/ec2tokens``, asked as heatweb's service
    user: Keystone 30 lets only admins and services, policy ``identity:ec2tokens_validate``),
    else None. KeystoneError when Keystone cannot be asked."""
    body = {"credentials": {"access": access, "signature": signature, "host": host,
                            "verb": verb, "path": path, "params": params,
                            "headers": {}, "body_hash": ""}}
    try:
        response = service_session().post(identity_url() + "/ec2tokens", json=body,
                                          raise_exc=False, timeout=TIMEOUT)
    except Exception as error:  # noqa: BLE001 - keystoneauth's connection errors are many
        raise KeystoneError(f"Keystone could not check the signature: {error}") from None
    if response.status_code in (400, 401, 403, 404):  # a refusal of what the caller sent
        return None
    if response.status_code not in (200, 201):
        raise KeystoneError(f"Keystone refused POST /ec2tokens: {keystone_message(response)}")
    token = response.json()["token"]
    return token["user"]["id"], (token.get("project") or {}).get("id")
