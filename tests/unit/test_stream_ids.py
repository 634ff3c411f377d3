"""Stream ids: integer form, formatting, and Redis's parsing rules (string2ull / strtoull)."""

from __future__ import annotations

import pytest

from resplite.store.stream_ids import (
    MAX_ID,
    MIN_ID,
    U64,
    decr_id,
    format_id,
    incr_id,
    make_id,
    parse_id,
    parse_interval_id,
    parse_xadd_id,
)


def test_integer_order_is_id_order() -> None:
    ids = [make_id(0, 1), make_id(1, 0), make_id(1, U64), make_id(2, 0), MAX_ID]
    assert ids == sorted(ids)
    assert format_id(make_id(1526919030474, 55)) == b"1526919030474-55"
    assert format_id(MAX_ID) == b"18446744073709551615-18446744073709551615"


def test_increment_and_decrement_carry_across_the_sequence() -> None:
    assert incr_id(make_id(5, U64)) == make_id(6, 0)
    assert decr_id(make_id(6, 0)) == make_id(5, U64)
    assert incr_id(MAX_ID) is None
    assert decr_id(MIN_ID) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"1-2", make_id(1, 2)),
        (b"5", make_id(5, 0)),
        (b"00001-05", make_id(1, 5)),  # leading zeros: strtoull accepts them
        (b" 7-1", make_id(7, 1)),  # leading white space: strtoull skips it
        (b"+3-0", make_id(3, 0)),  # an explicit plus sign
        (b"-0", None),  # "-" then "0": the dash splits, leaving an empty millisecond part
        (b"1--5", None),  # a negative that fits in 64 bits is refused
        (b"1--05", make_id(1, U64 - 4)),  # ... but one with a leading zero wraps, as in C
        (b"18446744073709551615-18446744073709551615", MAX_ID),
        (b"18446744073709551616-0", None),  # out of range
        (b"1-2-3", None),
        (b"1-2 ", None),  # trailing text
        (b"abc", None),
        (b"", None),
        (b"1-\x00junk", None),  # cut at NUL: "1-" has an empty sequence
        (b"4\x00-9", make_id(4, 0)),  # cut at NUL: just "4"
        (b"1" + b"0" * 127, None),  # longer than 127 bytes
    ],
)
def test_parse_follows_string2ull(text: bytes, expected: int | None) -> None:
    assert parse_id(text) == expected


def test_missing_sequence_takes_the_default() -> None:
    assert parse_id(b"9", missing_seq=U64) == make_id(9, U64)


def test_strict_ids_refuse_minus_and_plus() -> None:
    assert parse_id(b"-") == MIN_ID
    assert parse_id(b"+") == MAX_ID
    assert parse_id(b"-", strict=True) is None
    assert parse_id(b"+", strict=True) is None


def test_xadd_ids_accept_a_wildcard_sequence() -> None:
    assert parse_xadd_id(b"5-*") == (make_id(5, 0), False)
    assert parse_xadd_id(b"5-3") == (make_id(5, 3), True)
    assert parse_xadd_id(b"-*") is None
    assert parse_xadd_id(b"*-1") is None
    assert parse_xadd_id(b"+") is None


def test_interval_bounds() -> None:
    assert parse_interval_id(b"(5-1", 0) == (make_id(5, 1), True)
    assert parse_interval_id(b"(", 0) is None  # "(" alone is not an exclusive bound
    assert parse_interval_id(b"(-", 0) is None  # exclusive bounds are strict
    assert parse_interval_id(b"7", U64) == (make_id(7, U64), False)
