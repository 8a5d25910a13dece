"""heatweb in a Keystone cloud: who a token is, sessions, and stack trusts.

Keystone mode (``HEATWEB_AUTH=keystone``, settings ``KEYSTONE``):

* A request's ``X-Auth-Token`` is validated by keystonemiddleware's
  auth_token (``token_identity``); the token's user becomes a Django user
  (``user_for_identity``, created on first sight) with a membership in the
  token's project, whose row (the ``/v1/<project_id>`` tenant) is created on
  first use. Keystone roles map to heatweb's: ``admin``, ``member``,
  ``reader``.
* The engine acts for a stack's owner the way Heat does: a trust from the
  owner to heatweb's service user, created with the stack
  (``stack_trust_create``) and deleted with it (``stack_trust_delete``).
  ``session_for_stack`` gives the cloud driver a keystoneauth1 session in the
  owner's project through that trust, long after the owner's token expired.
"""
import datetime
import logging
import threading
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from heatweb.exceptions import Forbidden, HeatError
from heatweb.keystone_models import KeystoneAccount, StackTrust
from heatweb.models import Membership, Project, Role

log = logging.getLogger(__name__)

# Keystone's default roles imply each other (admin > member > reader); a
# token lists the implied ones too, so the highest one found wins.
ROLE_MAP = (("admin", Role.ADMIN), ("member", Role.MEMBER), ("_member_", Role.MEMBER),
            ("reader", Role.READER))
TIMEOUT = 30


class KeystoneError(HeatError):
    """Keystone refused or failed a call heatweb needed (its own message kept)."""

    status = 500


def enabled():
    return settings.HEATWEB_AUTH == "keystone"


def identity_url():
    """Keystone's v3 URL, whether KEYSTONE_URL ends in /v3 or not."""
    base = settings.KEYSTONE["URL"].rstrip("/")
    return base if base.endswith("/v3") else base + "/v3"


def heatweb_role(keystone_roles):
    """heatweb's role for a list of Keystone role names (None: no access)."""
    names = {r.lower() for r in keystone_roles}
    return next((role for name, role in ROLE_MAP if name in names), None)


@dataclass(frozen=True)
class KeystoneIdentity:
    """Who a Keystone token says the caller is, and the token itself.

    ``project_id`` is empty for an unscoped token (a page sign-in), whose
    roles come from the memberships synced at sign-in.
    """

    token: str
    user_id: str
    user_name: str
    user_domain: str = ""
    project_id: str = ""
    project_name: str = ""
    roles: tuple = field(default_factory=tuple)

    @property
    def role(self):
        return heatweb_role(self.roles)

    @property
    def is_admin(self):
        return self.role == Role.ADMIN


# Sessions ----------------------------------------------------------------------------------

_sessions = {}
_sessions_lock = threading.Lock()


def _app_name():
    """What heatweb's requests to the cloud name first in their User-Agent (settings)."""
    return settings.HEATWEB.get("CLOUD_APP_NAME") or None


def _password_auth(**scope):
    conf = settings.KEYSTONE
    return v3.Password(auth_url=identity_url(), username=conf["SERVICE_USERNAME"],
                       password=conf["SERVICE_PASSWORD"],
                       user_domain_name=conf["SERVICE_USER_DOMAIN"], **scope)


def cached_session(key, make_auth):
    # keystoneauth1 sessions keep their token and renew it before it expires:
    # one per scope per process saves Keystone a token issue per call.
    with _sessions_lock:
        if key not in _sessions:
            if len(_sessions) > 256:
                _sessions.clear()
            _sessions[key] = ks_session.Session(auth=make_auth(), timeout=TIMEOUT,
                                                 app_name=_app_name())
        return _sessions[key]


def service_session():
    """heatweb's service user, scoped to its service project."""
    conf = settings.KEYSTONE
    return cached_session("service", lambda: _password_auth(
        project_name=conf["SERVICE_PROJECT"],
        project_domain_name=conf["SERVICE_PROJECT_DOMAIN"]))


def trust_session(trust_id):
    """heatweb's service user acting through a trust (as the trustor, in its project)."""
    return cached_session(f"trust:{trust_id}", lambda: _password_auth(trust_id=trust_id))


