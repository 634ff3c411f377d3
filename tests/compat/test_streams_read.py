"""XREAD and XREADGROUP (``resplite/commands/streams_read.py``) against a real redis-server,
including BLOCK, byte for byte.

Blocking cases use a second connection to each server; a reader is known to be parked once
INFO reports it among ``blocked_clients`` (waiting on that is synchronisation, not timing).
Behaviour newer than Redis 7.0 (re-running a blocked XREADGROUP whose group vanished, ``+``,
CLAIM, MAXCOUNT and MAXSIZE) is asserted against resplite alone, with its clock frozen, and
marked with the version.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from support import normalize
from support.newer import Conn, add_entries, other, value
from support.pair import Pair
from support.raw import RawClient
from support.resptree import parse, to_python

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, ServerHandle


def seed(pair: Pair, key: str = "s", n: int = 3) -> None:
    for i in range(1, n + 1):
        pair.check("XADD", key, f"{i}-1", "f", f"v{i}")


def wait_blocked(client: RawClient, count: int = 1) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        info = client.call("INFO", "clients")
        for line in info.split(b"\r\n"):
            if line.startswith(b"blocked_clients:") and int(line.split(b":")[1]) >= count:
                return
        time.sleep(0.005)
    raise AssertionError("the reader never blocked")


def both_wait_blocked(pair: Pair, count: int = 1) -> None:
    wait_blocked(pair.ref, count)
    wait_blocked(pair.ours, count)


# -- without blocking ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ("XREAD", "STREAMS", "s", "0"),
        ("XREAD", "STREAMS", "s", "2-1"),
        ("XREAD", "STREAMS", "s", "$"),
        ("XREAD", "STREAMS", "s", "3-1"),
        ("XREAD", "COUNT", "1", "STREAMS", "s", "0"),
        ("XREAD", "COUNT", "0", "STREAMS", "s", "0"),
        ("XREAD", "COUNT", "-5", "STREAMS", "s", "0"),
        ("XREAD", "COUNT", "x", "STREAMS", "s", "0"),
        ("XREAD", "count", "1", "COUNT", "2", "STREAMS", "s", "0"),
        ("XREAD", "STREAMS", "s", "t", "0", "0"),
        ("XREAD", "STREAMS", "t", "s", "0", "1"),
        ("XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", "0"),
        ("XREAD", "STREAMS", "s", "t", "nokey", "1-1", "0", "0"),
        ("XREAD", "STREAMS", "s", "t", "9", "9"),
        ("XREAD", "STREAMS", "nokey", "0"),
        ("XREAD", "STREAMS", "nokey", "$"),
        ("XREAD", "STREAMS", "s", ">"),
        ("XREAD", "STREAMS", "s", "x"),
        ("XREAD", "STREAMS", "s", "-"),
        ("XREAD", "STREAMS", "s", "(1"),
        ("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XREAD", "NOACK", "STREAMS", "s", "0"),
        ("XREAD", "foo", "STREAMS", "s", "0"),
        ("XREAD", "COUNT", "1"),
        ("XREAD", "STREAMS"),
        ("XREAD", "STREAMS", "s"),
        ("XREAD", "BLOCK", "x", "STREAMS", "s", "0"),
        ("XREAD", "BLOCK", "-1", "STREAMS", "s", "0"),
        ("XREAD", "BLOCK", "10", "STREAMS", "s", "0"),
        ("XREAD", "BLOCK", "0", "STREAMS", "s", "1-1"),
        ("XREAD", "BLOCK", "10", "STREAMS", "s", "t", "9", "9"),
        ("XREAD", "STREAMS", "str", "0"),
        ("XREAD", "STREAMS", "s", "str", "0", "0"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xread(pair: Pair, cmd: tuple[str, ...]) -> None:
    seed(pair)
    pair.check("XADD", "t", "1-5", "x", "y")
    pair.check("SET", "str", "x")
    pair.check("XDEL", "s", "2-1")
    pair.check(*cmd)


def test_xread_same_stream_twice(pair: Pair) -> None:
    seed(pair)
    pair.check("XREAD", "STREAMS", "s", "s", "0", "2-1")


def test_xread_sees_entries_beyond_a_deleted_top(pair: Pair) -> None:
    seed(pair)
    pair.check("XDEL", "s", "3-1")
    pair.check("XREAD", "STREAMS", "s", "2-1")
    pair.check("XREAD", "STREAMS", "s", "$")


# -- XREADGROUP (no blocking) ---------------------------------------------------------------


def test_xreadgroup_delivery_and_history(pair: Pair) -> None:
    seed(pair, n=5)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check_all([
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "1-1"),
        ("XREADGROUP", "GROUP", "g", "c", "NOACK", "COUNT", "1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s",
         "18446744073709551615-18446744073709551615"),
        ("XDEL", "s", "4-1"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XPENDING", "s", "g"),
        ("XINFO", "GROUPS", "s"),
    ])
    pair.check("XPENDING", "s", "g", "-", "+", "10", normalize=normalize.pending_idle)


def test_xreadgroup_several_streams(pair: Pair) -> None:
    seed(pair, "a", 3)
    seed(pair, "b", 2)
    pair.check("XGROUP", "CREATE", "a", "g", "0")
    pair.check("XGROUP", "CREATE", "b", "g", "$")
    pair.check_all([
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"),
        ("XADD", "b", "9-1", "x", "y"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "b", "a", ">", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "0", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "nokey", ">", ">"),
        ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "a", ">"),
    ])


@pytest.mark.parametrize(
    "cmd",
    [
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "x"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "-1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "COUNT", "2", "STREAMS", "s", ">"),
        ("XREADGROUP", "COUNT", "1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "NOACK", "NOACK", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "foo", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "x", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"),
        ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", ">", "x"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xreadgroup_errors(pair: Pair, cmd: tuple[str, ...]) -> None:
    seed(pair, n=5)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check(*cmd)


# -- blocking -----------------------------------------------------------------------------------


def test_block_until_an_entry_arrives(pair: Pair) -> None:
    seed(pair)
    other = pair.connect_extra()
    try:
        for conn in (pair.ref, pair.ours):
            conn.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        both_wait_blocked(other)
        other.check("XADD", "s", "9-1", "new", "entry")
        assert pair.ours.read_reply() == pair.ref.read_reply()
    finally:
        other.close()


def test_block_on_several_streams_serves_the_one_written(pair: Pair) -> None:
    seed(pair, "a")
    other = pair.connect_extra()
    try:
        for conn in (pair.ref, pair.ours):
            conn.send("XREAD", "COUNT", "5", "BLOCK", "0", "STREAMS", "a", "b", "$", "$")
        both_wait_blocked(other)
        other.check("XADD", "b", "1-1", "x", "1")
        assert pair.ours.read_reply() == pair.ref.read_reply()
        pair.check("XREAD", "STREAMS", "a", "b", "0", "0")
    finally:
        other.close()


def test_block_timeout_answers_a_null_array(pair: Pair) -> None:
    seed(pair)
    pair.check("XREAD", "BLOCK", "20", "STREAMS", "s", "$")
    pair.check("XGROUP", "CREATE", "s", "g", "$")
    pair.check("XREADGROUP", "GROUP", "g", "c", "BLOCK", "20", "STREAMS", "s", ">")


def test_block_inside_multi_does_not_block(pair: Pair) -> None:
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "$")
    pair.check("MULTI")
    pair.check("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    pair.check("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    pair.check("XREAD", "BLOCK", "0", "STREAMS", "s", "0")
    pair.check("EXEC")


def test_xreadgroup_blocked_clients_are_served_in_order(pair: Pair) -> None:
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "$")
    second = pair.connect_extra()
    writer = pair.connect_extra()
    try:
        for conn in (pair.ref, pair.ours):
            conn.send("XREADGROUP", "GROUP", "g", "first", "BLOCK", "0", "STREAMS", "s", ">")
        both_wait_blocked(writer, 1)
        for conn in (second.ref, second.ours):
            conn.send("XREADGROUP", "GROUP", "g", "second", "BLOCK", "0", "STREAMS", "s", ">")
        both_wait_blocked(writer, 2)
        writer.check("XADD", "s", "10-1", "n", "1")
        assert pair.ours.read_reply() == pair.ref.read_reply()
        writer.check("XADD", "s", "11-1", "n", "2")
        assert second.ours.read_reply() == second.ref.read_reply()
        writer.check("XPENDING", "s", "g")
    finally:
        second.close()
        writer.close()


def test_blocked_reader_gets_all_entries_of_a_transaction(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        for conn in (pair.ref, pair.ours):
            conn.send("XREAD", "BLOCK", "0", "STREAMS", "s", "0")
        both_wait_blocked(other)
        other.check("MULTI")
        other.check("XADD", "s", "1-1", "a", "1")
        other.check("XADD", "s", "2-1", "b", "2")
        other.check("EXEC")
        assert pair.ours.read_reply() == pair.ref.read_reply()
    finally:
        other.close()


def test_blocked_xread_survives_del_and_is_served_later(pair: Pair) -> None:
    seed(pair)
    other = pair.connect_extra()
    try:
        for conn in (pair.ref, pair.ours):
            conn.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        both_wait_blocked(other)
        other.check("DEL", "s")
        other.check("XADD", "s", "2-1", "old", "id")  # not above the id fixed at block time
        other.check("XADD", "s", "5-1", "new", "id")
        assert pair.ours.read_reply() == pair.ref.read_reply()
    finally:
        other.close()


# -- newer Redis, against resplite alone ---------------------------------------------------------


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
    server: ServerHandle, conn: Conn, change: tuple[str, ...], answer: bytes
) -> None:
    add_entries(conn)
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
def test_blocked_xread_ignores_type_changes_and_deletes(server: ServerHandle, conn: Conn) -> None:
    add_entries(conn)
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
def test_info_counts_the_keys_an_xreadgroup_waits_on(server: ServerHandle, conn: Conn) -> None:
    # total_blocking_keys_on_nokey: keys with a client that their deletion wakes (a blocked
    # XREADGROUP, answered NOGROUP then), as against a BLPOP, which waits on.
    lister, reader = other(server), other(server)
    try:
        lister.send("BLPOP", "s", "0")
        wait_blocked(conn)
        counts = ("total_blocking_keys", "total_blocking_keys_on_nokey")
        assert [conn.info("clients")[name] for name in counts] == ["1", "0"]
        conn.call("XADD", "s", "1-1", "f", "v")
        conn.call("XGROUP", "CREATE", "s", "g", "$")
        reader.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        wait_blocked(conn, 2)
        assert [conn.info("clients")[name] for name in counts] == ["1", "1"]
        conn.call("DEL", "s")
        assert reader.read_reply().startswith(b"-NOGROUP")
        assert [conn.info("clients")[name] for name in counts] == ["1", "0"]
    finally:
        lister.close()
        reader.close()


@pytest.mark.redis_version("7.2")
def test_blocked_xreadgroup_rerun_that_finds_nothing_stays_blocked(
    server: ServerHandle, conn: Conn, resplite_clock: ClockControl
) -> None:
    add_entries(conn)
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


@pytest.mark.redis_version("7.4")
def test_xread_plus_reads_the_last_entry(server: ServerHandle, conn: Conn) -> None:
    add_entries(conn)
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
    add_entries(conn)
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


def claim_setup(c: Conn, clock: ClockControl) -> None:
    add_entries(c, n=6)
    c.call("XGROUP", "CREATE", "s", "g", "0")
    c.call("XREADGROUP", "GROUP", "g", "old", "COUNT", "2", "STREAMS", "s", ">")  # 1-1, 2-1
    clock.advance(100)
    c.call("XREADGROUP", "GROUP", "g", "old", "COUNT", "1", "STREAMS", "s", ">")  # 3-1
    clock.advance(100)
    c.call("XCLAIM", "s", "g", "old", "0", "1-1", "IDLE", "50")  # 1-1 now the least idle


@pytest.mark.redis_version("8.4")
def test_claim_takes_the_most_idle_first_then_new_entries(
    rconn: Conn, resplite_clock: ClockControl
) -> None:
    claim_setup(rconn, resplite_clock)
    raw = rconn.call("XREADGROUP", "GROUP", "g", "new", "CLAIM", "60", "COUNT", "4",
                     "STREAMS", "s", ">")
    head = b"%1\r\n" if rconn.resp == 3 else b"*1\r\n*2\r\n"
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
def test_claim_count_can_be_filled_by_claims_alone(
    conn: Conn, resplite_clock: ClockControl
) -> None:
    claim_setup(conn, resplite_clock)
    got = conn.v("XREADGROUP", "GROUP", "g", "new", "CLAIM", "0", "COUNT", "2", "STREAMS", "s", ">")
    assert [e[0] for e in got["s"]] == ["2-1", "3-1"]
    info = conn.v("XINFO", "GROUPS", "s")[0]
    assert info["last-delivered-id"] == "3-1"  # no new entry was delivered


@pytest.mark.redis_version("8.4")
def test_claim_skips_deleted_entries_and_keeps_them_pending(
    conn: Conn, resplite_clock: ClockControl
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
    conn: Conn, resplite_clock: ClockControl
) -> None:
    claim_setup(conn, resplite_clock)
    got = conn.v("XREADGROUP", "GROUP", "g", "old", "CLAIM", "0", "STREAMS", "s", "0")
    assert [e[0] for e in got["s"]] == ["1-1", "2-1", "3-1"]
    assert all(len(e) == 2 for e in got["s"])


@pytest.mark.redis_version("8.4")
def test_claim_errors(conn: Conn) -> None:
    add_entries(conn)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    assert conn.call("XREADGROUP", "GROUP", "g", "c", "CLAIM", "x", "STREAMS", "s", ">") == (
        b"-ERR min-idle-time is not an integer or out of range\r\n")
    assert conn.call("XREADGROUP", "GROUP", "g", "c", "CLAIM", "-1", "STREAMS", "s", ">") == (
        b"-ERR min-idle-time must be a positive integer\r\n")
    assert conn.call("XREAD", "CLAIM", "5", "STREAMS", "s", "0") == (
        b"-ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.\r\n")


@pytest.mark.redis_version("8.4")
def test_blocked_claim_wakes_when_an_entry_becomes_idle_enough(
    server: ServerHandle, conn: Conn, resplite_clock: ClockControl
) -> None:
    add_entries(conn, n=2)
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


@pytest.mark.redis_version("7.2")
def test_block_timeout_out_of_range(conn: Conn) -> None:
    add_entries(conn)
    assert conn.call("XREAD", "BLOCK", "9223372036854775807", "STREAMS", "s", "0") == (
        b"-ERR timeout is out of range\r\n")


# -- MAXCOUNT and MAXSIZE (Redis 8.10), against the facts of Redis's documentation ------------

def three_streams(xs: Conn, n: int = 100) -> None:
    for key in ("s1", "s2", "s3"):
        for i in range(1, n + 1):
            xs.call("XADD", key, f"{i}-1", "f", f"{i:03d}")


def per_stream(xs: Conn, reply: Any) -> dict[str, list[str]]:
    """``{stream: [ids]}`` from an XREAD / XREADGROUP reply, in reply order."""
    pairs = list(reply.items()) if xs.resp == 3 else [(k, v) for k, v in reply]
    return {key: [entry[0] for entry in entries] for key, entries in pairs}


def counts(xs: Conn, *args: str) -> dict[str, int]:
    return {k: len(v) for k, v in per_stream(xs, xs.v(*args)).items()}


@pytest.mark.redis_version("8.10")
def test_maxcount_caps_the_whole_reply_across_streams(xs: Conn) -> None:
    three_streams(xs)
    streams = ("STREAMS", "s1", "s2", "s3", "0", "0", "0")
    assert counts(xs, "XREAD", "COUNT", "50", *streams) == {"s1": 50, "s2": 50, "s3": 50}
    assert counts(xs, "XREAD", "COUNT", "50", "MAXCOUNT", "80", *streams) == {"s1": 50, "s2": 30}
    # Without COUNT, MAXCOUNT alone bounds the total, filling from the first stream.
    assert counts(xs, "XREAD", "MAXCOUNT", "7", *streams) == {"s1": 7}
    assert counts(xs, "XREAD", "MAXCOUNT", "5", "MAXSIZE", "100000", *streams) == {"s1": 5}
    assert counts(xs, "XREAD", "COUNT", "2", "MAXCOUNT", "3", *streams) == {"s1": 2, "s2": 1}
    assert counts(xs, "xread", "maxcount", "1000", *streams) == {"s1": 100, "s2": 100, "s3": 100}


@pytest.mark.redis_version("8.10")
def test_maxsize_stops_once_the_reply_reaches_it_but_serves_one_entry(xs: Conn) -> None:
    xs.call("XADD", "big", "1-1", "f", "x" * 5000)
    xs.call("XADD", "big", "2-1", "f", "y")
    # A single entry larger than MAXSIZE is still served, and nothing after it.
    assert counts(xs, "XREAD", "MAXSIZE", "50", "STREAMS", "big", "big", "0", "0") == {"big": 1}
    three_streams(xs, 10)
    # Each entry of s1 is 33 bytes on the wire: the reply reaches 100 bytes with the third
    # (the entry that crosses the limit is the last one served).
    small = counts(xs, "XREAD", "MAXSIZE", "100", "STREAMS", "s1", "s2", "0", "0")
    assert small == {"s1": 3}
    assert counts(xs, "XREAD", "MAXSIZE", "1000000", "STREAMS", "s1", "s2", "0", "0") == {
        "s1": 10, "s2": 10}
    assert counts(xs, "XREAD", "MAXSIZE", "1", "MAXCOUNT", "5", "STREAMS", "s1", "0") == {"s1": 1}


@pytest.mark.redis_version("8.10")
def test_xreadgroup_limits_deliver_only_what_they_serve(xs: Conn) -> None:
    three_streams(xs, 10)
    for key in ("s1", "s2", "s3"):
        xs.call("XGROUP", "CREATE", key, "g", "0")
    got = counts(xs, "XREADGROUP", "GROUP", "g", "c", "COUNT", "4", "MAXCOUNT", "6",
                 "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    assert got == {"s1": 4, "s2": 2}
    # Entries not served were not delivered: they are neither pending nor read.
    assert xs.v("XPENDING", "s1", "g")[0] == 4
    assert xs.v("XPENDING", "s2", "g")[0] == 2
    assert xs.v("XPENDING", "s3", "g")[0] == 0
    groups = xs.v("XINFO", "GROUPS", "s2")
    group = groups[0] if xs.resp == 3 else dict(zip(groups[0][::2], groups[0][1::2], strict=True))
    assert (group["last-delivered-id"], group["lag"]) == ("2-1", 8)
    # History reads (the consumer's own pending entries) are bounded the same way.
    got = counts(xs, "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "5",
                 "STREAMS", "s1", "s2", "0", "0")
    assert got == {"s1": 4, "s2": 1}
    got = counts(xs, "XREADGROUP", "GROUP", "g", "c", "MAXSIZE", "1",
                 "STREAMS", "s1", "s2", ">", ">")
    assert got == {"s1": 1}
    assert xs.v("XPENDING", "s1", "g")[0] == 5


@pytest.mark.redis_version("8.10")
def test_a_blocked_read_is_served_within_its_limits(xs: Conn, resplite_instance: Any) -> None:
    xs.call("XADD", "s1", "1-1", "f", "v")
    xs.call("XADD", "s2", "1-1", "f", "v")
    reader = Conn(resplite_instance.host, resplite_instance.port)
    reader.resp = xs.resp
    if xs.resp == 3:
        reader.call("HELLO", "3")
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(reader.v(
        "XREAD", "COUNT", "2", "MAXCOUNT", "3", "BLOCK", "0", "STREAMS", "s1", "s2", "$", "$")))
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while xs.info("clients")["blocked_clients"] != "1":
            assert time.monotonic() < deadline, "the reader never blocked"
            time.sleep(0.005)
        xs.call("MULTI")
        for i in (2, 3, 4):
            xs.call("XADD", "s1", f"{i}-1", "f", "v")
            xs.call("XADD", "s2", f"{i}-1", "f", "v")
        xs.call("EXEC")
        thread.join(5)
    finally:
        reader.close()
    assert per_stream(xs, result[0]) == {"s1": ["2-1", "3-1"], "s2": ["2-1"]}


@pytest.mark.redis_version("8.10")
@pytest.mark.parametrize(("options", "error"), [
    (("MAXCOUNT", "0"), b"-ERR MAXCOUNT must be a positive integer"),
    (("MAXCOUNT", "-1"), b"-ERR MAXCOUNT must be a positive integer"),
    (("MAXCOUNT", "x"), b"-ERR value is not an integer or out of range"),
    (("MAXSIZE", "0"), b"-ERR MAXSIZE must be a positive integer"),
    (("MAXSIZE", "1.5"), b"-ERR value is not an integer or out of range"),
    (("COUNT", "5", "MAXCOUNT", "3"), b"-ERR MAXCOUNT must be greater than or equal to COUNT"),
    (("MAXCOUNT", "3", "COUNT", "5"), b"-ERR MAXCOUNT must be greater than or equal to COUNT"),
])
def test_maxcount_and_maxsize_errors(xs: Conn, options: tuple[str, ...], error: bytes) -> None:
    xs.call("XADD", "s", "1-1", "f", "v")
    xs.call("XGROUP", "CREATE", "s", "g", "0")
    assert xs.call("XREAD", *options, "STREAMS", "s", "0") == error + b"\r\n"
    assert xs.call("XREADGROUP", "GROUP", "g", "c", *options, "STREAMS", "s", ">") == (
        error + b"\r\n")
    assert xs.v("XPENDING", "s", "g")[0] == 0


# -- a blocked command that ends in an error is a failed call ---------------------------------


def _cmdstat(conn: Any, name: str) -> dict[str, int]:
    text = conn.call("INFO", "commandstats").decode(errors="replace")
    line = next(x for x in text.split("\r\n") if x.startswith(f"cmdstat_{name}:"))
    return {k: int(float(v)) for k, v in (p.split("=") for p in line.split(":", 1)[1].split(","))}


@pytest.mark.redis_version("7.2")
def test_blocked_xreadgroup_ended_by_nogroup_is_a_failed_call(
    xs: Conn, resplite_instance: Any
) -> None:
    xs.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    xs.call("CONFIG", "RESETSTAT")
    reader = Conn(resplite_instance.host, resplite_instance.port)
    try:
        reader.send_raw(b"*9\r\n$10\r\nXREADGROUP\r\n$5\r\nGROUP\r\n$1\r\ng\r\n$1\r\nc\r\n"
                        b"$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n>\r\n")
        deadline = time.monotonic() + 5
        while xs.info("clients")["blocked_clients"] != "1":
            assert time.monotonic() < deadline, "the reader never blocked"
            time.sleep(0.005)
        xs.call("XGROUP", "DESTROY", "s", "g")
        assert reader.read_reply() == (
            b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n")
    finally:
        reader.close()
    stats = _cmdstat(xs, "xreadgroup")
    assert (stats["calls"], stats["failed_calls"], stats["rejected_calls"]) == (1, 1, 0)
    assert "errorstat_NOGROUP:count=1" in xs.call("INFO", "errorstats").decode()


# -- large reads (sent in pieces from 4096 entries on) --------------------------------------


def fill_large(pair: Pair, n: int = 9000) -> None:
    """``n`` entries in ``s`` (mostly two fields, some with fields of their own or long
    values), a few deleted, and a short stream ``t``; both servers the same."""
    commands: list[list[str]] = []
    for i in range(1, n + 1):
        if i % 97 == 0:
            fields = ["other", str(i)]
        elif i % 89 == 0:
            fields = ["f1", "x" * 300, "f2", "y"]
        else:
            fields = ["f1", f"{i:08d}", "f2", f"v{i % 7}"]
        commands.append(["XADD", "s", f"{i}-1", *fields])
    commands.append(["XDEL", "s", "1-1", "500-1", "501-1", "4444-1", f"{n}-1"])
    commands.append(["XADD", "t", "1-1", "f", "v"])
    for client in (pair.ref, pair.ours):
        for start in range(0, len(commands), 2000):
            client.pipeline(commands[start : start + 2000])


@pytest.mark.parametrize(
    "cmd",
    [
        ("XREAD", "STREAMS", "s", "0"),
        ("XREAD", "COUNT", "1000000", "STREAMS", "s", "0"),
        ("XREAD", "COUNT", "5000", "STREAMS", "s", "100-1"),
        ("XREAD", "COUNT", "4096", "STREAMS", "s", "(4000-1"),
        ("XREAD", "STREAMS", "t", "s", "s", "0", "0", "2000-1"),
        ("XREAD", "COUNT", "4095", "STREAMS", "s", "t", "0", "0"),
        ("XREVRANGE", "s", "+", "-"),
        ("XREVRANGE", "s", "8000", "(500-1", "COUNT", "6000"),
        ("XREVRANGE", "s", "+", "-", "COUNT", "4096"),
        ("XRANGE", "s", "-", "+"),
    ],
)
def test_large_reads(pair: Pair, cmd: tuple[str, ...]) -> None:
    fill_large(pair)
    pair.check(*cmd)


@pytest.mark.parametrize("noack", [False, True])
def test_large_xreadgroup(pair: Pair, noack: bool) -> None:
    fill_large(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check("XGROUP", "CREATE", "t", "g", "0")
    opts = ["NOACK"] if noack else []
    pair.check("XREADGROUP", "GROUP", "g", "c1", "COUNT", "100", *opts, "STREAMS", "s", ">")
    pair.check("XREADGROUP", "GROUP", "g", "c1", "COUNT", "6000", *opts, "STREAMS", "s", ">")
    pair.check("XREADGROUP", "GROUP", "g", "c2", *opts, "STREAMS", "t", "s", ">", ">")
    pair.check("XREADGROUP", "GROUP", "g", "c2", *opts, "STREAMS", "s", ">")
    pair.check("XPENDING", "s", "g")
    pair.check("XINFO", "GROUPS", "s")
    if not noack:
        pair.check("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0")


def test_large_history_reads(pair: Pair) -> None:
    # A consumer's own pending entries, some deleted since delivery ([id, nil]), read whole,
    # from an id, with COUNT, and next to another stream; the delivery counts they bump.
    fill_large(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check("XGROUP", "CREATE", "t", "g", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">", ">")
    pair.check("XDEL", "s", "2-1", "3000-1", "8000-1")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "COUNT", "5000", "STREAMS", "s", "1000-1")
    pair.check("XREADGROUP", "GROUP", "g", "c", "COUNT", "4095", "STREAMS", "s", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", "s", "s", "0", "0", "4000")
    pair.check("XPENDING", "s", "g", "-", "+", "20000", normalize=normalize.pending_idle)
    # In a transaction, with a deletion and a trim after the read: the entries it read.
    pair.check("MULTI")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    pair.check("XDEL", "s", "10-1", "7000-1")
    pair.check("XTRIM", "s", "MAXLEN", "100")
    pair.check("EXEC")
