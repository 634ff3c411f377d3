"""HIMPORT (Redis 8.10, ``resplite/commands/hashes_import.py``): resplite alone, since the
7.0 reference has no such command. Facts from Redis's documentation and the client
libraries' tests against Redis 8.10 (go-redis's HIMPORT suite: replies, replacement of an
existing hash, WRONGTYPE, and the words of the error texts)."""

from __future__ import annotations

import pytest
from compat_helpers import decode
from support.pair import Pair

pytestmark = pytest.mark.redis_version("8.10")


def _hgetall(p: Pair, key: str) -> dict[bytes, bytes]:
    flat = decode(p.ours.call("HGETALL", key))
    if isinstance(flat, dict):
        return flat
    return dict(zip(flat[::2], flat[1::2], strict=True))


def test_prepare_set_and_discard(pair: Pair) -> None:
    ours = pair.ours
    assert ours.call("HIMPORT", "PREPARE", "u", "name", "email", "age") == b"+OK\r\n"
    assert ours.call("HIMPORT", "SET", "user:1", "u", "alice", "a@example.com", "30") == \
        b"+OK\r\n"
    assert ours.call("HIMPORT", "SET", "user:2", "u", "bob", "b@example.com", "25") == \
        b"+OK\r\n"
    assert ours.call("HGET", "user:1", "email") == b"$13\r\na@example.com\r\n"
    # The fieldset's order, in the encoding HSET would give.
    assert decode(ours.call("HKEYS", "user:2")) == [b"name", b"email", b"age"]
    assert ours.call("OBJECT", "ENCODING", "user:2") == b"$8\r\nlistpack\r\n"
    # Values pair by position with each fieldset's own order.
    ours.call("HIMPORT", "PREPARE", "o1", "a", "b", "c")
    ours.call("HIMPORT", "PREPARE", "o2", "c", "b", "a")
    ours.call("HIMPORT", "SET", "k1", "o1", "va1", "vb1", "vc1")
    ours.call("HIMPORT", "SET", "k2", "o2", "vc2", "vb2", "va2")
    assert ours.call("HGET", "k1", "a") == b"$3\r\nva1\r\n"
    assert ours.call("HGET", "k2", "a") == b"$3\r\nva2\r\n"
    # Preparing a name again replaces it.
    ours.call("HIMPORT", "PREPARE", "o1", "x")
    ours.call("HIMPORT", "SET", "k3", "o1", "1")
    assert _hgetall(pair, "k3") == {b"x": b"1"}
    # DISCARD answers whether it removed one; the hashes stay.
    assert ours.call("HIMPORT", "DISCARD", "u") == b":1\r\n"
    assert ours.call("HIMPORT", "DISCARD", "u") == b":0\r\n"
    assert ours.call("HGET", "user:1", "name") == b"$5\r\nalice\r\n"
    assert ours.call("HIMPORT", "DISCARDALL") == b":2\r\n"
    assert ours.call("HIMPORT", "DISCARDALL") == b":0\r\n"


def test_set_replaces_a_hash_and_refuses_other_types(pair: Pair) -> None:
    ours = pair.ours
    ours.call("HSET", "h", "old", "x", "stale", "y")
    ours.call("HEXPIRE", "h", "100", "FIELDS", "1", "old")
    ours.call("EXPIRE", "h", "100")
    ours.call("HIMPORT", "PREPARE", "f", "fresh")
    assert ours.call("HIMPORT", "SET", "h", "f", "z") == b"+OK\r\n"
    assert _hgetall(pair, "h") == {b"fresh": b"z"}
    assert ours.call("TTL", "h") == b":-1\r\n"
    ours.call("SET", "s", "v")
    assert ours.call("HIMPORT", "SET", "s", "f", "z").startswith(b"-WRONGTYPE")
    assert ours.call("GET", "s") == b"$1\r\nv\r\n"
    # Past hash-max-listpack-entries / -value: a hashtable, as HSET would make.
    fields = [f"f{i}" for i in range(513)]
    ours.call("HIMPORT", "PREPARE", "wide", *fields)
    ours.call("HIMPORT", "SET", "w", "wide", *fields)
    assert ours.call("OBJECT", "ENCODING", "w") == b"$9\r\nhashtable\r\n"
    ours.call("HIMPORT", "SET", "l", "f", "v" * 65)
    assert ours.call("OBJECT", "ENCODING", "l") == b"$9\r\nhashtable\r\n"


