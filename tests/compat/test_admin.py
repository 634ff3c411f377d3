"""SLOWLOG, ACL and MEMORY (``resplite/commands/admin.py``) against a real Redis 7.0.

Replies that carry no process-specific data are compared byte for byte; SLOWLOG entries by
the fields the commands under test decide (arguments, client name) and the shape of the rest
(ids, times, durations, addresses); ACL's stand-ins answer as Redis's default user does; MEMORY
STATS by its keys and the reply type of each value.

Tests that change configuration restore it, because the servers are shared by the session.
"""

from __future__ import annotations

import re

import pytest
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair
from support.resptree import Node, parse, to_python


def test_slowlog(pair: Pair) -> None:
    with pair.configured(slowlog_log_slower_than="0", slowlog_max_len="3"):
        pair.check("SLOWLOG", "RESET")
        pair.check("SLOWLOG", "LEN")
        pair.check("ECHO", "x" * 200)
        pair.check("DEL", *[f"k{i}" for i in range(40)])
        ref, ours = pair.both("SLOWLOG", "GET", "2")
        ref_tree, our_tree = to_python(parse(ref)), to_python(parse(ours))
        assert [e[3] for e in our_tree] == [e[3] for e in ref_tree]
        assert [e[5] for e in our_tree] == [e[5] for e in ref_tree]
        for entry in our_tree:
            assert isinstance(entry[0], int) and isinstance(entry[2], int)
            assert re.fullmatch(r"127\.0\.0\.1:\d+", entry[4])
        pair.check("SLOWLOG", "LEN")
        ref, ours = pair.both("SLOWLOG", "GET", "-1")
        assert len(to_python(parse(ours))) == len(to_python(parse(ref))) == 3
        pair.check("SLOWLOG", "GET", "0")
        pair.check("SLOWLOG", "GET", "-2")
        pair.check("SLOWLOG", "GET", "abc")
        pair.check("SLOWLOG", "GET", "1", "2")
        pair.check("SLOWLOG", "RESET")
        pair.check("SLOWLOG", "LEN")
    pair.check("SLOWLOG", "RESET")


def test_acl_stand_ins(pair: Pair) -> None:
    pair.check("ACL", "WHOAMI")
    pair.check("ACL", "USERS")
    pair.check("ACL", "CAT")
    pair.check("ACL", "CAT", "foo")
    pair.check("ACL", "CAT", "@stream")
    pair.check("ACL", "CAT", "a", "b")
    pair.check("ACL", "WHOAMI", "x")
    for category in ("stream", "STRING", "connection", "keyspace"):
        ref, ours = (set(to_python(parse(r))) for r in pair.both("ACL", "CAT", category))
        newer = {"xackdel", "xdelex", "xcfgset", "xnack", "client|setinfo", "client|no-touch"}
        assert ours <= ref | newer, category


def test_memory(pair: Pair) -> None:
    pair.check("MEMORY", "USAGE", "nokey")
    pair.check("SET", "k", "hello")
    for bad in (("SAMPLES",), ("foo", "1"), ("SAMPLES", "-1"), ("SAMPLES", "abc")):
        pair.check("MEMORY", "USAGE", "k", *bad)
    ref, ours = pair.both("MEMORY", "USAGE", "k", "SAMPLES", "0")
    assert re.fullmatch(rb":\d+\r\n", ours) and re.fullmatch(rb":\d+\r\n", ref)
    ref_stats, our_stats = (parse(r) for r in pair.both("MEMORY", "STATS"))
    ref_kinds, our_kinds = (_map_kinds(node) for node in (ref_stats, our_stats))
    assert [k for k in our_kinds if not k.startswith("db.")] == [
        k for k in ref_kinds if not k.startswith("db.")]
    for key, kind in our_kinds.items():
        assert kind == ref_kinds.get(key, kind), key
    ref, ours = pair.both("MEMORY", "DOCTOR")
    assert ours[:1] == ref[:1]


def _map_kinds(node: Node) -> dict[str, bytes]:
    """Key -> reply type of a map reply (RESP3 map or RESP2 flat array)."""
    kind, items = node
    pairs = items if kind == b"%" else list(zip(items[::2], items[1::2], strict=True))
    return {key[1].decode(): value[0] for key, value in pairs}


@pytest.mark.parametrize("container", ["ACL", "MEMORY", "SLOWLOG"])
def test_help_has_the_shape_of_redis(pair: Pair, container: str) -> None:
    ref, ours = pair.both(container, "HELP")
    assert_same_shape(ref, ours, ours_has=implemented(container))
