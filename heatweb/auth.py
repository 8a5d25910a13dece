"""DRF authentication by the X-Auth-Token header python-heatclient sends."""
from rest_framework.authentication import BaseAuthentication

from heatweb.tokens import token_user


class TokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        raw = request.META.get("HTTP_X_AUTH_TOKEN")
        if not raw:
            return None
        # The tenant of the path: its memberships are read with the token (one statement).
        tenant_id = ((request.parser_context or {}).get("kwargs") or {}).get("tenant_id")
        return token_user(raw, project_id=tenant_id), raw

    def authenticate_header(self, request):
        return 'Token realm="heatweb"'