def credential_project(auth_type, auth):
    """The project a cloud credential (Heat's ``credential_secret_id`` payload: a
    keystoneauth1 plugin name and its options) authenticates in, after getting a token
    with it as Heat's ``validate_auth_plugin`` does; KeystoneError with Heat's words when
    it cannot."""
    from keystoneauth1 import loading

    try:
        plugin = loading.get_plugin_loader(auth_type).load_from_options(**auth)
        session = ks_session.Session(auth=plugin, timeout=TIMEOUT, app_name=_app_name())
        session.get_token()
        return plugin.get_project_id(session)
    except Exception as error:  # noqa: BLE001 - keystoneauth's errors are many: Heat's words
        raise KeystoneError(
            f"Failed to validate auth_plugin with error {error}. Please make sure the "
            f"credential you provide is correct. Also make sure the it is a valid Keystone "
            f"auth plugin type and contain in your environment.") from None


def _root(stack):
    while stack.parent_id:
        stack = stack.parent
    return stack


def session_for_stack(stack):
    """A keystoneauth1 Session acting for the stack's owner in the stack's project.

    Goes through the trust made when the (root) stack was created, so it
    works after the owner's token expired. None outside Keystone mode or for
    a stack created without one; the cloud driver then uses its own
    credentials.
    """
    if not enabled():
        return None
    trust = StackTrust.objects.filter(stack_id=_root(stack).pk).only("trust_id").first()
    return trust_session(trust.trust_id) if trust else None


def session_for_user(user, project_id):
    """A keystoneauth1 Session acting as the caller with their own token, scoped to
    ``project_id``: what Heat looks up in the request's context (a parameter's
    custom constraint at validate and create). None outside Keystone mode or for a
    caller without a Keystone token (the driver's own credentials then).
    Not cached: it lives for one request."""
    identity = getattr(user, "keystone", None)
    if not enabled() or identity is None:
        return None
    return ks_session.Session(auth=v3.Token(auth_url=identity_url(), token=identity.token,
                                            project_id=project_id), timeout=TIMEOUT,
                              app_name=_app_name())


def _unauthenticated():
    return ks_session.Session(timeout=TIMEOUT)


def keystone_message(response):
    try:
        return response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return response.text[:300] or response.reason


# Tokens and users ----------------------------------------------------------------------------

_auth_protocol = None
_auth_protocol_lock = threading.Lock()


def _middleware():
    """keystonemiddleware's auth_token, configured from settings, once per process."""
    global _auth_protocol
    with _auth_protocol_lock:
        if _auth_protocol is None:
            from keystonemiddleware import auth_token  # heavy; only when Keystone auth is on

            conf = settings.KEYSTONE
            _auth_protocol = auth_token.AuthProtocol(_confirmed_app, {
                "www_authenticate_uri": identity_url(), "auth_url": identity_url(),
                "auth_type": "password", "username": conf["SERVICE_USERNAME"],
                "password": conf["SERVICE_PASSWORD"],
                "user_domain_name": conf["SERVICE_USER_DOMAIN"],
                "project_name": conf["SERVICE_PROJECT"],
                "project_domain_name": conf["SERVICE_PROJECT_DOMAIN"],
                "region_name": conf["REGION"], "delay_auth_decision": True,
                "include_service_catalog": False, "service_type": "orchestration",
                "token_cache_time": conf["TOKEN_CACHE_SECONDS"], "log_name": __name__,
            })
        return _auth_protocol


def warm_up():
    """Ready auth_token before this process's first request: import and configure it, and
    let it find Keystone's version and fetch its own service token (with a token nobody
    holds, refused). A web worker's first caller otherwise waits on all three (0.5-1 s).
    Failures are only logged: the first request then tries again, as it would have."""
    try:
        token_identity(f"heatweb-warm-up-{uuid.uuid4().hex}")
    except Exception as error:  # noqa: BLE001 - Keystone may not be up yet
        log.warning("Keystone auth_token not readied before the first request: %s", error)


def _confirmed_app(environ, start_response):
    start_response("204 No Content", [])
    return [b""]


def token_identity(raw):
    """The identity in a Keystone token, validated by auth_token; None when the
    token is invalid, expired or revoked."""
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "SERVER_NAME": "heatweb",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http", "HTTP_X_AUTH_TOKEN": raw}
    list(_middleware()(environ, lambda status, headers, exc_info=None: None))
    if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
        return None
    return KeystoneIdentity(
        token=raw, user_id=environ["HTTP_X_USER_ID"], user_name=environ["HTTP_X_USER_NAME"],
        user_domain=environ.get("HTTP_X_USER_DOMAIN_NAME", ""),
        project_id=environ.get("HTTP_X_PROJECT_ID", ""),
        project_name=environ.get("HTTP_X_PROJECT_NAME", ""),
        roles=tuple(r.strip() for r in environ.get("HTTP_X_ROLES", "").split(",") if r.strip()))


