"""Signed signal URLs (Heat's ``alarm_url``): a POST signals the resource, no token needed.

Plugins hand them out (a scaling policy's ``alarm_url``, a deployment's
``deploy_signal_id``); the webhook view checks them.
"""
import hashlib
import hmac
import re

from django.conf import settings


def url_signature(resource_uuid):
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"signal:{resource_uuid}".encode(), hashlib.sha256).hexdigest()[:40]


def signature_valid(resource_uuid, signature):
    # Bytes: compare_digest refuses str with non-ASCII characters (a TypeError, a 500).
    return hmac.compare_digest(url_signature(resource_uuid).encode(),
                               signature.encode("utf-8", errors="surrogatepass"))


def signal_url(resource_uuid):
    """A URL that signals the resource with a POST and no token (like Heat's alarm_url)."""
    base = settings.HEATWEB["PUBLIC_URL"].rstrip("/")
    return f"{base}/webhooks/signal/{resource_uuid}/{url_signature(resource_uuid)}"


_URL_UUID = re.compile(r"/signal/([0-9a-fA-F-]{32,36})/")


def handle_uuid(reference):
    """The handle's id in its signed URL (its reference), or the text itself."""
    found = _URL_UUID.search(str(reference or ""))
    return found.group(1) if found else reference
