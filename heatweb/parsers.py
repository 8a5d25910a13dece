"""The API's JSON body parser: bounded, and strict about what it accepts.

Every DRF endpoint parses its body here (``DEFAULT_PARSER_CLASSES``), so
each one refuses, before any code sees the data: a body larger than
``MAX_REQUEST_BYTES`` (413), text that is not UTF-8, lone surrogates and NUL,
``NaN``/``Infinity``, and nesting deeper than ``MAX_NESTING`` (400).
"""
from django.conf import settings
from rest_framework.parsers import JSONParser

from heatweb.exceptions import BadRequest, RequestLimitExceeded
from heatweb.inputs import load_json


def read_bounded(stream, limit):
    """At most ``limit`` bytes of ``stream``; 413 when there are more."""
    data = stream.read(limit + 1) if stream is not None else b""
    if len(data) > limit:
        raise RequestLimitExceeded(f"The request body is larger than {limit} bytes.")
    return data


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        budgets = settings.HEATWEB
        raw = read_bounded(stream, budgets["MAX_REQUEST_BYTES"])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadRequest(f"The request body is not UTF-8 text: {error}") from None
        return load_json(text, max_depth=budgets["MAX_NESTING"],
                         max_nodes=budgets["MAX_REQUEST_BYTES"])
