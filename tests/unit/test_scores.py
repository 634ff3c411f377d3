"""Unit tests of resplite.algorithms.scores: reading numbers as C's strtod and Redis's string2d
do, and printing doubles as Redis 7.2+ does (and with ``%.17g`` where Redis still does).

Where the machine's C library is glibc (what Redis runs on here), ``strtod`` and
``snprintf("%.17g")`` are called through ctypes and must agree with ours on random input;
the fast paths (Python's ``float``) must agree with the general ones.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.algorithms import scores
from resplite.algorithms.numbers import parse_fast_float, parse_strtod
from resplite.algorithms.scores import (
    LEX_MAX,
    LEX_MIN,
    d2string,
    format_17g,
    format_listpack_score,
    lex_compare,
    parse_lex_bound,
    parse_score,
    parse_score_bound,
    strtod,
)

_LIBC_PATH = ctypes.util.find_library("c")
_LIBC = ctypes.CDLL(_LIBC_PATH, use_errno=True) if _LIBC_PATH else None
needs_libc = pytest.mark.skipif(_LIBC is None, reason="no C library to compare with")
ERANGE = 34


def c_strtod(text: bytes) -> tuple[float, int, bool]:
    assert _LIBC is not None
    fn = _LIBC.strtod
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    buf = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    ctypes.set_errno(0)
    value = fn(buf, ctypes.byref(end))
    erange = ctypes.get_errno() == ERANGE
    consumed = (ctypes.cast(end, ctypes.c_void_p).value or 0) - ctypes.addressof(buf)
    # Redis only acts on a range error that overflowed or reached zero.
    return value, consumed, erange and (value == 0.0 or math.isinf(value))


def c_format(value: float) -> bytes:
    assert _LIBC is not None
    buf = ctypes.create_string_buffer(64)
    _LIBC.snprintf(buf, 64, b"%.17g", ctypes.c_double(value))
    return buf.value


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


NUMBERISH = st.text(alphabet="0123456789.eE+-xXpPabcdfinINFtyAY_() \t", max_size=12).map(
    str.encode)


@needs_libc
@settings(max_examples=800, deadline=None)
@given(text=NUMBERISH)
def test_strtod_agrees_with_the_c_library(text: bytes) -> None:
    want, got = c_strtod(text), strtod(text)
    assert got[1:] == want[1:] and _same_float(got[0], want[0]), (text, want, got)


@needs_libc
@pytest.mark.parametrize("text", [
    b"", b" ", b"1e400", b"-1e400", b"1e-400", b"4.9e-324", b"2e-324", b"3e-324", b"0x1p-1080",
    b"0x1p2000", b"0x", b"0x.", b"0x.8", b"1e", b"1e+", b".", b"-.5", b"infinity", b"infinit",
    b"nan(abc)", b"nan(", b"0x1e5", b"1_0", b" 12", b"+inf", b"-0", b"0e-999", b"00012.5e-3",
    b"0x1.fffffffffffff8p1023", b"1.7976931348623158e308", b"2.2250738585072011e-308",
])
def test_strtod_edge_cases(text: bytes) -> None:
    want, got = c_strtod(text), strtod(text)
    assert got[1:] == want[1:] and _same_float(got[0], want[0]), (text, want, got)


@settings(max_examples=800, deadline=None)
@given(text=NUMBERISH | st.floats(allow_nan=True).map(lambda f: repr(f).encode()))
def test_parse_score_fast_path_agrees_with_strtod(text: bytes) -> None:
    value, end, erange = strtod(text)
    string2d_ok = (bool(text) and text[0] not in b" \t\n\v\f\r" and end == len(text)
                   and not erange and not math.isnan(value))
    got = parse_score(text)
    if not string2d_ok:
        assert got is None, text
    else:
        assert got is not None and _same_float(got, value), text


@settings(max_examples=800, deadline=None)
@given(text=NUMBERISH, exclusive=st.booleans())
def test_parse_score_bound_agrees_with_strtod(text: bytes, exclusive: bool) -> None:
    arg = (b"(" if exclusive else b"") + text
    exclusive = arg[:1] == b"("  # a text of its own may start with "(" too
    rest = arg[1:] if exclusive else arg
    value, end, _ = strtod(rest)
    got = parse_score_bound(arg)
    if not rest:
        assert got == (0.0, exclusive)
    elif end != len(rest) or math.isnan(value):
        assert got is None
    else:
        assert got is not None and got[1] == exclusive and _same_float(got[0], value)


def test_score_readings_redis_relies_on() -> None:
    assert parse_score(b"1e400") is None and parse_score(b"1e-400") is None
    assert parse_score(b"inf") == math.inf and parse_score(b"-Infinity") == -math.inf
    assert parse_score(b"0x10") == 16.0 and parse_score(b"nan") is None
    assert parse_score(b" 1") is None and parse_score(b"1 ") is None and parse_score(b"") is None
    assert parse_score(b"1\x00") is None and parse_score(b"1_0") is None
    assert parse_score_bound(b"(1e400") == (math.inf, True)
    assert parse_score_bound(b" 2") == (2.0, False) and parse_score_bound(b"2 ") is None
    assert parse_score_bound(b"3\x00junk") == (3.0, False)
    assert parse_score_bound(b"") == (0.0, False) and parse_score_bound(b"(") == (0.0, True)
    assert parse_score_bound(b"((1") is None and parse_score_bound(b"(nan") is None


@needs_libc
@settings(max_examples=800, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False))
def test_format_17g_is_printf_17g(value: float) -> None:
    assert format_17g(value) == c_format(value)


@settings(max_examples=800, deadline=None)
@given(bits=st.integers(0, (1 << 64) - 1))
def test_format_score_reads_back_the_same_double(bits: int) -> None:
    value = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if math.isnan(value):
        return
    assert _same_float(float(format_17g(value)), value)
    assert _same_float(float(format_listpack_score(value)), 0.0 if value == 0 else value)


def test_score_printing_17g() -> None:
    assert format_17g(math.inf) == b"inf" and format_17g(-math.inf) == b"-inf"
    assert format_17g(0.1) == b"0.10000000000000001" and format_17g(-0.0) == b"-0"
    assert format_17g(1e17) == b"1e+17" and format_17g(3.0) == b"3"


# Redis 7.2+'s d2string, as its fpconv formatter prints (checked against fpconv_dtoa itself).
FPCONV = [
    (0.1, b"0.1"), (0.1 + 0.2, b"0.30000000000000004"), (1 / 3, b"0.3333333333333333"),
    (1e-7, b"1e-7"), (1.5e-7, b"1.5e-7"), (1e-6, b"0.000001"), (1.5e-6, b"1.5e-6"),
    (0.000123, b"0.000123"), (1.234e-5, b"1.234e-5"), (1e-5 * 3, b"3.0000000000000004e-5"),
    (123456.789, b"123456.789"), (1e21, b"1e+21"), (1.5e300, b"1.5e+300"),
    (-1.5e300, b"-1.5e+300"), (5e-324, b"5e-324"),
    (2.2250738585072014e-308, b"2.2250738585072014e-308"),
    (1.7976931348623157e308, b"1.7976931348623157e+308"), (-0.5, b"-0.5"),
    (1.23e-18, b"1.23e-18"), (100.1, b"100.1"), (3.141592653589793, b"3.141592653589793"),
    # Integers beyond 2^62 are fpconv's too: plain digits while the exponent is small.
    (float(1 << 63), b"9223372036854776000"), (1e19, b"1e+19"), (1.5e19, b"1.5e+19"),
    (1234e19, b"12339999999999999000000"),
    # Grisu2 is not always the shortest: these are longer than Python's repr.
    (-889.512542162231, b"-889.5125421622309"), (8.41e21, b"8409999999999999000000"),
    # Integral values within 2^62, zeros and infinities.
    (3.0, b"3"), (-7.0, b"-7"), (1e17, b"100000000000000000"),
    (float(1 << 62), b"4611686018427387904"), (0.0, b"0"), (-0.0, b"-0"),
    (math.inf, b"inf"), (-math.inf, b"-inf"), (math.nan, b"nan"),
]


@pytest.mark.parametrize(("value", "text"), FPCONV, ids=[t.decode() for _, t in FPCONV])
def test_format_double_prints_as_redis_7_2(value: float, text: bytes) -> None:
    assert d2string(value) == text


@settings(max_examples=800, deadline=None)
@given(bits=st.integers(0, (1 << 64) - 1))
def test_format_double_reads_back_and_is_never_shorter_than_repr(bits: int) -> None:
    value = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if math.isnan(value) or math.isinf(value):
        return
    text = d2string(value)
    assert _same_float(float(text), value)
    if value != 0 and not (abs(value) <= 2.0**62 and value.is_integer()):
        digits = text.lstrip(b"-").split(b"e")[0].replace(b".", b"").strip(b"0")
        shortest = repr(abs(value)).split("e")[0].replace(".", "").strip("0")
        assert len(digits) >= len(shortest)


def _grisu2_digit_by_digit(value: float) -> tuple[bytes, int]:
    """fpconv's digit generation as it is written, one digit at a time: the reference for
    the shortcut in scores._grisu2 (same scaling, then a loop over the digits)."""
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    frac, biased = bits & ((1 << 52) - 1), bits >> 52
    frac, exp = (frac + (1 << 52), biased - 1075) if biased else (frac, -1074)
    upper, upper_exp = (frac << 1) + 1, exp - 1
    while not upper & (1 << 53):
        upper, upper_exp = upper << 1, upper_exp - 1
    upper, upper_exp = upper << 10, upper_exp - 10
    lshift = 2 if frac == 1 << 52 else 1
    lower = ((frac << lshift) - 1) << (exp - lshift - upper_exp)
    w = frac
    while not w & (1 << 52):
        w <<= 1
    w <<= 11
    index = (int(-(upper_exp + 87) * 0.30102999566398114) + 348) // 8
    while not -60 <= upper_exp + scores._POWERS[index][1] + 64 <= -32:
        index += 1 if upper_exp + scores._POWERS[index][1] + 64 < -60 else -1
    power, power_exp = scores._POWERS[index]

    def times(x: int) -> int:
        return (x * power + (1 << 63)) >> 64

    w, upper, lower = times(w), times(upper) - 1, times(lower) + 1
    e = -(upper_exp + power_exp + 64)
    k = 348 - 8 * index
    to_w, delta = upper - w, upper - lower
    part1, part2 = upper >> e, upper & ((1 << e) - 1)
    digits: list[int] = []

    def weed(rest: int, unit: int, target: int) -> None:
        while rest < target and delta - rest >= unit and (
                rest + unit < target or target - rest > rest + unit - target):
            digits[-1] -= 1
            rest += unit

    for kappa in range(9, -1, -1):
        digit, part1 = divmod(part1, 10**kappa)
        if digit or digits:
            digits.append(digit)
        rest = (part1 << e) + part2
        if rest <= delta:
            weed(rest, (10**kappa) << e, to_w)
            return bytes(48 + d for d in digits), k + kappa
    kappa, scale = 0, 1
    while True:
        part2, delta, kappa, scale = part2 * 10, delta * 10, kappa - 1, scale * 10
        digit = part2 >> e
        if digit or digits:
            digits.append(digit)
        part2 &= (1 << e) - 1
        if part2 < delta:
            weed(part2, 1 << e, to_w * scale)
            return bytes(48 + d for d in digits), k + kappa


@settings(max_examples=1500, deadline=None)
@given(value=st.floats(min_value=5e-324, allow_infinity=False, allow_nan=False)
       | st.decimals(0, 10**6, places=6).map(float).filter(lambda v: v > 0))
def test_grisu2_shortcut_agrees_with_the_digit_loop(value: float) -> None:
    assert scores._grisu2(value) == _grisu2_digit_by_digit(value)


def test_listpack_score_printing() -> None:
    assert format_listpack_score(1e17) == b"100000000000000000"
    assert format_listpack_score(float(1 << 62)) == b"4611686018427387904"
    assert format_listpack_score(float(1 << 63)) == b"9223372036854776000"
    assert format_listpack_score(-0.0) == b"0" and format_listpack_score(1.5) == b"1.5"
    assert format_listpack_score(0.1) == b"0.1"
    assert format_listpack_score(math.nan) == b"nan"


def test_lex_bounds() -> None:
    assert parse_lex_bound(b"[a") == (b"a", False) and parse_lex_bound(b"(a") == (b"a", True)
    assert parse_lex_bound(b"[") == (b"", False) and parse_lex_bound(b"(\x00") == (b"\x00", True)
    assert parse_lex_bound(b"-") == (LEX_MIN, True) and parse_lex_bound(b"+") == (LEX_MAX, True)
    assert parse_lex_bound(b"+\x00x") == (LEX_MAX, True)
    for bad in (b"", b"a", b"+x", b"-x", b"{a"):
        assert parse_lex_bound(bad) is None
    assert lex_compare(LEX_MIN, b"") == -1 and lex_compare(LEX_MAX, b"\xff") == 1
    assert lex_compare(b"ab", b"a") == 1 and lex_compare(LEX_MIN, LEX_MIN) == 0
    assert scores.LexValue is not None


@pytest.mark.parametrize(
    ("text", "redis7", "redis8"),
    [
        (b" 2", (2.0, False), None), (b"( 2", (2.0, True), None), (b"0x10", (16.0, False), None),
        (b"-0X1p1", (-2.0, False), None), (b"+1", (1.0, False), (1.0, False)),
        (b"", (0.0, False), (0.0, False)), (b"(", (0.0, True), (0.0, True)),
        (b"1e400", (math.inf, False), (math.inf, False)), (b"2\x00x", (2.0, False), (2.0, False)),
        (b"nan", None, None), (b"0", (0.0, False), (0.0, False)),
    ],
)
def test_score_bounds_as_strtod_and_as_fast_float_read_them(
    text: bytes, redis7: tuple[float, bool] | None, redis8: tuple[float, bool] | None
) -> None:
    """Redis 7 reads a range bound with strtod; Redis 8 with fast_float, which takes no
    leading blank and no hexadecimal."""
    assert parse_score_bound(text, fast_float=False) == redis7
    assert parse_score_bound(text, fast_float=True) == redis8


@pytest.mark.parametrize(
    ("text", "strtod_reads", "fast_float_reads"),
    [
        (b"1.5", 1.5, 1.5), (b"+1", 1.0, 1.0), (b"-inf", -math.inf, -math.inf),
        (b"", 0.0, 0.0), (b" 4", 4.0, None), (b"0x10", 16.0, None), (b"5.", 5.0, 5.0),
        (b"1e400", None, math.inf), (b"1e-400", None, 0.0), (b"4e-320", None, 4e-320),
        (b"7\x00junk", 7.0, 7.0), (b"nan", None, None), (b"1x", None, None), (b" ", None, None),
    ],
)
def test_sort_scores_as_redis_7_and_8_read_them(
    text: bytes, strtod_reads: float | None, fast_float_reads: float | None
) -> None:
    """SORT's numeric keys: strtod with its ERANGE refusals (Redis 7), fast_float without
    them but without leading blanks or hexadecimal either (Redis 8)."""
    assert parse_strtod(text) == strtod_reads
    assert parse_fast_float(text) == fast_float_reads
