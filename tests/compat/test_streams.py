"""Stream entry commands (``resplite/commands/streams.py``) against a real redis-server: XADD,
XRANGE, XREVRANGE, XLEN, XDEL, XTRIM and XSETID, byte for byte, under RESP2 and RESP3; and
streams in the keyspace: TYPE, OBJECT ENCODING, DEL, RENAME, COPY (a deep copy: groups,
consumers and pending entries included), expiry, and the stream writes that WATCH sees.

Ids are explicit wherever the reply would show them, so both servers produce the same ones.
What changed after Redis 7.0 (XSETID and the largest deleted id, XDELEX, the KEEPREF /
DELREF / ACKED trimming policies, Redis 8.6's idempotent producers: XADD IDMP / IDMPAUTO,
XCFGSET and the idempotency fields of XINFO STREAM) is asserted against resplite alone, with
its clock frozen, and marked with the version. The change counter of the entry commands is
compared with the 7.0 reference.
"""

from __future__ import annotations

from typing import Any

import pytest
from compat_helpers import decode
from support.newer import T0, Conn, add_entries, groups_setup
from support.pair import Pair, loose_ids
from support.raw import RawClient

from resplite.formats import rdb_format

Cmd = tuple[str | bytes | int, ...]


def seed(pair: Pair, key: str = "s", n: int = 5, fields: int = 1) -> None:
    for i in range(1, n + 1):
        args: list[str | int] = ["XADD", key, f"{i}-1"]
        for f in range(fields):
            args += [f"f{f}", f"v{i}"]
        pair.check(*args)


# -- XADD ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ("XADD", "s", "1-1", "a", "1"),
        ("XADD", "s", "0-0", "a", "1"),  # 0-0 is refused before the key is created
        ("XADD", "s", "00001-5", "a", "1"),
        ("XADD", "s", " 2-0", "a", "1"),
        ("XADD", "s", "+3-0", "a", "1"),
        ("XADD", "s", "foo", "a", "1"),
        ("XADD", "s", "-", "a", "1"),
        ("XADD", "s", "+", "a", "1"),
        ("XADD", "s", "1-1-1", "a", "1"),
        ("XADD", "s", "*", "a"),
        ("XADD", "s", "*", "a", "1", "b"),
        ("XADD", "s", "NOMKSTREAM", "*", "a", "1"),
        ("XADD", "s", "nomkstream", "maxlen", "1", "*", "a", "b"),
        ("XADD", "s", "MAXLEN", "-1", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "abc", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "1", "MINID", "5", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "1", "MAXLEN", "2", "*", "a", "1"),
        ("XADD", "s", "LIMIT", "5", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "5", "LIMIT", "5", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "~", "5", "LIMIT", "x", "*", "a", "1"),
        ("XADD", "s", "MINID", "~", "-", "*", "a", "1"),
        ("XADD", "s", "MINID", "abc", "*", "a", "1"),
        ("XADD", "s", "MAXLEN", "=", "0", "1-1", "a", "1"),
    ],
    ids=lambda c: " ".join(map(str, c)),
)
def test_xadd_arguments_and_errors(pair: Pair, cmd: Cmd) -> None:
    pair.check(*cmd)
    pair.check("EXISTS", "s")
    pair.check("XLEN", "s")


def test_xadd_ids_must_grow(pair: Pair) -> None:
    pair.check_all([
        ("XADD", "s", "5-5", "a", "1"),
        ("XADD", "s", "5-5", "a", "1"),
        ("XADD", "s", "5-4", "a", "1"),
        ("XADD", "s", "4-9", "a", "1"),
        ("XADD", "s", "5-*", "a", "1"),
        ("XADD", "s", "5-*", "a", "1"),
        ("XADD", "s", "4-*", "a", "1"),
        ("XADD", "s", "6-*", "a", "1"),
        ("XADD", "s", "6", "a", "1"),
        ("XRANGE", "s", "-", "+"),
    ])


def test_xadd_sequence_wildcard_on_an_empty_stream(pair: Pair) -> None:
    pair.check("XADD", "s", "0-*", "a", "1")
    pair.check("XADD", "s", "0-*", "a", "1")
    pair.check("XRANGE", "s", "-", "+")


def test_xadd_at_the_last_possible_id(pair: Pair) -> None:
    pair.check_all([
        ("XADD", "s", "18446744073709551615-18446744073709551614", "a", "1"),
        ("XADD", "s", "18446744073709551615-*", "a", "1"),
        ("XADD", "s", "*", "a", "1"),
        ("XADD", "s", "18446744073709551615-*", "a", "1"),
        ("XADD", "s", "NOMKSTREAM", "18446744073709551615-18446744073709551615", "a", "1"),
        ("XLEN", "s"),
    ])


def test_xadd_fields_that_differ_from_the_node_master(pair: Pair) -> None:
    pair.check_all([
        ("XADD", "s", "1-1", "a", "1", "b", "2"),
        ("XADD", "s", "1-2", "b", "2", "a", "1"),
        ("XADD", "s", "1-3", "a", "x"),
        ("XADD", "s", "1-4", "a", "", "", "y"),
        ("XADD", "s", "1-5", "a", "1", "b", "2"),
        ("XADD", "s", "1-6", "12345", "-7", "3.5", "0"),
        ("XRANGE", "s", "-", "+"),
        ("XREVRANGE", "s", "+", "-"),
    ])


