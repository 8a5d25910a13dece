"""Values heatweb keeps encrypted at rest (Heat's ``crypt.encrypt`` of resource data
stored with ``redact=True``): a stack user's password.

A value is a Fernet token (AES-128-CBC and HMAC-SHA256, as Heat's
``cryptography_decrypt_v1``) under a key derived from ``SECRET_KEY``, stored as
``fernet:<token>``. A value without that prefix is one stored before it was encrypted (or
adopted from Heat's abandon data, which holds the clear value) and reads as it is.
"""
import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

PREFIX = "fernet:"


@lru_cache(maxsize=4)
def _fernet(secret_key):
    digest = hashlib.sha256(b"heatweb encrypted resource data\0" + secret_key.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(value):
    """``value`` (a string) encrypted, as it is stored."""
    return PREFIX + _fernet(settings.SECRET_KEY).encrypt(value.encode()).decode()


def decrypt(stored):
    """The clear value of what ``encrypt`` stored (a value stored clear reads as it is);
    None stays None. A token another key made raises ``ValueError``."""
    if not isinstance(stored, str) or not stored.startswith(PREFIX):
        return stored
    try:
        return _fernet(settings.SECRET_KEY).decrypt(stored[len(PREFIX):].encode()).decode()
    except InvalidToken:
        raise ValueError("an encrypted value does not decrypt with this SECRET_KEY") from None


def is_encrypted(stored):
    return isinstance(stored, str) and stored.startswith(PREFIX)
