"""A server's ``networks`` updated in place, as Heat's server network mixin does.

Each old entry stands for the interface it made: the server's port that agrees
with every key the entry gives (``port``, ``network``, ``subnet``,
``fixed_ip``). A new entry keeps an interface whose port agrees with every key
the new entry gives, so ``{network: n}`` becoming ``{network: n, fixed_ip:
<its address>}``, ``{subnet: s}`` or ``{port: <its port>}`` changes nothing.
The old interfaces no new entry keeps are detached; the new entries no
interface satisfies are attached. Pure: ids in, ids out.
"""

# Entries naming a port, then a fixed IP, are matched first: they have one candidate.
_SPECIFIC_FIRST = ("port", "fixed_ip")


def entry_ids(entry, find):
    """A ``networks`` entry with its names resolved to ids (``find(kind, name_or_id)``)."""
    out = {"port": None, "network": None, "subnet": None,
           "fixed_ip": entry.get("fixed_ip") or None}
    for key, kind in (("port", "port"), ("network", "network"), ("uuid", "network"),
                      ("subnet", "subnet")):
        if entry.get(key):
            out["port" if key == "port" else kind] = find(kind, entry[key])
    return out


def _agrees(interface, entry):
    return ((not entry["port"] or entry["port"] == interface["port"]) and
            (not entry["network"] or entry["network"] == interface["network"]) and
            (not entry["subnet"] or entry["subnet"] in interface["subnets"]) and
            (not entry["fixed_ip"] or entry["fixed_ip"] in interface["fixed_ips"]))


def _specific_first(entries):
    return sorted(entries, key=lambda e: [not e[key] for key in _SPECIFIC_FIRST])


def _take(candidates, entry):
    match = next((c for c in candidates if _agrees(c, entry)), None)
    if match is not None:
        candidates.remove(match)
    return match


def plan(old_entries, new_entries, interfaces):
    """``(ports to detach, entries to attach)`` for ``networks`` going from old to new.

    Interfaces no old entry made (attached outside the stack) are left alone.
    """
    free = list(interfaces)
    made = [m for m in (_take(free, e) for e in _specific_first(old_entries)) if m]
    attach = [e for e in _specific_first(new_entries) if _take(made, e) is None]
    order = {id(e): i for i, e in enumerate(new_entries)}
    return [i["port"] for i in made], sorted(attach, key=lambda e: order[id(e)])
