"""heat-api-cfn's query API as os-collect-config's ``cfn`` collector calls it: ``GET`` (or a
form ``POST``) of ``/v1/?Action=DescribeStackResource&...`` signed with EC2 version 2.
The answer is XML, as heat-api-cfn's (``ContentType=JSON``: JSON); the resource's
``Metadata`` is a JSON text in it, as Heat's serializer writes it."""
import json
from xml.etree import ElementTree

from django.http import HttpResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from softwareconfig.cfn import CfnError, describe_stack_resource


def _element(name, value):
    element = ElementTree.Element(name)
    if isinstance(value, dict) and name != "Metadata":
        element.extend(_element(k, v) for k, v in value.items())
    elif value is not None:
        element.text = json.dumps(value) if name == "Metadata" else str(value)
    return element


def _answer(body, *, as_json, status=200):
    if as_json:
        return HttpResponse(json.dumps(body), status=status, content_type="application/json")
    (name, value), = body.items()
    text = ElementTree.tostring(_element(name, value), encoding="unicode")
    return HttpResponse(text, status=status, content_type="application/xml")


@method_decorator(csrf_exempt, name="dispatch")
class CfnQueryApi(View):
    def get(self, request):
        return self._query(request, request.GET)

    def post(self, request):
        return self._query(request, request.POST)

    @staticmethod
    def _query(request, query):
        params = {key: query.get(key) for key in query}
        as_json = params.get("ContentType") == "JSON"
        host = request.META.get("HTTP_HOST") or \
            f"{request.META.get('SERVER_NAME')}:{request.META.get('SERVER_PORT')}"
        try:
            detail = describe_stack_resource(params=params, verb=request.method, host=host,
                                             path=request.path)
        except CfnError as error:
            kind = "Server" if error.status >= 500 else "Sender"
            return _answer({"ErrorResponse": {"Error": {
                "Type": kind, "Code": error.code, "Message": error.message}}},
                as_json=as_json, status=error.status)
        return _answer({"DescribeStackResourceResponse": {"DescribeStackResourceResult": {
            "StackResourceDetail": detail}}}, as_json=as_json)
