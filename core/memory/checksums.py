"""Check digits and checksums the scrubber validates a number with before redacting it.

A shape alone is not enough to call a run of digits a card number or an id: these tell a real
one from an order number or a typo (docs/memory.md lists what the scrubber checks). Each takes
the value as written, or only its digits where the argument says so, and answers yes or no.
"""

from __future__ import annotations

import re

__all__ = [
    "aba_ok",
    "belgian_id_ok",
    "bsn_ok",
    "card_number_ok",
    "codice_fiscale_ok",
    "dni_ok",
    "hetu_ok",
    "iban_ok",
    "luhn_ok",
    "nir_ok",
    "steuer_id_ok",
    "wif_ok",
]


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card_number_ok(digits: str) -> bool:
    # Issuers start at 2..6; that also spares snowflake ids (they start with 1) and zero runs.
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_ok(digits)


# Lengths for the countries that issue IBANs; an unknown country still needs a sane length.
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30,
    "KZ": 20, "LB": 28, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29,
    "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
    "TN": 24, "TR": 26, "UA": 29, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_ok(raw: str) -> bool:
    """An IBAN as written (spaces, dashes or dots between groups, any case): the country's
    length and mod-97."""
    iban = raw.replace(" ", "").replace("-", "").replace(".", "").upper()
    expected = _IBAN_LENGTHS.get(iban[:2])
    if expected is None:
        # Lower case is only trusted for a country that issues IBANs.
        if not raw[:2].isupper() or not 15 <= len(iban) <= 34:
            return False
    elif len(iban) != expected:
        return False
    # Move the country and check digits to the end, letters count as 10..35, then mod 97.
    numeric = "".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4])
    return int(numeric) % 97 == 1


def aba_ok(digits: str) -> bool:
    """US routing numbers carry a weighted check digit (3, 7, 1)."""
    d = [int(ch) for ch in digits]
    if len(d) != 9:
        return False
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + d[2] + d[5] + d[8]) % 10 == 0


_BASE58_VALUE = {ch: i for i, ch in enumerate(
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
)}  # fmt: skip


def wif_ok(key: str) -> bool:
    """Wallet import format: base58 of 0x80, 32 key bytes, an optional 0x01, and a checksum
    (the first four bytes of a double SHA-256)."""
    import hashlib  # only when something shaped like a key turns up

    number = 0
    for ch in key:
        value = _BASE58_VALUE.get(ch)
        if value is None:
            return False
        number = number * 58 + value
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    if len(raw) not in (37, 38) or raw[0] != 0x80 or (len(raw) == 38 and raw[33] != 0x01):
        return False
    body, checksum = raw[:-4], raw[-4:]
    return hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == checksum


# --- national ids


def bsn_ok(digits: str) -> bool:
    """Dutch citizen service number: the 11-test."""
    d = [int(ch) for ch in digits]
    if len(d) != 9 or (d[0] == 0 and d[1] == 0):
        return False
    return (sum(d[i] * (9 - i) for i in range(8)) - d[8]) % 11 == 0


def steuer_id_ok(digits: str) -> bool:
    """German tax id: the ISO 7064 MOD 11,10 check digit."""
    if len(digits) != 11 or digits[0] == "0":
        return False
    product = 10
    for ch in digits[:10]:
        total = (int(ch) + product) % 10 or 10
        product = (2 * total) % 11
    check = 11 - product
    return (0 if check == 10 else check) == int(digits[10])


def nir_ok(raw: str) -> bool:
    """French social security number: the key is 97 minus the body mod 97 (Corsica's 2A and
    2B count as 19 and 18)."""
    value = raw.replace(" ", "").upper()
    if len(value) != 15:
        return False
    body = value[:13].replace("2A", "19").replace("2B", "18")
    if not body.isdigit() or not value[13:].isdigit():
        return False
    return 97 - int(body) % 97 == int(value[13:])


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_DNI_LAYOUT = re.compile(r"[\s-]")


def dni_ok(raw: str) -> bool:
    """Spanish DNI (eight digits) or NIE (X/Y/Z and seven digits): the letter is the number
    mod 23."""
    value = _DNI_LAYOUT.sub("", raw).upper()
    if value[:1] in ("X", "Y", "Z"):
        value = str("XYZ".index(value[0])) + value[1:]
    return value[:-1].isdigit() and _DNI_LETTERS[int(value[:-1]) % 23] == value[-1]


_CF_ODD = dict(
    zip(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11,
         3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23),
        strict=True,
    )
)  # fmt: skip


def codice_fiscale_ok(raw: str) -> bool:
    """Italian fiscal code: a valid month letter and the check letter over the first 15."""
    value = raw.upper()
    if len(value) != 16 or value[8] not in "ABCDEHLMPRST":
        return False
    total = 0
    for i, ch in enumerate(value[:15]):
        total += _CF_ODD[ch] if i % 2 == 0 else (int(ch) if ch.isdigit() else ord(ch) - 65)
    return chr(65 + total % 26) == value[15]


def belgian_id_ok(digits: str) -> bool:
    """Belgian national number: 97 minus the first nine digits mod 97 (with a leading 2 for
    those born from 2000 on)."""
    if len(digits) != 11:
        return False
    body, check = int(digits[:9]), int(digits[9:])
    return check in (97 - body % 97, 97 - (2_000_000_000 + body) % 97)


_HETU_CHECK = "0123456789ABCDEFHJKLMNPRSTUVWXY"


def hetu_ok(raw: str) -> bool:
    """Finnish personal identity code DDMMYY-NNNC: the check character indexes DDMMYYNNN
    mod 31."""
    value = raw.upper()
    if len(value) != 11 or not (value[:6] + value[7:10]).isdigit():
        return False
    return _HETU_CHECK[int(value[:6] + value[7:10]) % 31] == value[10]
