"""Keyspace commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Scenarios are command sequences on freshly flushed servers with byte-equal replies. Where
Redis's answer depends on its hash table (the order of KEYS, the keys of one SCAN call, the
cursor values) the tests compare what must agree: the set of keys, and that a full SCAN
iteration returns every key. Expiry uses times far in the future or in the past so replies
are exact; the few time-dependent values (PTTL) are compared within a tolerance.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest
from compat_helpers import Command, check_close, decode, ref_version, run, scan_all, values
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerPairFactory

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"
FAR_FUTURE_S = "4102444800"  # 2100-01-01
FAR_FUTURE_MS = "4102444800123"

Scenario = list[Command]


def stream(key: str = "s") -> Command:
    return ("XADD", key, "1-1", "f", "v")


SCENARIOS: dict[str, Scenario] = {
    # DEL / UNLINK / EXISTS / TYPE / TOUCH
    "DEL / UNLINK count what they removed": [
        ("MSET", "a", "1", "b", "2", "c", "3"), stream(), ("DEL", "a", "a", "nokey", "s"),
        ("EXISTS", "a", "s"), ("UNLINK", "b", "c", "b"), ("DEL", "b"), ("UNLINK", "nokey"),
    ],
    "EXISTS counts repetitions": [
        ("SET", "a", "1"), stream(), ("EXISTS", "a", "a", "s", "nokey", "a"), ("EXISTS", "nokey"),
    ],
    "TYPE": [("SET", "a", "1"), stream(), ("TYPE", "a"), ("TYPE", "s"), ("TYPE", "nokey")],
    "TOUCH": [("SET", "a", "1"), stream(), ("TOUCH", "a", "s", "nokey", "a"), ("TOUCH", "x")],
    # RANDOMKEY
    "RANDOMKEY: empty database, one key": [
        ("RANDOMKEY",), ("SET", "only", "1"), ("RANDOMKEY",), ("DEL", "only"), ("RANDOMKEY",),
    ],
    # RENAME / RENAMENX
    "RENAME: moves value and expiry, overwrites the target": [
        ("SET", "a", "1", "PXAT", FAR_FUTURE_MS), ("SET", "b", "2"), ("RENAME", "a", "b"),
        ("GET", "b"), ("EXISTS", "a"), ("PEXPIRETIME", "b"), ("SET", "c", "3"),
        ("RENAME", "c", "b"),
        ("PEXPIRETIME", "b"), ("GET", "b"),
    ],
    "RENAME: missing source, same name": [
        ("RENAME", "nokey", "x"), ("RENAME", "nokey", "nokey"), ("SET", "a", "1"),
        ("RENAME", "a", "a"), ("GET", "a"), ("RENAMENX", "a", "a"), ("RENAMENX", "nokey", "a"),
        ("RENAMENX", "nokey", "nokey"),
    ],
    "RENAMENX": [
        ("MSET", "a", "1", "b", "2"), ("RENAMENX", "a", "b"), ("MGET", "a", "b"),
        ("RENAMENX", "a", "c"), ("MGET", "a", "c"),
    ],
    "RENAME a stream over a string and back": [
        stream(), ("SET", "t", "x"), ("RENAME", "s", "t"), ("TYPE", "t"), ("XLEN", "t"),
        ("RENAME", "t", "s"), ("TYPE", "s"), ("EXISTS", "t"),
    ],
    # COPY
    "COPY: strings, existing targets, REPLACE, expiry": [
        ("SET", "a", "hello", "EXAT", FAR_FUTURE_S), ("COPY", "a", "b"), ("GET", "b"),
        ("EXPIRETIME", "b"), ("SET", "c", "x"), ("COPY", "a", "c"), ("GET", "c"),
        ("COPY", "a", "c", "REPLACE"), ("GET", "c"), ("EXPIRETIME", "c"), ("COPY", "nokey", "d"),
        ("COPY", "nokey", "c", "REPLACE"), ("GET", "c"), ("COPY", "a", "c", "replace", "REPLACE"),
    ],
    "COPY: to another database": [
        ("SET", "a", "1"), ("COPY", "a", "a", "DB", "1"), ("COPY", "a", "a", "DB", "1"),
        ("COPY", "a", "a", "DB", "1", "REPLACE"), ("SELECT", "1"), ("GET", "a"),
        ("SET", "a", "other"), ("SELECT", "0"), ("COPY", "a", "b", "DB", "0"), ("GET", "b"),
        ("COPY", "a", "a", "REPLACE", "DB", "1"), ("SELECT", "1"), ("GET", "a"), ("SELECT", "0"),
    ],
    "COPY: errors": [
        ("SET", "a", "1"), ("COPY", "a", "a"), ("COPY", "a", "a", "DB", "0"),
        ("COPY", "a", "b", "DB", "16"), ("COPY", "a", "b", "DB", "-1"),
        ("COPY", "a", "b", "DB", "x"), ("COPY", "a", "b", "DB", "4294967296"),
        ("COPY", "a", "b", "DB"), ("COPY", "a", "b", "BOGUS"),
        ("COPY", "nokey", "nokey"), ("COPY", "a", "b", "DB", "99", "BOGUS"),
        ("COPY", "a", "b", "BOGUS", "DB", "99"), ("EXISTS", "b"),
    ],
    "COPY: a stream is an independent copy": [
        stream(), ("XADD", "s", "2-1", "g", "w"), ("COPY", "s", "t"), ("XLEN", "t"),
        ("XADD", "t", "3-1", "h", "x"), ("XLEN", "s"), ("XLEN", "t"), ("XRANGE", "t", "-", "+"),
        ("TYPE", "t"), ("OBJECT", "ENCODING", "t"), ("SET", "str", "x"), ("COPY", "str", "s"),
        ("COPY", "str", "s", "REPLACE"), ("TYPE", "s"),
    ],
    # MOVE
    "MOVE": [
        ("SET", "a", "1", "PXAT", FAR_FUTURE_MS), ("MOVE", "a", "1"), ("EXISTS", "a"),
        ("SELECT", "1"), ("GET", "a"), ("PEXPIRETIME", "a"), ("SET", "b", "in1"), ("SELECT", "0"),
        ("SET", "b", "in0"), ("MOVE", "b", "1"), ("GET", "b"), ("MOVE", "nokey", "1"),
        stream(), ("MOVE", "s", "2"), ("SELECT", "2"), ("TYPE", "s"), ("SELECT", "0"),
    ],
    "MOVE: errors": [
        ("SET", "a", "1"), ("MOVE", "a", "0"), ("MOVE", "a", "16"), ("MOVE", "a", "-1"),
        ("MOVE", "a", "x"), ("MOVE", "a", "2147483648"), ("MOVE", "nokey", "0"),
        ("MOVE", "nokey", "16"), ("EXISTS", "a"),
    ],
    # EXPIRE family
    "EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT set exact times": [
        ("SET", "k", "v"), ("EXPIREAT", "k", FAR_FUTURE_S), ("EXPIRETIME", "k"),
        ("PEXPIRETIME", "k"), ("PEXPIREAT", "k", FAR_FUTURE_MS), ("PEXPIRETIME", "k"),
        ("EXPIRETIME", "k"), ("EXPIRE", "k", "100"), ("TTL", "k"), ("PEXPIRE", "k", "100000"),
        ("TTL", "k"), ("EXPIRE", "nokey", "100"), ("PEXPIREAT", "nokey", FAR_FUTURE_MS),
    ],
    "EXPIRE: a time in the past deletes the key": [
        ("MSET", "a", "1", "b", "2", "c", "3", "d", "4"), ("EXPIRE", "a", "0"), ("EXISTS", "a"),
        ("PEXPIRE", "b", "-100"), ("EXISTS", "b"), ("EXPIREAT", "c", "1"), ("GET", "c"),
        ("PEXPIREAT", "d", "0"), ("TTL", "d"), stream(), ("EXPIRE", "s", "-1"), ("TYPE", "s"),
    ],
    "EXPIRE NX / XX / GT / LT": [
        ("SET", "k", "v"), ("EXPIREAT", "k", FAR_FUTURE_S, "XX"), ("TTL", "k"),
        ("EXPIREAT", "k", FAR_FUTURE_S, "GT"), ("EXPIREAT", "k", FAR_FUTURE_S, "LT"),
        ("EXPIRETIME", "k"), ("EXPIREAT", "k", FAR_FUTURE_S, "NX"), ("EXPIRETIME", "k"),
        ("EXPIREAT", "k", "4102444900", "NX"), ("EXPIREAT", "k", "4102444900", "XX"),
        ("EXPIRETIME", "k"), ("EXPIREAT", "k", "4102444800", "GT"),
        ("EXPIREAT", "k", "4102444900", "GT"), ("EXPIREAT", "k", "4102445000", "GT"),
        ("EXPIRETIME", "k"), ("EXPIREAT", "k", "4102445000", "LT"),
        ("EXPIREAT", "k", "4102446000", "LT"), ("EXPIREAT", "k", "4102444000", "lt"),
        ("EXPIRETIME", "k"), ("EXPIREAT", "k", "4102444000", "XX", "GT"),
        ("EXPIREAT", "k", "4102444100", "XX", "GT"), ("EXPIRETIME", "k"),
        ("EXPIREAT", "k", "4102444000", "XX", "LT"), ("EXPIRETIME", "k"),
        ("PERSIST", "k"), ("EXPIREAT", "k", "4102444000", "LT"), ("EXPIRETIME", "k"),
        ("EXPIREAT", "nokey", "4102444000", "NX"),
    ],
    "EXPIRE GT / LT / XX with a past time on a key without expiry": [
        ("MSET", "a", "1", "b", "2", "c", "3"), ("EXPIRE", "a", "-1", "GT"), ("EXISTS", "a"),
        ("EXPIRE", "b", "-1", "LT"), ("EXISTS", "b"), ("EXPIRE", "c", "-1", "XX"), ("EXISTS", "c"),
        ("EXPIRE", "c", "-1", "NX"), ("EXISTS", "c"),
    ],
    "EXPIRE: option errors": [
        ("SET", "k", "v"), ("EXPIRE", "k", "10", "NX", "XX"), ("EXPIRE", "k", "10", "XX", "NX"),
        ("EXPIRE", "k", "10", "NX", "GT"), ("EXPIRE", "k", "10", "LT", "NX"),
        ("EXPIRE", "k", "10", "GT", "LT"), ("EXPIRE", "k", "10", "BOGUS"),
        ("PEXPIRE", "k", "10", "gt", "bad\x00tail"), ("EXPIRE", "k", "10", "NX", "BOGUS"),
        ("EXPIRE", "k", "abc", "NX"), ("EXPIRE", "k", "abc", "GT", "LT"),
        ("EXPIRE", "nokey", "x"), ("EXPIRE", "k", "1.5"), ("EXPIRE", "k", ""),
        ("EXPIREAT", "k", "1", "NX", "NX"), ("EXISTS", "k"),
    ],
    "EXPIRE: overflow checks": [
        ("SET", "k", "v"), ("EXPIRE", "k", I64_MAX), ("EXPIRE", "k", "9223372036854776"),
        ("EXPIRE", "k", "9223372036854775"), ("EXPIRE", "k", I64_MIN),
        ("EXPIRE", "k", "-9223372036854776"), ("PEXPIRE", "k", I64_MAX),
        ("EXPIREAT", "k", "9223372036854776"), ("EXPIREAT", "k", "-9223372036854776"),
        ("EXPIRE", "nokey", I64_MAX), ("PEXPIRE", "nokey", "9223372036854775808"),
        ("EXISTS", "k"), ("PEXPIREAT", "k", I64_MAX), ("PEXPIRETIME", "k"),
        ("EXPIRETIME", "k"), ("EXPIREAT", "k", "9223372036854775"), ("PEXPIRETIME", "k"),
        ("EXPIREAT", "k", "-9223372036854775"), ("EXISTS", "k"),
    ],
    # TTL family and PERSIST
    "TTL / PTTL / EXPIRETIME / PEXPIRETIME: missing, persistent, far future": [
        ("TTL", "nokey"), ("PTTL", "nokey"), ("EXPIRETIME", "nokey"), ("PEXPIRETIME", "nokey"),
        ("SET", "k", "v"), ("TTL", "k"), ("PTTL", "k"), ("EXPIRETIME", "k"),
        ("PEXPIRETIME", "k"), ("PEXPIREAT", "k", "4102444800499"), ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", "4102444800500"), ("EXPIRETIME", "k"), stream(),
        ("EXPIREAT", "s", FAR_FUTURE_S), ("PEXPIRETIME", "s"),
    ],
    "PERSIST": [
        ("SET", "k", "v", "EX", "100"), ("PERSIST", "k"), ("TTL", "k"), ("PERSIST", "k"),
        ("PERSIST", "nokey"),
    ],
    # KEYS
    "KEYS: no match, empty database": [("KEYS", "*"), ("SET", "a", "1"), ("KEYS", "b*")],
    # OBJECT
    # (the idle time of a fresh key is checked below: it depends on when each clock ticked)
    "OBJECT: missing keys, streams, FREQ under the default policy": [
        ("OBJECT", "ENCODING", "nokey"), ("OBJECT", "REFCOUNT", "nokey"),
        ("OBJECT", "IDLETIME", "nokey"), ("OBJECT", "FREQ", "nokey"), stream(),
        ("OBJECT", "ENCODING", "s"), ("OBJECT", "REFCOUNT", "s"),
        ("SET", "k", "v"), ("OBJECT", "FREQ", "k"),
        ("OBJECT", "freq", "s"), ("object", "encoding", "k"),
    ],
    "OBJECT: unknown subcommand, arity": [
        ("OBJECT", "BOGUS"), ("OBJECT", "BOGUS", "k"),
        ("OBJECT",), ("OBJECT", "ENCODING"), ("OBJECT", "ENCODING", "a", "b"),
        ("OBJECT", "HELP", "x"),
    ],
    "wrong arity": [
        ("DEL",), ("EXISTS",), ("TYPE",), ("RENAME", "a"), ("COPY", "a"), ("MOVE", "a"),
        ("EXPIRE", "a"), ("TTL",), ("TTL", "a", "b"), ("PERSIST",), ("SCAN",), ("KEYS",),
        ("RANDOMKEY", "x"), ("TOUCH",),
    ],
    # SCAN errors (cursor parsing as strtoul, options)
    "SCAN: cursor parsing": [
        ("SCAN", "abc"), ("SCAN", " 0"), ("SCAN", "0 "), ("SCAN", "1.5"), ("SCAN", "+"),
        ("SCAN", "-"), ("SCAN", "18446744073709551616"), ("SCAN", "-18446744073709551616"),
        ("SCAN", "99999999999999999999999"), ("SCAN", "0x10"), ("SCAN", "1" * 5000),
        ("SCAN", ""), ("SCAN", "+0"), ("SCAN", "-0"), ("SCAN", "000"),
        ("SCAN", "0\x00junk"),
    ],
    "SCAN: option errors": [
        ("SCAN", "0", "COUNT", "0"), ("SCAN", "0", "COUNT", "-1"), ("SCAN", "0", "COUNT", "x"),
        ("SCAN", "0", "COUNT"), ("SCAN", "0", "MATCH"), ("SCAN", "0", "TYPE"),
        ("SCAN", "0", "BOGUS", "x"), ("SCAN", "0", "COUNT", "10", "BOGUS"),
        ("SCAN", "abc", "COUNT", "0"), ("SCAN", "0", "COUNT", "0", "BOGUS"),
        ("SCAN", "0", "COUNT", "9223372036854775808"),
    ],
    "SCAN: small databases are returned whole": [
        ("MSET", "a", "1", "b", "2"), stream(), ("SCAN", "0", "MATCH", "nomatch*"),
        ("SCAN", "0", "TYPE", "list"), ("SCAN", "0", "TYPE", "STREAM"),
        ("SCAN", "0", "TYPE", "stream", "MATCH", "s", "COUNT", "1000"),
        ("SCAN", "0", "MATCH", "s", "TYPE", "string"),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_keyspace_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *SCENARIOS[scenario])


# -- time-dependent replies -------------------------------------------------------------------


def test_object_help_has_the_shape_of_redis(pair: Pair) -> None:
    for spelling in ("HELP", "help"):
        ref, ours = pair.both("OBJECT", spelling)
        assert_same_shape(ref, ours, ours_has=implemented("object"))


def test_idle_time_of_fresh_keys(pair: Pair) -> None:
    # Each server's LRU clock ticks once a second on its own, so a read just after a write may
    # fall on either side of a tick: 0 or 1, never more.
    run(pair, stream(), ("SET", "k", "v"))
    for key in ("s", "k"):
        check_close(pair, "OBJECT", "IDLETIME", key, tolerance=1)


def test_relative_expiry_reports_close_ttls(pair: Pair) -> None:
    run(pair, ("SET", "k", "v"), ("PEXPIRE", "k", "100000"), ("TTL", "k"))
    check_close(pair, "PTTL", "k")
    check_close(pair, "PEXPIRETIME", "k", tolerance=1000)
    check_close(pair, "EXPIRETIME", "k", tolerance=2)
    run(pair, ("PEXPIRE", "k", "200000", "GT"), ("PEXPIRE", "k", "100000", "GT"), ("TTL", "k"),
        ("EXPIRE", "k", "50", "LT"), ("TTL", "k"), ("RENAME", "k", "j"), ("TTL", "j"))
    check_close(pair, "PTTL", "j")


def test_lazy_expiry_hides_keys_from_every_command(pair: Pair) -> None:
    run(pair, ("SET", "persistent", "1"), ("SET", "gone", "x", "PX", "1"),
        ("SET", "gone2", "x", "PX", "1"), ("SET", "gone3", "x", "PX", "1"),
        ("SET", "gone4", "x", "PX", "1"), ("SET", "gone5", "x", "PX", "1"))
    time.sleep(0.01)  # let the 1 ms expiries pass on both servers
    run(pair, ("EXISTS", "gone"), ("TYPE", "gone2"), ("TTL", "gone3"), ("KEYS", "*"),
        ("SCAN", "0", "COUNT", "100"), ("RENAME", "gone4", "x"), ("COPY", "gone5", "y"),
        ("OBJECT", "ENCODING", "gone5"), ("RANDOMKEY",), ("DBSIZE",))


def test_active_expiry_frees_keys_nobody_reads(pair: Pair) -> None:
    for i in range(50):
        pair.check("SET", f"k{i}", "v", "PX", "1")
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        expected, got = pair.both("DBSIZE")
        if expected == got == b":0\r\n":
            break
        time.sleep(0.05)
    run(pair, ("DBSIZE",))


# -- KEYS and SCAN ------------------------------------------------------------------------------

KEY_SET = [
    b"a", b"b", b"ab", b"abc", b"a-c", b"a]c", b"a[c", b"a*c", b"a?c", b"a\\c", b"A", b"AbC",
    b"user:1", b"user:2", b"user:10", b"item:1", b"\xff", b"a\xffc", b"\x80", b"\x00", b"",
    b"hello", b"hallo", b"hxllo", b"heeeello", b"^",
]
PATTERNS = [
    b"*", b"**", b"", b"a*", b"*c", b"a?c", b"a[bc]", b"a[^b]c", b"[a-b]*", b"[b-a]",
    b"a\\*c", b"a\\?c", b"a[\\]]c", b"user:*", b"user:?", b"*:1", b"h[ae]llo", b"h*llo",
    b"h[^e]llo", b"[a-\xff]", b"[\xff-a]*", b"[\x00-\x80]", b"[^a-\xff]", b"a[", b"a[^",
    b"[]a]*", b"[", b"\\", b"a\\", b"*\\", b"[\\", b"[a-]*", b"[-a]", b"a[!b]c", b"A*",
    b"\xff", b"?", b"*?*", b"[^]", b"[]", b"^", b"\\^",
]


def _load_keys(pair: Pair) -> None:
    for key in KEY_SET:
        pair.check("SET", key, "1")
    pair.check("XADD", "stream:1", "1-1", "f", "v")


@pytest.mark.parametrize("pattern", PATTERNS, ids=[repr(p)[2:-1] for p in PATTERNS])
def test_keys_patterns(pair: Pair, pattern: bytes) -> None:
    _load_keys(pair)
    expected, got = values(pair, "KEYS", pattern)
    assert isinstance(expected, list) and isinstance(got, list)
    assert sorted(got) == sorted(expected), pattern


@pytest.mark.parametrize("pattern", [b"*", b"**", b"user:*", b"a?c", b"[^a-\xff]", b"*1"])
def test_scan_match_covers_the_same_keys(pair: Pair, pattern: bytes) -> None:
    _load_keys(pair)
    for count in ("1", "3", "1000"):
        expected = scan_all(pair.ref, "MATCH", pattern, "COUNT", count)
        got = scan_all(pair.ours, "MATCH", pattern, "COUNT", count)
        assert sorted(set(got)) == sorted(set(expected))
        assert len(got) == len(set(got))  # no writes happened: no repetition


def test_scan_type_filter(pair: Pair) -> None:
    _load_keys(pair)
    for kind in ("string", "STREAM", "list", "none", "bogus"):
        expected = scan_all(pair.ref, "TYPE", kind, "COUNT", "5")
        got = scan_all(pair.ours, "TYPE", kind, "COUNT", "5")
        assert sorted(got) == sorted(expected), kind


@pytest.mark.redis_version("7.4")
def test_scan_refuses_novalues_by_name(pair: Pair) -> None:
    """Redis 7.4 knows NOVALUES and says only HSCAN takes it; 7.0 calls it a syntax error."""
    run(pair, ("SET", "k", "v"))
    novalues_only = b"-ERR NOVALUES option can only be used in HSCAN\r\n"
    for options in (("NOVALUES",), ("novalues",), ("COUNT", "5", "NOVALUES"),
                    ("NOVALUES", "COUNT", "0"), ("MATCH", "*", "NoValues", "x")):
        assert pair.ours.call("SCAN", "0", *options) == novalues_only, options
        if ref_version(pair) >= (7, 4):
            pair.check("SCAN", "0", *options)
        else:
            assert pair.ref.call("SCAN", "0", *options) == b"-ERR syntax error\r\n", options
    # Options are read left to right: an error before NOVALUES is the one reported.
    pair.check("SCAN", "0", "COUNT", "0", "NOVALUES")
    pair.check("SCAN", "0", "BOGUS", "NOVALUES")
    pair.check("SCAN", "x", "NOVALUES")


def test_scan_large_database_in_steps(pair: Pair) -> None:
    pipeline = [("SET", f"key:{i}", "v") for i in range(2000)]
    for client in (pair.ref, pair.ours):
        client.pipeline(pipeline)
    for options in ((), ("COUNT", "100"), ("MATCH", "key:1*", "COUNT", "50")):
        expected = scan_all(pair.ref, *options)
        got = scan_all(pair.ours, *options)
        assert sorted(set(got)) == sorted(set(expected)), options
    # COUNT is a hint about work, so the size of one step only has to be in the same range.
    one_ref, one_ours = values(pair, "SCAN", "0", "COUNT", "100")
    assert isinstance(one_ours, list) and 100 <= len(one_ours[1]) <= 110
    assert isinstance(one_ref, list) and len(one_ref[1]) >= 50


def _cursors(client: RawClient, *command: str) -> tuple[list[int], int]:
    """Every cursor one full iteration of ``command`` (SCAN, or HSCAN/SSCAN/ZSCAN and a
    key) answers, and how many elements it returned."""
    cursor, cursors, returned = b"0", [], 0
    while True:
        reply = decode(client.call(*command, cursor, "COUNT", "10"))
        assert isinstance(reply, list)
        cursor = reply[0]
        cursors.append(int(cursor))
        returned += len(reply[1])
        if cursor == b"0":
            return cursors, returned


@pytest.mark.parametrize("size", [5, 300, 3000])
def test_scan_cursors_stay_below_the_table_size(pair: Pair, size: int) -> None:
    """Redis's cursor is a bucket of its table in reverse-binary order: below the table's
    size (a power of two), so small for small collections and never 2**63 or more, which
    clients that keep cursors as signed 64-bit integers (phpredis) cannot send back."""
    for client in (pair.ref, pair.ours):
        client.pipeline([("SET", f"key:{i}", "v") for i in range(size)])
        client.pipeline([("HSET", "h", f"f{i}", "v") for i in range(size)])
        client.pipeline([("SADD", "s", f"m{i}") for i in range(size)])
        client.pipeline([("ZADD", "z", i, f"m{i}") for i in range(size)])
    # Redis's dict: a power of two at least as large as the element count (4 at least).
    table = max(4, 1 << (size - 1).bit_length())
    for command in (("SCAN",), ("HSCAN", "h"), ("SSCAN", "s"), ("ZSCAN", "z")):
        keys = 3 if command == ("SCAN",) else 0  # SCAN also meets h, s and z
        for client in (pair.ref, pair.ours):
            cursors, returned = _cursors(client, *command)
            small = size <= 64 and command != ("SCAN",)  # a listpack or intset: one call
            assert max(cursors) < (1 if small else table * 4), (client, command, cursors)
            assert returned >= size + keys, (client, command)


def test_scan_survives_writes_between_calls(pair: Pair) -> None:
    rng = random.Random(5)
    stable = [f"stable:{i}" for i in range(300)]
    for client in (pair.ref, pair.ours):
        client.pipeline([("SET", k, "v") for k in stable])
    for client in (pair.ref, pair.ours):
        seen: set[bytes] = set()
        cursor = b"0"
        step = 0
        while True:
            reply = decode(client.call("SCAN", cursor, "COUNT", "7"))
            assert isinstance(reply, list)
            cursor = reply[0]
            seen.update(reply[1])
            step += 1
            churn: list[tuple[str, ...]] = [
                ("SET", f"tmp:{step}:{j}", "v") for j in range(rng.randint(0, 40))
            ]
            churn += [("DEL", f"tmp:{step - 1}:{j}") for j in range(20)]
            client.pipeline(churn)
            if cursor == b"0":
                break
        assert {k.encode() for k in stable} <= seen


def test_randomkey_returns_live_keys(pair: Pair) -> None:
    keys = {f"k{i}".encode() for i in range(20)}
    for key in keys:
        pair.check("SET", key, "v")
    drawn = set()
    for _ in range(200):
        reply = decode(pair.ours.call("RANDOMKEY"))
        assert reply in keys
        drawn.add(reply)
    assert len(drawn) > 10  # uniform enough to reach most keys


def test_randomkey_skips_expired_keys(pair: Pair) -> None:
    for i in range(200):
        pair.check("SET", f"old{i}", "v", "PX", "1")
    pair.check("SET", "live", "v")
    time.sleep(0.01)
    run(pair, ("RANDOMKEY",), ("RANDOMKEY",))


# -- OBJECT under an LFU policy, and FLUSH / SWAPDB / WATCH interplay -----------------------


def test_object_freq_and_idletime_under_lfu(server_pair_factory: ServerPairFactory) -> None:
    from support.pair import open_pair

    ref, ours = server_pair_factory("--maxmemory-policy", "allkeys-lfu")
    for resp in (2, 3):
        pair = open_pair(ref, ours, resp)
        try:
            run(pair, ("FLUSHALL",), ("SET", "k", "v"), ("OBJECT", "FREQ", "k"), ("GET", "k"),
                ("OBJECT", "FREQ", "k"), ("OBJECT", "IDLETIME", "k"),
                ("XADD", "s", "1-1", "f", "v"),
                ("OBJECT", "FREQ", "s"), ("OBJECT", "FREQ", "nokey"),
                ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"), ("OBJECT", "FREQ", "k"),
                ("OBJECT", "IDLETIME", "nokey"),
                ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"))
        finally:
            pair.close()


def test_refcount_without_shared_integers(server_pair_factory: ServerPairFactory) -> None:
    from support.pair import open_pair

    ref, ours = server_pair_factory("--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru")
    pair = open_pair(ref, ours, 2)
    try:
        run(pair, ("SET", "a", "5"), ("OBJECT", "REFCOUNT", "a"), ("OBJECT", "ENCODING", "a"))
    finally:
        pair.close()


def test_scan_after_flush_and_swapdb(pair: Pair) -> None:
    for client in (pair.ref, pair.ours):
        client.pipeline([("SET", f"a{i}", "v") for i in range(30)])
        client.call("SCAN", "0", "COUNT", "5")
        client.call("FLUSHDB")
        client.pipeline([("SET", f"b{i}", "v") for i in range(30)])
        client.call("SELECT", "1")
        client.pipeline([("SET", f"c{i}", "v") for i in range(10)])
        client.call("SELECT", "0")
        client.call("SWAPDB", "0", "1")
    assert sorted(scan_all(pair.ours, "COUNT", "3")) == sorted(scan_all(pair.ref, "COUNT", "3"))
    run(pair, ("SELECT", "1"))
    assert sorted(scan_all(pair.ours, "COUNT", "3")) == sorted(scan_all(pair.ref, "COUNT", "3"))
    run(pair, ("SELECT", "0"))


def test_watch_sees_keyspace_changes(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        for change in (
            ("EXPIRE", "w", "100"), ("PERSIST", "w"), ("RENAME", "w", "w2"), ("MOVE", "w", "1"),
            ("DEL", "w"), ("COPY", "x", "w", "REPLACE"), ("APPEND", "w", "x"),
            ("SETRANGE", "w", "0", "y"), ("INCRBYFLOAT", "w", "1"), ("GETDEL", "w"),
            ("GETEX", "w", "EX", "100"), ("EXPIRE", "w", "-1"), ("SET", "w", "1", "KEEPTTL"),
        ):
            run(pair, ("SET", "w", "1", "EX", "1000"), ("SET", "x", "2"))
            run(pair, ("WATCH", "w"))
            other.check(*change)
            run(pair, ("MULTI",), ("GET", "w"), ("EXEC",))
    finally:
        other.close()


# -- the expiry boundary --------------------------------------------------------------------
#
# Redis keeps a key while now <= its expiry time (keyIsExpired: now > when) and answers PTTL 0
# in that last millisecond. resplite's clock is frozen on the exact millisecond; Redis's is
# caught there by polling with a bounded number of short-lived keys.

_BOUNDARY_PROBE = [("MULTI",), ("GET", "{k}"), ("PTTL", "{k}"), ("TTL", "{k}"),
                   ("PEXPIRETIME", "{k}"), ("EXPIRETIME", "{k}"), ("EXISTS", "{k}"), ("EXEC",)]


def _probe(conn: RawClient, key: str) -> bytes:
    """One transaction of lookups, so every one of them sees the same instant."""
    commands: list[tuple[bytes | str | int, ...]] = [
        tuple(a.replace("{k}", key) for a in c) for c in _BOUNDARY_PROBE]
    return conn.pipeline(commands)[-1]


def _time_ms(conn: RawClient) -> int:
    reply = conn.call("TIME")
    seconds, micros = (int(x) for x in reply.split(b"\r\n")[2:5:2])
    return seconds * 1000 + micros // 1000


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def clock_pair(request: pytest.FixtureRequest) -> Iterator[Pair]:
    """A reference Redis with active expiry off and a resplite with the clock command."""
    from support.servers import redis_server_path, start_redis, start_resplite

    if redis_server_path() is None:
        pytest.skip("redis-server is not installed: compatibility tests need the reference")
    ref_srv = start_redis()
    ours_srv = start_resplite("--enable-clock-command", "yes")
    pair = Pair(RawClient(ref_srv.host, ref_srv.port), RawClient(ours_srv.host, ours_srv.port),
                request.param)
    try:
        if request.param == 3:
            pair.both("HELLO", "3")
        pair.both("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        pair.ours.call("RESPLITE.CLOCK", "FREEZE")
        yield pair
    finally:
        pair.close()
        ref_srv.stop()
        ours_srv.stop()


def test_a_key_lives_through_its_own_millisecond(clock_pair: Pair) -> None:
    """SET k v PXAT t: at now == t both servers still return the value with PTTL 0; from
    t + 1 both have removed it (Redis read at the boundary by bounded polling)."""
    pair = clock_pair
    at_boundary = after = None
    for attempt in range(40):
        key = f"edge{attempt}"
        when = _time_ms(pair.ref) + 3
        pair.ref.call("SET", key, "v", "PXAT", when)
        while True:
            reply = _probe(pair.ref, key)
            if b":-2\r\n" in reply:
                after = after or (key, when, reply)
                break
            if reply.split(b"\r\n")[3] == b":0":  # PTTL 0: the key's own millisecond
                at_boundary = (key, when, reply)
        if at_boundary is not None:
            break
    if at_boundary is None or after is None:
        pytest.skip("the reference was never polled inside a key's last millisecond")
    for key, when, expected in (at_boundary, after):
        pair.ours.call("RESPLITE.CLOCK", "SET", when)
        pair.ours.call("SET", key, "v", "PXAT", when)
        if expected is after[2]:
            pair.ours.call("RESPLITE.CLOCK", "SET", when + 1)
        got = _probe(pair.ours, key)
        assert got == expected, f"RESP{pair.resp}\n redis:    {expected!r}\n resplite: {got!r}"


def test_the_active_cycle_follows_the_same_boundary(clock_pair: Pair) -> None:
    """With active expiry on, a frozen clock sitting on a key's time never removes it; one
    millisecond later the clock jump's cycle does, before anyone reads it (resplite only:
    Redis's cycle cannot be stopped on a millisecond)."""
    ours = clock_pair.ours
    ours.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    t0 = 1_900_000_000_000
    ours.call("RESPLITE.CLOCK", "SET", t0)
    ours.call("SET", "k", "v", "PXAT", t0 + 1000)
    ours.call("HSET", "h", "f", "1", "g", "2")
    ours.call("HPEXPIREAT", "h", t0 + 1000, "FIELDS", "1", "f")
    ours.call("RESPLITE.CLOCK", "ADVANCE", "1000")
    assert ours.call("DBSIZE") == b":2\r\n"
    assert ours.call("HEXISTS", "h", "f") == b":1\r\n"
    assert ours.call("PTTL", "k") == b":0\r\n"
    ours.call("RESPLITE.CLOCK", "ADVANCE", "1")
    info = ours.call("INFO", "stats")
    assert b"expired_keys:1\r\n" in info and b"expired_subkeys:1\r\n" in info
    assert ours.call("DBSIZE") == b":1\r\n"
    assert ours.call("HLEN", "h") == b":1\r\n"
