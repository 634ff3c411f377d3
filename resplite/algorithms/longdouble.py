"""INCRBYFLOAT's arithmetic: the x87 80-bit ``long double`` Redis computes with, done exactly.

Redis parses both operands with ``strtold``, adds them in extended precision (a 64-bit
significand, exponents down to 2**-16445 with subnormals, up to about 1.19e4932) and prints
the sum with ``%.17Lf`` before trimming trailing zeros. A Python ``float`` has neither the
precision nor the range (``INCRBYFLOAT k 1e400`` succeeds in Redis), so values here are exact
rationals ``(numerator, denominator)`` that are always representable as an extended double:
every operation rounds its exact result to nearest, ties to even, as the hardware does.

What the parser accepts is what glibc's ``strtold`` consumes entirely: optional sign, then a
decimal number with optional exponent, a hexadecimal one (``0x1.8p3``), ``inf``/``infinity``
or ``nan`` (case-insensitive). Leading whitespace and anything left over are refused, as are
NaN, overflow to infinity and underflow to zero, as Redis's ``string2ld`` does. Infinity
itself parses, so that adding it reports "would produce NaN or Infinity" as Redis does.
"""

from __future__ import annotations

import re
from fractions import Fraction

MAX_CHARS = 5 * 1024  # longest input Redis's string2ld accepts, minus one
_MANT_BITS = 64
_MIN_EXP = -16445  # exponent of the smallest subnormal: 2**-16445
_MAX_EXP = 16383  # largest finite values lie below 2**16384

ZERO = Fraction(0)
INF = Fraction(10) ** 5000  # stands for +infinity (larger than any finite extended value)

