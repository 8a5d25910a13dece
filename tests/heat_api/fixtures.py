"""The gabbi fixtures the plugin's gabbits name, for heatweb.

``AuthenticationFixture``: the plugin's asks tempest for a Keystone token;
ours checks the token the test put in ``OS_TOKEN`` (heatweb's own token).
"""
import os

from gabbi import fixture


class AuthenticationFixture(fixture.GabbiFixture):
    def start_fixture(self):
        if not os.environ.get("OS_TOKEN"):
            raise RuntimeError("OS_TOKEN is not set: the test issues a heatweb token first")

    def stop_fixture(self):
        pass
