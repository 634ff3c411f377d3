"""XREAD and XREADGROUP against a real redis-server, including BLOCK, byte for byte.

Blocking cases use a second connection to each server; a reader is known to be parked once
INFO reports it among ``blocked_clients`` (waiting on that is synchronisation, not timing).
Behaviour newer than Redis 7.0 (re-running a blocked XREADGROUP whose group vanished, ``+``,
CLAIM) is asserted in ``test_streams_newer.py``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from stream_fixtures import (
    Conn,
    xs_fixture,  # noqa: F401  (the fixture)
)
from support.raw import RawClient


def seed(pair, key: str = "s", n: int = 3) -> None:  # type: ignore[no-untyped-def]
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


def both_wait_blocked(pair, count: int = 1) -> None:  # type: ignore[no-untyped-def]
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
def test_xread(pair, cmd: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XADD", "t", "1-5", "x", "y")
    pair.check("SET", "str", "x")
    pair.check("XDEL", "s", "2-1")
    pair.check(*cmd)


def test_xread_same_stream_twice(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XREAD", "STREAMS", "s", "s", "0", "2-1")


def test_xread_sees_entries_beyond_a_deleted_top(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XDEL", "s", "3-1")
    pair.check("XREAD", "STREAMS", "s", "2-1")
    pair.check("XREAD", "STREAMS", "s", "$")


# -- blocking -----------------------------------------------------------------------------------


def test_block_until_an_entry_arrives(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_block_on_several_streams_serves_the_one_written(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_block_timeout_answers_a_null_array(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XREAD", "BLOCK", "20", "STREAMS", "s", "$")
    pair.check("XGROUP", "CREATE", "s", "g", "$")
    pair.check("XREADGROUP", "GROUP", "g", "c", "BLOCK", "20", "STREAMS", "s", ">")


def test_block_inside_multi_does_not_block(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "$")
    pair.check("MULTI")
    pair.check("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    pair.check("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    pair.check("XREAD", "BLOCK", "0", "STREAMS", "s", "0")
    pair.check("EXEC")


def test_xreadgroup_blocked_clients_are_served_in_order(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_blocked_reader_gets_all_entries_of_a_transaction(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_blocked_xread_survives_del_and_is_served_later(pair) -> None:  # type: ignore[no-untyped-def]
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
