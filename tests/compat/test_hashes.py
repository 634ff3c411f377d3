"""Hash commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Scenarios are short command sequences on freshly flushed servers whose replies must be
identical, errors included. Small hashes are listpacks in both servers and answer in
insertion order, so HGETALL / HKEYS / HVALS / HSCAN / HRANDFIELD (whole hash) are compared
exactly; large ones are hashtables, whose order is Redis's bucket order, so they are compared
sorted, and HSCAN over them is checked for what a cursor guarantees. HRANDFIELD draws are
random: they are checked for membership, counts, distinctness and reply shape.

Where resplite follows a newer Redis than the 7.0 reference (HSCAN NOVALUES from 7.4, the
7.2 pre-conversion of a wide HSET), the test is marked with that version.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

import pytest
from compat_helpers import Command, check_unordered, decode, ref_version, run, values
from support.pair import Pair
from support.raw import RawClient

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"
FAR_FUTURE_S = "4102444800"
LONG_64 = "v" * 64
LONG_65 = "v" * 65

Scenario = list[Command]


def stream(key: str = "s") -> Command:
    return ("XADD", key, "1-1", "f", "v")


SCENARIOS: dict[str, Scenario] = {
    # HSET / HMSET / HSETNX
    "HSET: counts new fields, overwrites keep their place": [
        ("HSET", "h", "a", "1"), ("HSET", "h", "a", "2", "b", "3"), ("HSET", "h", "b", "3"),
        ("HGETALL", "h"), ("HSET", "h", "c", "4", "c", "5"), ("HGETALL", "h"), ("HLEN", "h"),
    ],
    "HSET: binary-safe fields and values, empty field and value": [
        ("HSET", "h", b"\x00\r\n\xff", b"a\r\nb\x00", "", "empty field", "e", ""),
        ("HGET", "h", b"\x00\r\n\xff"), ("HGET", "h", ""), ("HGET", "h", "e"),
        ("HGETALL", "h"), ("HSTRLEN", "h", "e"), ("HEXISTS", "h", ""),
    ],
    "HSET / HMSET: an odd number of field-value arguments is an arity error": [
        ("HSET", "h", "f"), ("HSET", "h", "f", "v", "g"), ("HMSET", "h", "f"),
        ("HMSET", "h", "f", "v", "g"), ("HSET", "h"), ("EXISTS", "h"),
    ],
    "HSET: arity is checked before the type": [
        ("SET", "s", "x"), ("HSET", "s", "f", "v", "g"), ("HSET", "s", "f", "v"),
        ("HMSET", "s", "f", "v"), ("GET", "s"),
    ],
    "HMSET: answers OK and behaves as HSET": [
        ("HMSET", "h", "a", "1", "b", "2"), ("HMSET", "h", "b", "3"), ("HGETALL", "h"),
    ],
    "HSETNX: only new fields, creates the key, WRONGTYPE": [
        ("HSETNX", "h", "f", "1"), ("HSETNX", "h", "f", "2"), ("HGET", "h", "f"),
        ("HSETNX", "h", "g", "3"), ("HGETALL", "h"), ("SET", "s", "x"), ("HSETNX", "s", "f", "v"),
        ("HSETNX", "h", "f"), ("HSETNX", "h", "f", "v", "x"),
    ],
    # Reading
    "HGET / HMGET / HEXISTS / HLEN / HSTRLEN on a missing key": [
        ("HGET", "nokey", "f"), ("HMGET", "nokey", "a", "b"), ("HEXISTS", "nokey", "f"),
        ("HLEN", "nokey"), ("HSTRLEN", "nokey", "f"), ("HGETALL", "nokey"), ("HKEYS", "nokey"),
        ("HVALS", "nokey"), ("HDEL", "nokey", "f"), ("EXISTS", "nokey"),
    ],
    "HGET / HMGET / HEXISTS / HSTRLEN: present and missing fields": [
        ("HSET", "h", "a", "1", "b", "hello", "n", "-12345", "z", "0"),
        ("HGET", "h", "a"), ("HGET", "h", "x"), ("HMGET", "h", "a", "x", "b", "a"),
        ("HEXISTS", "h", "b"), ("HEXISTS", "h", "x"), ("HSTRLEN", "h", "b"),
        ("HSTRLEN", "h", "n"), ("HSTRLEN", "h", "z"), ("HSTRLEN", "h", "x"),
    ],
    "HGETALL / HKEYS / HVALS: insertion order, deletions, re-insertion at the end": [
        ("HSET", "h", "c", "3", "a", "1", "b", "2", "12", "int", "-5", "neg"),
        ("HGETALL", "h"), ("HKEYS", "h"), ("HVALS", "h"), ("HDEL", "h", "a"),
        ("HSET", "h", "a", "again"), ("HSET", "h", "c", "30"), ("HGETALL", "h"), ("HKEYS", "h"),
        ("HVALS", "h"),
    ],
    # HDEL
    "HDEL: counts removed fields, repeated fields once, deletes the emptied key": [
        ("HSET", "h", "a", "1", "b", "2", "c", "3"), ("HDEL", "h", "a", "a", "x"),
        ("HLEN", "h"), ("HDEL", "h", "b", "c", "b", "x"), ("EXISTS", "h"), ("TYPE", "h"),
        ("HDEL", "h", "b"), ("HGETALL", "h"),
    ],
    # Counters
    "HINCRBY: new field, existing field, negative steps": [
        ("HINCRBY", "h", "n", "5"), ("HINCRBY", "h", "n", "-7"), ("HINCRBY", "h", "m", "0"),
        ("HGETALL", "h"), ("HINCRBY", "new", "f", "-1"), ("HGETALL", "new"),
    ],
    "HINCRBY: overflow both ways leaves the value": [
        ("HSET", "h", "max", I64_MAX, "min", I64_MIN), ("HINCRBY", "h", "max", "1"),
        ("HINCRBY", "h", "min", "-1"), ("HINCRBY", "h", "max", "-1"), ("HINCRBY", "h", "min", "1"),
        ("HINCRBY", "h", "min", I64_MAX), ("HINCRBY", "h", "z", I64_MIN),
        ("HINCRBY", "h", "z", "-1"), ("HGETALL", "h"),
    ],
    "HINCRBY: values and increments that are not integers": [
        ("HSET", "h", "s", "abc", "sp", " 1", "lz", "01", "plus", "+1", "neg0", "-0", "f", "1.5",
         "e", ""),
        *[("HINCRBY", "h", f, "1") for f in ("s", "sp", "lz", "plus", "neg0", "f", "e")],
        *[("HINCRBY", "h", "x", inc) for inc in ("abc", "1.0", "", " 1", "01", "+1",
                                                   "9223372036854775808", "-0")],
        ("HEXISTS", "h", "x"), ("HINCRBY", "nokey", "f", "x"), ("EXISTS", "nokey"),
    ],
    "HINCRBY: a bad increment wins over WRONGTYPE, WRONGTYPE over a bad value": [
        ("SET", "s", "x"), ("HINCRBY", "s", "f", "x"), ("HINCRBY", "s", "f", "1"),
        ("HINCRBYFLOAT", "s", "f", "x"), ("HINCRBYFLOAT", "s", "f", "inf"),
        ("HINCRBYFLOAT", "s", "f", "1"),
    ],
    "HINCRBYFLOAT: formatting of results": [
        ("HINCRBYFLOAT", "h", "f", "10.5"), ("HINCRBYFLOAT", "h", "f", "0.1"),
        ("HINCRBYFLOAT", "h", "f", "-5.6"), ("HINCRBYFLOAT", "h", "g", "5.0e3"),
        ("HINCRBYFLOAT", "h", "g", "-5000"), ("HINCRBYFLOAT", "h", "i", "3"),
        ("HINCRBYFLOAT", "h", "i", "0x10"), ("HINCRBYFLOAT", "h", "t", "1e-20"),
        ("HGETALL", "h"), ("OBJECT", "ENCODING", "h"), ("HINCRBYFLOAT", "h", "u", "1e100"),
        ("HGET", "h", "u"), ("OBJECT", "ENCODING", "h"),
    ],
    "HINCRBYFLOAT: NaN, infinities, bad floats, overflow": [
        ("HSET", "h", "s", "abc", "big", "1e4932", "inf", "inf", "i", "17", "sp", " 1"),
        ("HINCRBYFLOAT", "h", "x", "inf"), ("HINCRBYFLOAT", "h", "x", "-inf"),
        ("HINCRBYFLOAT", "h", "x", "nan"), ("HINCRBYFLOAT", "h", "x", "abc"),
        ("HINCRBYFLOAT", "h", "x", ""), ("HINCRBYFLOAT", "h", "x", " 1"),
        ("HINCRBYFLOAT", "h", "s", "1"), ("HINCRBYFLOAT", "h", "sp", "1"),
        ("HINCRBYFLOAT", "h", "big", "1e4932"), ("HINCRBYFLOAT", "h", "inf", "1"),
        ("HINCRBYFLOAT", "h", "i", "1.5"), ("HEXISTS", "h", "x"), ("HGETALL", "h"),
        ("HINCRBYFLOAT", "nokey", "f", "inf"), ("EXISTS", "nokey"),
    ],
    "HINCRBYFLOAT then HINCRBY: an integral float result counts as an integer": [
        ("HINCRBYFLOAT", "h", "f", "2.5"), ("HINCRBYFLOAT", "h", "f", "0.5"),
        ("HINCRBY", "h", "f", "1"), ("HINCRBYFLOAT", "h", "f", "0.25"), ("HINCRBY", "h", "f", "1"),
    ],
    # HRANDFIELD: the deterministic cases
    "HRANDFIELD: missing key, errors, count 0": [
        ("HRANDFIELD", "nokey"), ("HRANDFIELD", "nokey", "3"), ("HRANDFIELD", "nokey", "-3"),
        ("HRANDFIELD", "nokey", "3", "WITHVALUES"), ("HRANDFIELD", "nokey", "x"),
        ("HSET", "h", "a", "1"), ("HRANDFIELD", "h", "0"), ("HRANDFIELD", "h", "0", "WITHVALUES"),
        ("HRANDFIELD", "h", "x"), ("HRANDFIELD", "h", "1.5"), ("HRANDFIELD", "h", ""),
        ("HRANDFIELD", "h", I64_MIN), ("HRANDFIELD", "h", "9223372036854775808"),
        ("HRANDFIELD", "h", "1", "x"), ("HRANDFIELD", "h", "1", "WITHVALUES", "x"),
        ("HRANDFIELD", "h", "x", "y"), ("HRANDFIELD", "h", I64_MIN, "y"),
        ("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"),
        ("HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"),
        ("HRANDFIELD", "h", "4611686018427387903", "withvalues"),
        ("HRANDFIELD", "nokey", "-4611686018427387904", "WITHVALUES"),
    ],
    "HRANDFIELD: syntax comes before WRONGTYPE, WRONGTYPE before count 0": [
        ("SET", "s", "x"), ("HRANDFIELD", "s"), ("HRANDFIELD", "s", "0"),
        ("HRANDFIELD", "s", "1", "x"), ("HRANDFIELD", "s", "x"), ("HRANDFIELD", "s", "-2"),
    ],
    "HRANDFIELD: one field, any count": [
        ("HSET", "h", "only", "v"), ("HRANDFIELD", "h"), ("HRANDFIELD", "h", "1"),
        ("HRANDFIELD", "h", "5"), ("HRANDFIELD", "h", "-3"),
        ("HRANDFIELD", "h", "-3", "WITHVALUES"), ("HRANDFIELD", "h", "1", "WITHVALUES"),
        ("HRANDFIELD", "h", "2", "withvalues"),
    ],
    "HRANDFIELD: a count of at least the size returns the whole hash in order": [
        ("HSET", "h", "c", "1", "a", "2", "b", "3", "7", "4"), ("HRANDFIELD", "h", "4"),
        ("HRANDFIELD", "h", "100"), ("HRANDFIELD", "h", "4", "WITHVALUES"),
        ("HRANDFIELD", "h", I64_MAX), ("HRANDFIELD", "h", "4611686018427387903", "WITHVALUES"),
    ],
    "HRANDFIELD: WITHVALUES is a C string option": [
        ("HSET", "h", "only", "v"), ("HRANDFIELD", "h", "1", b"withvalues\x00junk"),
        ("HRANDFIELD", "h", "1", b"withvalue"),
    ],
    # HSCAN
    "HSCAN: a small hash comes whole with cursor 0, whatever the cursor and count": [
        ("HSET", "h", "c", "1", "a", "2", "b", "3", "12", "4"), ("HSCAN", "h", "0"),
        ("HSCAN", "h", "12345"), ("HSCAN", "h", "0", "COUNT", "1"), ("HSCAN", "h", "-1"),
        ("HSCAN", "h", "18446744073709551615"), ("HSCAN", "h", "0", "count", "2", "count", "3"),
    ],
    "HSCAN: MATCH filters fields, never values": [
        ("HSET", "h", "apple", "a1", "banana", "apple", "apricot", "x", "12", "a", "", "e"),
        ("HSCAN", "h", "0", "MATCH", "a*"), ("HSCAN", "h", "0", "MATCH", "*an*"),
        ("HSCAN", "h", "0", "MATCH", "1?"), ("HSCAN", "h", "0", "MATCH", "*"),
        ("HSCAN", "h", "0", "MATCH", "**"), ("HSCAN", "h", "0", "MATCH", ""),
        ("HSCAN", "h", "0", "MATCH", "[a-b]*", "COUNT", "100"),
        ("HSCAN", "h", "0", "MATCH", "nothing"), ("HSCAN", "h", "0", "match", "A*"),
    ],
    "HSCAN: option and cursor errors": [
        ("HSET", "h", "f", "v"), ("HSCAN", "h", "x"), ("HSCAN", "h", "1x"), ("HSCAN", "h", ""),
        ("HSCAN", "h", " 1"), ("HSCAN", "h", "18446744073709551616"),
        ("HSCAN", "h", "0", "COUNT", "0"), ("HSCAN", "h", "0", "COUNT", "-1"),
        ("HSCAN", "h", "0", "COUNT", "x"), ("HSCAN", "h", "0", "COUNT"),
        ("HSCAN", "h", "0", "MATCH"), ("HSCAN", "h", "0", "TYPE", "hash"),
        ("HSCAN", "h", "0", "BOGUS"), ("HSCAN", "h", "0", "BOGUS", "1"),
        ("HSCAN", "h", "0", b"count\x00x", "5"), ("HSCAN", "h", "0", "MATCH", "*", "COUNT", "0"),
    ],
    "HSCAN: a missing key answers before the options are read; cursor errors first": [
        ("HSCAN", "nokey", "0"), ("HSCAN", "nokey", "0", "COUNT", "0"),
        ("HSCAN", "nokey", "0", "BOGUS"), ("HSCAN", "nokey", "x"), ("SET", "s", "x"),
        ("HSCAN", "s", "0"), ("HSCAN", "s", "x"), ("HSCAN", "s", "0", "BOGUS"), stream("t"),
        ("HSCAN", "t", "0"),
    ],
    # WRONGTYPE everywhere
    "Hash commands on a string or a stream are WRONGTYPE": [
        ("SET", "s", "x"), stream("t"),
        *[cmd for key in ("s", "t") for cmd in [
            ("HGET", key, "f"), ("HMGET", key, "f"), ("HGETALL", key), ("HKEYS", key),
            ("HVALS", key), ("HLEN", key), ("HEXISTS", key, "f"), ("HSTRLEN", key, "f"),
            ("HDEL", key, "f"), ("HSET", key, "f", "v"), ("HMSET", key, "f", "v"),
            ("HINCRBY", key, "f", "1"), ("HINCRBYFLOAT", key, "f", "1"),
            ("HRANDFIELD", key), ("HRANDFIELD", key, "2", "WITHVALUES"),
        ]],
        ("GET", "s"), ("XLEN", "t"),
    ],
    "String and stream commands on a hash are WRONGTYPE": [
        ("HSET", "h", "f", "1"), ("GET", "h"), ("GETSET", "h", "v"), ("GETDEL", "h"),
        ("GETEX", "h"), ("INCR", "h"), ("DECRBY", "h", "2"), ("INCRBYFLOAT", "h", "1"),
        ("APPEND", "h", "x"), ("STRLEN", "h"), ("GETRANGE", "h", "0", "1"),
        ("SETRANGE", "h", "0", "x"), ("SET", "h", "v", "GET"), ("LCS", "h", "h"),
        ("MGET", "h", "nokey"), ("XADD", "h", "1-1", "f", "v"), ("XLEN", "h"),
        ("XRANGE", "h", "-", "+"), ("HGETALL", "h"),
    ],
    "SET, SETNX, MSET and DEL on a hash": [
        ("HSET", "h", "f", "1"), ("SETNX", "h", "x"), ("MSETNX", "h", "x"), ("HGETALL", "h"),
        ("SET", "h", "v"), ("GET", "h"), ("TYPE", "h"), ("HSET", "g", "f", "1"),
        ("MSET", "g", "v"), ("TYPE", "g"), ("HSET", "k", "f", "1"), ("DEL", "k"),
        ("EXISTS", "k"),
    ],
    # Keyspace commands on hashes
    "TYPE, OBJECT ENCODING, EXISTS, TOUCH, UNLINK of a hash": [
        ("HSET", "h", "f", "1"), ("TYPE", "h"), ("OBJECT", "ENCODING", "h"),
        ("OBJECT", "REFCOUNT", "h"), ("EXISTS", "h"), ("TOUCH", "h"), ("UNLINK", "h"),
        ("TYPE", "h"), ("OBJECT", "ENCODING", "h"),
    ],
    "RENAME / RENAMENX / MOVE keep the hash and its TTL": [
        ("HSET", "h", "a", "1", "b", "2"), ("EXPIREAT", "h", FAR_FUTURE_S), ("RENAME", "h", "g"),
        ("HGETALL", "g"), ("EXPIRETIME", "g"), ("HSET", "k", "x", "y"), ("RENAMENX", "g", "k"),
        ("RENAME", "g", "k"), ("HGETALL", "k"), ("MOVE", "k", "1"), ("EXISTS", "k"),
        ("SELECT", "1"), ("HGETALL", "k"), ("EXPIRETIME", "k"), ("OBJECT", "ENCODING", "k"),
    ],
    "COPY makes an independent hash, with REPLACE and DB": [
        ("HSET", "h", "a", "1", "b", "2"), ("COPY", "h", "c"), ("HSET", "h", "a", "changed"),
        ("HDEL", "h", "b"), ("HSET", "c", "z", "26"), ("HGETALL", "h"), ("HGETALL", "c"),
        ("COPY", "h", "c"), ("COPY", "h", "c", "REPLACE"), ("HGETALL", "c"),
        ("COPY", "c", "c", "DB", "1"), ("HINCRBY", "c", "a", "1"), ("SELECT", "1"),
        ("HGETALL", "c"), ("OBJECT", "ENCODING", "c"),
    ],
    "EXPIRE and PERSIST on hashes; a past expiry deletes": [
        ("HSET", "h", "f", "1"), ("EXPIREAT", "h", FAR_FUTURE_S), ("EXPIRETIME", "h"),
        ("HSET", "h", "g", "2"), ("EXPIRETIME", "h"), ("HDEL", "h", "g"), ("EXPIRETIME", "h"),
        ("HINCRBY", "h", "n", "1"), ("EXPIRETIME", "h"), ("PERSIST", "h"), ("TTL", "h"),
        ("EXPIREAT", "h", "1000"), ("EXISTS", "h"), ("HGETALL", "h"),
        ("HSET", "h", "f", "1"), ("EXPIRE", "h", "-1"), ("HLEN", "h"),
    ],
    "SCAN TYPE hash and KEYS": [
        ("HSET", "h", "f", "1"), ("SET", "s", "x"), stream("t"),
        ("SCAN", "0", "TYPE", "hash"), ("SCAN", "0", "TYPE", "HASH"),
        ("SCAN", "0", "TYPE", "string"), ("KEYS", "h*"),
    ],
    # Encodings
    "OBJECT ENCODING: listpack up to 64-byte fields and values": [
        ("HSET", "a", "f", LONG_64), ("OBJECT", "ENCODING", "a"),
        ("HSET", "b", "f", LONG_65), ("OBJECT", "ENCODING", "b"),
        ("HSET", "c", LONG_65, "v"), ("OBJECT", "ENCODING", "c"),
        ("HSET", "d", "f", "v"), ("HSET", "d", "g", LONG_65), ("OBJECT", "ENCODING", "d"),
        ("HDEL", "d", "g"), ("OBJECT", "ENCODING", "d"), ("HGETALL", "d"),
        ("HSETNX", "e", "f", LONG_65), ("OBJECT", "ENCODING", "e"),
        ("HSETNX", "e2", "f", "v"), ("HSETNX", "e2", "f", LONG_65), ("OBJECT", "ENCODING", "e2"),
        ("HINCRBY", "i", "v" * 65, "1"), ("OBJECT", "ENCODING", "i"),
        ("HINCRBYFLOAT", "j", "f", "1e100"), ("OBJECT", "ENCODING", "j"),
        ("HINCRBYFLOAT", "j2", "f", "1e40"), ("OBJECT", "ENCODING", "j2"),
        ("HMSET", "m", "f", "v", "g", LONG_65), ("OBJECT", "ENCODING", "m"),
        ("COPY", "b", "b2"), ("OBJECT", "ENCODING", "b2"),
    ],
    "OBJECT ENCODING: listpack up to 512 fields (the default)": [
        ("HSET", "h", *[x for i in range(512) for x in (f"f{i}", str(i))]),
        ("OBJECT", "ENCODING", "h"), ("HSET", "h", "f0", "again"), ("OBJECT", "ENCODING", "h"),
        ("HSET", "h", "one-more", "x"), ("OBJECT", "ENCODING", "h"), ("HLEN", "h"),
        ("HDEL", "h", *[f"f{i}" for i in range(500)]), ("OBJECT", "ENCODING", "h"),
    ],
    "CONFIG: the hash directives and their old names": [
        ("CONFIG", "GET", "hash-max-listpack-entries"),
        ("CONFIG", "GET", "hash-max-listpack-value"),
        ("CONFIG", "GET", "hash-max-ziplist-entries"), ("CONFIG", "GET", "hash-max-ziplist-value"),
        ("CONFIG", "GET", "HASH-MAX-ZIPLIST-VALUE"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "-1"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "abc"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "9223372036854775808"),
        ("CONFIG", "SET", "hash-max-listpack-value", "-1"),
        ("CONFIG", "SET", "hash-max-ziplist-value", "x"),
    ],
    # Transactions
    "MULTI: HSET, HSCAN, HGETALL, HDEL in one transaction": [
        ("MULTI",), ("HSET", "k", "f", "v"), ("HSCAN", "k", "0"), ("HGETALL", "k"),
        ("HDEL", "k", "f"), ("EXEC",), ("EXISTS", "k"),
    ],
    "MULTI: each reply shows the hash as it was at that command": [
        ("HSET", "k", "a", "1"), ("MULTI",), ("HGETALL", "k"), ("HKEYS", "k"), ("HVALS", "k"),
        ("HSET", "k", "b", "2"), ("HGETALL", "k"), ("HRANDFIELD", "k", "5", "WITHVALUES"),
        ("HDEL", "k", "a", "b"), ("HGETALL", "k"), ("EXEC",),
    ],
    "MULTI: arity errors abort, WRONGTYPE does not": [
        ("SET", "s", "x"), ("MULTI",), ("HSET", "k", "f"), ("HSET", "k", "f", "v"), ("EXEC",),
        ("MULTI",), ("HSET", "k", "f", "v", "g"), ("HSET", "s", "f", "v"), ("HGET", "k", "f"),
        ("EXEC",),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_hash_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *SCENARIOS[scenario])


# -- configuration-dependent encodings -------------------------------------------------------------


@pytest.fixture
def small_limits(pair: Pair) -> Iterator[None]:
    """Both servers with tiny listpack limits, restored afterwards (the servers are shared)."""
    run(pair, ("CONFIG", "SET", "hash-max-listpack-entries", "3"),
        ("CONFIG", "SET", "hash-max-ziplist-value", "8"))
    try:
        yield
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "hash-max-listpack-entries", "512")
            conn.call("CONFIG", "SET", "hash-max-listpack-value", "64")


def test_encoding_follows_lowered_limits(pair: Pair, small_limits: None) -> None:
    run(
        pair,
        ("HSET", "h", "a", "1", "b", "2", "c", "3"), ("OBJECT", "ENCODING", "h"),
        ("HSET", "h", "d", "4"), ("OBJECT", "ENCODING", "h"),
        ("HSET", "v", "f", "8bytes!!"), ("OBJECT", "ENCODING", "v"),
        ("HSET", "v", "f", "9 bytes!!"), ("OBJECT", "ENCODING", "v"),
        ("HSETNX", "n", "a", "1"), ("HSETNX", "n", "b", "2"), ("HSETNX", "n", "c", "3"),
        ("HSETNX", "n", "d", "4"), ("OBJECT", "ENCODING", "n"),
        ("HINCRBY", "i", "a", "1"), ("HINCRBY", "i", "b", "1"), ("HINCRBY", "i", "c", "1"),
        ("OBJECT", "ENCODING", "i"), ("HINCRBY", "i", "d", "1"), ("OBJECT", "ENCODING", "i"),
        ("HINCRBY", "j", "f", "123456789"), ("OBJECT", "ENCODING", "j"),
        ("HINCRBYFLOAT", "k", "f", "1.5"), ("HINCRBYFLOAT", "k", "f", "1.123456"),
        ("OBJECT", "ENCODING", "k"),
    )


def test_raised_limits_do_not_convert_back(pair: Pair, small_limits: None) -> None:
    run(pair, ("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"), ("OBJECT", "ENCODING", "h"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "512"), ("HDEL", "h", "a", "b"),
        ("HSET", "h", "e", "5"), ("OBJECT", "ENCODING", "h"), ("HSET", "g", "a", "1"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "0"), ("HGET", "g", "a"),
        ("OBJECT", "ENCODING", "g"), ("HSET", "g", "a", "1"), ("OBJECT", "ENCODING", "g"),
        ("HSETNX", "z", "a", "1"), ("OBJECT", "ENCODING", "z"))


def test_a_listpack_over_a_lowered_limit_converts_at_the_next_write(
    pair: Pair, small_limits: None
) -> None:
    run(pair, ("CONFIG", "SET", "hash-max-listpack-entries", "10"),
        ("HSET", "h", *[x for i in range(6) for x in (f"f{i}", "v")]),
        ("CONFIG", "SET", "hash-max-listpack-entries", "3"), ("OBJECT", "ENCODING", "h"),
        ("HDEL", "h", "f0"), ("OBJECT", "ENCODING", "h"), ("HSET", "h", "f1", "v"),
        ("OBJECT", "ENCODING", "h"))


@pytest.mark.redis_version("7.2")
def test_wide_hset_converts_before_writing_even_with_repeated_fields(
    pair: Pair, small_limits: None
) -> None:
    """Redis 7.2+ converts when an HSET brings more pairs than the entry limit, duplicates
    included; 7.0 only looks at the resulting size."""
    cmd = ("HSET", "h", "f", "1", "f", "2", "f", "3", "f", "4")
    assert pair.ours.call(*cmd) == pair.ref.call(*cmd) == b":1\r\n"
    assert pair.ours.call("OBJECT", "ENCODING", "h") == b"$9\r\nhashtable\r\n"
    if ref_version(pair) >= (7, 2):
        pair.check("OBJECT", "ENCODING", "h")
    else:
        assert pair.ref.call("OBJECT", "ENCODING", "h") == b"$8\r\nlistpack\r\n"
    run(pair, ("HGETALL", "h"), ("HMSET", "g", "a", "1", "b", "2", "c", "3"),
        ("OBJECT", "ENCODING", "g"))


# -- large hashes (hashtable encoding) -------------------------------------------------------------


def _fill(pair: Pair, key: str, n: int, prefix: str = "field:") -> None:
    args: list[str] = []
    for i in range(n):
        args += [f"{prefix}{i}", f"value-{i * 7}"]
    run(pair, ("HSET", key, *args))


def _pairs(flat: list[bytes]) -> list[tuple[bytes, bytes]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def _map(value: object) -> dict[bytes, bytes]:
    """HGETALL decoded: a RESP3 map, or a RESP2 flat array."""
    if isinstance(value, dict):
        return value
    assert isinstance(value, list)
    return dict(_pairs(value))


def test_large_hash_contents_compared_sorted(pair: Pair) -> None:
    _fill(pair, "h", 600)
    run(pair, ("OBJECT", "ENCODING", "h"), ("HLEN", "h"), ("HGET", "h", "field:599"),
        ("HMGET", "h", "field:0", "nope", "field:300"), ("HSTRLEN", "h", "field:12"),
        ("HINCRBY", "h", "counter", "5"), ("HINCRBYFLOAT", "h", "counter", "0.5"),
        ("HDEL", "h", "field:1", "field:2", "nope"), ("HLEN", "h"))
    ref, ours = values(pair, "HGETALL", "h")
    assert _map(ours) == _map(ref) and len(_map(ours)) == 599
    for cmd in ("HKEYS", "HVALS"):
        ref, ours = values(pair, cmd, "h")
        assert sorted(ours) == sorted(ref)
    ref, ours = values(pair, "HRANDFIELD", "h", "1000", "WITHVALUES")
    if pair.resp == 3:
        assert all(isinstance(p, list) and len(p) == 2 for p in ours)
        ours = [x for p in ours for x in p]
        ref = [x for p in ref for x in p]
    assert sorted(_pairs(ours)) == sorted(_pairs(ref))


def _hscan_all(
    client: RawClient,
    key: str,
    *options: str | int,
    between: Callable[[int], None] | None = None,
) -> list[list[bytes]]:
    """Every batch of a full HSCAN iteration; ``between(step)`` runs after each call."""
    cursor = b"0"
    batches = []
    step = 0
    while True:
        reply = decode(client.call("HSCAN", key, cursor, *options))
        assert isinstance(reply, list) and len(reply) == 2
        cursor, batch = reply
        batches.append(batch)
        if between is not None:
            between(step)
        step += 1
        if cursor == b"0":
            return batches
        assert step < 10_000, "HSCAN did not terminate"


def test_hscan_of_a_hashtable_returns_every_pair(pair: Pair) -> None:
    _fill(pair, "h", 700)
    for options in ((), ("COUNT", "1"), ("COUNT", "37"), ("COUNT", "1000")):
        expected = dict(_pairs([x for b in _hscan_all(pair.ref, "h", *options) for x in b]))
        batches = _hscan_all(pair.ours, "h", *options)
        got = _pairs([x for b in batches for x in b])
        assert dict(got) == expected and len(expected) == 700
        assert len(got) == len(set(got)), "a pair was returned twice without any write"
        if options == ("COUNT", "37"):
            assert len(batches) > 5 and all(len(b) <= 2 * 60 for b in batches)


def test_hscan_of_a_hashtable_with_match_and_novalues_shape(pair: Pair) -> None:
    _fill(pair, "h", 600)
    _fill(pair, "h", 50, prefix="other:")
    for options in (("MATCH", "other:*"), ("MATCH", "field:1?", "COUNT", "5")):
        ref = [x for b in _hscan_all(pair.ref, "h", *options) for x in b]
        ours = [x for b in _hscan_all(pair.ours, "h", *options) for x in b]
        assert sorted(_pairs(ours)) == sorted(_pairs(ref)) and ref


def test_hscan_cursor_survives_writes(pair: Pair) -> None:
    """A field present for the whole iteration is returned, whatever is written meanwhile."""
    _fill(pair, "h", 800)
    ours = pair.ours
    rng = random.Random(5)
    deleted: set[bytes] = set()

    def churn(step: int) -> None:
        # Add new fields (enough to trigger index merges), delete and rewrite others.
        ours.call("HSET", "h", *[x for i in range(20) for x in (f"new:{step}:{i}", "n")])
        victim = f"field:{rng.randrange(800)}".encode()
        ours.call("HDEL", "h", victim)
        deleted.add(victim)
        ours.call("HSET", "h", f"field:{rng.randrange(800)}", "rewritten")

    seen = {f for b in _hscan_all(ours, "h", "COUNT", "25", between=churn) for f in b[::2]}
    stable = {f"field:{i}".encode() for i in range(800)} - deleted
    assert stable <= seen


def test_hscan_over_a_converted_hash_keeps_going(pair: Pair, small_limits: None) -> None:
    """The first call answers a listpack whole (cursor 0); once converted, cursors work."""
    run(pair, ("HSET", "h", "a", "1", "b", "2"), ("HSCAN", "h", "0"))
    _fill(pair, "h", 50)
    run(pair, ("OBJECT", "ENCODING", "h"))
    got = [x for b in _hscan_all(pair.ours, "h", "COUNT", "3") for x in b]
    assert len(set(got[::2])) == 52


# -- HRANDFIELD draws ------------------------------------------------------------------------------


def _draw(client: RawClient, resp: int, *args: str) -> Sequence[tuple[bytes, bytes | None]]:
    """An HRANDFIELD reply as (field, value-or-None) pairs, checking its RESP shape."""
    reply = decode(client.call("HRANDFIELD", *args))
    assert isinstance(reply, list)
    if "WITHVALUES" not in args:
        assert all(isinstance(f, bytes) for f in reply)
        return [(f, None) for f in reply]
    if resp == 3:
        assert all(isinstance(p, list) and len(p) == 2 for p in reply)
        return [tuple(p) for p in reply]
    return _pairs(reply)


@pytest.mark.parametrize("size", [5, 600], ids=["listpack", "hashtable"])
def test_hrandfield_draws(pair: Pair, size: int) -> None:
    _fill(pair, "h", size)
    contents = {f"field:{i}".encode(): f"value-{i * 7}".encode() for i in range(size)}
    order = list(contents)
    for client in (pair.ref, pair.ours):
        single = decode(client.call("HRANDFIELD", "h"))
        assert single in contents
        for count in (1, 3, size - 1, -1, -3, -(size + 7)):
            for withvalues in ((), ("WITHVALUES",)):
                drawn = _draw(client, pair.resp, "h", str(count), *withvalues)
                assert len(drawn) == abs(count)
                for field, value in drawn:
                    assert field in contents
                    assert value is None or value == contents[field]
                fields = [f for f, _ in drawn]
                if count > 0:
                    assert len(set(fields)) == len(fields)
                    if size < 512 and client is pair.ours:
                        # Redis 7.2+ answers distinct draws from a listpack in its own order
                        # (7.0 shuffles them).
                        positions = [order.index(f) for f in fields]
                        assert positions == sorted(positions)


def test_hrandfield_covers_the_hash(pair: Pair) -> None:
    """Draws are random, not stuck: a few hundred of them cover a small hash."""
    _fill(pair, "h", 6)
    for client in (pair.ref, pair.ours):
        drawn = {f for f, _ in _draw(client, pair.resp, "h", "-300")}
        assert len(drawn) == 6
        singles = {decode(client.call("HRANDFIELD", "h")) for _ in range(120)}
        assert len(singles) == 6
        subsets = {tuple(f for f, _ in _draw(client, pair.resp, "h", "3")) for _ in range(80)}
        assert len(subsets) > 5


# -- newer Redis -----------------------------------------------------------------------------------


@pytest.mark.redis_version("7.4")
def test_hscan_novalues(pair: Pair) -> None:
    ours = pair.ours
    run(pair, ("HSET", "h", "c", "1", "a", "2", "b", "3"))
    assert decode(ours.call("HSCAN", "h", "0", "NOVALUES")) == [b"0", [b"c", b"a", b"b"]]
    assert decode(ours.call("HSCAN", "h", "0", "novalues", "MATCH", "[ab]")) == [
        b"0", [b"a", b"b"]
    ]
    assert decode(ours.call("HSCAN", "h", "0", "NOVALUES", "NOVALUES", "COUNT", "5")) == [
        b"0", [b"c", b"a", b"b"]
    ]
    assert ours.call("HSCAN", "h", "0", "NOVALUES", "x") == b"-ERR syntax error\r\n"
    ours.call("HSET", "big", *[x for i in range(600) for x in (f"f{i}", "v")])
    fields = [f for b in _hscan_all(ours, "big", "NOVALUES", "COUNT", "50") for f in b]
    assert sorted(fields) == sorted(f"f{i}".encode() for i in range(600))
    if ref_version(pair) >= (7, 4):
        run(pair, ("HSET", "h", "c", "1", "a", "2", "b", "3"))
        for options in (("NOVALUES",), ("novalues", "MATCH", "[ab]"),
                        ("NOVALUES", "NOVALUES", "COUNT", "5"), ("NOVALUES", "x")):
            pair.check("HSCAN", "h", "0", *options)
    else:  # Redis 7.0 does not know the option.
        assert pair.ref.call("HSCAN", "h", "0", "NOVALUES") == b"-ERR syntax error\r\n"


# -- WATCH -----------------------------------------------------------------------------------------


def test_watch_sees_hash_writes_but_not_no_ops(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        run(pair, ("HSET", "h", "f", "1"))
        # Changes nothing, but Redis still signals HSET: the transaction aborts.
        run(pair, ("WATCH", "h"))
        run(other, ("HSET", "h", "f", "1"))
        run(pair, ("MULTI",), ("HGET", "h", "f"), ("EXEC",))
        # These leave the hash alone and signal nothing.
        run(pair, ("WATCH", "h"))
        run(other, ("HSETNX", "h", "f", "2"), ("HDEL", "h", "nope"), ("HGETALL", "h"),
            ("HSCAN", "h", "0"), ("HRANDFIELD", "h", "-2"))
        run(pair, ("MULTI",), ("HGET", "h", "f"), ("EXEC",))
        for write in (("HINCRBY", "h", "n", "1"), ("HINCRBYFLOAT", "h", "n", "1"),
                      ("HDEL", "h", "n"), ("HSETNX", "h", "g", "1"), ("HMSET", "h", "g", "2")):
            run(pair, ("WATCH", "h"))
            run(other, write)
            run(pair, ("MULTI",), ("HGETALL", "h"), ("EXEC",))
    finally:
        other.close()


# -- large replies (sent in pieces from 4096 fields on) --------------------------------------


def test_large_hgetall_hkeys_hvals(pair: Pair) -> None:
    args: list[str] = []
    for i in range(6000):
        args += [f"f{i}", f"v{i % 10}"]
    pair.check("HSET", "h", *args)
    check_unordered(pair, "HGETALL", "h")
    check_unordered(pair, "HKEYS", "h")
    check_unordered(pair, "HVALS", "h")
    ref, ours = pair.both("HGETALL", "h")
    assert ours[:8] == ref[:8]  # the map's (or the flat array's) header
    assert decode(ours) == decode(ref) if pair.resp == 3 else len(ours) == len(ref)
