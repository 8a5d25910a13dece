"""bench_api's writers: each creates a stack through the API (heatweb's or Heat's), waits
for it to complete, and creates the next until the time is up."""
import http.client
import json
import threading
import time
import uuid
from urllib.parse import urlsplit


class Writers:
    """``count`` writers: each creates a stack through the API, waits for it to complete
    (its show, every second), and creates the next until the time is up."""

    def __init__(self, url, project_id, token, *, count, states, template):
        self.server = urlsplit(url)
        self.v1 = f"/v1/{project_id}"
        self.headers = {"X-Auth-Token": token, "Content-Type": "application/json"}
        self.count = count
        self.states = states  # ids -> the ACTION_STATUS of each
        self.template = template
        self.created = []
        self.errors = []
        self.threads = []
        self.lock = threading.Lock()

    def start(self, *, seconds):
        stop = time.monotonic() + seconds
        run = uuid.uuid4().hex[:6]
        self.threads = [threading.Thread(target=self._write, args=(i, run, stop))
                        for i in range(self.count)]
        for thread in self.threads:
            thread.start()

    def join(self):
        for thread in self.threads:
            thread.join()

    def _write(self, index, run, stop):
        conn = http.client.HTTPConnection(self.server.hostname, self.server.port, timeout=60)
        number = 0
        while time.monotonic() < stop:
            body = json.dumps({"stack_name": f"bench-write-{run}-{index}-{number}",
                               "template": self.template})
            try:
                conn.request("POST", f"{self.v1}/stacks", body=body, headers=self.headers)
                response = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed the kept-alive connection while the writer waited
                # (gunicorn keeps one 2 s): a new one, once.
                conn.close()
                conn.request("POST", f"{self.v1}/stacks", body=body, headers=self.headers)
                response = conn.getresponse()
            answer = response.read()
            if response.status != 201:
                with self.lock:
                    self.errors.append((response.status, answer[:300]))
                return
            stack_id = json.loads(answer)["stack"]["id"]
            with self.lock:
                self.created.append(stack_id)
            number += 1
            while time.monotonic() < stop and not self._done(stack_id):
                time.sleep(1)
        conn.close()

    def _done(self, stack_id):
        return not any(state.endswith("IN_PROGRESS") for state in self.states([stack_id]))

    def finish(self, *, timeout):
        """One line: stacks created, and how many completed (waiting up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
                state.endswith("IN_PROGRESS") for state in self.states(self.created)):
            time.sleep(1)
        states = self.states(self.created)
        complete = sum(1 for state in states if state == "CREATE_COMPLETE")
        errors = f"; write errors: {self.errors}" if self.errors else ""
        return (f"writers: {len(self.created)} stacks created, {complete} CREATE_COMPLETE"
                f"{errors}")
