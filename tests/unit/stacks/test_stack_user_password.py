"""A stack user's password at rest (Heat's resource data with ``redact=True``): encrypted
in the plugin data, read back clear; one stored clear before (or adopted) reads as it is
and is encrypted when stored again; another key's token is the resource's failure."""
import pytest
from django.test import override_settings

from heatweb import encryption
from stacks.resources import stack_user
from stacks.resources.base import ResourceFailure


def test_a_password_is_stored_encrypted_and_read_clear():
    stored = stack_user.data_at_rest({"user_id": "u", "password": "Secret123"})
    assert stored["user_id"] == "u"
    assert stored["password"].startswith("fernet:") and "Secret123" not in stored["password"]
    assert stack_user.password(stored) == "Secret123"
    assert stack_user.data_at_rest(stored) is stored  # already encrypted: kept
    assert encryption.encrypt("Secret123") != encryption.encrypt("Secret123")  # Fernet's IV


def test_a_clear_password_of_before_reads_as_it_is():
    assert stack_user.password({"password": "Clear123"}) == "Clear123"
    assert stack_user.password({}) is None


def test_another_secret_keys_token_fails_the_resource():
    stored = stack_user.data_at_rest({"password": "Secret123"})
    with override_settings(SECRET_KEY="another key"), pytest.raises(ResourceFailure) as raised:
        stack_user.password(stored)
    assert str(raised.value) == ("The stack user's password: an encrypted value does not "
                                 "decrypt with this SECRET_KEY")
