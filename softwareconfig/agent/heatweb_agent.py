#!/usr/bin/env python3
"""heatweb-agent: applies a server's software deployments, like Heat's in-instance tools.

Standalone: Python 3.8+ standard library only, no Django, so it can be
copied to a server as it is (with the ``hooks/`` folder next to it).

For one server id it polls ``GET {endpoint}/software_deployments/metadata/{server}``
with a token, or (``--cfn-metadata-url`` and the rest of os-collect-config's ``cfn``
settings, which a ``POLL_SERVER_CFN`` server's metadata carries) the CloudFormation
API's ``DescribeStackResource`` of the server, signed with its EC2 key pair (signature
version 2, as os-collect-config's ``cfn`` collector), and takes the ``deployments`` of
the resource's metadata. For each config not applied yet:

* group ``component``: picks the entry whose ``actions`` contain the config's
  ``deploy_action`` (none: nothing to run, says so) and runs that entry's
  ``config`` with the hook named by its ``tool`` (options: ``options[tool]``);
* any other group: runs the config with the hook named by the group.

A hook is an executable file named after the tool, in one of the hook
directories; it reads one JSON config on stdin and prints one JSON result
(outputs, deploy_stdout, deploy_stderr, deploy_status_code): the heat-config
hook protocol, so Heat's hooks work unchanged. The result is signalled back
as the ``deploy_signal_transport`` input says (HEAT_SIGNAL: POST with the
token; CFN_SIGNAL/TEMP_URL_SIGNAL: POST to the signed URL; NO_SIGNAL:
nothing). Each applied config is recorded under ``--state-dir/deployed`` so
a restart reruns nothing; a signal that could not be sent is retried.

    heatweb_agent.py --endpoint http://HOST:8004/v1/PROJECT --token TOKEN \\
        --server-id SERVER [--once | --interval 10] [--hooks-dir DIR]
    heatweb_agent.py --cfn-metadata-url http://HOST:8004/v1/ --access-key-id KEY \\
        --secret-access-key SECRET --stack-name STACK --path server.Metadata ...
"""
import argparse
import base64
import hashlib
import hmac
import json
import logging
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from xml.etree import ElementTree

log = logging.getLogger("heatweb-agent")
HERE = Path(__file__).resolve().parent
HOOK_TIMEOUT = 3600


def _quoted(text):
    return urllib.parse.quote(str(text).encode("utf-8"), safe="-_.~")


def ec2_signed_url(url, params, *, access, secret):
    """``url`` with ``params`` and their EC2 signature, version 2 with HmacSHA256 (the
    verb, the host as the URL names it, the path and the sorted query, signed)."""
    parts = urllib.parse.urlsplit(url)
    params = {**params, "AWSAccessKeyId": access, "SignatureVersion": "2",
              "SignatureMethod": "HmacSHA256"}
    query = "&".join(f"{_quoted(k)}={_quoted(v)}" for k, v in sorted(params.items()))
    text = f"GET\n{parts.netloc}\n{parts.path or '/'}\n{query}"
    mac = hmac.new(secret.encode(), text.encode(), hashlib.sha256).digest()
    query += "&Signature=" + _quoted(base64.b64encode(mac).decode())
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))


