"""INCRBYFLOAT's 80-bit extended arithmetic (checked against Redis in test_strings.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from resplite.algorithms import longdouble as ld


@pytest.mark.parametrize(
    ("text", "formatted"),
    [
        (b"3", b"3"),
        (b"3.0", b"3"),
        (b"-0", b"0"),
        (b"-0.0000000000000000001", b"0"),
        (b"1.1", b"1.1"),  # 17 places are too few to show the binary error of 1.1
        (b"0.1", b"0.1"),
        (b".5", b"0.5"),
        (b"5.", b"5"),
        (b"+2E+2", b"200"),
        (b"0x1.8p3", b"12"),
        (b"0X.8", b"0.5"),
        (b"0.000003814697265625", b"0.00000381469726562"),  # a tie at the 17th place: to even
        (b"1e20", b"100000000000000000000"),
        (b"INF", None),
    ],
)
def test_parse_and_format(text: bytes, formatted: bytes | None) -> None:
    value = ld.parse(text)
    assert value is not None
    if formatted is None:
        assert value == ld.INF
    else:
        assert ld.format_human(value) == formatted


@pytest.mark.parametrize(
    "text",
    [b"", b" 1", b"1 ", b"abc", b"1e", b"1_0", b"0x", b"nan", b"-NaN", b"nan(12)", b"1e5000",
     b"1e-5000", b"+", b".", b"e5", b"1..2", b"9" * 5120, b"1\x00"],
)
def test_parse_refuses_what_strtold_does_not_consume_or_redis_rejects(text: bytes) -> None:
    assert ld.parse(text) is None


def test_extended_range_beyond_double() -> None:
    big = ld.parse(b"1e400")
    assert big is not None and ld.add(big, big) == ld.round_extended(2 * big)
    tiny = ld.parse(b"1e-4940")  # subnormal in extended precision, zero as a double
    assert tiny is not None and tiny > 0
    with pytest.raises(ld.Overflow):
        ld.add(ld.parse(b"1e4932") or ld.ZERO, ld.parse(b"1e4932") or ld.ZERO)
    with pytest.raises(ld.Overflow):
        ld.add(ld.INF, Fraction(1))


def test_rounding_keeps_sixty_four_bits_with_ties_to_even() -> None:
    one = Fraction(1)
    ulp = Fraction(1, 1 << 63)
    assert ld.round_extended(one + ulp) == one + ulp
    assert ld.round_extended(one + ulp / 2) == one  # tie: 1 is even
    assert ld.round_extended(one + ulp * 3 / 2) == one + 2 * ulp  # tie: rounds up to even
    assert ld.round_extended(one + ulp / 3) == one


def test_format_prints_huge_values_in_full() -> None:
    value = ld.parse(b"1e4000")
    assert value is not None
    text = ld.format_human(value)
    assert abs(int(text) - 10**4000) < 10**4000 >> 63  # the nearest extended value, all digits
