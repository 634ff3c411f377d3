"""Small helpers shared by the compatibility tests (``from compat_helpers import ...``).

It lives at the top of ``tests/``, an import root for pytest and mypy alike, so that every
compat test file finds it under the same name.
"""

from __future__ import annotations

import re
from typing import Any

from support.pair import Pair
from support.raw import RawClient

Command = tuple[bytes | str | int, ...]

_INT = re.compile(rb"^:(-?\d+)\r\n$")


def decode(data: bytes) -> Any:
    """A raw reply as Python values, keeping bulk strings as bytes (keys may be binary): bytes,
    int, None, lists and dicts, as the reply's shape says (hence ``Any``, as ``to_python``)."""
    value, end = _decode(data, 0)
    assert end == len(data), data
    return value


def _decode(buf: bytes, i: int) -> tuple[Any, int]:
    kind = buf[i : i + 1]
    nl = buf.index(b"\r\n", i)
    head = buf[i + 1 : nl]
    i = nl + 2
    if kind in (b"$", b"="):
        n = int(head)
        if n < 0:
            return None, i
        return buf[i : i + n], i + n + 2
    if kind in (b"*", b"~", b">", b"%"):
        n = int(head)
        if n < 0:
            return None, i
        items = []
        for _ in range(n * 2 if kind == b"%" else n):
            item, i = _decode(buf, i)
            items.append(item)
        if kind == b"%":
            return dict(zip(items[::2], items[1::2], strict=True)), i
        return items, i
    if kind == b":":
        return int(head), i
    if kind == b"_":
        return None, i
    return head, i  # simple strings, errors, doubles, booleans


def run(pair: Pair, *commands: Command) -> None:
    """Send each command to both servers and demand byte-equal replies."""
    for command in commands:
        pair.check(*command)


def integer(reply: bytes) -> int:
    m = _INT.match(reply)
    assert m is not None, f"not an integer reply: {reply!r}"
    return int(m.group(1))


def check_close(pair: Pair, *command: bytes | str | int, tolerance: int = 200) -> None:
    """Both replies are integers within ``tolerance`` of each other (time-dependent values)."""
    expected, got = pair.both(*command)
    a, b = integer(expected), integer(got)
    assert abs(a - b) <= tolerance, f"{command}: redis {a}, resplite {b}"
    # -2 and -1 are exact answers (no key, no expiry), never approximations.
    assert (a < 0 or b < 0) <= (a == b), f"{command}: redis {a}, resplite {b}"


def values(pair: Pair, *command: bytes | str | int) -> tuple[Any, Any]:
    """Both replies decoded into Python values (for order-insensitive comparisons)."""
    expected, got = pair.both(*command)
    return decode(expected), decode(got)


def scan_all(client: RawClient, *options: bytes | str | int) -> list[bytes]:
    """Every key a full SCAN iteration returns on one server (with repetitions)."""
    cursor = b"0"
    keys: list[bytes] = []
    while True:
        reply = decode(client.call("SCAN", cursor, *options))
        assert isinstance(reply, list)
        cursor, batch = reply[0], reply[1]
        keys.extend(batch)
        if cursor == b"0":
            return keys


# -- scenarios mixing exact and order-free comparisons (sets, SORT) --------------------------

Step = Command


class U(tuple[bytes | str | int, ...]):
    """A step whose reply is a collection compared without its order: same reply type,
    same elements (for an SSCAN reply: same cursor, same members)."""

    __slots__ = ()


class N(tuple[bytes | str | int, ...]):
    """A step sent to both servers whose replies are not compared (a random pick)."""

    __slots__ = ()


def u(*cmd: bytes | str | int) -> U:
    return U(cmd)


def _unordered(value: object) -> object:
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[1], list):  # a SCAN-family reply
            return [value[0], sorted(value[1])]
        return sorted(value, key=repr)
    return value


def check_unordered(pair: Pair, *cmd: bytes | str | int) -> None:
    ref, ours = pair.both(*cmd)
    assert ours[:1] == ref[:1], f"{cmd}: redis {ref!r}, resplite {ours!r}"
    assert _unordered(decode(ours)) == _unordered(decode(ref)), (
        f"{cmd}: redis {ref!r}, resplite {ours!r}")


def play(pair: Pair, *steps: Step) -> None:
    """Run ``steps`` on both servers: plain tuples compared byte for byte, :class:`U`
    without order, :class:`N` not at all."""
    for step in steps:
        if isinstance(step, U):
            check_unordered(pair, *step)
        elif isinstance(step, N):
            pair.both(*step)
        else:
            pair.check(*step)


_REF_VERSIONS: dict[int, tuple[int, int]] = {}


def ref_version(pair: Pair) -> tuple[int, int]:
    """The reference redis-server's ``(major, minor)``, from its INFO (asked once per server):
    where Redis changed a reply since 7.0, a test compares byte for byte with a reference
    that has the change, and checks the 7.0 text against one that has not."""
    port = pair.ref.sock.getpeername()[1]
    if port not in _REF_VERSIONS:
        info = pair.ref.call("INFO", "server")
        match = re.search(rb"redis_version:(\d+)\.(\d+)", info)
        assert match is not None, info
        _REF_VERSIONS[port] = int(match[1]), int(match[2])
    return _REF_VERSIONS[port]
