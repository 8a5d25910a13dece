"""Runs the web server (``heatweb.web``) and a Celery worker together; Ctrl-C stops both.

Each child gets this process's environment (so the run mode, chosen by
DATABASE_URL / CELERY_BROKER_URL, is the same for both), and its output is
forwarded line by line with a ``[web]`` / ``[worker]`` prefix. On SIGINT or
SIGTERM both children are stopped (SIGTERM, then SIGKILL after a grace
period) and waited for. When one child dies on its own (a kill -9, the OOM
killer) it is started again and the other keeps running: stopping the
worker with the web server left the broker's queue to grow with nobody
draining it. A child that dies ``RESTART_LIMIT`` times within
``RESTART_WINDOW_SECONDS`` (it cannot start) stops everything, exit status 1.
The children never outlive this process, even when it is killed with
``kill -9`` (``heatweb.lifeline``: they get SIGTERM when it ends).
"""
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

from django.conf import settings

from heatweb.lifeline import launcher_env

STOP_GRACE_SECONDS = float(os.environ.get("HEATWEB_STOP_GRACE", 30))
RESTART_LIMIT = 5
RESTART_WINDOW_SECONDS = 60


# The web server's default on the 2-core machine kind: one worker process
# per core (a worker runs Python on one core at a time), 10 threads each.
# A worker runs as many requests at once as it has threads and
# queues the rest behind them, so with 4 threads a show waited for the pages
# queued before it; with 10 the requests a worker holds share its core and a
# short one finishes early (bench_api, 20 readers, interleaved runs: stack list
# p50 59 ms with 10 threads against 81-99 ms with 4, 16 no better than 10).
# More workers did not help: clients keep their connections alive and stay
# on the worker that accepted them (with 4 workers one got none). Each thread
# keeps a database connection: 20 for the web server.
WEB_WORKERS = int(os.environ.get("HEATWEB_WEB_WORKERS", 2))
WEB_THREADS = int(os.environ.get("HEATWEB_WEB_THREADS", 10))


def web_command(*, bind, web_workers):
    """The web server's command line, as ``serve`` runs it (``bench_api`` and the live
    tests run the same); its threads per worker come from ``HEATWEB_WEB_THREADS``."""
    return [sys.executable, "-m", "heatweb.web", "--bind", bind, "--workers", str(web_workers)]


def _commands(*, bind, web_workers, concurrency, web, worker, log_level="info"):
    bin_dir = os.path.dirname(sys.executable)
    commands = {}
    if web:
        commands["web"] = web_command(bind=bind, web_workers=web_workers)
    if worker:
        commands["worker"] = [os.path.join(bin_dir, "celery"), "-A", "heatweb", "worker",
                              "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "-l", log_level,
                              "--concurrency", str(concurrency)]
    return commands


_print_lock = threading.Lock()


def _forward(name, stream, out):
    """Copy a child's output to ours, one prefixed line at a time."""
    prefix = f"[{name}] "
    for line in iter(stream.readline, ""):
        with _print_lock:
            out.write(prefix + line if line.endswith("\n") else prefix + line + "\n")
            out.flush()
    stream.close()


def _start(name, command, env):
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, bufsize=1, errors="replace")
    thread = threading.Thread(target=_forward, args=(name, proc.stdout, sys.stdout),
                              name=f"forward-{name}", daemon=True)
    thread.start()
    return proc, thread


def served_hosts_env(bind, environ):
    """The children's ``DJANGO_ALLOWED_HOSTS`` for ``bind`` when none is configured.

    The web server then accepts exactly the names it is reached by: the bound
    address (for a wildcard bind, this machine's names), the public URL's host
    and loopback. Any other Host header is a 400.
    """
    if environ.get("DJANGO_ALLOWED_HOSTS"):
        return {}
    host = bind.rsplit(":", 1)[0].strip("[]") if ":" in bind else bind
    names = [host]
    if host in ("0.0.0.0", "::", ""):
        names = [socket.gethostname(), socket.getfqdn()]
        try:
            names.append(socket.gethostbyname(socket.gethostname()))
        except OSError:
            pass
    public = urlsplit(settings.HEATWEB["PUBLIC_URL"]).hostname
    names += [public, "127.0.0.1", "localhost", "[::1]"]
    return {"DJANGO_ALLOWED_HOSTS": ",".join(dict.fromkeys(n for n in names if n))}


def _say(message):
    with _print_lock:
        print(f"heatweb: {message}", file=sys.stderr, flush=True)


def serve(*, bind, web_workers=WEB_WORKERS, concurrency=2, web=True, worker=True, log_level="info"):
    """Start the children, forward their output, restart one that dies, stop all on a signal.

    A child that stops by itself is started again (see the module's
    docstring). Returns the exit status: 0 after a signal, 1 when a child
    kept dying.
    """
    commands = _commands(bind=bind, web_workers=web_workers, concurrency=concurrency,
                         web=web, worker=worker, log_level=log_level)
    if not commands:
        raise ValueError("nothing to run: both the web server and the worker are off")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **served_hosts_env(bind, os.environ),
           **launcher_env()}
    stopping = {"signal": None}

    def stop(signum, frame):
        stopping["signal"] = signum

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    children = {}
    deaths = {name: [] for name in commands}
    exit_code = 0
    try:
        for name, command in commands.items():
            children[name] = _start(name, command, env)
            _say(f"started {name} (pid {children[name][0].pid}): {' '.join(command)}")
        while stopping["signal"] is None:
            dead = [n for n, (p, _) in children.items() if p.poll() is not None]
            if not all(_restart(n, children, deaths[n], commands[n], env) for n in dead):
                exit_code = 1
                break
            time.sleep(0.3)
        else:
            _say(f"got {signal.Signals(stopping['signal']).name}; stopping "
                 f"{', '.join(children)}")
    finally:
        _stop_all(children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return exit_code


def _restart(name, children, deaths, command, env):
    """Start a child that stopped by itself again; False when it died too often to go on."""
    proc, thread = children[name]
    thread.join(timeout=1)  # its last lines first
    now = time.monotonic()
    deaths[:] = [t for t in deaths if now - t < RESTART_WINDOW_SECONDS] + [now]
    if len(deaths) >= RESTART_LIMIT:
        _say(f"{name} stopped with exit status {proc.returncode}, {len(deaths)} times within "
             f"{RESTART_WINDOW_SECONDS} s; stopping the rest")
        return False
    _say(f"{name} (pid {proc.pid}) stopped with exit status {proc.returncode}; starting it again")
    children[name] = _start(name, command, env)
    _say(f"started {name} (pid {children[name][0].pid})")
    return True


def _stop_all(children):
    for proc, _ in children.values():
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for name, (proc, _) in children.items():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _say(f"{name} did not stop within {STOP_GRACE_SECONDS:g} s; killing it")
            proc.kill()
            proc.wait()
    for _, thread in children.values():
        thread.join(timeout=5)
