"""EC2 query signatures, version 2 (AWS's documented ``SignatureVersion=2``): what
os-collect-config's ``cfn`` collector signs its ``DescribeStackResource`` requests with,
and what heatweb checks them with when no Keystone does (the embedded mode).

The string signed is the verb, the host (as the ``Host`` header says it; not lowered, as keystoneclient's signer
and Keystone's check do not), the path and
the query's parameters but ``Signature``, sorted by name, each name and value
percent-encoded but for RFC 3986's unreserved characters, joined by ``&``; the HMAC is
SHA-256 or SHA-1 as ``SignatureMethod`` says, in base64. Pure Python, no Django.
"""
import base64
import hashlib
import hmac
from urllib.parse import quote

METHODS = {"HmacSHA256": hashlib.sha256, "HmacSHA1": hashlib.sha1}


def _encoded(text):
    return quote(str(text).encode("utf-8"), safe="-_.~")


def string_to_sign(*, verb, host, path, params):
    query = "&".join(f"{_encoded(k)}={_encoded(v)}" for k, v in sorted(params.items())
                     if k != "Signature")
    return f"{verb.upper()}\n{host}\n{path or '/'}\n{query}"


def signature_v2(secret, *, verb, host, path, params):
    """The base64 signature of a version 2 request (its ``SignatureMethod``, else
    HmacSHA256)."""
    digest = METHODS.get(params.get("SignatureMethod") or "HmacSHA256")
    if digest is None:
        raise ValueError(f"unknown SignatureMethod {params.get('SignatureMethod')}")
    text = string_to_sign(verb=verb, host=host, path=path, params=params)
    mac = hmac.new(secret.encode("utf-8"), text.encode("utf-8"), digest)
    return base64.b64encode(mac.digest()).decode("ascii")


def signed_params(secret, *, access, verb, host, path, params):
    """``params`` with ``AWSAccessKeyId``, ``SignatureVersion``, ``SignatureMethod`` and
    their ``Signature`` (what a client sends)."""
    signed = {**params, "AWSAccessKeyId": access, "SignatureVersion": "2",
              "SignatureMethod": params.get("SignatureMethod") or "HmacSHA256"}
    signed["Signature"] = signature_v2(secret, verb=verb, host=host, path=path,
                                       params=signed)
    return signed


def signature_matches(secret, *, verb, host, path, params):
    """Whether ``params["Signature"]`` signs the request; like Keystone, a host with a
    port is also tried without it (some clients sign the bare host name)."""
    given = (params.get("Signature") or "").encode("utf-8", errors="surrogatepass")
    hosts = [host] + ([host.rsplit(":", 1)[0]] if ":" in host else [])
    for name in hosts:
        try:
            wanted = signature_v2(secret, verb=verb, host=name, path=path, params=params)
        except ValueError:
            return False
        if hmac.compare_digest(wanted.encode("ascii"), given):
            return True
    return False