_DEC = re.compile(rb"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_HEX = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?")
_SPECIAL = re.compile(rb"([+-]?)(inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)


class Overflow(ArithmeticError):
    """The result is infinite (or NaN) in extended precision."""


def _digits_to_int(digits: bytes, base: int = 10) -> int:
    # int() refuses more than 4300 decimal digits; strtold does not, so convert in chunks.
    value = 0
    for i in range(0, len(digits), 4000):
        chunk = digits[i : i + 4000]
        value = value * base ** len(chunk) + int(chunk, base)
    return value


def _floor_log2(num: int, den: int) -> int:
    k = num.bit_length() - den.bit_length()
    if k >= 0:
        return k if num >= den << k else k - 1
    return k if num << -k >= den else k - 1


def round_extended(value: Fraction) -> Fraction:
    """``value`` rounded to the nearest extended double (ties to even); raises Overflow."""
    if value == 0:
        return value
    negative = value < 0
    num, den = abs(value.numerator), value.denominator
    # the significand q (2**63 <= q < 2**64 for normal values) scales by 2**e
    e = max(_floor_log2(num, den) - (_MANT_BITS - 1), _MIN_EXP)
    if e < 0:
        q, r = divmod(num << -e, den)
        rden = den
    else:
        rden = den << e
        q, r = divmod(num, rden)
    twice = 2 * r
    if twice > rden or (twice == rden and q & 1):
        q += 1
    if q.bit_length() > _MANT_BITS:
        q >>= 1
        e += 1
    if q.bit_length() - 1 + e > _MAX_EXP:
        raise Overflow
    result = Fraction(q << e) if e >= 0 else Fraction(q, 1 << -e)
    return -result if negative else result


def parse(text: bytes) -> Fraction | None:
    """The extended double ``text`` denotes (``INF``/``-INF`` for infinities), or None."""
    if not text or len(text) >= MAX_CHARS:
        return None
    m = _DEC.fullmatch(text)
    if m is not None:
        sign, whole, frac, exp = m.groups()
        frac = frac or b""
        if not whole and not frac:
            return None
        digits = (whole + frac).lstrip(b"0")
        if not digits:
            return Fraction(0)
        power = (int(exp) if exp else 0) - len(frac)
        # Far outside the range whatever the digits are: no need to build the exact value.
        if len(digits) - 1 + power > 4933 or len(digits) + power < -4952:
            return None
        mantissa = _digits_to_int(digits)
        exact = Fraction(mantissa * 10**power) if power >= 0 else Fraction(mantissa, 10**-power)
        return _finish(exact, sign == b"-")
    m = _HEX.fullmatch(text)
    if m is not None:
        sign, whole, frac, exp = m.groups()
        frac = frac or b""
        if not whole and not frac:
            return None
        mantissa = _digits_to_int(whole + frac, 16)
        if not mantissa:
            return Fraction(0)
        power = (int(exp) if exp else 0) - 4 * len(frac)
        bits = mantissa.bit_length()
        if bits - 1 + power > _MAX_EXP + 1 or bits + power < _MIN_EXP - 1:
            return None
        exact = Fraction(mantissa << power) if power >= 0 else Fraction(mantissa, 1 << -power)
        return _finish(exact, sign == b"-")
    m = _SPECIAL.fullmatch(text)
    if m is not None and m.group(2)[:1] in b"iI":
        return -INF if m.group(1) == b"-" else INF
    return None


def _finish(exact: Fraction, negative: bool) -> Fraction | None:
    try:
        value = round_extended(exact)
    except Overflow:
        return None
    if value == 0:
        return None  # underflow: strtold reports ERANGE with a zero result
    return -value if negative else value


def add(a: Fraction, b: Fraction) -> Fraction:
    """``a + b`` in extended precision; raises Overflow for an infinite result."""
    if abs(a) >= INF or abs(b) >= INF:
        raise Overflow
    return round_extended(a + b)


def _int_to_digits(n: int) -> str:
    if n < 10**4000:
        return str(n)
    # str() refuses more than 4300 digits; split on a power of ten.
    high, low = divmod(n, 10**4000)
    return _int_to_digits(high) + str(low).rjust(4000, "0")


def format_human(value: Fraction) -> bytes:
    """``%.17Lf`` of ``value`` with trailing zeros (and a bare point) removed, as Redis."""
    negative = value < 0
    num, den = abs(value.numerator), value.denominator
    scaled_num = num * 10**17
    q, r = divmod(scaled_num, den)
    twice = 2 * r
    if twice > den or (twice == den and q & 1):
        q += 1
    digits = _int_to_digits(q).rjust(18, "0")
    text = digits[:-17] + "." + digits[-17:]
    text = text.rstrip("0").rstrip(".")
    if negative:
        text = "-" + text
    if text == "-0":
        text = "0"
    return text.encode()


def _round_half_even(value: Fraction) -> int:
    q, r = divmod(value.numerator, value.denominator)
    twice = 2 * r
    if twice > value.denominator or (twice == value.denominator and q & 1):
        q += 1
    return q


def format_g17(value: Fraction) -> bytes:
    """``%.17Lg`` of ``value`` (Redis's ``ld2string`` in its automatic mode, AROP's sums):
    17 significant digits, fixed notation for exponents -4 .. 16 and ``d.ddde+XX`` beyond,
    trailing zeros removed; ``inf`` / ``-inf`` for :data:`INF`."""
    if value >= INF:
        return b"inf"
    if value <= -INF:
        return b"-inf"
    if value == 0:
        return b"0"
    sign = "-" if value < 0 else ""
    v = abs(value)
    # The decimal exponent: 10**exp <= v < 10**(exp + 1).
    exp = (v.numerator.bit_length() - v.denominator.bit_length()) * 30103 // 100000
    while Fraction(10) ** exp > v:
        exp -= 1
    while Fraction(10) ** (exp + 1) <= v:
        exp += 1
    digits = _round_half_even(v / Fraction(10) ** (exp - 16))
    if digits == 10**17:  # rounding carried into a new digit
        digits //= 10
        exp += 1
    text = str(digits)
    if -4 <= exp < 17:
        if exp >= 0:
            whole, frac = text[: exp + 1], text[exp + 1:]
        else:
            whole, frac = "0", "0" * (-exp - 1) + text
        frac = frac.rstrip("0")
        body = whole + ("." + frac if frac else "")
    else:
        mant = text[0] + ("." + text[1:].rstrip("0") if text[1:].rstrip("0") else "")
        body = f"{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return (sign + body).encode()
