"""A create sent again is answered with the stack it made, not 409.

A client whose create timed out or lost its connection (the web process
died after the commit) cannot tell whether the stack exists;
python-heatclient does not retry by itself, so the user runs the same
``stack-create`` again. heatweb answers such a repeat with the stack the
first one made: same project, same name, same user, and an identical
request (template, files, environment and parameters, timeout, rollback,
tags), while the stack has had no other action than that create and within
``HEATWEB["CREATE_REPLAY_SECONDS"]`` of it. Anything else with the name of
a live stack is still Heat's 409 ``StackExists``.
"""
import json
from datetime import timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone


def _stored(value):
    """``value`` as a JSONField gives it back, so a request compares with what was stored."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def create_replayed(stack, *, user, template, environment, files, timeout_mins,
                    disable_rollback, tags):
    """True when this create repeats the one that made ``stack`` (see the module doc)."""
    window = timedelta(seconds=settings.HEATWEB["CREATE_REPLAY_SECONDS"])
    if stack.parent_id or stack.action != "CREATE" or stack.created_at < timezone.now() - window:
        return False
    if stack.user_id != getattr(user, "pk", None):
        return False
    raw = stack.raw_template
    return (raw.template == _stored(template) and raw.environment == _stored(environment)
            and raw.files == _stored(files) and stack.timeout_mins == timeout_mins
            and stack.disable_rollback == disable_rollback and stack.tags == (tags or []))
