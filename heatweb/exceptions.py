"""Heat's error vocabulary.

Every error a user can see is a ``HeatError`` subclass: its class name is the
``error.type`` of Heat's JSON error body and ``status`` is the HTTP status.
This module imports nothing from Django so pure modules (template parsing,
graphs, plugins) can raise these too.
"""


class HeatError(Exception):
    """Base class: a user-facing error with an HTTP status."""

    status = 500
    message_format = "An unknown exception occurred."

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.message_format.format(**kwargs)
        self.message = message
        super().__init__(message)

    @property
    def error_type(self):
        return type(self).__name__


# 400 -------------------------------------------------------------------------

class BadRequest(HeatError):
    status = 400
    message_format = "The request is invalid."


class InvalidTemplate(BadRequest):
    """A template (or environment) that cannot be parsed or is not HOT."""


class InvalidTemplateVersion(BadRequest):
    message_format = 'The template version is invalid: {explanation}'


class InvalidTemplateReference(BadRequest):
    message_format = 'The specified reference "{resource}" (in {key}) is incorrect.'


class InvalidTemplateAttribute(BadRequest):
    message_format = ('The Referenced Attribute ({resource} {key}) is incorrect.')


class StackValidationFailed(BadRequest):
    """Template, parameter or property validation failed."""


class UserParameterMissing(BadRequest):
    message_format = 'The Parameter ({key}) was not provided.'


class UnknownUserParameter(BadRequest):
    message_format = 'The Parameter ({key}) was not defined in template.'


class ResourceTypeNotFound(StackValidationFailed):
    message_format = 'The Resource Type ({type_name}) could not be found.'


class ResourceTypeUnavailable(BadRequest):
    """A known resource type whose service this cloud lacks (Heat's error code 99001)."""

    message_format = ('HEAT-E99001 Service {service_name} is not available for resource type '
                      '{resource_type}, reason: {reason}')


class CircularDependencyException(BadRequest):
    message_format = 'Circular Dependency Found: {cycle}'


class ImmutableParameterModified(BadRequest):
    def __init__(self, *names):
        super().__init__(
            "The following parameters are immutable and may not be updated: "
            + ", ".join(names))
        self.names = names


class NotSupported(BadRequest):
    message_format = '{feature} is not supported.'


class InvalidBreakPointHook(BadRequest):
    """A hook (breakpoint) that does not exist, or is not set on the resource."""


class InvalidActionRequest(BadRequest):
    """A stack action body that names no action, several, or an unknown one."""


# 401 / 403 / 404 -------------------------------------------------------------

class NotAuthenticated(HeatError):
    status = 401
    message_format = 'Authentication required: send a valid X-Auth-Token header.'


class Forbidden(HeatError):
    status = 403
    message_format = 'You are not authorized to complete this action.'


class EntityNotFound(HeatError):
    status = 404
    message_format = 'The {entity} ({name}) could not be found.'


# 409 / 413 -------------------------------------------------------------------

class Conflict(HeatError):
    status = 409
    message_format = 'The request conflicts with the current state.'


class StackExists(Conflict):
    message_format = 'The Stack ({stack_name}) already exists.'


class ActionInProgress(Conflict):
    message_format = 'Stack {stack_name} already has an action ({action}) in progress.'


class ConcurrentTransaction(ActionInProgress):
    message_format = 'Concurrent transaction for stack {stack_name}.'


class InvalidStackState(Conflict):
    """The stack's state does not allow the requested action."""


class StackLocked(Conflict):
    """The stack is locked; only unlock (or a level change) is allowed."""


class RequestLimitExceeded(HeatError):
    status = 413
    message_format = 'Request limit exceeded: {message}'
