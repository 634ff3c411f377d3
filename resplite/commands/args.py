"""Argument parsing shared by the command handlers.

Redis words its argument errors per command, so these helpers do not decide error texts on
their own: each takes the error to raise, defaulting to the text Redis uses most often for
that kind of value. The number rules themselves live in :mod:`resplite.algorithms.numbers`.
"""

from __future__ import annotations

from resplite.algorithms.numbers import INT64_MAX, INT64_MIN, parse_float, parse_int
from resplite.engine import errors
from resplite.engine.errors import CommandError

__all__ = ["INT64_MAX", "INT64_MIN", "int_arg", "parse_float", "parse_int"]

def int_arg(arg: bytes, error: str = errors.NOT_INTEGER) -> int:
    """``arg`` parsed by :func:`parse_int`, or ``CommandError(error)`` when it is not one."""
    value = parse_int(arg)
    if value is None:
        raise CommandError(error)
    return value