def test_xadd_binary_and_large_values(pair: Pair) -> None:
    big = b"\x00\r\n\xff" * 3000
    pair.check("XADD", "s", "1-1", b"f\x00", big, "g", b"x" * 70000)
    pair.check("XRANGE", "s", "-", "+")


def test_xadd_on_another_type(pair: Pair) -> None:
    pair.check("SET", "str", "x")
    for cmd in [
        ("XADD", "str", "*", "a", "1"),
        ("XADD", "str", "NOMKSTREAM", "*", "a", "1"),
        ("XLEN", "str"),
        ("XRANGE", "str", "-", "+"),
        ("XREVRANGE", "str", "+", "-"),
        ("XDEL", "str", "1"),
        ("XTRIM", "str", "MAXLEN", "1"),
        ("XSETID", "str", "1"),
        ("XINFO", "STREAM", "str"),
    ]:
        pair.check(*cmd)


# -- trimming: node layout decides what "~" removes -------------------------------------------


@pytest.mark.parametrize("threshold", [0, 1, 50, 99, 100, 101, 150, 249, 250, 251])
def test_approximate_maxlen_removes_the_nodes_redis_removes(pair: Pair, threshold: int) -> None:
    for i in range(1, 251):
        pair.ref.send("XADD", "s", f"{i}-0", "f", f"v{i}")
        pair.ours.send("XADD", "s", f"{i}-0", "f", f"v{i}")
    for _ in range(250):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XTRIM", "s", "MAXLEN", "~", threshold)
    pair.check("XLEN", "s")
    pair.check("XINFO", "STREAM", "s")


def test_node_split_by_bytes(pair: Pair) -> None:
    for i in range(1, 61):
        pair.check("XADD", "s", f"{i}-0", "field", "x" * (50 + 7 * i))
    pair.check("XINFO", "STREAM", "s")
    pair.check("XTRIM", "s", "MAXLEN", "~", "30")
    pair.check("XINFO", "STREAM", "s")


def test_node_settings_change_at_runtime(pair: Pair) -> None:
    try:
        pair.check("CONFIG", "SET", "stream-node-max-entries", "7")
        pair.check("CONFIG", "SET", "stream-node-max-bytes", "300")
        for i in range(1, 41):
            pair.check("XADD", "s", f"{i}-0", "f", "v" * (i % 13))
        pair.check("XINFO", "STREAM", "s")
        pair.check("XADD", "s", "MAXLEN", "~", "20", "41-0", "f", "v")
        pair.check("XINFO", "STREAM", "s")
        pair.check("CONFIG", "SET", "stream-node-max-entries", "0")
        pair.check("CONFIG", "SET", "stream-node-max-bytes", "0")
        for i in range(42, 300):
            pair.check("XADD", "s", f"{i}-0", "f", "v")
        pair.check("XINFO", "STREAM", "s")
    finally:
        for a, b in (("stream-node-max-entries", "100"), ("stream-node-max-bytes", "4096")):
            pair.ref.call("CONFIG", "SET", a, b)
            pair.ours.call("CONFIG", "SET", a, b)


@pytest.mark.parametrize(
    "trim",
    [
        ("MAXLEN", "3"),
        ("MAXLEN", "=", "3"),
        ("MAXLEN", "~", "3"),
        ("MAXLEN", "~", "3", "LIMIT", "0"),
        ("MAXLEN", "~", "150", "LIMIT", "99"),
        ("MAXLEN", "~", "50", "LIMIT", "100"),
        ("MAXLEN", "~", "50", "LIMIT", "201"),
        ("MAXLEN", "0"),
        ("MINID", "150"),
        ("MINID", "=", "150-1"),
        ("MINID", "~", "150"),
        ("MINID", "~", "250", "LIMIT", "150"),
        ("MINID", "0"),
        ("MINID", "999"),
    ],
    ids=lambda t: " ".join(t),
)
def test_xtrim_strategies(pair: Pair, trim: tuple[str, ...]) -> None:
    for i in range(1, 301):
        pair.ref.send("XADD", "s", f"{i}-0", "f", "v")
        pair.ours.send("XADD", "s", f"{i}-0", "f", "v")
    for _ in range(300):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XTRIM", "s", *trim)
    pair.check("XINFO", "STREAM", "s")
    pair.check("XRANGE", "s", "-", "+", "COUNT", "3")


def test_xadd_with_trimming(pair: Pair) -> None:
    for i in range(1, 120):
        pair.check("XADD", "s", "MAXLEN", "~", "10", f"{i}-0", "f", "v")
    pair.check("XINFO", "STREAM", "s")
    for i in range(120, 140):
        pair.check("XADD", "s", "MINID", "130", f"{i}-0", "f", "v")
    pair.check("XINFO", "STREAM", "s")


def test_exact_trim_after_deletes(pair: Pair) -> None:
    seed(pair, n=8)
    pair.check("XDEL", "s", "8-1", "3-1")
    pair.check("XTRIM", "s", "MINID", "8-1")
    pair.check("XINFO", "STREAM", "s")
    pair.check("XADD", "s", "9-1", "f", "v")
    pair.check("XINFO", "STREAM", "s")
    pair.check("XTRIM", "s", "MAXLEN", "0")
    pair.check("XINFO", "STREAM", "s")


