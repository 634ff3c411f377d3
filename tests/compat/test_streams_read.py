"""XREAD and XREADGROUP against a real redis-server, including BLOCK, byte for byte.

Blocking cases use a second connection to each server; a reader is known to be parked once
INFO reports it among ``blocked_clients`` (waiting on that is synchronisation, not timing).
Behaviour newer than Redis 7.0 (re-running a blocked XREADGROUP whose group vanished, ``+``,
CLAIM) is asserted in ``test_streams_newer.py``.
"""

from __future__ import annotations

import time

import pytest
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
