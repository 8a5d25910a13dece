"""Project-wide OpenAPI (drf-spectacular) hooks: the token scheme and Heat's error body.

Importing this module registers the authentication extension; the apps'
API schemas (``stacks/api/schema.py``) use ``HEAT_ERROR`` for their errors.
"""
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers as s


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "heatweb.auth.TokenAuthentication"
    name = "X-Auth-Token"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-Auth-Token",
                "description": "An API token from `manage.py issue_token`."}


HEAT_ERROR = inline_serializer("HeatError", {
    "code": s.IntegerField(), "title": s.CharField(), "explanation": s.CharField(),
    "error": inline_serializer("HeatErrorDetail", {
        "type": s.CharField(help_text="Heat's exception class name, e.g. StackLocked"),
        "message": s.CharField(), "traceback": s.CharField(allow_null=True)})})
