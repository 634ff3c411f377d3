"""Helpers for compat tests that assert a newer Redis than the reference, on resplite alone.

Where Redis 8.8 or 8.10 changed a behaviour (or added a command) and no reference binary of
that version is installed (the reference is 8.6.3), the test is marked
``@pytest.mark.redis_version("x.y")`` and run against resplite only, with its clock frozen
at :data:`T0` (the ``server``, ``conn``, ``rconn`` and ``xs`` fixtures of
``tests/compat/conftest.py``), so idle and delivery times are exact; its assertions are the
facts of that Redis's documentation and source. Such a test
lives in the compat file of its command module, next to the byte-for-byte tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from support.raw import RawClient
from support.resptree import parse, to_python

if TYPE_CHECKING:
    from resplite.testing.embedded import ServerHandle

T0 = 1_700_000_000_000  # the frozen "now" of the server fixture, in unix milliseconds


def value(raw: bytes) -> Any:
    """A raw reply as plain Python values (maps as dicts)."""
    return to_python(parse(raw))


def as_map(value: Any) -> dict[str, Any]:
    """A map reply as a dict, from RESP3's map or RESP2's flat list of names and values."""
    if isinstance(value, dict):
        return value
    return dict(zip(value[::2], value[1::2], strict=True))


class Conn(RawClient):
    """A raw connection speaking ``resp`` (HELLO 3 sent on connect for RESP3)."""

    def __init__(self, host: str, port: int, resp: int = 2) -> None:
        super().__init__(host, port)
        self.resp = resp
        if resp == 3:
            self.call("HELLO", "3")

    def v(self, *args: bytes | str | int) -> Any:
        """Send a command and return its reply as Python values."""
        return value(self.call(*args))

    def info(self, section: str) -> dict[str, str]:
        """One INFO section as ``field -> value``."""
        text = self.v("INFO", section)
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def dirty(self) -> int:
        """The change counter (INFO persistence ``rdb_changes_since_last_save``)."""
        return int(self.info("persistence")["rdb_changes_since_last_save"])

    def xinfo(self, key: str, *extra: str) -> dict[str, Any]:
        """XINFO STREAM ``key`` as a dict, whichever the protocol."""
        return as_map(self.v("XINFO", "STREAM", key, *extra))


def other(server: ServerHandle) -> Conn:
    """One more (RESP2) connection to ``server``, for a writer next to a blocked reader."""
    return Conn(server.host, server.port)


def add_entries(c: Conn, key: str = "s", n: int = 5) -> None:
    """Entries ``1-1`` .. ``n-1``, each ``f`` -> ``v<i>``."""
    for i in range(1, n + 1):
        c.call("XADD", key, f"{i}-1", "f", f"v{i}")


def groups_setup(c: Conn) -> None:
    """Six entries; g1 has read 1-1..4-1 and acknowledged 1-1..3-1, g2 read 1-1..2-1, acked 1-1."""
    add_entries(c, n=6)
    c.call("XGROUP", "CREATE", "s", "g1", "0")
    c.call("XGROUP", "CREATE", "s", "g2", "0")
    c.call("XREADGROUP", "GROUP", "g1", "c", "COUNT", "4", "STREAMS", "s", ">")
    c.call("XREADGROUP", "GROUP", "g2", "c", "COUNT", "2", "STREAMS", "s", ">")
    c.call("XACK", "s", "g1", "1-1", "2-1", "3-1")
    c.call("XACK", "s", "g2", "1-1")
