"""Numbers as Redis reads them from arguments.

Integers follow Redis's ``string2ll``: plain decimal, an optional ``-``, no ``+``, no spaces,
no leading zeros, within a signed 64-bit range. Doubles follow its ``strtold`` paths: no
surrounding white space, and NaN is refused. SORT's scores follow glibc's ``strtod`` read
over a whole C string (:func:`parse_strtod`), which is laxer about white space and stricter
about range.
"""

from __future__ import annotations

import math
import re

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def parse_int(arg: bytes) -> int | None:
    """Parse a signed 64-bit integer exactly as Redis's ``string2ll`` does, or return None."""
    n = len(arg)
    if n == 0 or n > 20:
        return None
    if n == 1:
        return arg[0] - 48 if 48 <= arg[0] <= 57 else None
    first = arg[0]
    body = arg[1:] if first == 45 else arg  # '-'
    if not body or not body.isdigit() or body[0] == 48:  # no leading zeros, no "-0"
        return None
    value = int(arg)
    if value < INT64_MIN or value > INT64_MAX:
        return None
    return value


def parse_float(arg: bytes) -> float | None:
    """Parse a double as Redis's ``string2d``/``strtold`` paths accept it, or return None."""
    if not arg or arg[0] in b" \t\r\n\v\f" or arg[-1] in b" \t\r\n\v\f":
        return None
    try:
        value = float(arg)
    except ValueError:
        return None
    if math.isnan(value):
        return None
    return value


_C_SPACE = b" \t\n\v\f\r"
_DECIMAL = re.compile(
    rb"[+-]?(?:(\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(inf(?:inity)?)|nan(?:\(\w*\))?)", re.IGNORECASE
)
_HEX = re.compile(rb"[+-]?0x([0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?\d+)?", re.IGNORECASE)
_SMALLEST_NORMAL = 2.2250738585072014e-308


def parse_fast_float(arg: bytes) -> float | None:
    """A C string read whole by Redis 8's ``fast_float_strtod`` (SORT scores, score range
    bounds), or None.

    The grammar is ``strtod``'s less leading white space and hexadecimal: a sign (``+``
    too), a decimal number with an optional exponent, ``inf``/``infinity``; the string ends
    at its first NUL byte, and the empty string reads as 0. NaN and anything left over are
    refused; a value out of range is not (an overflow reads as an infinity, an underflow as
    zero or a subnormal number).
    """
    text = arg.split(b"\0", 1)[0]
    if not text:
        return 0.0
    m = _DECIMAL.fullmatch(text)
    if m is None or (m.group(1) is None and m.group(2) is None):
        return None
    return float(text)


def parse_strtod(arg: bytes) -> float | None:
    """A C string read whole by glibc's ``strtod``, as SORT reads scores, or None.

    What SORT accepts: leading white space, a sign, decimal or hexadecimal notation,
    ``inf``/``infinity``; the string ends at its first NUL byte; the empty string reads as
    0 (nothing converted, nothing left over). What it refuses: anything left over, NaN, and
    results out of range (``ERANGE``: an overflow, or an underflow to zero or to a
    subnormal number).
    """
    text = arg.split(b"\0", 1)[0].lstrip(_C_SPACE)
    if not text:
        return 0.0 if not arg.split(b"\0", 1)[0] else None
    m = _DECIMAL.fullmatch(text)
    if m is not None:
        if m.group(1) is None and m.group(2) is None:
            return None  # nan
        value = float(text)
        mantissa = m.group(1)
    else:
        m = _HEX.fullmatch(text)
        if m is None:
            return None
        try:
            value = float.fromhex(text.decode())
        except OverflowError:
            return None
        mantissa = m.group(1)
    if mantissa is not None:
        if math.isinf(value):
            return None
        if abs(value) < _SMALLEST_NORMAL and mantissa.strip(b"0.") != b"":
            return None
    return value
