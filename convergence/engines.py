"""This process's engine identity (each worker process is one engine)."""
import os
import socket
import uuid

_identity = {}


def engine_id():
    """A stable id for this process; a forked child gets its own."""
    pid = os.getpid()
    if _identity.get("pid") != pid:
        _identity.update(pid=pid, id=f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:8]}")
    return _identity["id"]