class Agent:
    def __init__(self, *, endpoint=None, token=None, server_id=None, state_dir, hooks_dirs,
                 cfn=None, http_timeout=30):
        self.endpoint = (endpoint or "").rstrip("/")
        self.token = token
        self.server_id = server_id
        self.cfn = cfn  # os-collect-config's cfn settings, or None
        self.state_dir = Path(state_dir)
        self.deployed_dir = self.state_dir / "deployed"
        self.deployed_dir.mkdir(parents=True, exist_ok=True)
        self.hooks_dirs = [Path(d) for d in hooks_dirs]
        self.http_timeout = http_timeout

    # HTTP -------------------------------------------------------------------------

    def _request(self, method, url, body=None, *, token=True):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token and self.token:
            request.add_header("X-Auth-Token", self.token)
        with urllib.request.urlopen(request, timeout=self.http_timeout) as answer:
            text = answer.read().decode() or "null"
        return json.loads(text)

    def metadata(self):
        if self.cfn:
            return self.cfn_metadata().get("deployments") or []
        url = f"{self.endpoint}/software_deployments/metadata/{self.server_id}"
        return self._request("GET", url)["metadata"]

    def cfn_metadata(self):
        """The metadata of ``--path`` (``RESOURCE.Metadata``) by ``DescribeStackResource``."""
        cfn = self.cfn
        resource, _, field = cfn["path"].partition(".")
        url = ec2_signed_url(cfn["metadata_url"], {
            "Action": "DescribeStackResource", "StackName": cfn["stack_name"],
            "LogicalResourceId": resource}, access=cfn["access_key_id"],
            secret=cfn["secret_access_key"])
        request = urllib.request.Request(url, method="GET")
        with urllib.request.urlopen(request, timeout=self.http_timeout) as answer:
            root = ElementTree.fromstring(answer.read())
        found = root.find(f"DescribeStackResourceResult/StackResourceDetail/{field or 'Metadata'}")
        if found is None or not found.text:
            raise ValueError(f"no {field} in the DescribeStackResource answer")
        value = json.loads(found.text)
        if not isinstance(value, dict):
            raise ValueError(f"{field} is not a JSON object")
        return value

    # One pass ------------------------------------------------------------------------

    def run_once(self):
        """Apply every config not applied yet; returns how many were applied now."""
        applied = 0
        for config in self.metadata():
            record = self.deployed_dir / f"{config['id']}.json"
            if record.exists():
                done = json.loads(record.read_text())
                if not done.get("signalled"):
                    self._signal_and_record(config, done["result"], record)
                continue
            result = self.apply(config)
            self._signal_and_record(config, result, record)
            applied += 1
        return applied

    def _signal_and_record(self, config, result, record):
        record.write_text(json.dumps({"result": result, "signalled": False}))
        try:
            self.signal(config, result)
        except (urllib.error.URLError, OSError, ValueError) as error:
            log.error("config %s: could not signal the result (%s); will retry",
                      config["id"], error)
            return
        record.write_text(json.dumps({"result": result, "signalled": True}))

    def apply(self, config):
        inputs = {i.get("name"): i.get("value") for i in config.get("inputs") or []}
        action = inputs.get("deploy_action")
        where = f"config {config['id']} ({config.get('name')}, {action})"
        hook_config = config
        tool = config.get("group")
        if tool == "component":
            entry = next((e for e in (config.get("config") or {}).get("configs", [])
                          if action in (e.get("actions") or [])), None)
            if entry is None:
                log.info("%s: the component has no config for action %s: nothing to run",
                         where, action)
                return {"deploy_stdout": "", "deploy_status_code": 0,
                        "deploy_stderr": f"heatweb-agent: no config for action {action}"}
            tool = entry.get("tool")
            options = config.get("options") or {}
            hook_config = {**config, "group": tool, "config": entry.get("config"),
                           "options": options.get(tool, {}) if isinstance(options, dict) else {}}
        hook = self.find_hook(tool)
        if hook is None:
            message = (f"heatweb-agent: no hook installed for tool '{tool}' (looked in "
                       f"{', '.join(str(d) for d in self.hooks_dirs)})")
            log.error("%s: %s", where, message)
            return {"deploy_stdout": "", "deploy_stderr": message, "deploy_status_code": 127}
        log.info("%s: running hook %s", where, hook)
        return self.run_hook(hook, hook_config, where)

    def find_hook(self, tool):
        if not tool or "/" in tool or tool.startswith("."):
            return None
        for folder in self.hooks_dirs:
            path = folder / tool
            if path.is_file() and os.access(path, os.X_OK):
                return path
        return None

    def run_hook(self, hook, hook_config, where):
        env = dict(os.environ)
        env.setdefault("HEAT_SCRIPT_WORKING", str(self.state_dir / "heat-config-script"))
        env.setdefault("HEAT_SCRIPT_OUTPUTS", str(self.state_dir / "heat-config-script-outputs"))
        try:
            done = subprocess.run([str(hook)], input=json.dumps(hook_config), env=env,
                                  capture_output=True, text=True, timeout=HOOK_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as error:
            log.error("%s: hook %s could not run: %s", where, hook, error)
            return {"deploy_stdout": "", "deploy_stderr": f"heatweb-agent: hook {hook.name} "
                    f"could not run: {error}", "deploy_status_code": 126}
        try:
            result = json.loads(done.stdout)
            if not isinstance(result, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            log.error("%s: hook %s exited %s without a JSON result (%s); stderr: %s", where,
                      hook.name, done.returncode, error, done.stderr.strip()[-500:])
            return {"deploy_stdout": done.stdout[-10000:],
                    "deploy_stderr": (done.stderr[-10000:] + f"\nheatweb-agent: hook "
                                      f"{hook.name} exited {done.returncode} without a JSON "
                                      f"result ({error})").lstrip(),
                    "deploy_status_code": done.returncode or 1}
        if done.returncode and not result.get("deploy_status_code"):
            result["deploy_status_code"] = done.returncode
            result["deploy_stderr"] = (str(result.get("deploy_stderr") or "") + done.stderr)
        log.info("%s: hook %s finished with deploy_status_code %s", where, hook.name,
                 result.get("deploy_status_code"))
        return result

    def signal(self, config, result):
        inputs = {i.get("name"): i.get("value") for i in config.get("inputs") or []}
        transport = inputs.get("deploy_signal_transport") or "NO_SIGNAL"
        url = inputs.get("deploy_signal_id")
        if transport == "NO_SIGNAL" or not url:
            log.info("config %s: %s, not signalling", config["id"], transport)
            return
        verb = inputs.get("deploy_signal_verb") or "POST"
        self._request(verb, url, result, token=transport == "HEAT_SIGNAL")
        log.info("config %s: signalled (%s)", config["id"], transport)


def parse_args(argv):
    env = os.environ.get
    parser = argparse.ArgumentParser(description="Apply a server's software deployments.")
    parser.add_argument("--endpoint", default=env("HEATWEB_AGENT_ENDPOINT"),
                        help="orchestration endpoint with the project: http://HOST/v1/PROJECT")
    parser.add_argument("--token", default=env("HEATWEB_AGENT_TOKEN"), help="API token")
    parser.add_argument("--server-id", default=env("HEATWEB_AGENT_SERVER_ID"),
                        help="the server whose deployments to apply")
    parser.add_argument("--state-dir", default=env("HEATWEB_AGENT_STATE_DIR",
                                                   "/var/lib/heatweb-agent"),
                        help="where applied deployments are recorded")
    parser.add_argument("--hooks-dir", action="append", default=[],
                        help="extra hook directory (repeatable; searched before the built-in)")
    parser.add_argument("--once", action="store_true", help="one pass, then exit")
    parser.add_argument("--interval", type=float, default=10.0, help="seconds between polls")
    parser.add_argument("--log-level", default=env("HEATWEB_AGENT_LOG_LEVEL", "INFO"))
    cfn = parser.add_argument_group("CloudFormation metadata (os-collect-config's cfn)")
    cfn.add_argument("--cfn-metadata-url", help="http://HOST/v1/ (instead of --endpoint)")
    cfn.add_argument("--access-key-id")
    cfn.add_argument("--secret-access-key")
    cfn.add_argument("--stack-name")
    cfn.add_argument("--path", default=None, help="RESOURCE.Metadata")
    args = parser.parse_args(argv)
    required = ("cfn_metadata_url", "access_key_id", "secret_access_key", "stack_name",
                "path") if args.cfn_metadata_url else ("endpoint", "token", "server_id")
    for name in required:
        if not getattr(args, name):
            parser.error(f"--{name.replace('_', '-')} is required")
    return args


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s heatweb-agent %(levelname)s %(message)s")
    cfn = {"metadata_url": args.cfn_metadata_url, "access_key_id": args.access_key_id,
           "secret_access_key": args.secret_access_key, "stack_name": args.stack_name,
           "path": args.path} if args.cfn_metadata_url else None
    agent = Agent(endpoint=args.endpoint, token=args.token, server_id=args.server_id,
                  state_dir=args.state_dir, hooks_dirs=[*args.hooks_dir, HERE / "hooks"],
                  cfn=cfn)
    log.info("server %s, endpoint %s, hooks in %s", args.server_id,
             args.cfn_metadata_url or args.endpoint, ", ".join(str(d) for d in agent.hooks_dirs))
    while True:
        try:
            agent.run_once()
        except (urllib.error.URLError, OSError, ValueError, KeyError,
                ElementTree.ParseError) as error:
            log.error("polling the metadata failed: %s", error)
            if args.once:
                return 1
        if args.once:
            return 0
        time.sleep(args.interval)


if __name__ == "__main__":
    sys.exit(main())
