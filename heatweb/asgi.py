"""ASGI entry point: Django's WSGI handler behind ``BufferedWSGI`` (served by ``heatweb.web``)."""
import gc
import os
import threading

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")
django_application = get_wsgi_application()  # sets Django up: the imports below need it

from django.conf import settings  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from heatweb import keystone  # noqa: E402
from heatweb.buffering import BufferedWSGI  # noqa: E402
from heatweb.errors import error_body  # noqa: E402

application = BufferedWSGI(django_application,
                           threads=int(os.environ.get("HEATWEB_WEB_THREADS", 10)),
                           max_body_bytes=settings.HEATWEB["MAX_REQUEST_BYTES"],
                           body_seconds=settings.HEATWEB["BODY_READ_SECONDS"],
                           error_body=error_body)

# What is loaded now (the code, every URL's view) lives as long as the worker: kept out
# of the collector's full passes, each of which held every thread of the worker for 70-90
# ms over ~160,000 objects (docs/benchmarks.md, issue 38).
get_resolver().url_patterns
gc.collect()
gc.freeze()

if keystone.enabled():
    # Beside the worker's start, not in the way of its first request.
    threading.Thread(target=keystone.warm_up, name="keystone-warm-up", daemon=True).start()