@pytest.mark.parametrize(
    "cmd",
    [
        ("XTRIM", "s", "foo"),
        ("XTRIM", "s", "MAXLEN", "~"),
        ("XTRIM", "s", "MAXLEN", "=", "1", "LIMIT", "1"),
        ("XTRIM", "s", "MINID", "abc"),
        ("XTRIM", "s", "MINID", "-"),
        ("XTRIM", "s", "MINID", "+"),
        ("XTRIM", "s", "MAXLEN", "1", "NOMKSTREAM"),
        ("XTRIM", "s", "LIMIT", "5", "MAXLEN", "~", "1"),
        ("XTRIM", "s", "MAXLEN", "1", "foo"),
        ("XTRIM", "nokey", "MAXLEN", "1"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xtrim_errors(pair: Pair, cmd: Cmd) -> None:
    seed(pair)
    pair.check(*cmd)


# -- XRANGE / XREVRANGE -------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ("XRANGE", "s", "-", "+"),
        ("XRANGE", "s", "-", "+", "COUNT", "0"),
        ("XRANGE", "s", "-", "+", "COUNT", "-1"),
        ("XRANGE", "s", "-", "+", "COUNT", "2"),
        ("XRANGE", "s", "-", "+", "count", "1", "COUNT", "3"),
        ("XRANGE", "s", "2", "4"),
        ("XRANGE", "s", "2-1", "2-1"),
        ("XRANGE", "s", "(2-1", "(4-1"),
        ("XRANGE", "s", "(2", "+"),
        ("XRANGE", "s", "(-", "+"),
        ("XRANGE", "s", "(", "+"),
        ("XRANGE", "s", "-", "(0-0"),
        ("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"),
        ("XRANGE", "s", "4", "2"),
        ("XRANGE", "s", "x", "+"),
        ("XRANGE", "s", "-", "+", "foo"),
        ("XRANGE", "s", "-", "+", "COUNT"),
        ("XRANGE", "s", "-", "+", "COUNT", "x"),
        ("XRANGE", "nokey", "-", "+"),
        ("XRANGE", "nokey", "x", "+"),
        ("XREVRANGE", "s", "+", "-"),
        ("XREVRANGE", "s", "+", "-", "COUNT", "2"),
        ("XREVRANGE", "s", "(4-1", "(1-1"),
        ("XREVRANGE", "s", "3", "-"),
        ("XREVRANGE", "s", "-", "+"),
        ("XREVRANGE", "s", "+", "(18446744073709551615-18446744073709551615"),
    ],
    ids=lambda c: " ".join(c),
)
def test_ranges(pair: Pair, cmd: Cmd) -> None:
    seed(pair, fields=2)
    pair.check("XDEL", "s", "3-1")
    pair.check(*cmd)


def test_ranges_across_many_nodes(pair: Pair) -> None:
    for i in range(1, 451):
        pair.ref.send("XADD", "s", f"{i // 3}-{i % 3}", "f", f"v{i}")
        pair.ours.send("XADD", "s", f"{i // 3}-{i % 3}", "f", f"v{i}")
    for _ in range(450):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XDEL", "s", "33-0", "99-2", "100-0", "120-1")
    for cmd in [
        ("XRANGE", "s", "33", "34"),
        ("XRANGE", "s", "99-2", "100-1", "COUNT", "1"),
        ("XREVRANGE", "s", "101", "98"),
        ("XREVRANGE", "s", "+", "-", "COUNT", "5"),
        ("XRANGE", "s", "(149-2", "+"),
        ("XLEN", "s"),
    ]:
        pair.check(*cmd)


# -- XLEN / XDEL ---------------------------------------------------------------------------


def test_xdel(pair: Pair) -> None:
    seed(pair)
    pair.check_all([
        ("XDEL", "s", "x"),
        ("XDEL", "s", "1-1", "x"),
        ("XDEL", "s", "-"),
        ("XLEN", "s"),
        ("XDEL", "nokey", "x"),
        ("XDEL", "s", "1-1", "1-1", "9-9"),
        ("XDEL", "s", "2"),
        ("XDEL", "s", "2-1"),
        ("XLEN", "s"),
        ("XINFO", "STREAM", "s"),
        ("XDEL", "s", "3-1", "4-1", "5-1"),
        ("XINFO", "STREAM", "s"),
        ("EXISTS", "s"),
        ("XADD", "s", "5-1", "a", "1"),
        ("XADD", "s", "5-2", "a", "1"),
        ("XINFO", "STREAM", "s"),
    ])


# -- XSETID --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ("XSETID", "s", "x"),
        ("XSETID", "s", "-"),
        ("XSETID", "s", "1-1"),
        ("XSETID", "s", "9-1", "ENTRIESADDED", "x"),
        ("XSETID", "s", "9-1", "ENTRIESADDED", "-1"),
        ("XSETID", "s", "9-1", "ENTRIESADDED", "0"),
        ("XSETID", "s", "9-1", "ENTRIESADDED"),
        ("XSETID", "s", "9-1", "MAXDELETEDID", "x"),
        ("XSETID", "s", "9-1", "MAXDELETEDID", "10-0"),
        ("XSETID", "s", "9-1", "foo"),
        ("XSETID", "s", "9-1", "MAXDELETEDID", "3-0", "ENTRIESADDED", "10"),
        ("XSETID", "s", "5-1"),
        ("XSETID", "nokey", "1-1"),
        ("XSETID", "nokey", "x"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xsetid(pair: Pair, cmd: Cmd) -> None:
    seed(pair)
    pair.check(*cmd)
    pair.check("XINFO", "STREAM", "s")


# -- the radix tree after deletes ---------------------------------------------------------


def test_radix_tree_figures_follow_deletes(pair: Pair) -> None:
    for i in range(1, 1201):
        ms = (i * 7919) % 100_003 + i * 100_000
        pair.ref.send("XADD", "s", f"{ms}-{i % 5}", "f", "v")
        pair.ours.send("XADD", "s", f"{ms}-{i % 5}", "f", "v")
    for _ in range(1200):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XINFO", "STREAM", "s")
    reply = pair.check("XRANGE", "s", "-", "+")
    ids = [line for line in reply.split(b"\r\n") if b"-" in line and line[:1].isdigit()]
    for sid in ids[100:400] + ids[650:700] + ids[1100:]:
        pair.check("XDEL", "s", sid)
    pair.check("XINFO", "STREAM", "s")


# -- streams in the keyspace ------------------------------------------------------------------


def seed_with_group(pair: Pair, key: str = "s") -> None:
    for i in range(1, 4):
        pair.check("XADD", key, f"{i}-1", "f", f"v{i}")
    pair.check("XGROUP", "CREATE", key, "g", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", key, ">")


def test_type_and_encoding(pair: Pair) -> None:
    seed_with_group(pair)
    pair.check("TYPE", "s")
    pair.check("OBJECT", "ENCODING", "s")
    pair.check("SET", "str", "x")
    pair.check("SCAN", "0", "TYPE", "stream")
    pair.check("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
    pair.check("TYPE", "empty")
    pair.check("OBJECT", "ENCODING", "empty")
    pair.check("EXISTS", "s", "empty")


def test_del_and_unlink(pair: Pair) -> None:
    seed_with_group(pair)
    seed_with_group(pair, "t")
    pair.check("DEL", "s")
    pair.check("UNLINK", "t")
    pair.check("XLEN", "s")
    pair.check("XINFO", "GROUPS", "t")
    pair.check("XADD", "s", "1-1", "a", "b")
    pair.check("XINFO", "STREAM", "s")


def test_rename_keeps_groups(pair: Pair) -> None:
    seed_with_group(pair)
    pair.check("RENAME", "s", "r")
    pair.check("XINFO", "GROUPS", "r")
    pair.check("XRANGE", "r", "-", "+")
    pair.check("RENAMENX", "r", "s")
    pair.check("TYPE", "s")


def test_copy_is_deep(pair: Pair) -> None:
    seed_with_group(pair)
    pair.check("COPY", "s", "c")
    pair.check("XADD", "s", "9-1", "only", "original")
    pair.check("XACK", "s", "g", "1-1")
    pair.check("XGROUP", "CREATE", "s", "other", "$")
    pair.check("XDEL", "s", "2-1")
    pair.check("XRANGE", "c", "-", "+")
    pair.check("XPENDING", "c", "g")
    pair.check("XINFO", "GROUPS", "c")
    pair.check("XINFO", "STREAM", "c")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "c", ">")
    pair.check("XINFO", "GROUPS", "s")
    pair.check("COPY", "s", "c")
    pair.check("COPY", "s", "c", "REPLACE")
    pair.check("XINFO", "STREAM", "c")


def test_expiry_applies_to_streams(pair: Pair) -> None:
    seed_with_group(pair)
    pair.check("EXPIRE", "s", "100")
    pair.check("TTL", "s")
    pair.check("XADD", "s", "9-1", "a", "b")  # writing a stream keeps its TTL
    pair.check("TTL", "s")
    pair.check("PEXPIRE", "s", "1")
    pair.check("DEBUG", "SLEEP", "0.01")
    pair.check("XLEN", "s")
    pair.check("EXISTS", "s")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")


def test_writes_invalidate_watch(pair: Pair) -> None:
    seed_with_group(pair)
    other = pair.connect_extra()
    try:
        for write in [
            ("XADD", "s", "10-1", "a", "b"),
            ("XDEL", "s", "10-1"),
            ("XDEL", "s", "77-7"),
            ("XTRIM", "s", "MAXLEN", "2"),
            ("XTRIM", "s", "MAXLEN", "2"),
            ("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"),
            ("XSETID", "s", "99-0"),
            ("XGROUP", "CREATE", "s", "h", "0"),
            ("XGROUP", "SETID", "s", "h", "0"),
            ("XGROUP", "CREATECONSUMER", "s", "h", "x"),
            ("XGROUP", "DELCONSUMER", "s", "h", "x"),
            ("XGROUP", "DESTROY", "s", "h"),
            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
            ("XACK", "s", "g", "1-1"),
            ("XCLAIM", "s", "g", "d", "0", "2-1"),
            ("XAUTOCLAIM", "s", "g", "e", "0", "0"),
            ("XLEN", "s"),
        ]:
            pair.check("WATCH", "s")
            other.check(*write)
            pair.check("MULTI")
            pair.check("PING")
            pair.check("EXEC")
    finally:
        other.close()


# -- newer Redis, against resplite alone ---------------------------------------------------------


@pytest.mark.redis_version("7.2")
def test_xsetid_cannot_go_below_the_largest_deleted_id(conn: Conn) -> None:
    add_entries(conn, n=3)
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


@pytest.mark.redis_version("8.8")
def test_xsetid_lowering_entries_added_clamps_read_counters(conn: Conn) -> None:
    # Redis PR 15489: a group never claims to have read more than was ever added.
    add_entries(conn, n=6)
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    conn.call("XTRIM", "s", "MAXLEN", "2")
    conn.call("XSETID", "s", "6-1", "ENTRIESADDED", "2")
    group = conn.v("XINFO", "GROUPS", "s")[0]
    assert (group["entries-read"], group["lag"]) == (2, 0)


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
    add_entries(conn)
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


# -- Redis 8.6: idempotent producers (XADD IDMP / IDMPAUTO, XCFGSET) ---------------------------

FIELDS = ("idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
          "iids-duplicates")


def idmp(xs: Conn, key: str = "s") -> dict[str, int]:
    info = xs.xinfo(key)
    return {name: info[name] for name in FIELDS}


# -- XADD IDMP / IDMPAUTO ---------------------------------------------------------------------


@pytest.mark.redis_version("8.6")
def test_xadd_idmp_a_repeated_iid_answers_the_first_entry(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "100")
    assert first == f"{T0}-0"
    assert xs.v("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "200") == first
    assert xs.v("XLEN", "s") == 1
    assert xs.v("XRANGE", "s", "-", "+") == [[first, ["amount", "100"]]]
    # Another iid, or the same iid from another producer, is a new entry.
    assert xs.v("XADD", "s", "IDMP", "p1", "payment-xyz", "*", "amount", "100") == f"{T0}-1"
    assert xs.v("XADD", "s", "IDMP", "p2", "payment-abc", "*", "amount", "100") == f"{T0}-2"
    # Binary and empty-looking ids are just bytes; options may come in any order.
    assert xs.v("XADD", "s", "MAXLEN", "~", "100", "IDMP", "p1", b"\x00\xff", "*", "f", "v") \
        == f"{T0}-3"
    assert xs.v("XADD", "s", "IDMP", "p1", b"\x00\xff", "KEEPREF", "*", "f", "w") == f"{T0}-3"
    assert idmp(xs) == {"idmp-duration": 100, "idmp-maxsize": 100, "pids-tracked": 2,
                        "iids-tracked": 4, "iids-added": 4, "iids-duplicates": 2}


@pytest.mark.redis_version("8.6")
def test_xadd_idmpauto_derives_the_iid_from_the_content(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "2")
    # The same pairs in another order are the same message; another value is not.
    assert xs.v("XADD", "s", "IDMPAUTO", "p", "*", "b", "2", "a", "1") == first
    assert xs.v("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "3") != first
    # Field names count, and each producer has its own iids.
    assert xs.v("XADD", "s", "IDMPAUTO", "p", "*", "c", "1", "b", "2") != first
    assert xs.v("XADD", "s", "IDMPAUTO", "q", "*", "a", "1", "b", "2") != first
    assert xs.v("XLEN", "s") == 4
    assert idmp(xs)["iids-duplicates"] == 1


@pytest.mark.redis_version("8.6")
def test_xadd_idmp_with_nomkstream_trimming_and_groups(xs: Conn) -> None:
    assert xs.call("XADD", "s", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v") == (
        b"_\r\n" if xs.resp == 3 else b"$-1\r\n")
    assert xs.v("EXISTS", "s") == 0
    xs.call("XADD", "s", "*", "seed", "0")
    xs.call("XGROUP", "CREATE", "s", "g", "0")
    one = xs.v("XADD", "s", "IDMP", "p", "i1", "MAXLEN", "=", "5", "*", "f", "1")
    assert xs.v("XADD", "s", "IDMP", "p", "i1", "MAXLEN", "=", "1", "*", "f", "2") == one
    assert xs.v("XLEN", "s") == 2  # a duplicate adds nothing and trims nothing
    read = xs.v("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    entries = read["s"] if xs.resp == 3 else read[0][1]
    assert [e[0] for e in entries] == [f"{T0}-0", one]


@pytest.mark.parametrize("command", [
    ("IDMP", "p1", "*", "f", "v"),
    ("IDMP", "p1", "iid1", "1-1", "f", "v"),
    ("IDMPAUTO", "p1", "1-1", "f", "v"),
    ("IDMP", "p1", "i1", "IDMP", "p2", "i2", "*", "f", "v"),
    ("IDMPAUTO", "p1", "IDMP", "p2", "i2", "*", "f", "v"),
    ("IDMP", "p1", "i1", "IDMPAUTO", "p2", "*", "f", "v"),
    ("IDMPAUTO", "p1", "IDMPAUTO", "p2", "*", "f", "v"),
    ("IDMP", "", "i1", "*", "f", "v"),
    ("IDMP", "p1", "", "*", "f", "v"),
    ("IDMPAUTO", "", "*", "f", "v"),
], ids=lambda c: " ".join(map(str, c)))
def test_xadd_idmp_errors(pair: Pair, command: tuple[str, ...]) -> None:
    pair.check("XADD", "s", *command)
    pair.check("EXISTS", "s")


@pytest.mark.redis_version("8.6")
def test_iids_expire_after_the_duration_by_entry_time(xs: Conn, resplite_clock: Any) -> None:
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert xs.v("XCFGSET", "s", "IDMP-DURATION", "2") == "OK"
    assert idmp(xs)["iids-tracked"] == 0  # a new setting forgets every iid
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    resplite_clock.advance(1999)
    assert xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v") == first
    assert idmp(xs)["iids-tracked"] == 1
    resplite_clock.advance(1)  # the entry is now two seconds old: its iid is gone
    assert idmp(xs) == {"idmp-duration": 2, "idmp-maxsize": 100, "pids-tracked": 0,
                        "iids-tracked": 0, "iids-added": 2, "iids-duplicates": 1}
    again = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert again != first
    assert xs.v("XLEN", "s") == 3


@pytest.mark.redis_version("8.6")
def test_each_producer_keeps_at_most_maxsize_iids(xs: Conn) -> None:
    xs.call("XADD", "s", "IDMP", "p1", "init", "*", "f", "v")
    xs.call("XCFGSET", "s", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60")
    ids = {i: xs.v("XADD", "s", "IDMP", "p1", f"req-{i}", "*", "f", "v") for i in (1, 2, 3)}
    other = xs.v("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "v")
    assert idmp(xs)["iids-tracked"] == 4
    xs.call("XADD", "s", "IDMP", "p1", "req-4", "*", "f", "v")  # evicts p1's req-1
    assert xs.v("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v") != ids[1]  # evicts req-2
    assert xs.v("XADD", "s", "IDMP", "p1", "req-3", "*", "f", "v") == ids[3]
    assert xs.v("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "v") == other
    assert idmp(xs) == {"idmp-duration": 60, "idmp-maxsize": 3, "pids-tracked": 2,
                        "iids-tracked": 4, "iids-added": 7, "iids-duplicates": 2}


# -- XCFGSET ----------------------------------------------------------------------------------


@pytest.mark.redis_version("8.6")
def test_xcfgset_sets_and_reports_the_settings(xs: Conn) -> None:
    xs.call("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert xs.call("XCFGSET", "s", "IDMP-DURATION", "86400") == b"+OK\r\n"
    assert xs.call("XCFGSET", "s", "idmp-maxsize", "10000") == b"+OK\r\n"
    assert idmp(xs)["idmp-duration"] == 86400
    assert idmp(xs)["idmp-maxsize"] == 10000
    xs.call("XCFGSET", "s", "IDMP-DURATION", "1", "IDMP-MAXSIZE", "1")
    full = xs.xinfo("s", "FULL")
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (1, 1)
    # Fields come right after recorded-first-entry-id, in both forms.
    for info in (xs.xinfo("s"), full):
        names = list(info)
        at = names.index("recorded-first-entry-id")
        assert names[at + 1 : at + 7] == list(FIELDS)


@pytest.mark.redis_version("8.6")
def test_xcfgset_with_the_same_settings_keeps_the_iids(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    xs.call("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100")
    assert xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v") == first
    xs.call("XCFGSET", "s", "IDMP-DURATION", "50")
    assert xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v") != first
    assert idmp(xs) == {"idmp-duration": 50, "idmp-maxsize": 100, "pids-tracked": 1,
                        "iids-tracked": 1, "iids-added": 2, "iids-duplicates": 1}


@pytest.mark.parametrize("args", [
    (), ("IDMP-DURATION",), ("IDMP-MAXSIZE",), ("INVALID",), ("IDMP-DURATION", "A"),
    ("IDMP-DURATION", "3.14"), ("IDMP-DURATION", "000000000"),
    ("IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"), ("IDMP-DURATION", "0"),
    ("IDMP-DURATION", "86401"), ("IDMP-MAXSIZE", "-50"), ("IDMP-MAXSIZE", "10001"),
    ("IDMP-DURATION", "5", "IDMP-DURATION", "6"), ("IDMP-MAXSIZE", "5", "idmp-maxsize", "6"),
    ("IDMP-DURATION", "5", "INVALID"),
], ids=lambda c: " ".join(c) or "none")
def test_xcfgset_errors_change_nothing(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("XADD", "s", "1-1", "f", "v")
    pair.check("XCFGSET", "s", *args)
    pair.check("XINFO", "STREAM", "s", normalize=lambda reply: reply)


@pytest.mark.parametrize("args", [
    ("IDMP-DURATION", "5"), ("INVALID",), ("IDMP-DURATION", "0"), (),
], ids=lambda c: " ".join(c) or "none")
def test_xcfgset_looks_the_key_up_first(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("XCFGSET", "nokey", *args)
    pair.check("SET", "str", "x")
    pair.check("XCFGSET", "str", *args)


@pytest.mark.redis_version("8.6")
def test_streams_start_with_the_configured_settings(xs: Conn) -> None:
    xs.call("XADD", "plain", "*", "f", "v")
    assert idmp(xs, "plain") == {"idmp-duration": 100, "idmp-maxsize": 100, "pids-tracked": 0,
                                 "iids-tracked": 0, "iids-added": 0, "iids-duplicates": 0}
    try:
        assert xs.call("CONFIG", "SET", "stream-idmp-duration", "86401").startswith(
            b"-ERR CONFIG SET failed (possibly related to argument 'stream-idmp-duration') - "
            b"argument must be between 1 and 86400 inclusive")
        assert xs.call("CONFIG", "SET", "stream-idmp-maxsize", "0").startswith(b"-ERR")
        xs.call("CONFIG", "SET", "stream-idmp-duration", "30")
        xs.call("CONFIG", "SET", "stream-idmp-maxsize", "2")
        xs.call("XADD", "new", "IDMP", "p", "i", "*", "f", "v")
        assert idmp(xs, "new")["idmp-duration"] == 30
        assert idmp(xs, "new")["idmp-maxsize"] == 2
    finally:
        xs.call("CONFIG", "SET", "stream-idmp-duration", "100")
        xs.call("CONFIG", "SET", "stream-idmp-maxsize", "100")


@pytest.mark.redis_version("8.6")
def test_copy_keeps_the_idempotency_state(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    xs.call("COPY", "s", "t")
    assert xs.v("XADD", "t", "IDMP", "p", "i", "*", "f", "v") == first
    assert xs.v("XADD", "t", "IDMP", "p", "j", "*", "f", "v") != first
    assert idmp(xs, "s")["iids-added"] == 1
    assert idmp(xs, "t")["iids-added"] == 2


# -- XIDMPRECORD and the idempotency state in DUMP, against Redis 8.6.3 ------------------------


def mirror_entries(pair: Pair, key: str, n: int) -> list[str]:
    """``n`` entries with ids of the present millisecond (the reference's ``*``), added to
    both servers under those same ids: iids recorded for them do not expire during a test."""
    ids = []
    for i in range(n):
        sid = pair.ref.call("XADD", key, "*", "f", f"v{i}").split(b"\r\n")[1].decode()
        assert decode(pair.ours.call("XADD", key, sid, "f", f"v{i}")) == sid.encode()
        ids.append(sid)
    return ids


@pytest.mark.parametrize("args", [
    ("s", "p1", "i1"), ("s", "p1", "i1", "1-1", "extra"),
    ("nokey", "p1", "i1", "1-1"), ("str", "p1", "i1", "1-1"),
    ("s", "p1", "i1", "bad"), ("s", "p1", "i1", "1-"), ("s", "p1", "i1", "-1"),
    ("s", "p1", "i1", "+"), ("s", "p1", "i1", "*"),
    ("s", "", "i1", "1-1"), ("s", "p1", "", "1-1"), ("s", "", "", "bad"),
    ("nokey", "", "i1", "1-1"), ("str", "p1", "", "1-1"),
    ("s", "p1", "i1", "999-999"), ("s", "p1", "i1", "1"),
], ids=lambda c: " ".join(c))
def test_xidmprecord_errors(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("XADD", "s", "1-1", "f", "v")
    pair.check("SET", "str", "x")
    pair.check("XIDMPRECORD", *args)
    pair.check("XINFO", "STREAM", "s", normalize=lambda reply: reply)


def test_xidmprecord_records_iids_xadd_then_finds(pair: Pair) -> None:
    one, two, three = mirror_entries(pair, "s", 3)
    pair.check("XIDMPRECORD", "s", "p1", "i1", one)
    pair.check("XIDMPRECORD", "s", "p1", "i1", one)  # the same record again: OK
    pair.check("XIDMPRECORD", "s", "p1", "i1", two)  # the iid of another entry: refused
    pair.check("XIDMPRECORD", "s", "p2", "i1", two)  # producers have their own iids
    pair.check("XIDMPRECORD", "s", "p1", b"\x00\xff\r\n", three)
    pair.check("XIDMPRECORD", "s", "producer-\u4e16", "req-h\u00e9llo", three)
    pair.check("XINFO", "STREAM", "s", normalize=lambda reply: reply)
    pair.check("XADD", "s", "IDMP", "p1", "i1", "*", "f", "dup")
    pair.check("XADD", "s", "IDMP", "p2", "i1", "*", "f", "dup")
    pair.check("XADD", "s", "IDMP", "p1", b"\x00\xff\r\n", "*", "f", "dup")
    pair.check("XLEN", "s")
    pair.check("XINFO", "STREAM", "s", normalize=lambda reply: reply)
    # An entry deleted since is not one to record.
    pair.check("XDEL", "s", two)
    pair.check("XIDMPRECORD", "s", "p3", "i1", two)


def test_idempotency_writes_leave_watch_alone(pair: Pair) -> None:
    """A duplicate XADD IDMP, XCFGSET and XIDMPRECORD count as changes, but Redis does not
    signal them: a WATCH of the stream still lets its transaction run."""
    (one,) = mirror_entries(pair, "s", 1)
    pair.check("XADD", "s", "IDMP", "p", "i", "*", "f", "v", normalize=loose_ids)
    other = pair.connect_extra()
    try:
        for write in [("XADD", "s", "IDMP", "p", "i", "*", "f", "again"),
                      ("XCFGSET", "s", "IDMP-DURATION", "100"),  # the setting it has
                      ("XCFGSET", "s", "IDMP-DURATION", "50"),
                      ("XIDMPRECORD", "s", "p", "j", one)]:
            pair.check("WATCH", "s")
            other.check(*write, normalize=loose_ids)
            pair.check("MULTI")
            pair.check("PING")
            pair.check("EXEC")
    finally:
        other.close()


def test_dump_of_a_stream_with_iids_equals_redis(pair: Pair) -> None:
    """A stream with idempotency state dumps as Redis 8.6.3 dumps it (RDB type 26, version
    13), byte for byte; a stream without any keeps the older form."""
    pair.check("XADD", "plain", "1-1", "f", "v")
    ours_plain: Any = decode(pair.ours.call("DUMP", "plain"))
    assert ours_plain[0] == rdb_format.TYPE_STREAM_LISTPACKS_3
    one, two = mirror_entries(pair, "s", 2)
    pair.check("XIDMPRECORD", "s", "p2", "a", one)
    pair.check("XIDMPRECORD", "s", "p1", "b" * 40, two)  # long enough to be compressed
    pair.check("XIDMPRECORD", "s", "p1", "12345", one)  # written as an integer
    pair.check("XIDMPRECORD", "s", "", "x", one)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check("XADD", "s", "IDMP", "p1", "12345", "*", "f", "dup")
    pair.check("DUMP", "s")
    pair.check("XCFGSET", "s", "IDMP-MAXSIZE", "50", "IDMP-DURATION", "1000")
    pair.check("XIDMPRECORD", "s", "p1", "c", two)
    pair.check("DUMP", "s")
    # Each server restores the other's payload with the state in it.
    for source, target in ((pair.ours, pair.ref), (pair.ref, pair.ours)):
        payload: Any = decode(source.call("DUMP", "s"))
        assert payload[0] == rdb_format.TYPE_STREAM_LISTPACKS_4
        assert target.call("RESTORE", "copy", "0", payload, "REPLACE") == b"+OK\r\n"
    pair.check("XINFO", "STREAM", "copy", normalize=lambda reply: reply)
    pair.check("XADD", "copy", "IDMP", "p1", "c", "*", "f", "dup")


def test_idmpauto_iids_are_redis_s(pair: Pair) -> None:
    """IDMPAUTO derives the iid as Redis does: iids restored from Redis's payload still
    match the same message, whatever the order of its pairs."""
    sid = pair.ref.call("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "bb", "22", "c", "-3")
    payload: Any = decode(pair.ref.call("DUMP", "s"))
    assert pair.ours.call("RESTORE", "s", "0", payload) == b"+OK\r\n"
    assert pair.ours.call("XADD", "s", "IDMPAUTO", "p", "*", "c", "-3", "a", "1", "bb", "22") \
        == sid
    assert pair.ours.call("XLEN", "s") == b":1\r\n"
    # And the other way: what resplite records, Redis finds.
    sid = pair.ours.call("XADD", "t", "IDMPAUTO", "p", "*", "k", "v", "k", "v")
    payload = decode(pair.ours.call("DUMP", "t"))
    assert pair.ref.call("RESTORE", "t", "0", payload) == b"+OK\r\n"
    assert pair.ref.call("XADD", "t", "IDMPAUTO", "p", "*", "k", "v", "k", "v") == sid


# -- the change counter (INFO persistence rdb_changes_since_last_save) -----------------------

# Each runs on a fresh stream of five entries with a group g whose consumer c has read two.
_ENTRY_COMMANDS = [
    "XADD x * a 1", "XADD x MAXLEN 2 * a 1", "XADD x 1-1 a 1", "XADD nx NOMKSTREAM * a 1",
    "XDEL x 1-1 2-1 9-9", "XDEL x 9-9", "XTRIM x MAXLEN 2", "XTRIM x MAXLEN 10",
    "XTRIM x MINID 3-1", "XSETID x 10-1", "XSETID x 1-1", "XLEN x", "XRANGE x - +",
    "XREVRANGE x + - COUNT 1", "XREAD STREAMS x 0", "XINFO STREAM x", "XINFO GROUPS x",
    "XINFO CONSUMERS x g",
]


def _seed(conn: RawClient) -> None:
    conn.call("FLUSHALL")
    for i in range(1, 6):
        conn.call("XADD", "x", f"{i}-1", "a", str(i))
    conn.call("XGROUP", "CREATE", "x", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "x", ">")


def _dirty(conn: RawClient) -> int:
    text = conn.call("INFO", "persistence").decode(errors="replace")
    line = next(x for x in text.split("\r\n") if x.startswith("rdb_changes_since_last_save:"))
    return int(line.split(":")[1])


def changes(conn: RawClient, command: str) -> int:
    _seed(conn)
    before = _dirty(conn)
    conn.call(*command.split())
    return _dirty(conn) - before


@pytest.mark.parametrize("command", _ENTRY_COMMANDS)
def test_entry_commands_count_changes_as_redis(pair: Pair, command: str) -> None:
    assert changes(pair.ours, command) == changes(pair.ref, command), command


@pytest.mark.parametrize("command", [
    "XADD x IDMP p i * f v",  # the first time: an entry
    "XADD x IDMP p a * f v",  # a duplicate: no entry, one change all the same
    "XADD x IDMPAUTO q * f v",
    "XCFGSET x IDMP-MAXSIZE 5",
    "XCFGSET x IDMP-MAXSIZE 100",  # the setting it has: no change
    "XCFGSET x IDMP-DURATION 100 IDMP-MAXSIZE 100",
    "XIDMPRECORD x p b 2-1",
    "XIDMPRECORD x p a 2-1",  # refused: p's a is another entry
    "XIDMPRECORD x p c 9-9",  # no such entry
])
def test_idempotent_writes_count_changes_as_redis(pair: Pair, command: str) -> None:
    def changes_after_records(conn: RawClient) -> int:
        _seed(conn)
        conn.call("XADD", "x", "IDMP", "p", "a", "*", "f", "v")
        conn.call("XADD", "x", "IDMPAUTO", "q", "*", "f", "v")
        before = _dirty(conn)
        conn.call(*command.split())
        return _dirty(conn) - before

    assert changes_after_records(pair.ours) == changes_after_records(pair.ref), command
