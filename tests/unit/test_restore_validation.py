"""RESTORE (and an RDB load) keeps no value a later command or SAVE would fail on.

Two parts, both on an in-process engine:

* malformed stream payloads Redis loads (its checks, even under ``sanitize-dump-payload
  yes``, stop at each listpack's own consistency) but after which resplite's XADD, XRANGE,
  DUMP or SAVE went wrong: each is refused with ``Bad data format`` by RESTORE, and by the
  RDB file reader with the rule it breaks;
* a property test: valid DUMP payloads of every type, mutated (bytes flipped, set, inserted,
  removed), with the version footer and CRC-64 put back so the checksum does not hide what
  the reader does, are each refused with a Redis error or fully usable: the type's read and
  write commands answer without an internal error, and DUMP reloads to the same value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from support.stream_payload import StreamParts, build, parse, raw_id

from resplite.algorithms.crc64 import crc64
from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.state import ServerState
from resplite.formats import rdb_file
from resplite.formats import rdb_format as f
from resplite.formats import rdb_values as rv
from resplite.formats.rdb_format import RdbError
from resplite.protocol.replies import OK, ErrorReply
from resplite.store import listpack

BAD_FORMAT = "ERR Bad data format"


class Engine:
    """One in-process server state and a client on it."""

    def __init__(self) -> None:
        self.state = ServerState(Config(), Clock(), table=command_table())
        self.client = Client(self.state, 1, None)

    def __call__(self, *args: Any) -> Any:
        argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        return self.state.dispatcher.execute(self.client, argv)

    def unexpected(self) -> int:
        return self.state.unexpected_errors


def _error(reply: Any) -> str | None:
    return reply.message if isinstance(reply, ErrorReply) else None


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine()


def _stream_parts(engine: Engine) -> StreamParts:
    engine("CONFIG", "SET", "stream-node-max-entries", "4")
    engine("DEL", "src")
    for i in range(1, 12):
        engine("XADD", "src", f"{i}-1", "f", f"v{i}", "n", str(i))
    engine("XADD", "src", "12-1", "other", "x")
    engine("XDEL", "src", "5-1", "6-1")
    engine("XGROUP", "CREATE", "src", "g1", "0")
    engine("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "src", ">")
    engine("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "src", ">")
    engine("CONFIG", "SET", "stream-node-max-entries", "100")
    parts = parse(engine("DUMP", "src"))
    assert [len(items) for _, items in parts.nodes] == [30, 30, 31]
    return parts


def _setattr(name: str, value: Any) -> Callable[[StreamParts], None]:
    return lambda parts: setattr(parts, name, value)


def _node_item(node: int, index: int, value: Any) -> Callable[[StreamParts], None]:
    def change(parts: StreamParts) -> None:
        parts.nodes[node][1][index] = value
    return change


def _node_key(node: int, ms: int, seq: int) -> Callable[[StreamParts], None]:
    def change(parts: StreamParts) -> None:
        parts.nodes[node][0] = raw_id(ms, seq)
    return change


def _group(name: str, value: Any) -> Callable[[StreamParts], None]:
    return lambda parts: setattr(parts.groups[0], name, value)


def _delivery_count(value: int) -> Callable[[StreamParts], None]:
    def change(parts: StreamParts) -> None:
        parts.groups[0].pel[0][2] = value
    return change


# Corruptions Redis (7.0 to 8.6) loads, each with what it broke in resplite before and the
# rule that refuses it now. Node 0 holds 1-1 .. 4-1, node 1 5-1 .. 8-1 (5-1 and 6-1
# deleted), node 2 9-1 .. 12-1; last id 12-1, first 1-1, max deleted 6-1, 12 added.
ACCEPTED_BY_REDIS: dict[str, tuple[Callable[[StreamParts], None], str]] = {
    # XADD then DUMP or SAVE: an internal error (a length past 64 bits).
    "entries added past LLONG_MAX": (_setattr("entries_added", (1 << 64) - 1),
                                     "stream entries added inconsistent with its length"),
    "entries added below the length": (_setattr("entries_added", 3),
                                       "stream entries added inconsistent with its length"),
    # XADD 10-0 accepted below existing entries: XRANGE out of order, DUMP not reloadable.
    "last id below an entry": (_setattr("last", (10, 0)),
                               "stream last id below an entry's id"),
    "max deleted id above the last id": (_setattr("max_deleted", (99, 0)),
                                         "stream max deleted id above its last id"),
    "first id not the first entry's": (_setattr("first", (3, 1)),
                                       "stream first id is not its first entry's"),
    # Node 0's last entry (4-1) moved to 9-1, past node 1's key: XRANGE out of order.
    "node entries past the next node's key": (_node_item(0, -5, 8),
                                              "stream nodes out of order"),
    # Node 1's first entry at 5-0, below its key 5-1.
    "node key above its first entry": (_node_item(1, 8, -1),
                                       "stream node holds an entry below its key"),
    "node ids past 64 bits": (_node_key(2, (1 << 64) - 2, 1), "stream entry id out of range"),
    "entries read above entries added": (_group("entries_read", 1000),
                                         "consumer group entries-read out of range"),
    "entries read below -1": (_group("entries_read", (1 << 64) - 5),
                              "consumer group entries-read out of range"),
    "delivery count past LLONG_MAX": (_delivery_count((1 << 64) - 1),
                                      "PEL entry delivery count out of range"),
}


@pytest.mark.parametrize("case", list(ACCEPTED_BY_REDIS))
def test_malformed_stream_payloads_are_refused(engine: Engine, case: str) -> None:
    parts = _stream_parts(engine)
    corrupt, reason = ACCEPTED_BY_REDIS[case]
    broken = parts.copy()
    corrupt(broken)
    unexpected = engine.unexpected()
    for kind in (f.TYPE_STREAM_LISTPACKS_2, f.TYPE_STREAM_LISTPACKS_3):
        payload = build(broken, kind)
        assert rv.payload_valid(payload)
        assert _error(engine("RESTORE", "s", "0", payload)) == BAD_FORMAT
        assert engine("EXISTS", "s") == 0
        with pytest.raises(RdbError) as caught:
            rv.parse_payload(payload, b"s")
        assert caught.value.reason == reason
    # The same payload unbroken loads, and so does every other case's: only the field is
    # wrong.
    assert engine("RESTORE", "s", "0", build(parts)) == OK
    assert engine("DEL", "s") == 1
    assert engine.unexpected() == unexpected


def test_an_oldest_form_stream_whose_length_counts_missing_entries_is_refused(
        engine: Engine) -> None:
    # STREAM_LISTPACKS (RDB 9) has no first id: the loader finds it, and there is none.
    parts = StreamParts(nodes=[], length=1, last=(5, 0))
    unexpected = engine.unexpected()
    assert _error(engine("RESTORE", "s", "0", build(parts, f.TYPE_STREAM_LISTPACKS))) == \
        BAD_FORMAT
    assert engine.unexpected() == unexpected
    parts.length = 0
    assert engine("RESTORE", "s", "0", build(parts, f.TYPE_STREAM_LISTPACKS)) == OK
    assert engine("XLEN", "s") == 0 and engine("DEL", "s") == 1


def test_xadd_stops_entries_added_at_llong_max(engine: Engine) -> None:
    parts = _stream_parts(engine)
    parts.entries_added = (1 << 63) - 1
    assert engine("RESTORE", "s", "0", build(parts), "REPLACE") == OK
    engine("XADD", "s", "*", "f", "v")
    info = engine("XINFO", "STREAM", "s")
    assert info[b"entries-added"] == (1 << 63) - 1
    # DUMP and SAVE's encoder write it, and it reloads.
    assert engine("RESTORE", "t", "0", engine("DUMP", "s"), "REPLACE") == OK


def test_an_entry_2_63_ms_past_its_node_key_dumps_and_reloads(engine: Engine) -> None:
    # Its millisecond delta is written as a negative integer, as Redis writes it; a load
    # adds it modulo 2^64, as Redis does.
    parts = _stream_parts(engine)
    parts.last = ((1 << 64) - 1, 0)
    assert engine("RESTORE", "s", "0", build(parts), "REPLACE") == OK
    assert engine("XADD", "s", "*", "f", "v") == b"18446744073709551615-1"
    assert engine("RESTORE", "t", "0", engine("DUMP", "s"), "REPLACE") == OK
    assert engine("XRANGE", "t", "-", "+") == engine("XRANGE", "s", "-", "+")


def _hash_ex_payload(triples: list[tuple[bytes, bytes, Any]]) -> bytes:
    out = bytearray((f.TYPE_HASH_LISTPACK_EX,))
    f.write_millis(out, 0)
    f.write_string(out, listpack.encode([x for t in triples for x in t]), False)
    out += (12).to_bytes(2, "little")
    return bytes(out + crc64(0, bytes(out)).to_bytes(8, "little"))


def _zset_payload(pairs: list[tuple[bytes, bytes]]) -> bytes:
    out = bytearray((f.TYPE_ZSET_LISTPACK,))
    f.write_string(out, listpack.encode([x for p in pairs for x in p]), False)
    out += (10).to_bytes(2, "little")
    return bytes(out + crc64(0, bytes(out)).to_bytes(8, "little"))


FAR = 4102444800000


@pytest.mark.parametrize("payload", [
    _hash_ex_payload([(b"a", b"1", b"")]),  # a TTL that is not an integer
    _hash_ex_payload([(b"a", b"1", -5)]),
    _hash_ex_payload([(b"a", b"1", 1 << 48)]),  # past EB_EXPIRE_TIME_MAX
    _hash_ex_payload([(b"a", b"1", 0), (b"b", b"2", FAR)]),  # a TTL after a field without
    _hash_ex_payload([(b"a", b"1", FAR + 5), (b"b", b"2", FAR)]),  # TTLs out of order
    _zset_payload([(b"a", b"nan"), (b"b", b"2")]),
    _zset_payload([(b"a", b"1_0")]),
], ids=["ttl-text", "ttl-negative", "ttl-too-large", "ttl-after-none", "ttl-order",
        "score-nan", "score-underscore"])
def test_malformed_hash_ttls_and_scores_are_refused(engine: Engine, payload: bytes) -> None:
    unexpected = engine.unexpected()
    assert _error(engine("RESTORE", "x", "0", payload)) == BAD_FORMAT
    assert engine.unexpected() == unexpected


def test_valid_hash_ttls_load(engine: Engine) -> None:
    payload = _hash_ex_payload([(b"a", b"1", FAR), (b"b", b"2", FAR), (b"c", b"3", 0)])
    assert engine("RESTORE", "hx", "0", payload, "REPLACE") == OK
    assert engine("HPEXPIRETIME", "hx", "FIELDS", 3, "a", "b", "c") == [FAR, FAR, -1]


def test_an_rdb_file_with_a_malformed_stream_is_refused(engine: Engine) -> None:
    parts = _stream_parts(engine)
    parts.last = (10, 0)
    value = build(parts, f.TYPE_STREAM_LISTPACKS_3)[:-10]
    data = bytearray(b"REDIS0011")
    data += bytes((f.OPCODE_SELECTDB, 0, value[0], 1)) + b"s" + value[1:]
    data.append(f.OPCODE_EOF)
    data += crc64(0, bytes(data)).to_bytes(8, "little")
    with pytest.raises(RdbError) as caught:
        rdb_file.read_snapshot(bytes(data), lambda *a: True, databases=16)
    assert caught.value.reason == "stream last id below an entry's id"


# -- the property test ---------------------------------------------------------------------

_SETUP: list[tuple[Any, ...]] = [
    ("SET", "string", "hello world"),
    ("SET", "int", "12345"),
    ("RPUSH", "list", *[f"e{i}" for i in range(8)], "12", "-3"),
    ("SADD", "intset", 1, 2, 3, 400000),
    ("SADD", "setlp", "a", "b", "c"),
    ("SADD", "setht", *[f"m{i}" for i in range(200)]),
    ("ZADD", "zset", 1, "a", 2.5, "b", -3, "c"),
    ("HSET", "hash", "a", "1", "b", "x"),
    ("HSET", "hashex", "a", "1", "b", "x", "c", "2"),
    ("HPEXPIREAT", "hashex", FAR, "FIELDS", 2, "a", "b"),
    ("HSET", "hashmeta", *[x for i in range(600) for x in (f"f{i}", f"v{i}")]),
    ("HPEXPIREAT", "hashmeta", FAR, "FIELDS", 1, "f1"),
]
_READS: dict[str, list[tuple[Any, ...]]] = {
    "string": [("GET", "K"), ("APPEND", "K", "x")],
    "list": [("LRANGE", "K", 0, -1), ("RPUSH", "K", "x"), ("LPOP", "K"), ("LINSERT", "K",
              "BEFORE", "e1", "y")],
    "set": [("SMEMBERS", "K"), ("SADD", "K", "new", "7"), ("SPOP", "K"), ("SCARD", "K")],
    "zset": [("ZRANGE", "K", 0, -1, "WITHSCORES"), ("ZADD", "K", 5, "q"),
             ("ZRANGEBYSCORE", "K", "-inf", "+inf")],
    "hash": [("HGETALL", "K"), ("HSET", "K", "n", "v"), ("HPTTL", "K", "FIELDS", 2, "a", "b"),
             ("HDEL", "K", "a")],
    "stream": [("XRANGE", "K", "-", "+"), ("XREVRANGE", "K", "+", "-"),
               ("XINFO", "STREAM", "K", "FULL"), ("XINFO", "GROUPS", "K"),
               ("XPENDING", "K", "g1"), ("XPENDING", "K", "g1", "-", "+", 10),
               ("XADD", "K", "*", "f", "v"), ("XADD", "K", "8-5", "f", "v"),
               ("XREADGROUP", "GROUP", "g1", "c9", "STREAMS", "K", ">"),
               ("XAUTOCLAIM", "K", "g1", "c1", 0, 0), ("XTRIM", "K", "MAXLEN", 3),
               ("XDEL", "K", "1-1", "9-1")],
}


def _payloads(engine: Engine, compress: bool) -> dict[str, bytes]:
    engine("CONFIG", "SET", "rdbcompression", "yes" if compress else "no")
    for cmd in _SETUP:
        engine(*cmd)
    _stream_parts(engine)
    keys = [c[1] for c in _SETUP if c[0] != "HPEXPIREAT"] + ["src"]
    out = {f"{key}:{int(compress)}": engine("DUMP", key) for key in keys}
    assert all(isinstance(p, bytes) for p in out.values())
    return out


_ENGINE = Engine()
_PAYLOADS = {**_payloads(_ENGINE, True), **_payloads(_ENGINE, False)}
_ENGINE("CONFIG", "SET", "rdbcompression", "yes")

_edits = st.lists(st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "cut"]),
                            st.integers(0, 1 << 20), st.integers(0, 255)),
                  min_size=1, max_size=3)


def _mutate(body: bytes, edits: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(body)
    for op, at, byte in edits:
        if op == "insert":
            data.insert(at % (len(data) + 1), byte)
            continue
        if not data:
            continue
        i = at % len(data)
        if op == "flip":
            data[i] ^= 1 << (byte & 7)
        elif op == "set":
            data[i] = byte
        elif op == "delete":
            del data[i:i + 1 + (byte & 3)]
        else:
            del data[max(i, 1):]
    return bytes(data)


def _footer(body: bytes, version: bytes) -> bytes:
    return body + version + crc64(0, body + version).to_bytes(8, "little")


def _value(engine: Engine, key: str, kind: str) -> Any:
    """What a client reads of the value (a hashtable's order is not part of it)."""
    if kind == "string":
        return engine("GET", key)
    if kind == "list":
        return engine("LRANGE", key, 0, -1)
    if kind == "set":
        return sorted(engine("SMEMBERS", key))
    if kind == "zset":
        return engine("ZRANGE", key, 0, -1, "WITHSCORES")
    if kind == "hash":
        fields = sorted(engine("HKEYS", key))
        return ([(k, engine("HGET", key, k)) for k in fields],
                engine("HPEXPIRETIME", key, "FIELDS", len(fields), *fields))
    return engine("XRANGE", key, "-", "+"), repr(engine("XINFO", "STREAM", key, "FULL"))


def _type_of(engine: Engine, key: str) -> str:
    kind = engine("TYPE", key)
    return kind.decode() if isinstance(kind, bytes) else str(kind)


@seed(20261127)
@settings(max_examples=1200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(_PAYLOADS)), _edits)
def test_mutated_payloads_are_refused_or_fully_usable(name: str,
                                                      edits: list[tuple[str, int, int]]) -> None:
    engine = _ENGINE
    payload = _PAYLOADS[name]
    mutated = _footer(_mutate(payload[:-10], edits), payload[-10:-8])
    unexpected = engine.unexpected()
    reply = engine("RESTORE", "K", "0", mutated, "REPLACE")
    error = _error(reply)
    if error is not None:
        assert error == BAD_FORMAT, error
        assert engine.unexpected() == unexpected
        return
    assert reply == OK
    kind = _type_of(engine, "K")
    # DUMP (and SAVE, whose encoder is DUMP's) works, and reloads to the same value.
    dumped = engine("DUMP", "K")
    assert isinstance(dumped, bytes)
    assert engine("RESTORE", "K2", "0", dumped, "REPLACE") == OK
    assert _value(engine, "K2", kind) == _value(engine, "K", kind)
    value = engine.state.keyspace.dbs[0].read(b"K")
    rv.write_value(bytearray(), value, True)
    for cmd in _READS[kind]:
        engine("RESTORE", "K", "0", mutated, "REPLACE")
        answer = engine(*cmd)
        assert engine.unexpected() == unexpected, (cmd, answer)
        after = engine("DUMP", "K")
        if isinstance(after, bytes):  # the command may have emptied the key
            assert engine("RESTORE", "K2", "0", after, "REPLACE") == OK, cmd
    assert engine.unexpected() == unexpected


