"""The check digits the scrubber trusts: each accepts a valid value and refuses it with one
digit or letter changed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tactful.core.memory import checksums

VALID = [
    (checksums.card_number_ok, "4111111111111111"),
    (checksums.iban_ok, "NL91ABNA0417164300"),
    (checksums.iban_ok, "de89 3704 0044 0532 0130 00"),
    (checksums.aba_ok, "011000015"),
    (checksums.wif_ok, "5HpjKrb7dH5kKQQzmbjB87Mxova7mek5bXUTWfndcX6tBoqUwzm"),
    (checksums.bsn_ok, "123456782"),
    (checksums.steuer_id_ok, "86095742719"),
    (checksums.nir_ok, "1 85 05 78 006 084 91"),
    (checksums.dni_ok, "48213077-V"),
    (checksums.dni_ok, "Y7654321G"),
    (checksums.codice_fiscale_ok, "RSSMRA85T10A562S"),
    (checksums.belgian_id_ok, "85073003328"),
    (checksums.hetu_ok, "131052-308T"),
]


def changed(value: str) -> str:
    """The value with its last digit or letter moved on by one."""
    i = max(i for i, ch in enumerate(value) if ch.isalnum())
    ch = value[i]
    if ch.isdigit():
        new = str((int(ch) + 1) % 10)
    else:
        new = "A" if ch.upper() == "Z" else chr(ord(ch.upper()) + 1)
        new = new if ch.isupper() else new.lower()
    return value[:i] + new + value[i + 1 :]


@pytest.mark.parametrize(("check", "value"), VALID, ids=[v for _, v in VALID])
def test_a_valid_number_passes_and_one_changed_character_fails(
    check: Callable[[str], bool], value: str
) -> None:
    assert check(value)
    assert not check(changed(value))


def test_card_numbers_start_like_a_card() -> None:
    # Luhn-valid, but issuers never start at 1 (snowflake ids do).
    assert checksums.luhn_ok("1234567812345670")
    assert not checksums.card_number_ok("1234567812345670")
