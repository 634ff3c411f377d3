"""Which encoding OBJECT ENCODING reports for a stored string, and its reference count."""

from __future__ import annotations

import pytest

from resplite.store.string_value import (
    SHARED_REFCOUNT,
    PrivateInt,
    RawString,
    TextString,
    as_long,
    copied,
    encoding,
    refcount,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"0", "int"), (b"-1", "int"), (b"9223372036854775807", "int"),
        (b"-9223372036854775808", "int"), (b"9223372036854775808", "embstr"), (b"01", "embstr"),
        (b"-0", "embstr"), (b"+1", "embstr"), (b" 1", "embstr"), (b"", "embstr"),
        (b"x" * 44, "embstr"), (b"x" * 45, "raw"), (b"1" * 21, "embstr"),
    ],
)
def test_encoding_derived_from_the_bytes(value: bytes, expected: str) -> None:
    assert encoding(value) == expected


def test_markers_override_the_derivation() -> None:
    assert encoding(RawString(b"12")) == "raw"
    assert encoding(TextString(b"12")) == "embstr"
    assert encoding(TextString(b"1" * 45)) == "raw"
    assert encoding(PrivateInt(b"12")) == "int"


def test_refcount_of_shared_small_integers() -> None:
    assert refcount(b"0") == refcount(b"9999") == SHARED_REFCOUNT
    assert refcount(b"10000") == refcount(b"-1") == refcount(b"abc") == 1
    assert refcount(b"5", shared_integers=False) == 1
    assert refcount(copied(b"5")) == 1 and encoding(copied(b"5")) == "int"
    assert copied(RawString(b"5")).__class__ is RawString


def test_as_long_follows_string2l() -> None:
    assert as_long(b"123") == 123 and as_long(b"-7") == -7
    assert as_long(b"-") is None and as_long(b"1a") is None and as_long(b"") is None


def test_redis_8_embeds_the_key_with_an_embstr_value() -> None:
    # Redis 8's kvobjSet: value and key together within 41 bytes (64 less the object, the
    # key's header and terminator, the value's); integers and raw markers are unaffected.
    assert encoding(b"x" * 38, key_len=3) == "embstr"
    assert encoding(b"x" * 39, key_len=3) == "raw"
    assert encoding(b"x" * 44, key_len=3) == "raw"
    assert encoding(b"", key_len=41) == "embstr" and encoding(b"", key_len=42) == "raw"
    assert encoding(b"12345", key_len=100) == "int"
    assert encoding(TextString(b"1.5"), key_len=1) == "embstr"
    assert encoding(RawString(b"x"), key_len=1) == "raw"
