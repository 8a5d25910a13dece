"""The OpenStack driver's shared low-level calls: every other module of it stands on these.

A call to the cloud goes through ``call``: a refused connection or a
502/503/504 is tried again with a short backoff first, every refusal
becomes a ``CloudError`` carrying the cloud's own message and HTTP status
(``CloudNotFound`` for a 404). ``gone`` is a call where a 404 is an answer
(None), ``raise_for`` the same mapping for a raw REST response (Cinder's QoS
specs, Swift, Barbican).
"""
import logging
import re
import time
import uuid

from keystoneauth1 import exceptions as ksa_exceptions
from openstack import exceptions as os_exceptions

from stacks.cloud.driver import CloudError, CloudNotFound

log = logging.getLogger("stacks.cloud.openstack")

# The name of the creation key on what heatweb makes (Nova metadata, Glance property).
KEY_PROPERTY = "heatweb_creation_key"
TRANSIENT_STATUS = (502, 503, 504)
# Backoff between tries of a transient failure (seconds). Short: a call is
# made from a worker's poll, and a longer outage fails the resource.
RETRY_DELAYS = (0.5, 1.5, 3.0)


def cloud_message(error):
    """The cloud's own words for a failed call (no traceback, no URL)."""
    if isinstance(error, os_exceptions.HttpException):
        detail = (error.details or error.message or "").strip()
        return f"{detail} (HTTP {error.status_code})" if error.status_code else detail
    return str(error)


def glance_words(body):
    """Glance's message in its HTML error page (the line after the title)."""
    text = [line.strip() for line in re.sub(r"<[^>]+>", "\n", body or "").splitlines()
            if line.strip()]
    return text[-1] if text else "Glance refused the request"


def call(function, *args, **kwargs):
    """Call the cloud; transient failures are tried again, refusals become CloudError."""
    for attempt, delay in enumerate((*RETRY_DELAYS, None)):
        try:
            return function(*args, **kwargs)
        except os_exceptions.ResourceNotFound as error:
            raise CloudNotFound(cloud_message(error)) from None
        except (ksa_exceptions.ConnectFailure, ksa_exceptions.ConnectTimeout,
                os_exceptions.HttpException) as error:
            status = getattr(error, "status_code", None)
            transient = status in TRANSIENT_STATUS or not isinstance(
                error, os_exceptions.HttpException)
            if not transient or delay is None:
                raise CloudError(cloud_message(error)) from None
            log.warning("cloud call %s failed (%s), try %d again in %ss",
                        getattr(function, "__name__", function), error, attempt + 2, delay)
            # A real wait, but bounded (5 s in all): cheaper than failing a resource.
            time.sleep(delay)
        except (os_exceptions.SDKException, ksa_exceptions.ClientException) as error:
            # (the second: Keystone refusing the session's token, e.g. an expired one)
            raise CloudError(cloud_message(error)) from None


def gone(function, *args, **kwargs):
    """``function(...)``, or None when the object is gone (404)."""
    try:
        return call(function, *args, **kwargs)
    except CloudNotFound:
        return None


def raise_for(response):
    """A raw REST response, or the service's refusal (status 400 and up) as a CloudError."""
    if response.status_code >= 400:
        raise CloudError(f"{response.text.strip()} (HTTP {response.status_code})")
    return response


def is_id(value):
    """Whether ``value`` is a UUID (an object's id rather than its name)."""
    try:
        uuid.UUID(str(value))
        return True
    except ValueError:
        return False
