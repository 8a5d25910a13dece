"""A hidden parameter typed before a preview, carried to the next step sealed.

A ``hidden: true`` field is never rendered with its value, so after "Preview
changes" (or the launch form's Preview) the field comes back empty. What the
user typed travels in one hidden input as a Fernet token (AES-CBC + HMAC, key
derived from ``SECRET_KEY``): the page holds only ciphertext, the token names
the form it belongs to (a stack's update by one user, or one user's launch)
and expires after ``MAX_AGE`` seconds. Left empty, the field then means "the
value typed before the preview", so the update or launch does what the
preview showed.
"""
import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

FIELD = "hidden_carry"
MAX_AGE = 3600


def _fernet():
    digest = hashlib.sha256(b"heatweb.hidden-carry:" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def carry_scope(*, user, stack=None):
    """Which form a token is good for: one user's launch, or one user's update of a stack."""
    return f"update:{stack.pk}:{user.pk}" if stack is not None else f"launch:{user.pk}"


def seal(values, *, scope):
    """A token holding ``values`` (``{name: value}``) for ``scope``; "" when there are none."""
    if not values:
        return ""
    payload = json.dumps({"scope": scope, "values": values}).encode()
    return _fernet().encrypt(payload).decode()


def unseal(token, *, scope):
    """The values a token holds, ``{}`` when it is missing, forged, expired or for another form."""
    if not token:
        return {}
    try:
        data = json.loads(_fernet().decrypt(token.encode(), ttl=MAX_AGE))
    except (InvalidToken, ValueError, TypeError):
        return {}
    if not isinstance(data, dict) or data.get("scope") != scope:
        return {}
    values = data.get("values")
    return values if isinstance(values, dict) else {}
