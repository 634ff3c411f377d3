"""Sorted-set scores and ranges as Redis reads and prints them: pure functions, no I/O.

Reading. Redis reads numbers with the C library's ``strtod`` in two ways, and both are kept
here exactly:

* a *score* (ZADD, ZINCRBY, WEIGHTS) goes through Redis's ``string2d``: the whole argument
  must be one number, with no white space in front, no NaN, and neither an overflow to
  infinity nor an underflow to zero (``1e400`` and ``1e-400`` are refused; ``inf`` itself,
  written as such, is a valid score);
* a *range bound* (ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE, ZRANGE BYSCORE) goes through
  ``strtod`` on the argument as a C string: an optional ``(`` makes it exclusive, leading
  white space is skipped, the argument ends at its first NUL byte, an empty number reads as
  0, an overflow reads as an infinity, and only NaN or trailing characters are refused.

What ``strtod`` consumes is glibc's grammar: an optional sign, then a decimal number with an
optional exponent, a hexadecimal one (``0x1.8p3``), ``inf``/``infinity`` or ``nan`` with an
optional ``(chars)`` (case-insensitive). Decimal and hexadecimal values round to nearest,
ties to even, as both glibc and Python do.

Lexicographic bounds (ZRANGEBYLEX and friends) are ``[value`` (inclusive), ``(value``
(exclusive), ``-`` and ``+`` (the ends); :data:`LEX_MIN` and :data:`LEX_MAX` stand for the
last two.

Printing. Since Redis 7.2 a double in a reply (every score, RESP2 bulk or RESP3 ``,``) is
printed by ``d2string``: integral values within ±2^62 as integers, anything else by the
fpconv library's Grisu2, which finds a short digit string that reads back as the same
double (``0.1`` where 7.0's ``%.17g`` printed ``0.10000000000000001``): this module's
:func:`d2string`, the one place resplite prints a double that way. A listpack stores
a score as that same text (integers as integers, so ``-0`` as ``0``), which is what ZSCAN
shows for a small sorted set (:func:`format_listpack_score`); ZSCAN over a skiplist still
prints ``%.17g`` in Redis 8.4 (:func:`format_17g`).

Grisu2 is exact integer arithmetic on 64-bit mantissas, done here with Python integers; the
result was checked against fpconv's own C code on millions of doubles, and a test keeps the
shortcut used here equal to the digit-by-digit loop as fpconv writes it.
"""

from __future__ import annotations

import math
import re
from typing import Final

_SPACE = b" \t\n\v\f\r"  # C's isspace in the "C" locale

# What glibc's strtod consumes from the start of a string (after white space).
_STRTOD = re.compile(
    rb"([+-]?)(?:"
    rb"(0[xX](?=\.?[0-9a-fA-F])[0-9a-fA-F]*(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?[0-9]+)?)"
    rb"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    rb"|(inf(?:inity)?)"
    rb"|(nan(?:\([0-9A-Za-z_]*\))?)"
    rb")",
    re.IGNORECASE,
)


_HEX_START = re.compile(rb"[+-]?0[xX]")


def strtod(text: bytes) -> tuple[float, int, bool]:
    """What C's ``strtod`` makes of ``text``: (value, bytes consumed, range error).

    Nothing consumed (0) when ``text`` holds no number, as ``strtod`` sets its end pointer
    back to the start. The range error is the ``ERANGE`` Redis acts on: an overflow to
    infinity or an underflow to zero of a number that is not zero (glibc also flags inexact
    subnormal results, which Redis accepts, so they are not reported here).
    """
    start = 0
    n = len(text)
    while start < n and text[start] in _SPACE:
        start += 1
    m = _STRTOD.match(text, start)
    if m is None:
        return 0.0, 0, False
    sign, hexa, decimal, inf, _nan = m.groups()
    negative = sign == b"-"
    if inf is not None:
        return (-math.inf if negative else math.inf), m.end(), False
    if decimal is None and hexa is None:
        return math.nan, m.end(), False
    mantissa = hexa if hexa is not None else decimal
    assert mantissa is not None
    try:
        value = float.fromhex(mantissa.decode()) if hexa is not None else float(mantissa)
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        erange = True
    elif value == 0.0:
        # ERANGE only when a number that is not zero rounded to zero.
        if hexa is not None:
            digits = re.split(rb"[pP]", mantissa[2:], maxsplit=1)[0]
            erange = re.search(rb"[1-9a-fA-F]", digits) is not None
        else:
            digits = re.split(rb"[eE]", mantissa, maxsplit=1)[0]
            erange = re.search(rb"[1-9]", digits) is not None
    else:
        erange = False
    return (-value if negative else value), m.end(), erange


