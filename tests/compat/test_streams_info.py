"""XINFO STREAM, GROUPS and CONSUMERS (``resplite/commands/streams_info.py``) against a real
redis-server, byte for byte under RESP2 and RESP3.

Ids are explicit wherever the reply would show them, so both servers produce the same ones.
Behaviour that changed after Redis 7.0 (XINFO CONSUMERS' ``inactive``, the seen and active
times of XINFO STREAM FULL, the lag of a group behind the first entry) is asserted against
resplite alone, with its clock frozen, and marked with the version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest
from support.helpshape import assert_same_shape, implemented
from support.newer import T0, Conn, add_entries
from support.pair import Pair

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl


def seed(pair: Pair, key: str = "s", n: int = 5, fields: Sequence[str] = ("f",)) -> None:
    for i in range(1, n + 1):
        args: list[str | int] = ["XADD", key, f"{i}-1"]
        for field in fields:
            args += [field, f"v{i}"]
        pair.check(*args)


# -- XINFO STREAM --------------------------------------------------------------------------


def test_xinfo_stream_shapes(pair: Pair) -> None:
    pair.check("XADD", "e", "NOMKSTREAM", "*", "a", "1")
    pair.check("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    pair.check("XINFO", "STREAM", "e")
    pair.check("XINFO", "STREAM", "e", "FULL")
    seed(pair, n=15, fields=("f0", "f1"))
    for cmd in [
        ("XINFO", "STREAM", "s"),
        ("XINFO", "STREAM", "s", "FULL"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "0"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "3"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "-3"),
        ("XINFO", "STREAM", "s", "full", "count", "x"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT"),
        ("XINFO", "STREAM", "s", "FULL", "foo", "3"),
        ("XINFO", "STREAM", "s", "foo"),
        ("XINFO", "STREAM", "nokey"),
        ("XINFO", "STREAM", "nokey", "foo"),
        ("XINFO", "foo", "s"),
        ("XINFO", "help", "x"),
        ("XINFO", "GROUPS", "s", "x"),
        ("XINFO", "GROUPS", "nokey"),
        ("XINFO",),
    ]:
        pair.check(*cmd)


def test_xinfo_help_has_the_shape_of_redis(pair: Pair) -> None:
    for spelling in ("HELP", "help"):
        ref, ours = pair.both("XINFO", spelling)
        assert_same_shape(ref, ours, ours_has=implemented("xinfo"))


# -- XINFO GROUPS and lag ------------------------------------------------------------------------


def test_xinfo_groups_lag_while_reading(pair: Pair) -> None:
    seed(pair, n=10)
    pair.check_all([
        ("XGROUP", "CREATE", "s", "a", "0"),
        ("XGROUP", "CREATE", "s", "b", "$"),
        ("XGROUP", "CREATE", "s", "c", "5-1", "ENTRIESREAD", "5"),
        ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "a", "x", "COUNT", "3", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
        ("XADD", "s", "11-1", "f", "v"),
        ("XREADGROUP", "GROUP", "c", "x", "COUNT", "1", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
        ("XDEL", "s", "2-1"),
        ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "a", "x", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
    ])


# -- newer Redis, against resplite alone ---------------------------------------------------------


@pytest.mark.redis_version("7.2")
def test_xinfo_consumers_reports_idle_and_inactive(
    rconn: Conn, resplite_clock: ClockControl
) -> None:
    add_entries(rconn)
    rconn.call("XGROUP", "CREATE", "s", "g", "0")
    rconn.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">")
    rconn.call("XGROUP", "CREATECONSUMER", "s", "g", "bob")
    resplite_clock.advance(250)
    rconn.call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0")  # an attempt only
    resplite_clock.advance(50)
    raw = rconn.call("XINFO", "CONSUMERS", "s", "g")
    alice = (b"$4\r\nname\r\n$5\r\nalice\r\n$7\r\npending\r\n:2\r\n$4\r\nidle\r\n:300\r\n"
             b"$8\r\ninactive\r\n:300\r\n")
    bob = (b"$4\r\nname\r\n$3\r\nbob\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n:50\r\n"
           b"$8\r\ninactive\r\n:-1\r\n")
    head = b"%4\r\n" if rconn.resp == 3 else b"*8\r\n"
    assert raw == b"*2\r\n" + head + alice + head + bob


@pytest.mark.redis_version("7.2")
def test_xinfo_stream_full_shows_seen_and_active_times(
    conn: Conn, resplite_clock: ClockControl
) -> None:
    add_entries(conn, n=2)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    resplite_clock.advance(40)
    conn.call("XCLAIM", "s", "g", "c", "999", "1-1")  # nothing idle enough: seen, not active
    info = conn.v("XINFO", "STREAM", "s", "FULL")
    group = info["groups"][0]
    assert group["pending"] == [["1-1", "c", T0, 1]]
    assert group["consumers"] == [{
        "name": "c", "seen-time": T0 + 40, "active-time": T0, "pel-count": 1,
        "pending": [["1-1", T0, 1]],
    }]


@pytest.mark.redis_version("7.4")
def test_lag_of_a_group_behind_the_first_entry_is_the_length(conn: Conn) -> None:
    add_entries(conn, n=10)
    conn.call("XGROUP", "CREATE", "s", "g", "2-1", "ENTRIESREAD", "2")
    conn.call("XTRIM", "s", "MAXLEN", "4")
    group = conn.v("XINFO", "GROUPS", "s")[0]
    assert group["lag"] == 4
    conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    group = conn.v("XINFO", "GROUPS", "s")[0]
    assert (group["entries-read"], group["lag"]) == (7, 3)
