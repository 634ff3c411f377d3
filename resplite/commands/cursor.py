"""A named-method cursor over a command's arguments.

Redis words its argument errors per command, so the cursor does not decide error texts on
its own: each method takes the error to raise, defaulting to the text Redis uses most often
for that kind of value. Parsing follows Redis's ``string2ll`` / ``strtold`` rules: integers
are plain decimal without ``+``, spaces or leading zeros; floats reject NaN.
"""

from __future__ import annotations

import math

from resplite.commands import errors
from resplite.commands.errors import CommandError

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


def int_arg(arg: bytes, error: str = errors.NOT_INTEGER) -> int:
    """``arg`` parsed by :func:`parse_int`, or ``CommandError(error)`` when it is not one."""
    value = parse_int(arg)
    if value is None:
        raise CommandError(error)
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


class ArgCursor:
    """Walks ``argv`` from ``start``; every getter consumes one argument."""

    __slots__ = ("argv", "pos")

    def __init__(self, argv: list[bytes], start: int = 1) -> None:
        self.argv = argv
        self.pos = start

    def __bool__(self) -> bool:
        return self.pos < len(self.argv)

    @property
    def remaining(self) -> int:
        return len(self.argv) - self.pos

    def peek(self) -> bytes | None:
        return self.argv[self.pos] if self.pos < len(self.argv) else None

    def next(self, error: str = errors.SYNTAX) -> bytes:
        if self.pos >= len(self.argv):
            raise CommandError(error)
        arg = self.argv[self.pos]
        self.pos += 1
        return arg

    def token(self) -> bytes:
        """The next argument upper-cased, for matching option names."""
        return self.next().upper()

    def try_token(self, *names: bytes) -> bytes | None:
        """Consume the next argument if it is one of ``names`` (case-insensitive)."""
        if self.pos < len(self.argv):
            upper = self.argv[self.pos].upper()
            if upper in names:
                self.pos += 1
                return upper
        return None

    def integer(
        self,
        error: str = errors.NOT_INTEGER,
        *,
        min: int | None = None,
        max: int | None = None,
        range_error: str | None = None,
    ) -> int:
        value = parse_int(self.next(error))
        if value is None:
            raise CommandError(error)
        if (min is not None and value < min) or (max is not None and value > max):
            raise CommandError(range_error or error)
        return value

    def number(self, error: str = errors.NOT_FLOAT) -> float:
        value = parse_float(self.next(error))
        if value is None:
            raise CommandError(error)
        return value

    def rest(self) -> list[bytes]:
        args = self.argv[self.pos :]
        self.pos = len(self.argv)
        return args

    def done(self, error: str = errors.SYNTAX) -> None:
        if self.pos < len(self.argv):
            raise CommandError(error)
