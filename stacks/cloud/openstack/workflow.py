"""Mistral on a real cloud: workflows, executions and cron triggers (its v2 API).

Plain REST calls through openstacksdk's ``workflow`` proxy (its session finds the
endpoint, ``workflowv2`` in the catalog), as python-mistralclient makes them for Heat:
a workflow is POSTed (and PUT on update) as its DSL v2 text and known by its name; an
execution's ``input`` and ``params`` go as JSON strings and come back so (read back
here as maps); a cron trigger is known by its name and cannot be updated.
"""
import json
from urllib.parse import quote

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.openstack.calls import call

TEXT = {"Content-Type": "text/plain"}
JSON_FIELDS = ("input", "params", "output", "workflow_input", "workflow_params")


def _refused(response):
    """Mistral's refusal (``{"faultstring": ...}``) in its own words."""
    try:
        body = response.json()
        words = body.get("faultstring") or body.get("title") or json.dumps(body)
    except ValueError:
        words = response.text.strip()
    error = CloudNotFound if response.status_code == 404 else CloudError
    return error(f"{words} (HTTP {response.status_code})")


def _decoded(found):
    out = dict(found)
    for key in JSON_FIELDS:
        if isinstance(out.get(key), str):
            try:
                out[key] = json.loads(out[key])
            except ValueError:
                pass
    return out


class WorkflowCalls:
    """Mixin of ``OpenStackCloud``: Mistral's workflows, executions and cron triggers
    (``_os_<verb>_workflow``, ``_os_<verb>_workflow_execution``,
    ``_os_<verb>_cron_trigger``)."""

    def _mistral(self, method, path, *, ok=(200, 201, 204), **kwargs):
        response = call(getattr(self.conn.workflow, method), path, raise_exc=False, **kwargs)
        if response.status_code not in ok:
            raise _refused(response)
        return response

    def workflow_endpoint(self):
        """Mistral's v2 endpoint (a Zaqar subscription's ``trust+<endpoint>/executions``)."""
        return self.conn.workflow.get_endpoint().rstrip("/")

    def _read(self, path):
        response = self._mistral("get", path, ok=(200, 404))
        return None if response.status_code == 404 else _decoded(response.json())

    # Workflows -------------------------------------------------------------------------

    @staticmethod
    def _wf(name):
        return f"/workflows/{quote(str(name), safe='')}"

    def _os_create_workflow(self, *, name, fields, creation_key, find_first):
        created = self._mistral("post", "/workflows", data=fields["definition"].encode(),
                                headers=TEXT).json()
        return created["workflows"][0]["name"]

    def _os_get_workflow(self, object_id):
        return self._read(self._wf(object_id))

    def _os_update_workflow(self, object_id, fields):
        if fields.get("definition"):
            self._mistral("put", "/workflows", data=fields["definition"].encode(),
                          headers=TEXT)

    def _os_delete_workflow(self, object_id):
        self._mistral("delete", self._wf(object_id), ok=(204, 404))
        return True  # Mistral deletes before it answers

    # Executions ------------------------------------------------------------------------

    def _os_create_workflow_execution(self, *, name, fields, creation_key, find_first):
        body = {key: fields[key] for key in ("workflow_name", "workflow_id", "description")
                if fields.get(key)}
        body["input"] = json.dumps(fields.get("input") or {})
        if fields.get("params"):
            body["params"] = json.dumps(fields["params"])
        return self._mistral("post", "/executions", json=body).json()["id"]

    def _os_get_workflow_execution(self, object_id):
        return self._read(f"/executions/{quote(str(object_id), safe='')}")

    def _os_delete_workflow_execution(self, object_id):
        self._mistral("delete", f"/executions/{quote(str(object_id), safe='')}",
                      ok=(204, 404))
        return True

    # Cron triggers ---------------------------------------------------------------------

    def _os_create_cron_trigger(self, *, name, fields, creation_key, find_first):
        body = {"name": name, **{key: value for key, value in fields.items()
                                 if value is not None}}
        for key in ("workflow_input", "workflow_params"):
            if key in body:
                body[key] = json.dumps(body[key])
        return self._mistral("post", "/cron_triggers", json=body).json()["name"]

    def _os_get_cron_trigger(self, object_id):
        return self._read(f"/cron_triggers/{quote(str(object_id), safe='')}")

    def _os_update_cron_trigger(self, object_id, fields):
        raise CloudError("Cron triggers cannot be updated (HTTP 405)")

    def _os_delete_cron_trigger(self, object_id):
        self._mistral("delete", f"/cron_triggers/{quote(str(object_id), safe='')}",
                      ok=(204, 404))
        return True
