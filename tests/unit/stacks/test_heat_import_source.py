"""Reading what Heat 27 encrypted: tokens here were made by Heat's own ``crypt.encrypt``
(openstack-heat 27.0.1) with the keys named."""
import pytest

from stacks.services.heat_import.source import SourceError, decrypt

# crypt.encrypt("hunter22", "0123456789abcdef"): a 16-character key, doubled by Heat.
SHORT_KEY = ("0123456789abcdef", "gAAAAABrC_i_Zo2yuWRBu93zVaYO-M8EQdhtpe-sOOUojt-gjOVe3FCJ9vW1"
                                 "LNZxGuzGa21n1Q2H8bFAqI-jYSgWk76ylmOIWQ==")
# crypt.encrypt('{"a": [1, 2]}', KEY) with a key longer than 32: its first 32 characters.
LONG_KEY = ("heat-import-test-key-0123456789ab-and-longer",
            "gAAAAABrC_i_MenQeY532hMDjfqh2KoSmVZ9eGSKD_nmCrWGZES4quB-YH5wcIdNIb3LK5BuFQtVBtYc"
            "cOIrfZgTRMYSX14Ung==")


def test_values_heat_encrypted_decrypt_with_its_key():
    assert decrypt("cryptography_decrypt_v1", SHORT_KEY[1], SHORT_KEY[0]) == "hunter22"
    assert decrypt("cryptography_decrypt_v1", LONG_KEY[1], LONG_KEY[0]) == '{"a": [1, 2]}'
    assert decrypt(None, None, None) is None


@pytest.mark.parametrize("method, key, message", [
    ("cryptography_decrypt_v1", None, "give Heat's auth_encryption_key"),
    ("cryptography_decrypt_v1", "fedcba9876543210", "does not decrypt with the"),
    ("oslo_decrypt_v1", SHORT_KEY[0], "only cryptography_decrypt_v1"),
])
def test_what_cannot_be_decrypted_says_why(method, key, message):
    with pytest.raises(SourceError, match=message):
        decrypt(method, SHORT_KEY[1], key)