def test_errors(pair: Pair) -> None:
    ours = pair.ours
    assert ours.call("HIMPORT", "SET", "k", "never", "v") == \
        b"-ERR no such fieldset on this connection\r\n"
    assert ours.call("HIMPORT", "PREPARE", "d", "f", "g", "f") == \
        b"-ERR duplicate field name in fieldset\r\n"
    assert ours.call("HIMPORT", "SET", "k", "d", "v") == \
        b"-ERR no such fieldset on this connection\r\n"
    ours.call("HIMPORT", "PREPARE", "two", "a", "b")
    for values in (("1",), ("1", "2", "3")):
        assert ours.call("HIMPORT", "SET", "k", "two", *values) == \
            b"-ERR value count does not match the number of fields in the fieldset\r\n"
    assert ours.call("EXISTS", "k") == b":0\r\n"
    assert ours.call("HIMPORT", "PREPARE", "x") == \
        b"-ERR wrong number of arguments for 'himport|prepare' command\r\n"
    assert ours.call("HIMPORT", "SET", "k", "two") == \
        b"-ERR wrong number of arguments for 'himport|set' command\r\n"
    assert ours.call("HIMPORT", "DISCARD") == \
        b"-ERR wrong number of arguments for 'himport|discard' command\r\n"
    assert ours.call("HIMPORT", "NOPE") == \
        b"-ERR unknown subcommand 'NOPE'. Try HIMPORT HELP.\r\n"
    assert decode(ours.call("COMMAND", "GETKEYS", "HIMPORT", "SET", "k", "two", "1", "2")) == \
        [b"k"]


def test_fieldsets_belong_to_their_connection(pair: Pair) -> None:
    """Another connection does not see them; RESET drops them; MULTI runs them in order."""
    ours = pair.ours
    other = pair.connect_extra().ours
    try:
        ours.call("HIMPORT", "PREPARE", "mine", "f")
        assert other.call("HIMPORT", "SET", "k", "mine", "v") == \
            b"-ERR no such fieldset on this connection\r\n"
        assert other.call("HIMPORT", "DISCARDALL") == b":0\r\n"
        ours.call("MULTI")
        ours.call("HIMPORT", "PREPARE", "tx", "a", "b")
        ours.call("HIMPORT", "SET", "t1", "tx", "1", "2")
        ours.call("HIMPORT", "SET", "t2", "mine", "3")
        assert ours.call("EXEC") == b"*3\r\n+OK\r\n+OK\r\n+OK\r\n"
        assert _hgetall(pair, "t1") == {b"a": b"1", b"b": b"2"}
        ours.call("RESET")
        assert ours.call("HIMPORT", "SET", "k", "mine", "v") == \
            b"-ERR no such fieldset on this connection\r\n"
    finally:
        other.close()


def test_keyspace_event_is_hset(pair: Pair) -> None:
    ours, watcher = pair.ours, pair.connect_extra().ours
    ours.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        watcher.call("PSUBSCRIBE", "__keyevent@0__:*")
        ours.call("HIMPORT", "PREPARE", "f", "a")
        ours.call("HIMPORT", "SET", "h", "f", "1")
        ours.call("SET", "done", "1")
        seen = [watcher.read_reply().split(b"__keyevent@0__:")[-1].split(b"\r\n")[0]
                for _ in range(2)]
        assert seen == [b"hset", b"set"]
    finally:
        ours.call("CONFIG", "SET", "notify-keyspace-events", "")
        watcher.close()
