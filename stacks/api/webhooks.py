"""Signed signal URLs (``alarm_url``): POST without a token, the signature is the secret."""
import hmac
import time

from django.conf import settings
from django.http import HttpResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from heatweb.inputs import load_json
from stacks.cloud.driver import CloudNotFound
from stacks.cloud.simulated.object_store import TEMP_URL_PATH, swift_object_put, \
    temp_url_signature
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

    def put(self, request, resource_id, signature):
        """cfn-signal (heat-cfntools) PUTs its JSON to a wait condition handle's URL with an
        empty Content-Type: the body is read as JSON whatever the type says."""
        res = webhook_resource(resource_id, signature)
        text = request.body.decode("utf-8", errors="replace").strip()
        data = load_json(text, max_depth=settings.HEATWEB["MAX_NESTING"],
                         max_nodes=settings.HEATWEB["MAX_DOCUMENT_NODES"],
                         what="signal") if text else {}
        stack_action(res.stack, "signal", resource_name=res.name,
                     details=data if isinstance(data, dict) else {})
        return Response(status=status.HTTP_200_OK)


@method_decorator(csrf_exempt, name="dispatch")
class SimulatedTempUrlApi(View):
    """The simulated Swift's temp URLs (``OS::Heat::SwiftSignalHandle``): a PUT with a valid
    signature, not expired, stores the body as the object's new version (64 KiB at most)."""

    def put(self, request, container, name):
        path = f"{TEMP_URL_PATH}/{container}/{name}"
        expires = request.GET.get("temp_url_expires", "")
        signature = request.GET.get("temp_url_sig", "")
        if not expires.isdigit() or int(expires) < time.time() or not hmac.compare_digest(
                temp_url_signature("PUT", expires, path).encode(),
                signature.encode("utf-8", errors="surrogatepass")):
            return HttpResponse("Unauthorized\n", status=401, content_type="text/plain")
        if len(request.body) > 65536:
            return HttpResponse("Request Entity Too Large\n", status=413,
                                content_type="text/plain")
        try:
            swift_object_put(container, name, request.body.decode("utf-8", errors="replace"))
        except CloudNotFound:
            return HttpResponse("Not Found\n", status=404, content_type="text/plain")
        return HttpResponse(status=201)
