"""Celery tasks of the stacks app: thin, idempotent, taking only ids."""
from celery import shared_task

from stacks.services import lock_modes, lock_schedule, lock_windows


@shared_task(name="stacks.lock_expire")
def lock_expire(stack_id):
    """A lock's window closed: unlock the stack as the engine (nothing if it moved on)."""
    lock_windows.lock_expire(stack_id)


@shared_task(name="stacks.lock_window_start")
def lock_window_start(window_id):
    """A scheduled window is due: lock its stack (or make it wait; nothing if it moved on)."""
    lock_schedule.window_start(window_id)


@shared_task(name="stacks.lock_resume")
def lock_resume(stack_id):
    """A stack a lock waits for settled: take the lock (nothing if it moved on)."""
    lock_modes.lock_resume(stack_id)
