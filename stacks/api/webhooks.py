"""Signed signal URLs (``alarm_url``): POST without a token, the signature is the secret."""
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from stacks.services.actions import stack_action
from stacks.services.signals import webhook_resource


class SignalWebhookApi(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    def post(self, request, resource_id, signature):
        data = request.data if isinstance(request.data, dict) else {}
        res = webhook_resource(resource_id, signature)
        stack_action(res.stack, "signal", resource_name=res.name, details=data)
        return Response(status=status.HTTP_200_OK)
