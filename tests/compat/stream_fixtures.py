"""Fixtures for the stream tests of Redis releases newer than the 7.0 reference server.

There is no newer Redis binary to compare with, so these tests assert resplite's replies
against the facts of Redis's documentation and source, each marked with the version whose
behaviour it asserts. The server's clock is frozen at :data:`T0` and advanced by the test, so
times and expiries are exact. ``xs`` is a raw connection to a flushed resplite, run once
under RESP2 and once under RESP3 (import ``xs_fixture`` to use it); ``xs.v(...)`` decodes a
reply (maps as dicts, whichever the protocol).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.raw import RawClient
from support.resptree import parse, to_python

T0 = 1_700_000_000_000


def as_map(value: Any) -> dict[str, Any]:
    """A map reply as a dict, from RESP3's map or RESP2's flat list of names and values."""
    if isinstance(value, dict):
        return value
    return dict(zip(value[::2], value[1::2], strict=True))


class Conn(RawClient):
    resp = 2

    def v(self, *args: bytes | str | int) -> Any:
        return to_python(parse(self.call(*args)))

    def info(self, section: str) -> dict[str, str]:
        text = self.v("INFO", section)
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def dirty(self) -> int:
        return int(self.info("persistence")["rdb_changes_since_last_save"])

    def xinfo(self, key: str, *extra: str) -> dict[str, Any]:
        return as_map(self.v("XINFO", "STREAM", key, *extra))


@pytest.fixture(name="xs", params=[2, 3], ids=["resp2", "resp3"])
def xs_fixture(
    resplite_instance: Any, resplite_clock: Any, request: pytest.FixtureRequest
) -> Iterator[Conn]:
    resplite_clock.freeze()
    resplite_clock.set(T0)
    conn = Conn(resplite_instance.host, resplite_instance.port)
    conn.resp = request.param
    if request.param == 3:
        conn.call("HELLO", "3")
    conn.call("FLUSHALL")
    yield conn
    conn.close()
    resplite_clock.reset()
