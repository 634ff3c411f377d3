"""Argument parsing shared by the command handlers.

Redis words its argument errors per command, so these helpers do not decide error texts on
their own: each takes the error to raise, defaulting to the text Redis uses most often for
that kind of value. The number rules themselves live in :mod:`resplite.algorithms.numbers`.
"""

from __future__ import annotations

import math

from resplite.algorithms.numbers import INT64_MAX, INT64_MIN, parse_float, parse_int
from resplite.engine import errors
from resplite.engine.errors import CommandError

__all__ = ["INT64_MAX", "INT64_MIN", "int_arg", "parse_float", "parse_int", "timeout_ms"]

def int_arg(arg: bytes, error: str = errors.NOT_INTEGER) -> int:
    """``arg`` parsed by :func:`parse_int`, or ``CommandError(error)`` when it is not one."""
    value = parse_int(arg)
    if value is None:
        raise CommandError(error)
    return value


def timeout_ms(arg: bytes, now_ms: int) -> int:
    """A blocking command's timeout in seconds (BLPOP, BLMOVE ...) as milliseconds, 0 for
    ever, parsed as Redis 7.2+'s ``getTimeoutFromObjectOrReply`` does: a ``long double``
    (``strtold`` syntax, so ``0x1p3`` and ``1e3`` too) times 1000 in extended precision,
    rounded up; a result past the 64-bit range, or whose deadline from ``now_ms`` would be,
    is out of range (Redis 7.0 wrapped it instead)."""
    # Imported with the first blocking command: the connection commands use this module too.
    from resplite.algorithms import longdouble

    value = longdouble.parse(arg)
    if value is None:
        raise CommandError(errors.TIMEOUT_NOT_FLOAT)
    if value >= longdouble.INF:
        raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
    if value <= -longdouble.INF:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    try:
        scaled = longdouble.round_extended(value * 1000)
    except longdouble.Overflow:
        raise CommandError(
            errors.TIMEOUT_OUT_OF_RANGE if value > 0 else errors.TIMEOUT_NEGATIVE
        ) from None
    if scaled > INT64_MAX:
        raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
    ms = math.ceil(scaled)
    if ms < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    if ms > INT64_MAX - now_ms:
        raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
    return ms


def c_option(arg: bytes) -> bytes:
    """An option name as Redis's ``strcasecmp`` compares it: up to the first NUL, lower case."""
    return arg.split(b"\0", 1)[0].lower()