# Field-level changes to a stream payload (byte changes rarely reach past the listpacks'
# own checks): a number replaced in a node's listpack, in the stream's fields or in a group.
_NUMBERS = st.sampled_from([0, 1, 2, 3, 4, 5, 7, 11, 12, 100, (1 << 32), (1 << 63) - 1,
                            (1 << 64) - 1, -1, -2])
_field_edits = st.lists(st.tuples(st.integers(0, 10), st.integers(0, 1 << 16), _NUMBERS),
                        min_size=1, max_size=2)
_STREAM_PARTS = parse(_PAYLOADS["src:0"])


def _edit_parts(parts: StreamParts, edits: list[tuple[int, int, int]]) -> None:
    u64 = (1 << 64) - 1
    for what, at, number in edits:
        group = parts.groups[0]
        if what <= 3:
            items = parts.nodes[at % len(parts.nodes)][1]
            items[(at >> 2) % len(items)] = number
        elif what == 4:
            parts.length = number & u64
        elif what == 5:
            parts.last = (number & u64, at % 3)
        elif what == 6:
            parts.first = (number & u64, at % 3)
        elif what == 7:
            parts.max_deleted = (number & u64, at % 3)
        elif what == 8:
            parts.entries_added = number & u64
        elif what == 9:
            group.entries_read = number & u64
            group.last = (at % 20, at % 3)
        else:
            entry = group.pel[at % len(group.pel)]
            entry[2] = number & u64
            entry[0] = raw_id(at % 20, at % 3) if at & 1 else entry[0]


