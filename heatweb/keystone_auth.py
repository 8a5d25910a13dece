"""Keystone mode's ways in: the API's token authentication, the pages'
password sign-in, and the page session's Keystone identity.

The work (validating tokens, asking Keystone, syncing users) is in
``heatweb.keystone``; these are the Django and DRF hooks around it.
"""
from datetime import datetime, timezone

from django.contrib.auth import get_user_model, logout
from django.contrib.auth.backends import BaseBackend
from django.contrib.auth.signals import user_logged_in
from rest_framework.authentication import BaseAuthentication

from heatweb import keystone
from heatweb.exceptions import NotAuthenticated

SESSION_KEY = "heatweb_keystone"


class KeystoneTokenAuthentication(BaseAuthentication):
    """DRF authentication by a Keystone token in ``X-Auth-Token``.

    An invalid, expired or revoked token is a 401 in Heat's error format.
    """

    def authenticate(self, request):
        raw = request.META.get("HTTP_X_AUTH_TOKEN")
        if not raw:
            return None
        identity = keystone.token_identity(raw)
        if identity is None:
            raise NotAuthenticated("The Keystone token is invalid, expired or revoked.")
        return keystone.user_for_identity(identity), raw

    def authenticate_header(self, request):
        return f'Keystone uri="{keystone.identity_url()}"'


class KeystonePasswordBackend(BaseBackend):
    """Signs people in to the pages with their Keystone user name and password.

    Their projects and roles are synced into memberships at each sign-in;
    the unscoped token is kept in the session (see ``remember_sign_in``) so
    stacks launched from the pages get their trust.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not keystone.enabled() or not username or not password:
            return None
        return keystone.password_sign_in(username, password)

    def get_user(self, user_id):
        return get_user_model().objects.filter(pk=user_id, is_active=True).first()


def remember_sign_in(sender, request, user, **kwargs):
    """Keep a Keystone sign-in's token in the (new) session."""
    identity = getattr(user, "keystone", None)
    if identity is None or request is None:
        return
    request.session[SESSION_KEY] = {
        "token": identity.token, "user_id": identity.user_id, "user_name": identity.user_name,
        "user_domain": identity.user_domain,
        "expires_at": getattr(user, "keystone_expires_at", "")}


user_logged_in.connect(remember_sign_in, dispatch_uid="heatweb-keystone-sign-in")


class KeystoneSessionMiddleware:
    """Gives a page request's user its Keystone identity from the session.

    When the Keystone token has expired the person is signed out, so the
    pages never act with a token Keystone would refuse.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        saved = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
        if saved and request.user.is_authenticated:
            if _expired(saved.get("expires_at")):
                logout(request)
            else:
                request.user.keystone = keystone.KeystoneIdentity(
                    token=saved["token"], user_id=saved["user_id"],
                    user_name=saved["user_name"], user_domain=saved.get("user_domain", ""))
        return self.get_response(request)


def _expired(expires_at):
    if not expires_at:
        return False
    try:
        when = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return True
    return when <= datetime.now(timezone.utc)