def user_for_identity(identity):
    """The Django user standing for the token's Keystone user, with the
    identity attached (``user.keystone``) and its membership in the token's
    project kept as the token says."""
    user = _user_for(identity.user_id, identity.user_name, identity.user_domain)
    if identity.project_id:
        _membership_sync(user, identity.project_id, identity.project_name, identity.role)
    user.keystone = identity
    return user


def _user_for(keystone_user_id, name, domain):
    account = (KeystoneAccount.objects.select_related("user")
               .filter(keystone_user_id=keystone_user_id).first())
    if account is not None:
        return account.user
    users = get_user_model().objects
    # A local user (./run's admin) may hold the name: never merge with it.
    for username in (name, f"{name}@{domain or 'keystone'}", f"{name}@{keystone_user_id}"):
        try:
            with transaction.atomic():
                if users.filter(username=username).exists():
                    continue
                user = users.create_user(username=username[:150])
                KeystoneAccount.objects.create(user=user, keystone_user_id=keystone_user_id,
                                               domain_name=domain)
                return user
        except IntegrityError:  # a concurrent first request made it
            account = KeystoneAccount.objects.filter(keystone_user_id=keystone_user_id).first()
            if account is not None:
                return account.user
    raise KeystoneError(f"No user name is free for Keystone user {keystone_user_id}.")


def _project_for(project_id, name):
    project = Project.objects.filter(pk=project_id).first()
    if project is not None:
        return project
    # Project names are unique in heatweb, not across Keystone domains.
    taken = Project.objects.filter(name=name).exists()
    try:
        with transaction.atomic():
            return Project.objects.create(id=project_id,
                                          name=f"{name} ({project_id[:8]})" if taken else name)
    except IntegrityError:
        return Project.objects.get(pk=project_id)


def _membership_sync(user, project_id, project_name, role):
    project = _project_for(project_id, project_name or project_id)
    current = (Membership.objects.filter(user=user, project=project)
               .values_list("role", flat=True).first())
    if role is None:
        if current is not None:
            Membership.objects.filter(user=user, project=project).delete()
    elif current != role:
        Membership.objects.update_or_create(user=user, project=project,
                                            defaults={"role": role})
    return project


def identity_project_role(identity, project_id):
    """The caller's role in ``/v1/<project_id>``: the token's project gets the
    token's role; a Keystone admin may act in any project heatweb knows (as
    Heat's is_admin); anything else is a 403 that says nothing."""
    if project_id == identity.project_id and identity.role is not None:
        return identity.role
    if identity.is_admin and Project.objects.filter(pk=project_id).exists():
        return Role.ADMIN
    raise Forbidden()


# Page sign-in -----------------------------------------------------------------------------

def password_sign_in(username, password, *, domain=None):
    """Ask Keystone for an unscoped token; sync the user's projects and roles.

    Returns the Django user with ``user.keystone`` (unscoped) and
    ``user.keystone_expires_at``, or None when Keystone refuses the password.
    """
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": username, "password": password,
        "domain": {"name": domain or settings.KEYSTONE["USER_DOMAIN"]}}}}}}
    response = _unauthenticated().post(identity_url() + "/auth/tokens", json=body,
                                       raise_exc=False, headers={"Accept": "application/json"})
    if response.status_code != 201:
        return None
    token = response.json()["token"]
    identity = KeystoneIdentity(token=response.headers["X-Subject-Token"],
                                user_id=token["user"]["id"], user_name=token["user"]["name"],
                                user_domain=token["user"]["domain"]["name"])
    user = _user_for(identity.user_id, identity.user_name, identity.user_domain)
    _memberships_sync_all(user, identity)
    user.keystone = identity
    user.keystone_expires_at = token.get("expires_at", "")
    return user


def _memberships_sync_all(user, identity):
    response = _unauthenticated().get(identity_url() + "/auth/projects", raise_exc=False,
                                      headers={"X-Auth-Token": identity.token})
    projects = response.json().get("projects", []) if response.status_code == 200 else []
    seen = set()
    for project in projects:
        scoped = rescope(identity, project["id"])
        if scoped is not None and scoped.role is not None:
            seen.add(_membership_sync(user, project["id"], project["name"], scoped.role).pk)
    Membership.objects.filter(user=user).exclude(project_id__in=seen).delete()


