"""DRF authentication by the X-Auth-Token header python-heatclient sends."""
from rest_framework.authentication import BaseAuthentication

from heatweb.tokens import token_user


class TokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        raw = request.META.get("HTTP_X_AUTH_TOKEN")
        if not raw:
            return None
        return token_user(raw), raw

    def authenticate_header(self, request):
        return 'Token realm="heatweb"'
