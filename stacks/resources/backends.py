"""Services a plugin reaches through an interface registered at app start.

Plugins are loaded before the services they call (the services build
definitions from the plugin registry, and the engine runs the plugins), so a
plugin does not import them: its app registers the service module here when
it is ready, as Heat's plugins reach the engine's services through RPC.
"""


class ServiceInterface:
    """The functions of the service module registered for ``what``."""

    def __init__(self, what):
        self._what = what
        self._service = None

    def register(self, service):
        self._service = service

    def __getattr__(self, name):
        if name.startswith("_") or self._service is None:
            raise AttributeError(f"{self._what} not registered (asked for {name})")
        return getattr(self._service, name)
