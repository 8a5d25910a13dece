"""A resource's stack user (Heat's ``StackUser``): made on first need, kept in the
resource's plugin data (``user_id``, ``password``, ``stack_user_project_id``; the password
encrypted, as Heat's ``redact=True`` resource data: ``heatweb.encryption``), disabled
while the resource is suspended (``suspend_user``, ``resume_user``), deleted with the
resource. Keystone mode only (``heatweb.stack_users``): without Keystone there
is no user to make, and these answer None.

An EC2 key pair (``access_key``, ``secret_key``, Heat's names; the secret encrypted as the
password) for a ``POLL_SERVER_CFN`` server: in Keystone mode the stack user's EC2
credential, checked by Keystone; without Keystone a pair only heatweb knows, which it
checks itself.
"""
import re
import uuid

from heatweb import encryption, keystone, stack_users
from stacks.models import Stack
from stacks.resources.base import ResourceFailure

USER_ID, PASSWORD, PROJECT = "user_id", "password", "stack_user_project_id"
ACCESS_KEY, SECRET_KEY = "access_key", "secret_key"


def physical_name(plugin):
    """Heat's ``physical_resource_name``: ``<stack>-<resource>-<short id>``, at most 64
    characters of letters, digits, ``_``, ``-`` and ``.`` (a Zaqar queue name too)."""
    short = (plugin.data.get("short_id") or "")
    if not short:
        short = plugin.data["short_id"] = stack_users.new_password()[:12].lower()
    head = re.sub(r"[^A-Za-z0-9_.-]", "-", f"{plugin.context.stack_name}-{plugin.name}")
    return f"{head[:64 - len(short) - 1]}-{short}"


def ensure_user(plugin):
    """The plugin's stack user, made if it has none: its plugin data, or None outside
    Keystone mode."""
    if not keystone.enabled():
        return None
    data = plugin.data
    if not data.get(USER_ID):
        if not data.get(PASSWORD):
            data[PASSWORD] = encryption.encrypt(stack_users.new_password())
        stack = Stack.objects.get(pk=plugin.context.stack_id)
        try:
            data[USER_ID], data[PROJECT] = stack_users.user_create(
                stack, physical_name(plugin), password(data))
        except keystone.KeystoneError as error:
            raise ResourceFailure(str(error)) from None
    return data


def ensure_keypair(plugin):
    """The plugin's EC2 key pair, made if it has none (Heat's ``_create_keypair``): random
    hex as Heat's; in Keystone mode also the stack user's EC2 credential in Keystone."""
    data = plugin.data
    if data.get(ACCESS_KEY):
        return data
    access, secret = uuid.uuid4().hex, uuid.uuid4().hex
    if ensure_user(plugin) is not None:
        try:
            stack_users.ec2_credential_create(data[USER_ID], data[PROJECT], access, secret)
        except keystone.KeystoneError as error:
            raise ResourceFailure(str(error)) from None
    data[ACCESS_KEY], data[SECRET_KEY] = access, encryption.encrypt(secret)
    return data


def delete_keypair(plugin):
    """Delete the plugin's EC2 key pair (Heat's ``_delete_keypair``): its credential in
    Keystone (the user stays: an ``AWS::IAM::AccessKey``'s is its ``AWS::IAM::User``'s)."""
    access = plugin.data.pop(ACCESS_KEY, None)
    plugin.data.pop(SECRET_KEY, None)
    if access and plugin.data.get(USER_ID) and keystone.enabled():
        try:
            stack_users.ec2_credential_delete(access)
        except keystone.KeystoneError as error:
            raise ResourceFailure(str(error)) from None


def _clear(data, key, what):
    try:
        return encryption.decrypt(data.get(key))
    except ValueError as error:  # another SECRET_KEY's token
        raise ResourceFailure(f"The stack user's {what}: {error}") from None


def password(data):
    """The clear password of the stack user whose plugin data is ``data`` (kept encrypted;
    one stored clear, before it was, or adopted from Heat's abandon data, reads as it is)."""
    return _clear(data, PASSWORD, "password")


def secret_key(data):
    """The clear EC2 secret key of ``data`` (kept encrypted as the password)."""
    return _clear(data, SECRET_KEY, "EC2 secret key")


def data_at_rest(data):
    """Plugin data as it is stored: a stack user's password or EC2 secret key given clear
    (Heat's abandon data to adopt, a Heat database imported) encrypted."""
    if not isinstance(data, dict):
        return data
    clear = {key: encryption.encrypt(data[key]) for key in (PASSWORD, SECRET_KEY)
             if isinstance(data.get(key), str) and data[key]
             and not encryption.is_encrypted(data[key])}
    return {**data, **clear} if clear else data


def has_user(plugin):
    return bool(plugin.data.get(USER_ID))


def user_cloud(plugin):
    """The cloud driver as the plugin's stack user (the driver itself without one)."""
    data = plugin.data
    if not data.get(USER_ID):
        return plugin.context.cloud
    return plugin.context.cloud.for_stack_user(data[USER_ID], password(data), data[PROJECT])


def credentials(plugin):
    """Heat's ``_get_heat_signal_credentials`` (``auth_url``, ``username``, ``user_id``,
    ``password``, ``project_id``, ``domain_id``, ``region_name``)."""
    data = plugin.data
    return stack_users.credentials(data[USER_ID], password(data), data[PROJECT],
                                   username=physical_name(plugin))


def suspend_user(plugin):
    """Disable the plugin's stack user (Heat's ``StackUser.handle_suspend``)."""
    _user_enable(plugin, enabled=False)


def resume_user(plugin):
    """Enable the plugin's stack user again (Heat's ``StackUser.handle_resume``)."""
    _user_enable(plugin, enabled=True)


def _user_enable(plugin, *, enabled):
    user = plugin.data.get(USER_ID)
    if not user or not keystone.enabled():
        return
    try:
        stack_users.user_enable(user, enabled=enabled)
    except keystone.KeystoneError as error:
        raise ResourceFailure(str(error)) from None


def delete_user(plugin):
    """Delete the plugin's stack user (Heat's ``_delete_user``) and with it its EC2
    credential; its data goes too (the key pair also without Keystone)."""
    user = plugin.data.get(USER_ID)
    plugin.data.pop(ACCESS_KEY, None)
    plugin.data.pop(SECRET_KEY, None)
    if not user or not keystone.enabled():
        return
    try:
        stack_users.user_delete(user)
    except keystone.KeystoneError as error:
        raise ResourceFailure(str(error)) from None
    for key in (USER_ID, PASSWORD, PROJECT):
        plugin.data.pop(key, None)
