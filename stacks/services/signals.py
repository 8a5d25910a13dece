"""Resource signals: a plugin that handles signals receives the data."""
from heatweb.exceptions import BadRequest
from stacks.selectors import stack_resource


def resource_signal(stack, resource_name, details, *, user=None):
    """Deliver a signal to a resource whose plugin accepts signals."""
    from stacks.services.definitions import definition_cache

    res = stack_resource(stack, resource_name)
    definition = definition_cache.get(stack.raw_template, stack)
    cls = definition.plugins.get(res.name)
    handler = getattr(cls, "signal_handler", None) if cls else None
    if handler is None:
        raise BadRequest(f"Signal resource during {res.action} is not supported "
                         f"for resource {resource_name} of type {res.type}.")
    return handler(stack=stack, resource=res, details=details, user=user)
