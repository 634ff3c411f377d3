"""DUMP and RESTORE against the reference Redis (8.6.3), both ways, and RESTORE's errors byte
for byte.

Payloads travel between the two servers: every payload Redis writes (RDB version 13 in 8.6,
streams as type 26 with their idempotent-producer state) restores into resplite with the same
contents, and every payload resplite writes restores into Redis. resplite writes the oldest
RDB version that knows the value's type (9 for strings and the types of Redis 5, 10 for
listpack hashes and sorted sets and for lists, quicklists of listpack or plain nodes, 11 for
listpack sets and streams); Redis 7.0 refuses the version-11 ones for their version, exactly
as it refuses a Redis 7.2 payload (the test marked for the 7.0 reference).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from compat_helpers import decode
from support import stream_payload
from support.pair import Pair, loose_ids
from support.raw import RawClient
from support.stream_payload import StreamParts, build

from resplite.algorithms import lzf
from resplite.formats import rdb_format

Command = tuple[Any, ...]

# Data sets built by commands on both servers: (setup commands, key, reader commands).
BUILDERS: dict[str, tuple[list[Command], str, list[Command]]] = {
    "string int": ([("SET", "k", "12345")], "k", [("GET", "k")]),
    "string negative": ([("SET", "k", "-9223372036854775808")], "k", [("GET", "k")]),
    "string text": ([("SET", "k", "hello world")], "k", [("GET", "k")]),
    "string compressible": ([("SET", "k", "r" * 300)], "k", [("GET", "k")]),
    "string binary": ([("SET", "k", "\x00\xff\x01bin")], "k", [("GET", "k")]),
    "hash listpack": ([("HSET", "k", "f1", "v1", "f2", "2", "f3", "-3")], "k",
                      [("HGETALL", "k")]),
    "hash hashtable": ([("HSET", "k", *[x for i in range(600) for x in (f"f{i}", f"v{i}")])],
                       "k", [("HLEN", "k"), ("HGET", "k", "f599")]),
    "set intset": ([("SADD", "k", "1", "2", "-5", "9223372036854775807")], "k",
                   [("SMEMBERS", "k")]),
    "set hashtable": ([("SADD", "k", *[f"m{i}" for i in range(600)])], "k",
                      [("SCARD", "k"), ("SISMEMBER", "k", "m599")]),
    "zset listpack": ([("ZADD", "k", "1", "a", "2.5", "b", "-inf", "c", "inf", "d")], "k",
                      [("ZRANGE", "k", "0", "-1", "WITHSCORES")]),
    "zset skiplist": ([("ZADD", "k", *[x for i in range(300) for x in (str(i / 4), f"z{i}")])],
                      "k", [("ZRANGE", "k", "0", "-1", "WITHSCORES")]),
    "list listpack": ([("RPUSH", "k", "a", "b", "1", "-100000", "x" * 40)], "k",
                      [("LRANGE", "k", "0", "-1")]),
    "list quicklist": ([("RPUSH", "k", *[f"item{i}" for i in range(2000)])], "k",
                       [("LLEN", "k"), ("LRANGE", "k", "0", "-1")]),
    "list pushed at the head": ([("LPUSH", "k", *[f"e{i}" for i in range(1500)])], "k",
                                [("LRANGE", "k", "0", "-1")]),
    "list plain node": ([("RPUSH", "k", "head", "p" * 20000, "tail")], "k",
                        [("LRANGE", "k", "0", "-1")]),
}
# Types whose payload value bytes are the same from Redis 7.0 and from resplite.
SAME_BYTES = {"string int", "string negative", "string text", "string compressible",
              "string binary", "hash listpack", "set intset", "zset listpack", "zset skiplist",
              "list listpack", "list quicklist"}
# Not byte-equal by design: Redis 7.0 keeps every list a quicklist and puts an element in a
# plain node only past 1 GB, where Redis 7.2+ (and resplite) keep the LPUSHed list one
# listpack and the 20 KB element a plain node; the bytes of those are checked against
# Redis 8.0.6's payloads in tests/unit/test_rdb_codecs.py.


def _saving_exactly(saved: int) -> bytes:
    """A value whose LZF form is exactly ``saved`` bytes shorter than it: Redis keeps the
    compressed form only when it saves at least 4 bytes (it asks for ``len - 4`` at most)."""
    for seed in range(10_000):
        r = random.Random(seed)
        value = r.randbytes(r.randint(20, 60)) + r.randbytes(3) * r.randint(1, 6)
        packed = lzf.compress_py(value, 2 * len(value))
        if packed is not None and len(value) - len(packed) == saved:
            return value
    raise AssertionError(f"no value saving exactly {saved} bytes")


def _lzf_values() -> list[bytes]:
    """Strings for LZF's cases: both sides of the 20-byte threshold and of the 4-byte
    saving rule, runs, periods near the 8 KB window and the 264-byte match limit, binary,
    incompressible, mixed, and large."""
    r = random.Random(20)
    words = [r.randbytes(r.randint(2, 9)).hex().encode() for _ in range(50)]
    values = [b"x" * 20, b"x" * 21, b"ab" * 10, b"ab" * 11, b"\x00" * 300,
              bytes(range(256)) * 20, b"y" * 100_000, r.randbytes(3000),
              r.randbytes(8190) * 3, r.randbytes(300) * 40, b"-12345678901234567890" * 2,
              b"".join(r.choice(words) for _ in range(30_000)),
              _saving_exactly(3), _saving_exactly(4), _saving_exactly(5)]
    for _ in range(25):
        n = r.choice([21, 22, 40, 100, 1000, 5000])
        unit = r.randbytes(r.randint(1, 40))
        values.append((r.randbytes(r.randint(0, 30)) + unit * (n // len(unit) + 1))[:n])
    return values


def test_string_payloads_compress_as_redis_does(pair: Pair) -> None:
    """DUMP of each string gives Redis's bytes (compressed or not, by Redis's rules), and
    each side's payload restores on the other; every key is distinct and kept, as Redis's
    compressor can reuse stale positions of a string compressed before at the same address."""
    for i, value in enumerate(_lzf_values()):
        key = f"lzf:{i}"
        pair.check("SET", key, value)
        ref: Any = decode(pair.ref.call("DUMP", key))
        ours: Any = decode(pair.ours.call("DUMP", key))
        assert ours[:-10] == ref[:-10], (i, len(value))
        if len(value) > 20:
            compressed = ref[1] == rdb_format.LZF_HEAD
            packed = lzf.compress_py(value, len(value) - 4)
            assert compressed == (packed is not None), (i, len(value))
        assert pair.ours.call("RESTORE", f"from-redis:{i}", "0", ref) == b"+OK\r\n"
        assert pair.ref.call("RESTORE", f"from-resplite:{i}", "0", ours) == b"+OK\r\n"
        assert decode(pair.ours.call("GET", f"from-redis:{i}")) == value
        assert decode(pair.ref.call("GET", f"from-resplite:{i}")) == value


def _sorted_reply(client: RawClient, *args: Any) -> Any:
    value: Any = decode(client.call(*args))
    if args[0] == "SMEMBERS":
        return sorted(value)
    return value


@pytest.mark.parametrize("name", list(BUILDERS))
def test_payloads_cross_both_ways(pair: Pair, name: str) -> None:
    setup, key, readers = BUILDERS[name]
    for cmd in setup:
        pair.check(*cmd)
    ref_dump: Any = decode(pair.ref.call("DUMP", key))
    our_dump: Any = decode(pair.ours.call("DUMP", key))
    assert isinstance(ref_dump, bytes) and isinstance(our_dump, bytes)
    if name in SAME_BYTES:
        assert our_dump[:-10] == ref_dump[:-10]
    # Redis's payload into resplite, resplite's into Redis.
    assert pair.ours.call("RESTORE", "from-redis", "0", ref_dump) == b"+OK\r\n"
    assert pair.ref.call("RESTORE", "from-resplite", "0", our_dump) == b"+OK\r\n"
    for cmd in readers:
        expected = _sorted_reply(pair.ref, *cmd)
        renamed = tuple("from-redis" if a == key else a for a in cmd)
        assert _sorted_reply(pair.ours, *renamed) == expected, cmd
        renamed = tuple("from-resplite" if a == key else a for a in cmd)
        assert _sorted_reply(pair.ref, *renamed) == expected, cmd
    assert pair.ours.call("TYPE", "from-redis") == pair.ref.call("TYPE", key)
    assert pair.ref.call("TYPE", "from-resplite") == pair.ref.call("TYPE", key)


def test_a_redis_stream_payload_restores_with_its_groups(pair: Pair) -> None:
    commands: list[Command] = [("XADD", "s", f"{i}-1", "f", f"v{i}", "n", str(i))
                               for i in range(1, 40)]
    commands += [("XDEL", "s", "5-1", "6-1"), ("XGROUP", "CREATE", "s", "g1", "0"),
                 ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "s", ">"),
                 ("XGROUP", "CREATE", "s", "g2", "10-1", "ENTRIESREAD", "8"),
                 ("XACK", "s", "g1", "2-1")]
    for setup in commands:
        pair.ref.call(*setup)
    payload: Any = decode(pair.ref.call("DUMP", "s"))
    assert pair.ours.call("RESTORE", "s", "0", payload) == b"+OK\r\n"
    readers: list[Command] = [("XRANGE", "s", "-", "+"), ("XLEN", "s"), ("XPENDING", "s", "g1"),
                ("XPENDING", "s", "g1", "-", "+", "10")]
    for cmd in readers:
        ref, ours = pair.both(*cmd)
        if cmd[0] == "XPENDING" and len(cmd) > 3:
            # Idle times differ by the time between the two calls.
            mine: Any = decode(ours)
            theirs: Any = decode(ref)
            assert [e[:2] + e[3:] for e in mine] == [e[:2] + e[3:] for e in theirs]
        else:
            assert ours == ref, cmd


def test_a_redis_8_6_stream_payload_keeps_its_idempotent_producers(pair: Pair) -> None:
    """RDB type 26 (Redis 8.6, RDB version 13): the IDMP settings, every producer's iids
    with their entries, and the lifetime counters restore into resplite."""
    for pid, iid in (("p1", "a"), ("p2", "b"), ("p1", "c"), ("p1", "a")):  # a duplicate
        pair.check("XADD", "s", "IDMP", pid, iid, "*", "f", "v", normalize=loose_ids)
    pair.check("XCFGSET", "s", "IDMP-DURATION", "500", "IDMP-MAXSIZE", "50")
    pair.check("XADD", "s", "IDMP", "p3", "d", "*", "f", "v", normalize=loose_ids)
    payload: Any = decode(pair.ref.call("DUMP", "s"))
    assert payload[0] == rdb_format.TYPE_STREAM_LISTPACKS_4
    assert pair.ours.call("RESTORE", "copy", "0", payload) == b"+OK\r\n"
    assert pair.ref.call("RESTORE", "copy", "0", payload) == b"+OK\r\n"
    pair.check("XINFO", "STREAM", "copy", normalize=loose_ids)
    # Still a duplicate after the restore: the same entry id as the first time.
    ref, ours = pair.both("XADD", "copy", "IDMP", "p3", "d", "*", "f", "v")
    assert ours == ref
    pair.check("XINFO", "STREAM", "copy", normalize=loose_ids)
    pair.check("XADD", "plain", "1-1", "f", "v")
    plain: Any = decode(pair.ref.call("DUMP", "plain"))
    assert pair.check("RESTORE", "plain-copy", "0", plain) == b"+OK\r\n"
    pair.check("XINFO", "STREAM", "plain-copy", normalize=lambda reply: reply)


@pytest.mark.reference("7.0")
def test_newer_payloads_are_refused_by_redis_7_0_for_their_version(pair: Pair) -> None:
    pair.check("SADD", "k", "a", "b")
    pair.check("XADD", "s", "1-1", "f", "v")
    for key in ("k", "s"):
        payload: Any = decode(pair.ours.call("DUMP", key))
        assert pair.ref.call("RESTORE", "x", "0", payload) == \
            b"-ERR DUMP payload version or checksum are wrong\r\n"


def test_restore_errors(pair: Pair) -> None:
    pair.check("SET", "k", "v")
    payload: Any = decode(pair.ref.call("DUMP", "k"))
    assert isinstance(payload, bytes)
    bad_crc = payload[:-1] + bytes((payload[-1] ^ 1,))
    newer = payload[:-10] + (99).to_bytes(2, "little") + payload[-8:]
    from resplite.algorithms.crc64 import crc64

    garbage = b"\x00\xff" + (10).to_bytes(2, "little")
    garbage += crc64(0, garbage).to_bytes(8, "little")
    for args in (
        ("RESTORE", "k", "0", payload),  # BUSYKEY
        ("RESTORE", "n", "0", bad_crc), ("RESTORE", "n", "0", newer),
        ("RESTORE", "n", "0", "short"), ("RESTORE", "n", "0", garbage),
        ("RESTORE", "n", "-1", payload), ("RESTORE", "n", "x", payload),
        ("RESTORE", "n", "0", payload, "FOO"), ("RESTORE", "n", "0", payload, "IDLETIME"),
        ("RESTORE", "n", "0", payload, "IDLETIME", "-1"),
        ("RESTORE", "n", "0", payload, "IDLETIME", "x"),
        ("RESTORE", "n", "0", payload, "FREQ", "256"),
        ("RESTORE", "n", "0", payload, "FREQ", "1", "IDLETIME", "1"),
        ("RESTORE", "n", "0", payload, "IDLETIME", "1", "FREQ", "1"),
        ("RESTORE", "n"), ("DUMP",), ("DUMP", "missing"),
    ):
        pair.check(*args)


def test_restore_options(pair: Pair) -> None:
    pair.check("SET", "k", "v")
    payload: Any = decode(pair.ref.call("DUMP", "k"))
    pair.check("RESTORE", "k", "0", payload, "REPLACE")
    pair.check("RESTORE", "t", "100000", payload)
    ref, ours = pair.both("PTTL", "t")
    assert abs(int(str(decode(ref))) - int(str(decode(ours)))) < 1000
    pair.check("RESTORE", "a", "4102444800000", payload, "ABSTTL")
    pair.check("PEXPIRETIME", "a")
    pair.check("RESTORE", "past", "1", payload, "ABSTTL")
    pair.check("EXISTS", "past")
    pair.check("RESTORE", "k", "1", payload, "ABSTTL", "REPLACE")
    pair.check("EXISTS", "k")
    pair.check("RESTORE", "i", "0", payload, "IDLETIME", "1000")
    ref, ours = pair.both("OBJECT", "IDLETIME", "i")
    assert abs(int(str(decode(ref))) - int(str(decode(ours)))) <= 2
    pair.check("RESTORE", "f", "0", payload, "FREQ", "100")


# -- malformed stream payloads ---------------------------------------------------------------
#
# Each case corrupts one field of Redis 7.0's own payload of a stream with deleted entries,
# several nodes, a group with a PEL and two consumers; the payload is written again as
# STREAM_LISTPACKS_2 in RDB 10 (what Redis 7.0 reads) with a correct CRC-64, so only the
# field is wrong. Redis with sanitize-dump-payload yes refuses each of these; resplite
# refuses them whatever the setting.

def _build_stream(pair: Pair) -> StreamParts:
    with pair.configured(stream_node_max_entries="4"):
        for i in range(1, 12):
            pair.check("XADD", "src", f"{i}-1", "f", f"v{i}", "n", str(i))
        pair.check("XADD", "src", "12-1", "other", "x")
    pair.check("XDEL", "src", "5-1", "6-1")
    pair.check("XGROUP", "CREATE", "src", "g1", "0")
    pair.ref.call("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "src", ">")
    pair.ref.call("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "src", ">")
    payload: Any = decode(pair.ref.call("DUMP", "src"))
    # Redis 7.0 writes type 19, 8.6 type 26 (with the IDMP state); rebuilt as 19 below.
    assert payload[0] in (rdb_format.TYPE_STREAM_LISTPACKS_2, rdb_format.TYPE_STREAM_LISTPACKS_4)
    parts = stream_payload.parse(payload)
    assert [len(items) for _, items in parts.nodes] == [30, 30, 31]  # 4 entries each
    # Written again (uncompressed), the payload restores on both, as the original does.
    assert pair.check("RESTORE", "rebuilt", "0", build(parts)) == b"+OK\r\n"
    pair.check("XRANGE", "rebuilt", "-", "+")
    pair.check("XINFO", "STREAM", "rebuilt")
    return parts


def _set(index: int, value: Any, node: int = 0) -> Callable[[StreamParts], None]:
    def change(parts: StreamParts) -> None:
        parts.nodes[node][1][index] = value
    return change


def _drop_consumer_pel_entry(parts: StreamParts) -> None:
    parts.groups[0].consumers[0][3].pop()


def _drop_group_pel_entry(parts: StreamParts) -> None:
    parts.groups[0].pel.pop(0)


def _duplicate_consumer(parts: StreamParts) -> None:
    parts.groups[0].consumers[1][0] = parts.groups[0].consumers[0][0]


def _short_node_key(parts: StreamParts) -> None:
    parts.nodes[1][0] = parts.nodes[1][0][:15]


def _extra_element(parts: StreamParts) -> None:
    parts.nodes[2][1].append(1)


# Node 0's listpack: [count 4, deleted 0, 2 master fields, f, n, 0, then per entry: flags,
# ms delta, seq delta, two values, lp-count 5]; node 1 has the two tombstones (5-1, 6-1).
REDIS_REFUSES: dict[str, Callable[[StreamParts], None]] = {
    "live count above the entries": _set(0, 5),
    "deleted count below the tombstones": _set(1, 0, node=1),
    "master field count": _set(2, 3),
    "master entry terminator": _set(5, 1),
    "lp-count of an entry": _set(11, 6),
    "flags of an entry (not same-fields)": _set(6, 0),
    "an element after the last entry": _extra_element,
    "node key not 16 bytes": _short_node_key,
    "consumer PEL entry not in the group PEL": _drop_group_pel_entry,
    "group PEL entry without a consumer": _drop_consumer_pel_entry,
    "duplicate consumer": _duplicate_consumer,
}


@pytest.mark.parametrize("case", list(REDIS_REFUSES))
def test_malformed_stream_payloads_are_refused_as_redis_refuses_them(pair: Pair,
                                                                     case: str) -> None:
    parts = _build_stream(pair)
    broken = parts.copy()
    REDIS_REFUSES[case](broken)
    payload = build(broken)
    with pair.configured(sanitize_dump_payload="yes"):
        assert pair.check("RESTORE", "s", "0", payload) == b"-ERR Bad data format\r\n"
    # resplite checks deeply under the default (Redis, under "no", checks less).
    assert pair.ours.call("RESTORE", "s", "0", payload) == b"-ERR Bad data format\r\n"
    pair.check("EXISTS", "s")


def _stat(sections: dict[str, list[tuple[str, str]]]) -> int:
    return int(dict(sections["Stats"])["dump_payload_sanitizations"])


def test_sanitize_dump_payload_counts_as_redis_does(pair: Pair) -> None:
    parts = _build_stream(pair)
    stream = build(parts)
    pair.check("HSET", "h", "a", "1", "b", "2")
    pair.check("SADD", "i", "1", "2", "3")
    pair.check("RPUSH", "l", "a", "b")
    payloads = [stream] + [decode(pair.ref.call("DUMP", key)) for key in ("h", "i", "l")]
    for mode in ("no", "yes", "clients", "YES"):
        with pair.configured(sanitize_dump_payload=mode):
            pair.check("CONFIG", "GET", "sanitize-dump-payload")
            pair.check("CONFIG", "RESETSTAT")
            for payload in payloads:
                pair.check("RESTORE", "copy", "0", payload, "REPLACE")
            ref, ours = pair.info("stats")
            assert _stat(ours) == _stat(ref), mode
            assert _stat(ours) == (0 if mode == "no" else 3 + 3), mode
    pair.check("CONFIG", "SET", "sanitize-dump-payload", "sometimes")


def test_an_oldest_form_stream_with_a_length_and_no_nodes_is_refused(pair: Pair) -> None:
    # STREAM_LISTPACKS in RDB 9: Redis's "Stream length inconsistent with rax entries".
    parts = StreamParts(nodes=[], length=1, last=(5, 0))
    payload = build(parts, rdb_format.TYPE_STREAM_LISTPACKS)
    assert pair.check("RESTORE", "s", "0", payload) == b"-ERR Bad data format\r\n"
    parts.length = 0
    assert pair.check("RESTORE", "s", "0", build(parts, rdb_format.TYPE_STREAM_LISTPACKS)) == \
        b"+OK\r\n"
    pair.check("XINFO", "STREAM", "s")


def test_a_payload_with_a_zero_checksum_has_none(pair: Pair) -> None:
    """Redis 8 takes a checksum of 0 as no checksum: the payload is read, and a malformed
    one is refused as such (Bad data format), not for its checksum."""
    pair.check("SET", "k", "v")
    payload: Any = decode(pair.ref.call("DUMP", "k"))
    pair.check("RESTORE", "z", "0", payload[:-8] + bytes(8))
    pair.check("GET", "z")
    huge = b"\x00\x81" + b"\xff" * 7 + b"\xf7" + b"\x0c\x00" + bytes(8)  # a 2^64-9 byte string
    pair.check("RESTORE", "t", "0", huge)
    pair.check("EXISTS", "t")


@pytest.mark.reference("7.0")
def test_redis_7_0_refuses_a_zero_checksum(pair: Pair) -> None:
    pair.check("SET", "k", "v")
    payload: Any = decode(pair.ref.call("DUMP", "k"))
    pair.check("RESTORE", "z", "0", payload[:-8] + bytes(8))


def test_restore_past_its_time_counts_an_expired_key(pair: Pair) -> None:
    pair.check("SET", "k", "v")
    payload: Any = decode(pair.ref.call("DUMP", "k"))

    def expired(conn: RawClient) -> int:
        text = conn.call("INFO", "stats").decode()
        return int(text.split("\r\nexpired_keys:")[1].split("\r\n")[0])

    before = (expired(pair.ref), expired(pair.ours))
    pair.check("RESTORE", "k", "1", payload, "ABSTTL", "REPLACE")
    pair.check("RESTORE", "gone", "1", payload, "ABSTTL")
    pair.check("EXISTS", "k", "gone")
    assert (expired(pair.ref) - before[0], expired(pair.ours) - before[1]) == (2, 2)