@seed(20261128)
@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_field_edits, st.sampled_from([f.TYPE_STREAM_LISTPACKS_2, f.TYPE_STREAM_LISTPACKS_3]))
def test_stream_payloads_with_changed_fields_are_refused_or_fully_usable(
        edits: list[tuple[int, int, int]], kind: int) -> None:
    engine = _ENGINE
    parts = _STREAM_PARTS.copy()
    _edit_parts(parts, edits)
    payload = build(parts, kind)
    unexpected = engine.unexpected()
    reply = engine("RESTORE", "K", "0", payload, "REPLACE")
    if _error(reply) is not None:
        assert _error(reply) == BAD_FORMAT
        return
    assert engine("RESTORE", "K2", "0", engine("DUMP", "K"), "REPLACE") == OK
    assert _value(engine, "K2", "stream") == _value(engine, "K", "stream")
    for cmd in _READS["stream"]:
        engine("RESTORE", "K", "0", payload, "REPLACE")
        engine(*cmd)
        assert engine.unexpected() == unexpected, cmd
        after = engine("DUMP", "K")
        if isinstance(after, bytes):
            assert engine("RESTORE", "K2", "0", after, "REPLACE") == OK, cmd


def test_clients_mode_does_not_count_a_user_with_skip_sanitize_payload() -> None:
    engine = Engine()
    engine("RPUSH", "l", "a", "b")
    payload = engine("DUMP", "l")

    def counted() -> int:
        return engine.state.dump_payload_sanitizations

    assert engine("CONFIG", "SET", "sanitize-dump-payload", "clients") == OK
    assert engine("RESTORE", "a", "0", payload) == OK and counted() == 1
    assert engine("ACL", "SETUSER", "trusted", "on", "nopass", "~*", "+@all",
                  "skip-sanitize-payload") == OK
    assert engine("AUTH", "trusted", "any") == OK
    assert engine("RESTORE", "b", "0", payload) == OK and counted() == 1
    assert engine("CONFIG", "SET", "sanitize-dump-payload", "yes") == OK
    assert engine("RESTORE", "c", "0", payload) == OK and counted() == 2
    # Validated all the same: a broken payload is refused under every setting.
    broken = _footer(payload[:-10][:-3], payload[-10:-8])
    for mode in ("no", "clients", "yes"):
        engine("CONFIG", "SET", "sanitize-dump-payload", mode)
        assert _error(engine("RESTORE", "d", "0", broken)) == BAD_FORMAT
