"""heatweb's EC2 signature v2 check agrees with keystoneclient's ``Ec2Signer`` (what
os-collect-config signs with and Keystone checks with) and with heatweb's agent's signer."""
import importlib.util
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from keystoneclient.contrib.ec2.utils import Ec2Signer

from heatweb import ec2_signature

SECRET = "0123456789abcdef0123456789abcdef"
PARAMS = {"Action": "DescribeStackResource", "StackName": "st ack/é~x",
          "LogicalResourceId": "server", "AWSAccessKeyId": "AK", "SignatureVersion": "2"}


def keystone_signed(params, host="127.0.0.1:8004"):
    params = dict(params)
    params["Signature"] = Ec2Signer(SECRET).generate(
        {"params": params, "verb": "GET", "host": host, "path": "/v1/"})
    return params  # the signer adds SignatureMethod, as on the wire


def test_keystoneclients_signature_matches():
    params = keystone_signed(PARAMS)
    assert params["SignatureMethod"] == "HmacSHA256"
    assert ec2_signature.signature_matches(SECRET, verb="GET", host="127.0.0.1:8004",
                                           path="/v1/", params=params)
    assert ec2_signature.signed_params(
        SECRET, access="AK", verb="GET", host="127.0.0.1:8004", path="/v1/",
        params={k: v for k, v in PARAMS.items() if k not in ("AWSAccessKeyId",
                                                             "SignatureVersion")}
    )["Signature"] == params["Signature"]


def test_a_signature_of_the_bare_host_name_matches_and_wrong_ones_do_not():
    assert ec2_signature.signature_matches(SECRET, verb="GET", host="127.0.0.1:8004",
                                           path="/v1/", params=keystone_signed(
                                               PARAMS, host="127.0.0.1"))
    for change in ({"StackName": "other"}, {"Signature": "x"}, {"SignatureMethod": "MD5"}):
        params = {**keystone_signed(PARAMS), **change}
        assert not ec2_signature.signature_matches(SECRET, verb="GET", host="127.0.0.1:8004",
                                                   path="/v1/", params=params)
    assert not ec2_signature.signature_matches("f" * 32, verb="GET", host="127.0.0.1:8004",
                                               path="/v1/", params=keystone_signed(PARAMS))


def test_the_agents_signed_url_is_keystoneclients():
    path = Path(__file__).resolve().parents[2] / "softwareconfig/agent/heatweb_agent.py"
    spec = importlib.util.spec_from_file_location("heatweb_agent_for_test", path)
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    url = agent.ec2_signed_url("http://127.0.0.1:8004/v1/", {
        k: v for k, v in PARAMS.items() if k not in ("AWSAccessKeyId", "SignatureVersion")},
        access="AK", secret=SECRET)
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("127.0.0.1:8004", "/v1/")
    assert dict(parse_qsl(parts.query)) == keystone_signed(PARAMS)
