"""``manage.py serve``: web server and worker in one command (Ctrl-C stops both)."""
import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from heatweb.data_dirs import forget_server, record_server
from heatweb.launcher import WEB_THREADS, WEB_WORKERS, serve
from heatweb.public_url import bind_public_url, record_public_url


class Command(BaseCommand):
    help = ("Run the web server (heatweb.web) and a Celery worker together, with the same "
            "environment; Ctrl-C stops both. --no-worker / --worker-only split them for the "
            "distributed mode.")

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8004)),
                            help="port on 127.0.0.1 (default 8004; HEATWEB_BIND overrides)")
        parser.add_argument("--bind", default=os.environ.get("HEATWEB_BIND"),
                            help="web server bind address, e.g. 0.0.0.0:8004")
        parser.add_argument("--workers", "--web-workers", dest="web_workers", type=int,
                            default=WEB_WORKERS,
                            help=f"web server worker processes ({WEB_THREADS} threads each)")
        parser.add_argument("--concurrency", type=int,
                            default=int(os.environ.get("HEATWEB_CONCURRENCY", 2)),
                            help="pool processes of the Celery worker (each one is an engine)")
        parser.add_argument("--log-level", default="info", help="the Celery worker's log level")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--no-worker", action="store_true", help="only the web server")
        group.add_argument("--worker-only", action="store_true", help="only the Celery worker")

    def handle(self, *args, **opts):
        if opts["web_workers"] < 1 or opts["concurrency"] < 1:
            raise CommandError("--workers and --concurrency must be at least 1")
        bind = opts["bind"] or f"127.0.0.1:{opts['port']}"
        # The children (and issue_token or bootstrap run later in another shell) use the
        # URL this server is reached at, not the default port's.
        url = os.environ.get("HEATWEB_PUBLIC_URL") or bind_public_url(bind)
        os.environ["HEATWEB_PUBLIC_URL"] = settings.HEATWEB["PUBLIC_URL"] = url
        record_public_url(settings.DATA_DIR, url)
        # issue_token and the other commands, run in another shell, find this data dir.
        record = record_server(settings.DATA_DIR)
        try:
            status = serve(bind=bind, web_workers=opts["web_workers"],
                           concurrency=opts["concurrency"], web=not opts["worker_only"],
                           worker=not opts["no_worker"], log_level=opts["log_level"])
        finally:
            forget_server(record)
        raise SystemExit(status)
