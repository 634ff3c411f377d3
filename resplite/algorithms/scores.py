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

Printing. A score in a reply is Redis 7.0's ``addReplyDouble``: ``%.17g`` (17 significant
digits, enough to read back the same double), ``inf`` and ``-inf``. The same double printed
into a listpack (what ZSCAN shows for a small sorted set) is different: integers within
±2^62 are written as integers (``100000000000000000`` where ``%.17g`` gives ``1e+17``, and
``0`` for ``-0``).
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
    if arg[-1] not in _SPACE and b"_" not in arg:
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


def parse_score_bound(arg: bytes) -> tuple[float, bool] | None:
    """A score range bound (ZRANGEBYSCORE ``min``/``max``): (value, exclusive), or None."""
    exclusive = arg[:1] == b"("
    text = arg[1:] if exclusive else arg
    nul = text.find(b"\0")
    if nul >= 0:
        text = text[:nul]  # strtod sees a C string
    if not text:
        return 0.0, exclusive
    if text[0] not in _SPACE and b"_" not in text and text[-1] not in _SPACE:
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


def format_score(value: float) -> bytes:
    """A score as a reply carries it (Redis 7.0's ``addReplyDouble``): ``%.17g``, ``inf``."""
    if value in (math.inf, -math.inf):
        return b"inf" if value > 0 else b"-inf"
    return b"%.17g" % value


def format_listpack_score(value: float) -> bytes:
    """A score as Redis 7.0 writes it into a listpack (``zzlInsertAt``): an integral value
    within ±2^62 as an integer (so ``-0`` as ``0``), anything else as ``d2string`` does."""
    if value != value:
        return b"nan"
    if value in (math.inf, -math.inf):
        return b"inf" if value > 0 else b"-inf"
    if -_LL_HALF <= value <= _LL_HALF and value == int(value):
        return b"%d" % int(value)
    return b"%.17g" % value


def fpconv_dtoa(value: float) -> bytes:
    """Redis 7.2+'s ``fpconv_dtoa``: the shortest digits that read back as ``value``
    (Python's ``repr`` finds the same ones), laid out by fpconv's rules: plain digits
    for integers up to 7 zeros past the digits, a plain decimal down to 6 leading
    zeros, else ``d.ddde±x`` with at least one exponent digit."""
    neg = value < 0
    text = repr(-value if neg else value)
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0") or "0"
    # K: the power of ten of the last digit.
    k = (int(exp_text) if exp_text else 0) - len(frac)
    stripped = digits.rstrip("0")
    k += len(digits) - len(stripped)
    digits = stripped or "0"
    nd = len(digits)
    exp = abs(k + nd - 1)
    sign = "-" if neg else ""
    if k >= 0 and exp < nd + 7:
        return (sign + digits + "0" * k).encode()
    if k < 0 and (k > -7 or exp < 4):
        offset = nd + k
        if offset <= 0:
            return (sign + "0." + "0" * -offset + digits).encode()
        return (sign + digits[:offset] + "." + digits[offset:]).encode()
    nd = min(nd, 18 - neg)
    out = digits[0] + ("." + digits[1:nd] if nd > 1 else "")
    e = k + len(digits) - 1
    return (f"{sign}{out}e{'-' if e < 0 else '+'}{abs(e)}").encode()


def d2string(value: float) -> bytes:
    """A score as Redis 7.2 and later write it into a listpack (``d2string``): ``inf``,
    ``-0``, an integral value within ±2^62 as an integer, else :func:`fpconv_dtoa`."""
    if value != value:
        return b"nan"
    if value in (math.inf, -math.inf):
        return b"inf" if value > 0 else b"-inf"
    if value == 0:
        return b"-0" if math.copysign(1.0, value) < 0 else b"0"
    if -_LL_HALF <= value <= _LL_HALF and value == int(value):
        return b"%d" % int(value)
    return fpconv_dtoa(value)