def rescope(identity, project_id):
    """A token for ``project_id`` made from the identity's token (None if refused)."""
    body = {"auth": {"identity": {"methods": ["token"], "token": {"id": identity.token}},
                     "scope": {"project": {"id": project_id}}}}
    response = _unauthenticated().post(identity_url() + "/auth/tokens", json=body,
                                       raise_exc=False)
    if response.status_code != 201:
        return None
    token = response.json()["token"]
    return KeystoneIdentity(token=response.headers["X-Subject-Token"],
                            user_id=identity.user_id, user_name=identity.user_name,
                            user_domain=identity.user_domain, project_id=project_id,
                            project_name=token["project"]["name"],
                            roles=tuple(r["name"] for r in token.get("roles", [])))


# Trusts -------------------------------------------------------------------------------------

def stack_trust_create(stack, *, user):
    """Make the trust the engine will act through for ``stack`` (Heat's
    trusts), from the creator's token: the creator's roles in the stack's
    project, delegated to heatweb's service user, with impersonation.

    Nothing outside Keystone mode, for nested stacks (they use their root's)
    or for a user without a Keystone identity (the engine creating a stack).
    """
    identity = getattr(user, "keystone", None)
    if not enabled() or identity is None or stack.parent_id:
        return None
    scoped = identity if identity.project_id == stack.project_id else \
        rescope(identity, stack.project_id)
    if scoped is None:
        raise Forbidden(f"Keystone gave no token for project {stack.project_id}.")
    body = {"trust": {"trustor_user_id": scoped.user_id, "trustee_user_id": _service_user_id(),
                      "project_id": stack.project_id, "impersonation": True,
                      "roles": [{"name": name} for name in scoped.roles]}}
    if settings.KEYSTONE["TRUSTS_REDELEGATION"]:
        # A far expiry, not none: Keystone compares a redelegated trust's expiry with its
        # parent's and fails (400 "'<' not supported between ... NoneType") when the
        # parent has none and the child one (Zaqar's trust+ subscriptions have their ttl).
        # As late as Python's dates go, later than any child's (Heat's default subscription
        # ttl is ~7,000 years), and never the same twice: Keystone refuses a second trust
        # of the same trustor, trustee, project and expiry (409).
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        far = datetime.datetime(9999, 12, 31) - (now - datetime.datetime(1970, 1, 1))
        body["trust"].update(allow_redelegation=True,
                             expires_at=far.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    response = _unauthenticated().post(identity_url() + "/OS-TRUST/trusts", json=body,
                                       raise_exc=False, headers={"X-Auth-Token": scoped.token})
    if response.status_code != 201:
        error = Forbidden if response.status_code == 403 else KeystoneError
        raise error(f"Keystone refused the trust for stack {stack.name}: "
                    f"{keystone_message(response)}")
    return StackTrust.objects.create(stack=stack, trust_id=response.json()["trust"]["id"],
                                     trustor_user_id=scoped.user_id,
                                     project_id=stack.project_id, roles=list(scoped.roles))


def _service_user_id():
    return service_session().get_user_id()


def stack_trust_delete(stack_id):
    """Delete the stack's trust from Keystone, then its row (the stack is gone).

    Tried as heatweb's service user, then through the trust itself (as its
    trustor); a trust Keystone no longer has counts as deleted. A failure is
    logged and the row kept, so it can be retried.
    """
    trust = StackTrust.objects.filter(stack_id=stack_id).first() if enabled() else None
    if trust is None:
        return False
    url = f"{identity_url()}/OS-TRUST/trusts/{trust.trust_id}"
    status = None
    for session in (service_session, lambda: trust_session(trust.trust_id)):
        try:
            status = session().delete(url, raise_exc=False).status_code
        except Exception as error:  # keystoneauth's errors: Keystone down or the trust gone
            log.info("deleting trust %s: %s", trust.trust_id, error)
            continue
        if status in (204, 404):
            trust.delete()
            with _sessions_lock:
                _sessions.pop(f"trust:{trust.trust_id}", None)
            return True
    log.warning("could not delete Keystone trust %s of stack %s (last status %s)",
                trust.trust_id, stack_id, status)
    return False
