"""WSGI entry point (any WSGI server; ``heatweb.asgi`` serves it behind a request buffer)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")
application = get_wsgi_application()
