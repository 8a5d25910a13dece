"""Processes that never outlive the process that started them (Linux's parent-death signal).

``manage.py serve`` starts the web server and a Celery worker; the web
server starts its worker processes; a Celery worker forks its pool. Killed
with ``kill -9``, a parent cannot stop its children: they become children of
PID 1 and go on (a web worker orphaned that way kept accepting on the port
beside the web tier started in its place). So each child asks the kernel
for a signal when its parent ends (``prctl(PR_SET_PDEATHSIG)``) and, since
the parent may have ended before that request, checks that its parent is
still the one that started it.

The kernel sends that signal when the *thread* that forked the child ends,
not the process: a child forked by another thread than the main one (a
billiard pool without an event loop replaces its processes from a
supervisor thread) instead watches its parent from a thread of its own.

The launcher passes its pid to its children in ``HEATWEB_LAUNCHER_PID``;
a child takes it out of its environment at once, so its own children (which
die with *it*) do not read it.
"""
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
LAUNCHER_ENV = "HEATWEB_LAUNCHER_PID"
WATCH_SECONDS = 1
# How long a process told to stop (SIGTERM: a Celery worker's warm shutdown) has before it
# is killed: a stop that hangs, or a signal that came while it was still starting, must
# not leave it running.
GRACE_SECONDS = 15

# Whether this process was forked by its parent's main thread (a fresh program is).
_forked_by = {"main_thread": True}


def _before_fork():
    _forked_by["main_thread"] = threading.current_thread() is threading.main_thread()


os.register_at_fork(before=_before_fork)


def die_with_parent(parent_pid, sig=signal.SIGKILL):
    """Have ``sig`` sent to this process when its parent ``parent_pid`` ends; when that
    parent has ended already, end now (with ``sig``'s default action)."""
    kernel = sys.platform.startswith("linux") and _forked_by["main_thread"]
    if kernel:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    if not kernel or sig != signal.SIGKILL:  # watched too: a stop that hangs is ended
        threading.Thread(target=_watch, args=(parent_pid, sig), name="lifeline",
                         daemon=True).start()
    if os.getppid() != parent_pid:
        _end(sig)


def _watch(parent_pid, sig):
    while os.getppid() == parent_pid:
        time.sleep(WATCH_SECONDS)
    _end(sig)
    if sig != signal.SIGKILL:
        time.sleep(GRACE_SECONDS)
        os.kill(os.getpid(), signal.SIGKILL)


def _end(sig):
    if threading.current_thread() is threading.main_thread():
        signal.signal(sig, signal.SIG_DFL)  # a handler of the process's must not catch it
    os.kill(os.getpid(), sig)


def die_with_launcher(sig=signal.SIGTERM):
    """In a child of ``manage.py serve``: end (``sig``, as the launcher's own stop sends)
    when the launcher ends. Nothing for a process started otherwise."""
    launcher = os.environ.pop(LAUNCHER_ENV, "")
    if launcher.isdigit():
        die_with_parent(int(launcher), sig)


def launcher_env():
    """The environment entry by which the launcher's children know it."""
    return {LAUNCHER_ENV: str(os.getpid())}
