"""The lock history: one row per lock, unlock, expiry, refusal or finding.

Written by the door (every refusal of a lock), the lock services and the
engine's sweeps; read by ``stacks.lock_selectors``.
"""
from stacks.models import LockRecord

ENGINE = "the engine"


def lock_record(stack, kind, *, user=None, level="", reason="", expires_at=None,
                held_seconds=None, detail="", allow=None):
    """Add a row to ``stack``'s lock history (in the caller's transaction); ``allow`` is
    the lock's mode (the stack's own by default)."""
    return LockRecord.objects.create(
        stack=stack, kind=kind, user=user if user and user.pk else None,
        username=user.username if user else ENGINE, level=level or "", reason=reason or "",
        expires_at=expires_at, held_seconds=held_seconds, detail=detail[:2000],
        allow=list(stack.lock_allow or []) if allow is None else list(allow))
