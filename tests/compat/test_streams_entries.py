"""Stream entry commands against a real redis-server: XADD, XRANGE, XREVRANGE, XLEN, XDEL,
XTRIM, XSETID and XINFO STREAM, byte for byte, under RESP2 and RESP3.

Ids are explicit wherever the reply would show them, so both servers produce the same ones.
"""

from __future__ import annotations

import pytest
from support.helpshape import assert_same_shape, implemented

Cmd = tuple[str | bytes | int, ...]


def seed(pair, key: str = "s", n: int = 5, fields: int = 1) -> None:  # type: ignore[no-untyped-def]
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
def test_xadd_arguments_and_errors(pair, cmd: Cmd) -> None:  # type: ignore[no-untyped-def]
    pair.check(*cmd)
    pair.check("EXISTS", "s")
    pair.check("XLEN", "s")


def test_xadd_ids_must_grow(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_xadd_sequence_wildcard_on_an_empty_stream(pair) -> None:  # type: ignore[no-untyped-def]
    pair.check("XADD", "s", "0-*", "a", "1")
    pair.check("XADD", "s", "0-*", "a", "1")
    pair.check("XRANGE", "s", "-", "+")


def test_xadd_at_the_last_possible_id(pair) -> None:  # type: ignore[no-untyped-def]
    pair.check_all([
        ("XADD", "s", "18446744073709551615-18446744073709551614", "a", "1"),
        ("XADD", "s", "18446744073709551615-*", "a", "1"),
        ("XADD", "s", "*", "a", "1"),
        ("XADD", "s", "18446744073709551615-*", "a", "1"),
        ("XADD", "s", "NOMKSTREAM", "18446744073709551615-18446744073709551615", "a", "1"),
        ("XLEN", "s"),
    ])


def test_xadd_fields_that_differ_from_the_node_master(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_xadd_binary_and_large_values(pair) -> None:  # type: ignore[no-untyped-def]
    big = b"\x00\r\n\xff" * 3000
    pair.check("XADD", "s", "1-1", b"f\x00", big, "g", b"x" * 70000)
    pair.check("XRANGE", "s", "-", "+")


def test_xadd_on_another_type(pair) -> None:  # type: ignore[no-untyped-def]
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
def test_approximate_maxlen_removes_the_nodes_redis_removes(pair, threshold: int) -> None:  # type: ignore[no-untyped-def]
    for i in range(1, 251):
        pair.ref.send("XADD", "s", f"{i}-0", "f", f"v{i}")
        pair.ours.send("XADD", "s", f"{i}-0", "f", f"v{i}")
    for _ in range(250):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XTRIM", "s", "MAXLEN", "~", threshold)
    pair.check("XLEN", "s")
    pair.check("XINFO", "STREAM", "s")


def test_node_split_by_bytes(pair) -> None:  # type: ignore[no-untyped-def]
    for i in range(1, 61):
        pair.check("XADD", "s", f"{i}-0", "field", "x" * (50 + 7 * i))
    pair.check("XINFO", "STREAM", "s")
    pair.check("XTRIM", "s", "MAXLEN", "~", "30")
    pair.check("XINFO", "STREAM", "s")


def test_node_settings_change_at_runtime(pair) -> None:  # type: ignore[no-untyped-def]
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
def test_xtrim_strategies(pair, trim: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    for i in range(1, 301):
        pair.ref.send("XADD", "s", f"{i}-0", "f", "v")
        pair.ours.send("XADD", "s", f"{i}-0", "f", "v")
    for _ in range(300):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XTRIM", "s", *trim)
    pair.check("XINFO", "STREAM", "s")
    pair.check("XRANGE", "s", "-", "+", "COUNT", "3")


def test_xadd_with_trimming(pair) -> None:  # type: ignore[no-untyped-def]
    for i in range(1, 120):
        pair.check("XADD", "s", "MAXLEN", "~", "10", f"{i}-0", "f", "v")
    pair.check("XINFO", "STREAM", "s")
    for i in range(120, 140):
        pair.check("XADD", "s", "MINID", "130", f"{i}-0", "f", "v")
    pair.check("XINFO", "STREAM", "s")


def test_exact_trim_after_deletes(pair) -> None:  # type: ignore[no-untyped-def]
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
def test_xtrim_errors(pair, cmd: Cmd) -> None:  # type: ignore[no-untyped-def]
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
def test_ranges(pair, cmd: Cmd) -> None:  # type: ignore[no-untyped-def]
    seed(pair, fields=2)
    pair.check("XDEL", "s", "3-1")
    pair.check(*cmd)


def test_ranges_across_many_nodes(pair) -> None:  # type: ignore[no-untyped-def]
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


def test_xdel(pair) -> None:  # type: ignore[no-untyped-def]
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
def test_xsetid(pair, cmd: Cmd) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check(*cmd)
    pair.check("XINFO", "STREAM", "s")


# -- XINFO STREAM --------------------------------------------------------------------------


def test_xinfo_stream_shapes(pair) -> None:  # type: ignore[no-untyped-def]
    pair.check("XADD", "e", "NOMKSTREAM", "*", "a", "1")
    pair.check("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    pair.check("XINFO", "STREAM", "e")
    pair.check("XINFO", "STREAM", "e", "FULL")
    seed(pair, n=15, fields=2)
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


def test_xinfo_help_has_the_shape_of_redis(pair) -> None:  # type: ignore[no-untyped-def]
    for spelling in ("HELP", "help"):
        ref, ours = pair.both("XINFO", spelling)
        assert_same_shape(ref, ours, ours_has=implemented("xinfo"))


def test_radix_tree_figures_follow_deletes(pair) -> None:  # type: ignore[no-untyped-def]
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