def parse_score(arg: bytes) -> float | None:
    """A score as Redis's ``string2d`` reads it (ZADD, ZINCRBY, WEIGHTS), or None."""
    if not arg or arg[0] in _SPACE:
        return None
    # Python's float() also takes trailing white space and digit underscores: not for those.
    # (find, not ``in``: CPython's bytes ``in`` first tries the needle as an integer and
    # builds and drops a TypeError, which cost ZADD more than parsing its score.)
    if arg[-1] not in _SPACE and arg.find(b"_") < 0:
        try:
            value = float(arg)
        except ValueError:
            pass
        else:
            if value != value:
                return None
            if value != 0.0 and value != math.inf and value != -math.inf:
                return value
            # A zero or an infinity: written so, or an underflow / overflow? strtod says.
    return _parse_score_slow(arg)


def _parse_score_slow(arg: bytes) -> float | None:
    value, end, erange = strtod(arg)
    if end != len(arg) or erange or math.isnan(value):
        return None
    return value


def parse_score_bound(arg: bytes, fast_float: bool = False) -> tuple[float, bool] | None:
    """A score range bound (ZRANGEBYSCORE ``min``/``max``): (value, exclusive), or None.

    ``fast_float``: as Redis 8 reads it (``fast_float_strtod``: no leading white space, no
    hexadecimal); else as ``strtod`` does (Redis 7)."""
    exclusive = arg[:1] == b"("
    text = arg[1:] if exclusive else arg
    nul = text.find(b"\0")
    if nul >= 0:
        text = text[:nul]  # strtod sees a C string
    if not text:
        return 0.0, exclusive
    if fast_float and (text[0] in _SPACE or _HEX_START.match(text)):
        return None
    if text[0] not in _SPACE and text.find(b"_") < 0 and text[-1] not in _SPACE:
        try:
            value = float(text)
        except ValueError:
            pass
        else:
            return (None if value != value else (value, exclusive))
    value, end, _ = strtod(text)
    if end != len(text) or math.isnan(value):
        return None
    return value, exclusive


# -- lexicographic bounds ------------------------------------------------------------------


