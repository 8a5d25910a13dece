"""HOT's ``make_url``: a correctly escaped URL from its parts, as Heat builds it."""
from urllib.parse import quote, urlencode, urlunsplit

KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")


def check_url_parts(parts):
    """The reason ``parts`` cannot make a URL, or None."""
    unknown = sorted(set(parts) - set(KEYS))
    if unknown:
        return f'Invalid arguments to "make_url": {", ".join(unknown)}'
    for key, value in parts.items():
        if key == "query":
            if not isinstance(value, dict):
                return 'The "query" argument to "make_url" must be a map'
        elif key == "port":
            try:
                port = int(value)
            except (TypeError, ValueError):
                return f'Invalid URL port "{value}" for make_url'
            if not 0 < port <= 65535:
                return f"Invalid URL port {port}, must be in range 1-65535"
        elif not isinstance(value, str):
            return f'The "{key}" argument to "make_url" must be a string'
    if ":" in parts.get("scheme", ""):
        return "URL \"scheme\" should not contain ':'"
    return None


def _netloc(parts):
    username = quote(parts.get("username", ""), safe="")
    password = quote(parts.get("password", ""), safe="")
    userinfo = ""
    if username or password:
        userinfo = username + (f":{password}" if password else "") + "@"
    host = parts.get("host", "")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = quote(host, safe=":")
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = parts.get("port", "")
    return userinfo + host + (f":{port}" if port else "")


def make_url(parts):
    """The URL of checked ``parts``: path and fragment quoted, the query form-encoded."""
    query = urlencode(parts.get("query") or {}).replace("%2F", "/")
    return urlunsplit((parts.get("scheme", ""), _netloc(parts), quote(parts.get("path", "")),
                       query, quote(parts.get("fragment", ""))))
