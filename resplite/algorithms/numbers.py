"""Numbers as Redis reads them from arguments.

Integers follow Redis's ``string2ll``: plain decimal, an optional ``-``, no ``+``, no spaces,
no leading zeros, within a signed 64-bit range. Doubles follow its ``strtold`` paths: no
surrounding white space, and NaN is refused.
"""

from __future__ import annotations

import math

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