class _LexEnd:
    """``-`` or ``+`` in a lexicographic range: below or above every string."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


LEX_MIN: Final = _LexEnd("LEX_MIN")
LEX_MAX: Final = _LexEnd("LEX_MAX")
LexValue = bytes | _LexEnd


def parse_lex_bound(arg: bytes) -> tuple[LexValue, bool] | None:
    """A lexicographic range item: (value or LEX_MIN / LEX_MAX, exclusive), or None.

    ``+`` and ``-`` must stand alone (a NUL byte after them ends the C string, so
    ``+\\0...`` still counts as ``+``); ``(`` and ``[`` take the rest of the argument, NUL
    bytes included.
    """
    head = arg[:1]
    if head == b"(":
        return arg[1:], True
    if head == b"[":
        return arg[1:], False
    if head == b"+" and arg[1:2] in (b"", b"\0"):
        return LEX_MAX, True
    if head == b"-" and arg[1:2] in (b"", b"\0"):
        return LEX_MIN, True
    return None


def lex_compare(a: LexValue, b: LexValue) -> int:
    """Redis's ``sdscmplex``: -1, 0 or 1, with ``-`` below and ``+`` above every string."""
    if a is b:
        return 0
    if a is LEX_MIN or b is LEX_MAX:
        return -1
    if a is LEX_MAX or b is LEX_MIN:
        return 1
    assert isinstance(a, bytes) and isinstance(b, bytes)
    return (a > b) - (a < b)


# -- printing ---------------------------------------------------------------------------------

_LL_HALF = float((1 << 62) - 1)  # (double)(LLONG_MAX / 2), Redis's limit for exact integers
_INF = math.inf


def d2string(value: float) -> bytes:
    """A double as Redis 7.2+ prints it in a reply (``d2string`` / ``addReplyDouble``).

    ``nan``, ``inf`` and ``-inf`` by name; a zero as ``0`` or ``-0``; an integral value
    within ±2^62 as an integer (``100000000000000000`` for 1e17); anything else with the
    fpconv formatter (Grisu2): a digit string that reads back as the same double, short
    (``0.1``, not 7.0's ``0.10000000000000001``) though not always the shortest possible,
    laid out as :func:`_fpconv_layout` says. RESP3 sends the same text after ``,``.
    """
    if value != value:
        return b"nan"
    if value == _INF or value == -_INF:
        return b"inf" if value > 0 else b"-inf"
    if value == 0.0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    if -_LL_HALF <= value <= _LL_HALF and value.is_integer():
        return b"%d" % int(value)
    return fpconv_dtoa(value)


def fpconv_dtoa(value: float) -> bytes:
    """fpconv's ``fpconv_dtoa`` (no integer shortcut): ``0`` / ``-0``, ``nan``, ``inf``,
    else the Grisu2 digits in fpconv's layout, signed."""
    if value == 0.0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    if value != value or value == _INF or value == -_INF:
        return (b"-" if math.copysign(1.0, value) < 0 else b"") + (
            b"nan" if value != value else b"inf")
    if value < 0:
        digits, k = _grisu2(-value)
        return b"-" + _fpconv_layout(digits, k)
    digits, k = _grisu2(value)
    return _fpconv_layout(digits, k)


def format_listpack_score(value: float) -> bytes:
    """A score as Redis writes it into a listpack (``zzlInsertAt``), which is what ZSCAN
    shows for a small sorted set: an integral value within ±2^62 as an integer (so ``-0``
    as ``0``), anything else as :func:`d2string` prints it."""
    if value == 0.0:
        return b"0"
    return d2string(value)


def format_17g(value: float) -> bytes:
    """``%.17g`` (with ``inf`` / ``-inf`` by name): Redis 7.0's reply format, and still
    Redis 8.4's for the scores ZSCAN reads from a skiplist (``ld2string`` in its AUTO
    mode, on the double widened to a long double, prints the same digits)."""
    if value == _INF or value == -_INF:
        return b"inf" if value > 0 else b"-inf"
    return b"%.17g" % value


def _fpconv_layout(digits: bytes, k: int) -> bytes:
    """fpconv's layout of a positive ``digits`` x 10^``k``: plain digits with trailing
    zeros while the decimal exponent stays below the digit count + 7 (``1e21`` is
    ``1e+21``, ``1234e20`` is ``123400000000000000000000``); a decimal point without an
    exponent for fractions down to 10^-6 (or any number of digits once the exponent is
    below 4 in size); otherwise one digit, an optional point and the rest, ``e``, a sign
    and the exponent without leading zeros (``1e-7``, ``1.5e+300``)."""
    n = len(digits)
    exp10 = k + n - 1  # the exponent of the first digit
    size = exp10 if exp10 >= 0 else -exp10
    if k >= 0 and size < n + 7:
        return digits + b"0" * k
    if k < 0 and (k > -7 or size < 4):
        point = n + k
        if point <= 0:
            return b"0." + b"0" * -point + digits
        return digits[:point] + b"." + digits[point:]
    head = digits[:1] + (b"." + digits[1:] if n > 1 else b"")
    return head + (b"e-%d" if exp10 < 0 else b"e+%d") % size


# Grisu2 works on 64-bit "do-it-yourself" floating-point numbers (an integer mantissa and a
# binary exponent) and on cached powers of ten 10^k, k = -348, -340, ..., 340, each as the
# 64-bit mantissa (top bit set) nearest to it and its binary exponent.
def _cached_powers() -> list[tuple[int, int]]:
    powers = []
    for k in range(-348, 341, 8):
        num, den = (10**k, 1) if k >= 0 else (1, 10**-k)
        shift = num.bit_length() - den.bit_length() - 64
        while True:
            divisor = den << shift if shift >= 0 else den
            q, r = divmod(num if shift >= 0 else num << -shift, divisor)
            if q >> 64:
                shift += 1
            elif not q >> 63:
                shift -= 1
            else:
                break
        if 2 * r >= divisor:  # round to nearest
            q += 1
            if q >> 64:
                q >>= 1
                shift += 1
        powers.append((q, shift))
    return powers


_POWERS: Final = _cached_powers()
_POW10: Final = [10**i for i in range(24)]
_HALF64 = 1 << 63
_HIDDEN = 1 << 52


def _grisu2(value: float) -> tuple[bytes, int]:
    """fpconv's Grisu2 digits of a positive, finite, non-zero double: (digits, k) for
    digits x 10^k.

    The boundaries of the double's rounding interval and the double itself are scaled by a
    cached power of ten so that the upper boundary's integral part fits 32 bits; the
    interval is then narrowed by one unit at each end (so the result reads back exactly
    even with the scaling's rounding). The digits are the upper boundary's, cut at the
    first position (from the top) where what is cut off is within the interval's width:
    at most ``delta`` while whole digits are cut, strictly less once fractional ones are.
    The last digit is then lowered while that brings it closer to the double and keeps it
    in the interval ("weeding"). That is what ``fpconv_dtoa`` computes, digit by digit; here
    the cut is found with a few exact integer divisions, starting from the length of the
    shortest representation (Python's ``repr``), which Grisu2 never goes below.
    """
    mantissa, exponent = math.frexp(value)
    if exponent >= -1021:
        frac = int(math.ldexp(mantissa, 53))
        exp = exponent - 53
    else:  # subnormal: no hidden bit, the smallest exponent
        frac = int(math.ldexp(value, 1074))
        exp = -1074
    # The upper boundary (half a unit above), normalised to 64 bits.
    upper = (frac << 1) + 1
    shift = 64 - upper.bit_length()
    upper <<= shift
    upper_exp = exp - 1 - shift
    # The lower boundary: half a unit below, a quarter when the unit below is smaller.
    lower_shift = 2 if frac == _HIDDEN else 1
    lower = ((frac << lower_shift) - 1) << (exp - lower_shift - upper_exp)
    w = frac << (64 - frac.bit_length())
    # The cached power that brings the upper boundary's exponent into [-60, -32], searched
    # from the same first guess as fpconv (the range may hold two of them).
    index = (int(-(upper_exp + 87) * 0.30102999566398114) + 348) // 8
    while True:
        power, power_exp = _POWERS[index]
        scaled_exp = upper_exp + power_exp + 64
        if scaled_exp < -60:
            index += 1
        elif scaled_exp > -32:
            index -= 1
        else:
            break
    w = (w * power + _HALF64) >> 64
    upper = ((upper * power + _HALF64) >> 64) - 1
    lower = ((lower * power + _HALF64) >> 64) + 1
    e = -scaled_exp  # ``upper`` is a fixed-point number with ``e`` fractional bits
    delta = upper - lower
    to_w = upper - w
    k0 = 348 - 8 * index
    mask = (1 << e) - 1

    # The cut: the largest j such that cutting upper below 10^j leaves at most delta
    # (j >= 0) or less than delta (j < 0, compared after scaling by 10^-j).
    if upper % (1 << e) <= delta:  # j = 0 qualifies: look higher
        j = 0
        while j < 9 and upper % (_POW10[j + 1] << e) <= delta:
            j += 1
    else:
        text = repr(value)
        shortest = len(text.partition("e")[0].replace(".", "").strip("0"))
        integral = upper >> e
        j = min((len(b"%d" % integral) if integral else 0) - shortest, -1)
        while j < -1 and (upper * _POW10[-j - 1]) & mask < delta * _POW10[-j - 1]:
            j += 1
        while not (upper * _POW10[-j]) & mask < delta * _POW10[-j]:
            j -= 1
    if j >= 0:
        unit = _POW10[j] << e
        kept, rest = divmod(upper, unit)
    else:
        scale = _POW10[-j]
        scaled = upper * scale
        kept, rest = scaled >> e, scaled & mask
        unit = 1 << e
        delta *= scale
        to_w *= scale
    # Weeding: lower the last digit while the result gets closer to w and stays inside.
    lowered = 0
    while rest < to_w and delta - rest >= unit and (
        rest + unit < to_w or to_w - rest > rest + unit - to_w
    ):
        lowered += 1
        rest += unit
    digits = b"%d" % (kept - lowered)
    if lowered > kept % 10:  # never seen: fpconv would lower the character itself
        digits = b"%d" % kept
        digits = digits[:-1] + bytes([digits[-1] - lowered])
    return digits, k0 + j
