"""MONITOR: every command the server runs, one line each, to the clients that asked.

A line is Redis's: ``+<seconds>.<microseconds> [<db> <peer>] "cmd" "arg" ...``, a simple
string (the same bytes in RESP2 and RESP3). The peer is the client's address, or
``unix:<socket path>`` for a Unix-socket client. Each argument is quoted and escaped as
Redis's ``sdscatrepr`` does: ``\\`` and ``"`` are backslashed, newline, carriage return, tab,
bell and backspace become ``\\n \\r \\t \\a \\b``, any other byte outside printable ASCII
becomes ``\\xHH``.

What is shown follows Redis's ``call()``: a command is fed after it ran (errors included),
unless it is an ``admin`` command or flagged ``skip_monitor``, or it was refused before it
ran (unknown, wrong arity, not authenticated...). Secrets are replaced by ``(redacted)``:
every argument of AUTH, the user name and password after HELLO's AUTH.
"""

from __future__ import annotations

from collections.abc import Sequence

_REDACTED = b"(redacted)"
# Bytes sdscatrepr writes with a short escape.
_SHORT = {
    ord("\\"): b"\\\\", ord('"'): b'\\"', ord("\n"): b"\\n", ord("\r"): b"\\r",
    ord("\t"): b"\\t", 7: b"\\a", 8: b"\\b",
}
_ESCAPES: list[bytes] = [
    _SHORT.get(b, bytes([b]) if 32 <= b < 127 else b"\\x%02x" % b) for b in range(256)
]
_PLAIN = frozenset(b for b in range(32, 127) if b not in (ord("\\"), ord('"')))


def repr_arg(arg: bytes) -> bytes:
    """One argument quoted as ``sdscatrepr`` quotes it."""
    if all(b in _PLAIN for b in arg):
        return b'"' + arg + b'"'
    return b'"' + b"".join(_ESCAPES[b] for b in arg) + b'"'


def redact(fullname: str, argv: Sequence[bytes]) -> Sequence[bytes]:
    """The arguments as MONITOR may show them: secrets replaced, as Redis redacts them."""
    if fullname == "auth":
        return [argv[0], *([_REDACTED] * (len(argv) - 1))]
    if fullname == "hello":
        shown = list(argv)
        j = 2
        while j < len(shown):
            more = len(shown) - 1 - j
            opt = shown[j].lower()
            if opt == b"auth" and more >= 2:
                shown[j + 1] = shown[j + 2] = _REDACTED
                j += 3
            elif opt == b"setname" and more >= 1:
                j += 2
            else:
                break
        return shown
    if fullname == "migrate":
        # AUTH's password and AUTH2's username and password, as Redis's migrateCommand
        # redacts them while parsing (up to KEYS).
        shown = list(argv)
        j = 6
        while j < len(shown):
            opt = shown[j].lower()
            more = len(shown) - 1 - j
            if opt == b"auth" and more >= 1:
                shown[j + 1] = _REDACTED
                j += 1
            elif opt == b"auth2" and more >= 2:
                shown[j + 1] = shown[j + 2] = _REDACTED
                j += 2
            elif opt not in (b"copy", b"replace"):
                break
            j += 1
        return shown
    return argv


def monitor_line(unix_us: int, db: int, peer: str, argv: Sequence[bytes]) -> bytes:
    """The bytes of one MONITOR line, ``\\r\\n`` included."""
    seconds, micros = divmod(unix_us, 1_000_000)
    head = b"+%d.%06d [%d %s] " % (seconds, micros, db, peer.encode("utf-8", "surrogateescape"))
    return head + b" ".join(repr_arg(a) for a in argv) + b"\r\n"
