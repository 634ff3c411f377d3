"""Stream behaviour of Redis releases newer than the 7.0 reference server, against resplite.

Each test carries the version whose behaviour it asserts. Time is under the test's control
(the server's clock is frozen and advanced), so idle times and delivery times are exact.
The reference Redis 7.0 behaves differently in each of these cases, which is why they are
not compared byte for byte with it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.raw import RawClient
from support.resptree import parse, to_python

T0 = 1_700_000_000_000


def value(raw: bytes) -> Any:
    return to_python(parse(raw))


class Conn(RawClient):
    def v(self, *args: Any) -> Any:
        return value(self.call(*args))


@pytest.fixture
def server(resplite_instance: Any, resplite_clock: Any) -> Iterator[Any]:
    resplite_clock.set(T0)
    resplite_clock.freeze()
    yield resplite_instance
    resplite_clock.reset()


@pytest.fixture
def conn(server: Any) -> Iterator[Conn]:
    """A RESP3 connection, so that maps read as dicts."""
    c = Conn(server.host, server.port)
    c.call("HELLO", "3")
    yield c
    c.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def rconn(server: Any, request: pytest.FixtureRequest) -> Iterator[Conn]:
    c = Conn(server.host, server.port)
    if request.param == 3:
        c.call("HELLO", "3")
    c.resp = request.param  # type: ignore[attr-defined]
    yield c
    c.close()


def other(server: Any) -> Conn:
    return Conn(server.host, server.port)


def wait_blocked(c: Conn, count: int = 1) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        info = c.call("INFO", "clients")
        for line in info.split(b"\r\n"):
            if line.startswith(b"blocked_clients:") and int(line.split(b":")[1]) >= count:
                return
        time.sleep(0.005)
    raise AssertionError("the reader never blocked")


def seed(c: Conn, key: str = "s", n: int = 5) -> None:
    for i in range(1, n + 1):
        c.call("XADD", key, f"{i}-1", "f", f"v{i}")


# -- Redis 7.2: consumers and their times -----------------------------------------------------


@pytest.mark.redis_version("7.2")
def test_reads_and_claims_create_their_consumer_even_when_nothing_is_delivered(
    conn: Conn,
) -> None:
    seed(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "$")
    assert conn.call("XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">") == b"_\r\n"
    assert conn.v("XCLAIM", "s", "g", "claimer", "0", "1-1") == []
    assert conn.v("XAUTOCLAIM", "s", "g", "auto", "0", "0") == ["0-0", [], []]
    names = [c["name"] for c in conn.v("XINFO", "CONSUMERS", "s", "g")]
    assert names == ["auto", "claimer", "reader"]


@pytest.mark.redis_version("7.2")
def test_xinfo_consumers_reports_idle_and_inactive(rconn: Conn, resplite_clock: Any) -> None:
    seed(rconn)
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
    head = b"%4\r\n" if rconn.resp == 3 else b"*8\r\n"  # type: ignore[attr-defined]
    assert raw == b"*2\r\n" + head + alice + head + bob


@pytest.mark.redis_version("7.2")
def test_xinfo_stream_full_shows_seen_and_active_times(conn: Conn, resplite_clock: Any) -> None:
    seed(conn, n=2)
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


# -- Redis 7.2: blocked commands are re-run ------------------------------------------------------


@pytest.mark.redis_version("7.2")
@pytest.mark.parametrize(
    ("change", "answer"),
    [
        (("DEL", "s"), b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with "
                       b"GROUP option\r\n"),
        (("XGROUP", "DESTROY", "s", "g"), b"-NOGROUP No such key 's' or consumer group 'g' "
                                          b"in XREADGROUP with GROUP option\r\n"),
        (("SET", "s", "x"), b"-WRONGTYPE Operation against a key holding the wrong kind of "
                            b"value\r\n"),
        (("FLUSHALL",), b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with "
                        b"GROUP option\r\n"),
    ],
    ids=["del", "destroy", "type-change", "flushall"],
)
def test_blocked_xreadgroup_answers_when_its_group_goes(
    server: Any, conn: Conn, change: tuple[str, ...], answer: bytes
) -> None:
    seed(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "$")
    writer = other(server)
    try:
        conn.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        wait_blocked(writer)
        writer.call(*change)
        assert conn.read_reply() == answer
    finally:
        writer.close()


@pytest.mark.redis_version("7.2")
def test_blocked_xread_ignores_type_changes_and_deletes(server: Any, conn: Conn) -> None:
    seed(conn)
    writer = other(server)
    try:
        conn.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        wait_blocked(writer)
        writer.call("SET", "s", "not a stream")
        writer.call("DEL", "s")
        writer.call("XADD", "s", "1-1", "old", "id")  # below the id fixed when it blocked
        wait_blocked(writer)
        writer.call("XADD", "s", "7-1", "k", "v")
        assert value(conn.read_reply()) == {"s": [["7-1", ["k", "v"]]]}
    finally:
        writer.close()


@pytest.mark.redis_version("7.2")
def test_blocked_xreadgroup_rerun_that_finds_nothing_stays_blocked(
    server: Any, conn: Conn, resplite_clock: Any
) -> None:
    seed(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "$")
    writer = other(server)
    try:
        conn.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000", "STREAMS", "s", ">")
        wait_blocked(writer)
        writer.call("XDEL", "s", "1-1")  # a change with nothing new: re-run, still blocked
        resplite_clock.advance(999)
        wait_blocked(writer)
        resplite_clock.advance(1)
        assert conn.read_reply() == b"_\r\n"
    finally:
        writer.close()


# -- Redis 7.4: "+" and the wording of an unbalanced STREAMS list -------------------------------


@pytest.mark.redis_version("7.4")
def test_xread_plus_reads_the_last_entry(server: Any, conn: Conn) -> None:
    seed(conn)
    conn.call("XDEL", "s", "5-1")
    assert conn.v("XREAD", "STREAMS", "s", "+") == {"s": [["4-1", ["f", "v4"]]]}
    assert conn.call("XREAD", "STREAMS", "nokey", "+") == b"_\r\n"
    both = parse(conn.call("XREAD", "COUNT", "1", "STREAMS", "s", "s", "+", "0"))
    assert [(to_python(k), to_python(v)) for k, v in both[1]] == [
        ("s", [["4-1", ["f", "v4"]]]), ("s", [["1-1", ["f", "v1"]]]),
    ]
    writer = other(server)
    try:
        conn.send("XREAD", "BLOCK", "0", "STREAMS", "e", "+")
        wait_blocked(writer)
        writer.call("XADD", "e", "3-3", "a", "b")
        assert value(conn.read_reply()) == {"e": [["3-3", ["a", "b"]]]}
    finally:
        writer.close()


@pytest.mark.redis_version("7.4")
def test_plus_and_unbalanced_lists_errors(conn: Conn) -> None:
    seed(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "$")
    assert conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+") == (
        b"-ERR The + ID is meaningless in the context of XREADGROUP: you want to read the "
        b"history of this consumer by specifying a proper ID, or use the > ID to get new "
        b"messages. The + ID would just return an empty result set.\r\n")
    assert conn.call("XREAD", "STREAMS", "s", "t", "0") == (
        b"-ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' "
        b"must be specified.\r\n")
    assert conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">") == (
        b"-ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
        b"must be specified.\r\n")


# -- fixes after 7.0 in id and counter bookkeeping ---------------------------------------------


@pytest.mark.redis_version("7.2")
def test_xsetid_cannot_go_below_the_largest_deleted_id(conn: Conn) -> None:
    seed(conn, n=3)
    conn.call("XDEL", "s", "2-1", "3-1")
    assert conn.call("XSETID", "s", "2-5") == (
        b"-ERR The ID specified in XSETID is smaller than current max_deleted_entry_id\r\n")
    assert conn.call("XSETID", "s", "3-1") == b"+OK\r\n"


@pytest.mark.redis_version("7.2")
def test_xadd_sequence_exhausted_within_a_millisecond(conn: Conn) -> None:
    conn.call("XADD", "s", "7-18446744073709551615", "a", "1")
    assert conn.call("XADD", "s", "7-*", "a", "1") == (
        b"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n")
    assert conn.call("XADD", "s", "8-*", "a", "1") == b"$3\r\n8-0\r\n"


@pytest.mark.redis_version("8.2")
def test_entriesread_is_clamped_to_entries_added(conn: Conn) -> None:
    seed(conn, n=3)
    conn.call("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "99")
    conn.call("XGROUP", "CREATE", "s", "h", "0")
    conn.call("XGROUP", "SETID", "s", "h", "2-1", "ENTRIESREAD", "50")
    groups = {g["name"]: g for g in conn.v("XINFO", "GROUPS", "s")}
    # g's last id is before the first entry: its lag is the length, whatever it has read.
    assert (groups["g"]["entries-read"], groups["g"]["lag"]) == (3, 3)
    assert (groups["h"]["entries-read"], groups["h"]["lag"]) == (3, 0)


@pytest.mark.redis_version("8.8")
def test_xsetid_lowering_entries_added_clamps_read_counters(conn: Conn) -> None:
    # Redis PR 15489: a group never claims to have read more than was ever added.
    seed(conn, n=6)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    conn.call("XTRIM", "s", "MAXLEN", "2")
    conn.call("XSETID", "s", "6-1", "ENTRIESADDED", "2")
    group = conn.v("XINFO", "GROUPS", "s")[0]
    assert (group["entries-read"], group["lag"]) == (2, 0)


@pytest.mark.redis_version("7.4")
def test_lag_of_a_group_behind_the_first_entry_is_the_length(conn: Conn) -> None:
    seed(conn, n=10)
    conn.call("XGROUP", "CREATE", "s", "g", "2-1", "ENTRIESREAD", "2")
    conn.call("XTRIM", "s", "MAXLEN", "4")
    group = conn.v("XINFO", "GROUPS", "s")[0]
    assert group["lag"] == 4
    conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    group = conn.v("XINFO", "GROUPS", "s")[0]
    assert (group["entries-read"], group["lag"]) == (7, 3)


# -- Redis 8.2: XDELEX, XACKDEL and reference policies --------------------------------------------


def groups_setup(c: Conn) -> None:
    seed(c, n=6)
    c.call("XGROUP", "CREATE", "s", "g1", "0")
    c.call("XGROUP", "CREATE", "s", "g2", "0")
    c.call("XREADGROUP", "GROUP", "g1", "c", "COUNT", "4", "STREAMS", "s", ">")
    c.call("XREADGROUP", "GROUP", "g2", "c", "COUNT", "2", "STREAMS", "s", ">")
    c.call("XACK", "s", "g1", "1-1", "2-1", "3-1")
    c.call("XACK", "s", "g2", "1-1")


@pytest.mark.redis_version("8.2")
def test_xdelex_policies(conn: Conn) -> None:
    groups_setup(conn)
    # 1-1 read and acknowledged by both; 2-1 pending in g2; 5-1 unread by both; 1-5 was
    # never added (below every group's last id, so nothing refers to it: not found).
    assert conn.v("XDELEX", "s", "ACKED", "IDS", "4", "1-1", "2-1", "5-1", "1-5") == [1, 2, 2, -1]
    assert conn.v("XDELEX", "s", "IDS", "1", "2-1") == [1]
    assert conn.v("XPENDING", "s", "g2")[0] == 1  # KEEPREF (the default) leaves it pending
    assert conn.v("XDELEX", "s", "DELREF", "IDS", "2", "4-1", "2-1") == [1, -1]
    assert conn.v("XPENDING", "s", "g1")[0] == 0
    assert conn.v("XPENDING", "s", "g2")[0] == 0  # DELREF of a missing entry still drops refs
    assert conn.v("XLEN", "s") == 3
    assert conn.v("XDELEX", "nokey", "IDS", "2", "1-1", "not-an-id") == [-1, -1]


@pytest.mark.redis_version("8.2")
@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("IDS", "0", "1-1"), b"-ERR Number of IDs must be a positive integer\r\n"),
        (("IDS", "-1", "1-1"), b"-ERR Number of IDs must be a positive integer\r\n"),
        (("IDS", "x", "1-1"), b"-ERR Number of IDs must be a positive integer\r\n"),
        (("IDS", "3", "1-1"),
         b"-ERR The `numids` parameter must match the number of arguments\r\n"),
        (("IDS", "1", "1-1", "2-1"), b"-ERR syntax error\r\n"),
        (("KEEPREF", "ACKED", "IDS", "1", "1-1"), b"-ERR syntax error\r\n"),
        (("FOO", "IDS", "1", "1-1"), b"-ERR syntax error\r\n"),
        (("IDS", "1", "x"), b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ],
)
def test_xdelex_and_xackdel_argument_errors(
    conn: Conn, args: tuple[str, ...], error: bytes
) -> None:
    seed(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    assert conn.call("XDELEX", "s", *args) == error
    assert conn.call("XACKDEL", "s", "g", *args) == error


@pytest.mark.redis_version("8.2")
def test_xdelex_on_another_type(conn: Conn) -> None:
    conn.call("SET", "str", "x")
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert conn.call("XDELEX", "str", "IDS", "1", "1-1") == wrongtype
    assert conn.call("XDELEX", "str", "FOO", "BAR", "BAZ") == wrongtype
    assert conn.call("XACKDEL", "str", "g", "IDS", "1", "1-1") == wrongtype


@pytest.mark.redis_version("8.2")
def test_xackdel_policies(conn: Conn) -> None:
    groups_setup(conn)
    # g1 pending: 4-1.  g2 pending: 2-1.  Both have read 1-1 .. (g1) 4-1 / (g2) 2-1.
    assert conn.v("XACKDEL", "s", "g1", "ACKED", "IDS", "2", "4-1", "3-1") == [2, -1]
    assert conn.v("XPENDING", "s", "g1")[0] == 0  # acknowledged even when kept
    assert conn.v("XACKDEL", "s", "g2", "IDS", "1", "2-1") == [1]
    assert conn.v("XRANGE", "s", "2-1", "2-1") == []
    assert conn.v("XACKDEL", "s", "nog", "IDS", "2", "1-1", "x") == [-1, -1]
    assert conn.v("XACKDEL", "nokey", "g", "IDS", "1", "1-1") == [-1]
    conn.call("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "s", ">")
    conn.call("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", ">")
    assert conn.v("XACKDEL", "s", "g1", "DELREF", "IDS", "1", "5-1") == [1]
    assert conn.v("XPENDING", "s", "g2", "-", "+", "10") == [
        ["3-1", "c", 0, 1], ["4-1", "c", 0, 1], ["6-1", "c", 0, 1],
    ]


@pytest.mark.redis_version("8.2")
def test_trimming_with_reference_policies(conn: Conn) -> None:
    groups_setup(conn)
    # Only 1-1 is read and acknowledged by both groups (g2 has not read past 2-1).
    assert conn.v("XTRIM", "s", "MAXLEN", "0", "ACKED") == 1
    assert [e[0] for e in conn.v("XRANGE", "s", "-", "+")] == ["2-1", "3-1", "4-1", "5-1", "6-1"]
    assert conn.v("XADD", "s", "KEEPREF", "MAXLEN", "3", "7-1", "f", "v") == "7-1"
    assert [e[0] for e in conn.v("XRANGE", "s", "-", "+")] == ["5-1", "6-1", "7-1"]
    assert conn.v("XPENDING", "s", "g1")[0] == 1  # 4-1 is gone from the stream, still pending
    conn.call("XREADGROUP", "GROUP", "g2", "c", "STREAMS", "s", ">")  # 5-1, 6-1, 7-1
    assert conn.v("XTRIM", "s", "MINID", "7", "DELREF") == 2
    assert [p[0] for p in conn.v("XPENDING", "s", "g2", "-", "+", "10")] == ["2-1", "7-1"]
    assert conn.call("XTRIM", "s", "MAXLEN", "1", "ACKED", "DELREF") == b"-ERR syntax error\r\n"
    assert conn.call("XADD", "s", "ACKED", "ACKED", "*", "f", "v") == (
        b"-ERR Invalid stream ID specified as stream command argument\r\n")


@pytest.mark.redis_version("8.2")
def test_approximate_trim_with_acked_weighs_every_entry(conn: Conn) -> None:
    for i in range(1, 251):
        conn.call("XADD", "s", f"{i}-0", "f", "v")
    conn.call("XGROUP", "CREATE", "s", "g", "150-0")
    # Without KEEPREF, "~" no longer drops whole nodes blindly: only read entries go.
    assert conn.v("XTRIM", "s", "MAXLEN", "~", "0", "ACKED") == 150
    assert conn.v("XLEN", "s") == 100
    info = conn.v("XINFO", "STREAM", "s")
    assert (info["radix-tree-keys"], info["recorded-first-entry-id"]) == (2, "151-0")


# -- Redis 8.4: XREADGROUP CLAIM ----------------------------------------------------------------


def claim_setup(c: Conn, clock: Any) -> None:
    seed(c, n=6)
    c.call("XGROUP", "CREATE", "s", "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "old", "COUNT", "2", "STREAMS", "s", ">")  # 1-1, 2-1
    clock.advance(100)
    c.call("XREADGROUP", "GROUP", "g", "old", "COUNT", "1", "STREAMS", "s", ">")  # 3-1
    clock.advance(100)
    c.call("XCLAIM", "s", "g", "old", "0", "1-1", "IDLE", "50")  # 1-1 now the least idle


@pytest.mark.redis_version("8.4")
def test_claim_takes_the_most_idle_first_then_new_entries(rconn: Conn, resplite_clock: Any) -> None:
    claim_setup(rconn, resplite_clock)
    raw = rconn.call("XREADGROUP", "GROUP", "g", "new", "CLAIM", "60", "COUNT", "4",
                     "STREAMS", "s", ">")
    head = b"%1\r\n" if rconn.resp == 3 else b"*1\r\n*2\r\n"  # type: ignore[attr-defined]
    assert raw == head + (
        b"$1\r\ns\r\n*4\r\n"
        b"*4\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n:200\r\n:1\r\n"
        b"*4\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$2\r\nv3\r\n:100\r\n:1\r\n"
        b"*4\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$2\r\nv4\r\n:0\r\n:0\r\n"
        b"*4\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$2\r\nv5\r\n:0\r\n:0\r\n"
    )
    pending = rconn.v("XPENDING", "s", "g", "-", "+", "10")
    assert pending == [["1-1", "old", 50, 2], ["2-1", "new", 0, 2], ["3-1", "new", 0, 2],
                       ["4-1", "new", 0, 1], ["5-1", "new", 0, 1]]


@pytest.mark.redis_version("8.4")
def test_claim_count_can_be_filled_by_claims_alone(conn: Conn, resplite_clock: Any) -> None:
    claim_setup(conn, resplite_clock)
    got = conn.v("XREADGROUP", "GROUP", "g", "new", "CLAIM", "0", "COUNT", "2", "STREAMS", "s", ">")
    assert [e[0] for e in got["s"]] == ["2-1", "3-1"]
    info = conn.v("XINFO", "GROUPS", "s")[0]
    assert info["last-delivered-id"] == "3-1"  # no new entry was delivered


@pytest.mark.redis_version("8.4")
def test_claim_skips_deleted_entries_and_keeps_them_pending(
    conn: Conn, resplite_clock: Any
) -> None:
    claim_setup(conn, resplite_clock)
    conn.call("XDEL", "s", "2-1")
    got = conn.v("XREADGROUP", "GROUP", "g", "new", "CLAIM", "60", "COUNT", "1",
                 "STREAMS", "s", ">")
    # 2-1 was the one eligible entry but is gone: COUNT is then met by a new entry.
    assert got == {"s": [["4-1", ["f", "v4"], 0, 0]]}
    assert conn.v("XPENDING", "s", "g", "2-1", "2-1", "1")[0][1] == "old"


@pytest.mark.redis_version("8.4")
def test_claim_with_a_history_id_reads_the_consumers_own_entries(
    conn: Conn, resplite_clock: Any
) -> None:
    claim_setup(conn, resplite_clock)
    got = conn.v("XREADGROUP", "GROUP", "g", "old", "CLAIM", "0", "STREAMS", "s", "0")
    assert [e[0] for e in got["s"]] == ["1-1", "2-1", "3-1"]
    assert all(len(e) == 2 for e in got["s"])


@pytest.mark.redis_version("8.4")
def test_claim_errors(conn: Conn) -> None:
    seed(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    assert conn.call("XREADGROUP", "GROUP", "g", "c", "CLAIM", "x", "STREAMS", "s", ">") == (
        b"-ERR min-idle-time is not an integer or out of range\r\n")
    assert conn.call("XREADGROUP", "GROUP", "g", "c", "CLAIM", "-1", "STREAMS", "s", ">") == (
        b"-ERR min-idle-time must be a positive integer\r\n")
    assert conn.call("XREAD", "CLAIM", "5", "STREAMS", "s", "0") == (
        b"-ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.\r\n")


@pytest.mark.redis_version("8.4")
def test_blocked_claim_wakes_when_an_entry_becomes_idle_enough(
    server: Any, conn: Conn, resplite_clock: Any
) -> None:
    seed(conn, n=2)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "old", "STREAMS", "s", ">")
    watcher = other(server)
    try:
        conn.send("XREADGROUP", "GROUP", "g", "new", "CLAIM", "1000", "BLOCK", "0",
                  "STREAMS", "s", ">")
        wait_blocked(watcher)
        resplite_clock.advance(1000)
        wait_blocked(watcher)  # idle == min-idle-time is not yet past the wake-up point
        resplite_clock.advance(1)
        got = value(conn.read_reply())
        assert [(e[0], e[2], e[3]) for e in got["s"]] == [("1-1", 1001, 1), ("2-1", 1001, 1)]
    finally:
        watcher.close()


# -- clients' deadlines ---------------------------------------------------------------------


@pytest.mark.redis_version("7.2")
def test_block_timeout_out_of_range(conn: Conn) -> None:
    seed(conn)
    assert conn.call("XREAD", "BLOCK", "9223372036854775807", "STREAMS", "s", "0") == (
        b"-ERR timeout is out of range\r\n")
