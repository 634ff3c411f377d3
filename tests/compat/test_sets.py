"""Set commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Scenarios are short command sequences on freshly flushed servers whose replies must be
identical, errors included. What Redis's order allows to compare:

* integer sets are intsets in every Redis version, answered in ascending order: compared
  exactly, encodings included;
* sets holding strings are hashtables in Redis 7.0 (table order) but listpacks in 7.2 and
  later (insertion order), which resplite follows: against the 7.0 reference their whole-set
  replies are compared as unordered collections of the same reply type (``U(...)``), and
  the tests marked ``redis_version("7.2")`` check resplite's listpack order and encodings
  exactly, as Redis 7.2+ produces them;
* large sets are hashtables everywhere: compared sorted, and SSCAN for what a cursor
  guarantees.

Random picks (SPOP, SRANDMEMBER) are checked by shape, count, uniqueness, membership and
distribution, on both servers, never by identity.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
import redis
from compat_helpers import N, Step, check_unordered, decode, play, ref_version, u, values
from support.notifications import run as run_events
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerProcess

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"
FAR_FUTURE_S = "4102444800"
LONG_64 = "m" * 64
LONG_65 = "m" * 65

Scenario = list[Step]


def stream(key: str = "t") -> Step:
    return ("XADD", key, "1-1", "f", "v")


def ints(key: str, *members: int) -> Step:
    return ("SADD", key, *[str(m) for m in members])


SCENARIOS: dict[str, Scenario] = {
    # SADD, SCARD, SISMEMBER, SMEMBERS
    "SADD counts new members; SCARD, SISMEMBER, SMEMBERS of an intset": [
        ("SADD", "s", "3", "1", "2"), ("SADD", "s", "3", "4"), ("SADD", "s", "4", "4", "4"),
        ("SCARD", "s"), ("SISMEMBER", "s", "3"), ("SISMEMBER", "s", "5"),
        ("SISMEMBER", "s", "03"), ("SMEMBERS", "s"), ("OBJECT", "ENCODING", "s"),
        ("SISMEMBER", "nokey", "1"), ("SCARD", "nokey"), ("SMEMBERS", "nokey"), ("TYPE", "s"),
    ],
    "SADD: arity": [
        ("SADD", "s"), ("SADD", "s", "1"), ("SREM", "s"), ("SISMEMBER", "s"),
        ("SISMEMBER", "s", "1", "2"), ("SCARD",), ("SMEMBERS", "s", "x"), ("SMISMEMBER", "s"),
        ("SMOVE", "s", "d"), ("SINTER",), ("SUNION",), ("SDIFF",), ("SINTERSTORE", "d"),
        ("SUNIONSTORE", "d"), ("SDIFFSTORE", "d"), ("SINTERCARD", "1"), ("SSCAN", "s"),
        ("SPOP",), ("SRANDMEMBER",),
    ],
    "Intsets: canonical integers only, every width, ascending order": [
        ("SADD", "s", "32767", "-32768", "0", "7", "-1"), ("SMEMBERS", "s"),
        ("OBJECT", "ENCODING", "s"), ("SADD", "s", "32768", "-2147483648", "2147483647"),
        ("SMEMBERS", "s"), ("SADD", "s", I64_MAX, I64_MIN, "2147483648", "-2147483649"),
        ("SMEMBERS", "s"), ("OBJECT", "ENCODING", "s"), ("SCARD", "s"),
        ("SISMEMBER", "s", I64_MIN), ("SISMEMBER", "s", "9223372036854775808"),
        ("SISMEMBER", "s", "+7"), ("SISMEMBER", "s", "07"), ("SISMEMBER", "s", "-0"),
        ("SISMEMBER", "s", " 7"), ("SISMEMBER", "s", "7.0"), ("SREM", "s", "+7", "07", "7.0"),
        ("SREM", "s", I64_MAX, "32768", "-32768"), ("SMEMBERS", "s"), ("OBJECT", "ENCODING", "s"),
    ],
    "Members that look like integers but are not": [
        ("SADD", "s", "1", "01", "+1", "-0", "0", " 1", "1.0", "", I64_MAX + "0"),
        ("SCARD", "s"), u("SMEMBERS", "s"), ("SISMEMBER", "s", "01"), ("SISMEMBER", "s", ""),
        ("SMISMEMBER", "s", "1", "+1", "", "2", "-0"), ("SREM", "s", "01", "0", "x"),
        u("SMEMBERS", "s"),
    ],
    "Binary-safe members": [
        ("SADD", "s", b"\x00\r\n\xff", b"a\x00b", "a", b"\x00"), ("SCARD", "s"),
        ("SISMEMBER", "s", b"a\x00b"), ("SISMEMBER", "s", b"a\x00c"), u("SMEMBERS", "s"),
        ("SREM", "s", b"\x00"), u("SMEMBERS", "s"),
    ],
    # SREM
    "SREM counts removed members, repeated members once, deletes the emptied key": [
        ints("s", 1, 2, 3), ("SREM", "s", "1", "1", "x", "9"), ("SMEMBERS", "s"),
        ("SREM", "s", "2", "3", "2"), ("EXISTS", "s"), ("TYPE", "s"), ("SREM", "s", "2"),
        ("SREM", "nokey", "1"), ("SADD", "t", "a", "b"), ("SREM", "t", "a", "b", "c"),
        ("EXISTS", "t"),
    ],
    # SMISMEMBER
    "SMISMEMBER: one answer per value, missing key all zeros": [
        ints("s", 1, 2), ("SMISMEMBER", "s", "1", "x", "2", "1"),
        ("SMISMEMBER", "nokey", "a", "b"), ("SADD", "t", "a"), ("SMISMEMBER", "t", "a", "b"),
    ],
    # SMOVE
    "SMOVE between intsets, to a new key, onto itself": [
        ints("a", 1, 2), ints("b", 3), ("SMOVE", "a", "b", "1"), ("SMEMBERS", "a"),
        ("SMEMBERS", "b"), ("SMOVE", "a", "b", "5"), ("SMOVE", "a", "a", "2"),
        ("SMOVE", "a", "a", "9"), ("SMOVE", "a", "c", "2"), ("EXISTS", "a"), ("SMEMBERS", "c"),
        ("OBJECT", "ENCODING", "c"), ("SMOVE", "b", "c", "3"), ("SMEMBERS", "c"),
        ("SMOVE", "c", "b", "2"), ("SMOVE", "b", "c", "2"), ("SMEMBERS", "c"),
        ("SMOVE", "nokey", "c", "1"), ("SMOVE", "nokey", "nokey", "1"),
    ],
    "SMOVE: a missing source answers 0 before any type check": [
        ("SET", "str", "x"), ints("b", 1), ("SMOVE", "nokey", "str", "1"),
        ("SMOVE", "str", "b", "1"), ("SMOVE", "b", "str", "1"), ("SMOVE", "str", "str", "1"),
        ("SMEMBERS", "b"), ("GET", "str"),
    ],
    "SMOVE of a member already in the destination still removes it from the source": [
        ints("a", 1, 2), ints("b", 1), ("SMOVE", "a", "b", "1"), ("SMEMBERS", "a"),
        ("SMEMBERS", "b"), ("SADD", "x", "s"), ("SADD", "y", "s", "t"), ("SMOVE", "x", "y", "s"),
        ("EXISTS", "x"), ("SCARD", "y"),
    ],
    # SPOP
    "SPOP: missing key, count 0, errors": [
        ("SPOP", "nokey"), ("SPOP", "nokey", "0"), ("SPOP", "nokey", "5"),
        ("SPOP", "nokey", "-1"), ("SPOP", "nokey", "x"), ("SPOP", "nokey", "1", "2"),
        ints("s", 1), ("SPOP", "s", "0"), ("SPOP", "s", "-1"), ("SPOP", "s", "x"),
        ("SPOP", "s", "1.5"), ("SPOP", "s", ""), ("SPOP", "s", I64_MIN),
        ("SPOP", "s", "9223372036854775808"), ("SPOP", "s", "1", "2"), ("SMEMBERS", "s"),
    ],
    "SPOP: a count of at least the size pops the whole set and deletes the key": [
        ints("s", 3, 1, 2), ("SPOP", "s", "3"), ("EXISTS", "s"), ints("s", 5),
        ("SPOP", "s", "10"), ints("s", 9), ("SPOP", "s", I64_MAX), ("EXISTS", "s"), ints("s", 7),
        ("SPOP", "s"), ("EXISTS", "s"), ("SPOP", "s"),
    ],
    "SPOP: errors in the count come before WRONGTYPE": [
        ("SET", "str", "x"), ("SPOP", "str", "-1"), ("SPOP", "str", "x"), ("SPOP", "str", "0"),
        ("SPOP", "str", "1"), ("SPOP", "str"), ("SPOP", "str", "1", "2"),
    ],
    # SRANDMEMBER
    "SRANDMEMBER: missing key, errors, count 0": [
        ("SRANDMEMBER", "nokey"), ("SRANDMEMBER", "nokey", "3"), ("SRANDMEMBER", "nokey", "-3"),
        ("SRANDMEMBER", "nokey", "0"), ("SRANDMEMBER", "nokey", "x"), ints("s", 1),
        ("SRANDMEMBER", "s", "0"), ("SRANDMEMBER", "s", "x"), ("SRANDMEMBER", "s", "1.5"),
        ("SRANDMEMBER", "s", ""), ("SRANDMEMBER", "s", I64_MIN),
        ("SRANDMEMBER", "s", "9223372036854775808"), ("SRANDMEMBER", "s", "1", "2"),
        ("SRANDMEMBER", "nokey", "1", "2"), ("SRANDMEMBER", "s", "x", "2"),
    ],
    "SRANDMEMBER: WRONGTYPE after the count is parsed, before count 0": [
        ("SET", "str", "x"), ("SRANDMEMBER", "str"), ("SRANDMEMBER", "str", "0"),
        ("SRANDMEMBER", "str", "x"), ("SRANDMEMBER", "str", "-2"),
    ],
    "SRANDMEMBER: one member, any count": [
        ints("s", 7), ("SRANDMEMBER", "s"), ("SRANDMEMBER", "s", "1"), ("SRANDMEMBER", "s", "5"),
        ("SRANDMEMBER", "s", "-3"), ("SRANDMEMBER", "s", "-1"), ("SRANDMEMBER", "s", I64_MAX),
        ("SADD", "t", "only"), ("SRANDMEMBER", "t", "-2"), ("SRANDMEMBER", "t", "2"),
    ],
    "SRANDMEMBER: a count of at least the size answers the whole intset in order": [
        ints("s", 5, -2, 9, 0), ("SRANDMEMBER", "s", "4"), ("SRANDMEMBER", "s", "100"),
        ("SRANDMEMBER", "s", I64_MAX),
    ],
    # Set algebra on intsets
    "SINTER / SUNION / SDIFF of intsets": [
        ints("a", 1, 2, 3, 4, 5), ints("b", 8, 7, 6, 5, 4, 3), ints("c", 9, 5),
        ("SINTER", "a", "b"), ("SINTER", "a", "b", "c"), ("SINTER", "b", "a"),
        ("SINTER", "a", "nokey"), ("SINTER", "nokey", "a"), ("SINTER", "a"), ("SINTER", "a", "a"),
        ("SINTER", "nokey"), ("SUNION", "a", "b", "c"), ("SUNION", "c", "nokey", "a"),
        ("SUNION", "nokey"), ("SUNION", "a", "a"), ("SDIFF", "a", "b"), ("SDIFF", "b", "a"),
        ("SDIFF", "a", "b", "c"), ("SDIFF", "nokey", "a"), ("SDIFF", "a", "nokey"),
        ("SDIFF", "a", "a"), ("SDIFF", "b", "c", "b"), ("SDIFF", "a"), ("SDIFF", "c", "nokey", "a"),
    ],
    "SINTER / SUNION / SDIFF with strings (unordered)": [
        ("SADD", "a", "x", "y", "z", "1"), ("SADD", "b", "y", "z", "w", "2"), ints("c", 1, 2),
        u("SINTER", "a", "b"), u("SUNION", "a", "b", "c"), u("SDIFF", "a", "b"),
        u("SDIFF", "b", "a", "c"), ("SINTER", "a", "c"), u("SUNION", "c", "a"),
        ("SDIFF", "c", "a", "b"),
    ],
    "Set algebra: WRONGTYPE for any key, missing keys included": [
        ints("a", 1), ("SET", "str", "x"), ("SINTER", "a", "str"), ("SINTER", "nokey", "str"),
        ("SINTER", "str"), ("SUNION", "a", "str"), ("SUNION", "nokey", "str"),
        ("SDIFF", "a", "str"), ("SDIFF", "nokey", "str"), ("SDIFF", "str", "a"),
        ("SINTERCARD", "2", "nokey", "str"), ("SINTERSTORE", "d", "a", "str"),
        ("SUNIONSTORE", "d", "str"), ("SDIFFSTORE", "d", "nokey", "str"), ("EXISTS", "d"),
        ("SINTERSTORE", "str", "a"), ("GET", "str"),
    ],
    # STORE variants
    "SINTERSTORE / SUNIONSTORE / SDIFFSTORE replace the destination and drop its TTL": [
        ints("a", 1, 2, 3, 4), ints("b", 3, 4, 5), ("SET", "d", "x", "EX", "1000"),
        ("SINTERSTORE", "d", "a", "b"), ("TTL", "d"), ("TYPE", "d"), ("SMEMBERS", "d"),
        ("OBJECT", "ENCODING", "d"), ("EXPIRE", "d", "1000"), ("SUNIONSTORE", "d", "a", "b"),
        ("TTL", "d"), ("SMEMBERS", "d"), ("SDIFFSTORE", "d", "a", "b"), ("SMEMBERS", "d"),
        ("SDIFFSTORE", "e", "b", "a"), ("SMEMBERS", "e"), ("OBJECT", "ENCODING", "e"),
    ],
    "STORE commands: an empty result deletes the destination": [
        ints("a", 1, 2), ("SET", "d", "x"), ("SINTERSTORE", "d", "a", "nokey"), ("EXISTS", "d"),
        ("SET", "d", "x"), ("SUNIONSTORE", "d", "nokey"), ("EXISTS", "d"), ("SET", "d", "x"),
        ("SDIFFSTORE", "d", "a", "a"), ("EXISTS", "d"), ("SET", "d", "x"),
        ("SDIFFSTORE", "d", "nokey", "a"), ("EXISTS", "d"), ("SINTERSTORE", "d", "nokey"),
        ints("b", 3), ("SINTERSTORE", "d", "a", "b"), ("EXISTS", "d"),
    ],
    "STORE commands may write over one of their sources": [
        ints("a", 1, 2, 3), ints("b", 3, 4), ("SUNIONSTORE", "a", "a", "b"), ("SMEMBERS", "a"),
        ("SINTERSTORE", "b", "a", "b"), ("SMEMBERS", "b"), ("SDIFFSTORE", "a", "a", "b"),
        ("SMEMBERS", "a"), ("SINTERSTORE", "a", "a"), ("SMEMBERS", "a"),
    ],
    "STORE commands with string members (unordered)": [
        ("SADD", "a", "x", "y", "1"), ("SADD", "b", "y", "2"), ("SUNIONSTORE", "d", "a", "b"),
        u("SMEMBERS", "d"), ("SINTERSTORE", "d", "a", "b"), ("SMEMBERS", "d"),
        ("SDIFFSTORE", "d", "a", "b"), u("SMEMBERS", "d"), ("SCARD", "d"),
    ],
    # SINTERCARD
    "SINTERCARD: counts, LIMIT, repeated keys": [
        ints("a", 1, 2, 3, 4, 5), ints("b", 2, 3, 4, 5, 6), ("SADD", "c", "3", "4", "x"),
        ("SINTERCARD", "2", "a", "b"), ("SINTERCARD", "3", "a", "b", "c"),
        ("SINTERCARD", "1", "a"), ("SINTERCARD", "2", "a", "a"), ("SINTERCARD", "2", "a", "nokey"),
        ("SINTERCARD", "1", "nokey"), ("SINTERCARD", "2", "a", "b", "LIMIT", "0"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "1"), ("SINTERCARD", "2", "a", "b", "limit", "3"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "100"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "0"),
        ("SINTERCARD", "2", "a", "LIMIT"), ("SINTERCARD", "1", "a", b"limit\x00x", "2"),
    ],
    "SINTERCARD: errors in Redis's order": [
        ints("a", 1), ("SET", "str", "x"), ("SINTERCARD", "0", "a"), ("SINTERCARD", "-1", "a"),
        ("SINTERCARD", "x", "a"), ("SINTERCARD", "", "a"), ("SINTERCARD", "1.5", "a"),
        ("SINTERCARD", "2", "a"), ("SINTERCARD", "3", "a", "a"),
        ("SINTERCARD", "1", "a", "LIMIT", "-1"), ("SINTERCARD", "1", "a", "LIMIT", "x"),
        ("SINTERCARD", "1", "a", "LIMIT"), ("SINTERCARD", "1", "a", "BOGUS", "1"),
        ("SINTERCARD", "1", "a", "b"), ("SINTERCARD", "1", "str", "LIMIT", "-1"),
        ("SINTERCARD", "1", "str"), ("SINTERCARD", "1", "str", "BOGUS"),
        ("SINTERCARD", I64_MAX, "a"), ("SINTERCARD", "9223372036854775808", "a"),
    ],
    # SSCAN
    "SSCAN: a small set comes whole with cursor 0, whatever the cursor and count": [
        ints("s", 12, 3, -7, 100), ("SSCAN", "s", "0"), ("SSCAN", "s", "12345"),
        ("SSCAN", "s", "0", "COUNT", "1"), ("SSCAN", "s", "-1"),
        ("SSCAN", "s", "18446744073709551615"), ("SSCAN", "s", "0", "count", "2", "count", "3"),
    ],
    "SSCAN: MATCH": [
        ints("s", 1, 12, 123, 21, -1), ("SSCAN", "s", "0", "MATCH", "1*"),
        ("SSCAN", "s", "0", "MATCH", "*1"), ("SSCAN", "s", "0", "MATCH", "-*"),
        ("SSCAN", "s", "0", "MATCH", "*"), ("SSCAN", "s", "0", "MATCH", "[2-3]*"),
        ("SSCAN", "s", "0", "MATCH", ""), ("SSCAN", "s", "0", "MATCH", "nothing"),
        ("SADD", "t", "apple", "banana", "apricot"), u("SSCAN", "t", "0", "MATCH", "a*"),
        ("SSCAN", "t", "0", "MATCH", "b*"),
    ],
    "SSCAN: option and cursor errors": [
        ints("s", 1), ("SSCAN", "s", "x"), ("SSCAN", "s", "1x"), ("SSCAN", "s", ""),
        ("SSCAN", "s", " 1"), ("SSCAN", "s", "18446744073709551616"),
        ("SSCAN", "s", "0", "COUNT", "0"), ("SSCAN", "s", "0", "COUNT", "-1"),
        ("SSCAN", "s", "0", "COUNT", "x"), ("SSCAN", "s", "0", "COUNT"),
        ("SSCAN", "s", "0", "MATCH"), ("SSCAN", "s", "0", "TYPE", "set"),
        ("SSCAN", "s", "0", "BOGUS"), ("SSCAN", "s", "0", b"count\x00x", "5"),
    ],
    "SSCAN: a missing key answers before the options are read; cursor errors first": [
        ("SSCAN", "nokey", "0"), ("SSCAN", "nokey", "0", "COUNT", "0"),
        ("SSCAN", "nokey", "0", "BOGUS"), ("SSCAN", "nokey", "x"), ("SET", "str", "x"),
        ("SSCAN", "str", "0"), ("SSCAN", "str", "x"), ("SSCAN", "str", "0", "BOGUS"),
    ],
    # WRONGTYPE
    "Set commands on a string, a hash or a stream are WRONGTYPE": [
        ("SET", "str", "x"), ("HSET", "h", "f", "v"), stream("t"),
        *[cmd for key in ("str", "h", "t") for cmd in [
            ("SADD", key, "m"), ("SREM", key, "m"), ("SMEMBERS", key), ("SISMEMBER", key, "m"),
            ("SMISMEMBER", key, "m"), ("SCARD", key), ("SPOP", key), ("SPOP", key, "2"),
            ("SRANDMEMBER", key), ("SRANDMEMBER", key, "-2"), ("SSCAN", key, "0"),
            ("SINTER", key), ("SUNION", key), ("SDIFF", key), ("SINTERCARD", "1", key),
        ]],
        ("GET", "str"), ("HGETALL", "h"), ("XLEN", "t"),
    ],
    "String, hash and stream commands on a set are WRONGTYPE": [
        ints("s", 1), ("GET", "s"), ("INCR", "s"), ("APPEND", "s", "x"), ("STRLEN", "s"),
        ("GETRANGE", "s", "0", "1"), ("SETRANGE", "s", "0", "x"), ("GETDEL", "s"),
        ("GETEX", "s"), ("MGET", "s", "nokey"), ("HSET", "s", "f", "v"), ("HGET", "s", "f"),
        ("HGETALL", "s"), ("XADD", "s", "1-1", "f", "v"), ("XLEN", "s"), ("LCS", "s", "s"),
        ("SMEMBERS", "s"),
    ],
    "SET, MSET and SETNX over a set": [
        ints("s", 1), ("SETNX", "s", "x"), ("SMEMBERS", "s"), ("SET", "s", "v"), ("GET", "s"),
        ("TYPE", "s"), ints("t", 1), ("MSET", "t", "v"), ("TYPE", "t"),
    ],
    # Keyspace
    "TYPE, OBJECT ENCODING, EXISTS, TOUCH, DEL, UNLINK of a set": [
        ints("s", 1), ("TYPE", "s"), ("OBJECT", "ENCODING", "s"), ("OBJECT", "REFCOUNT", "s"),
        ("EXISTS", "s"), ("TOUCH", "s"), ("DEL", "s"), ("TYPE", "s"), ("SADD", "s", "x"),
        ("TYPE", "s"), ("UNLINK", "s"), ("OBJECT", "ENCODING", "s"),
    ],
    "RENAME / RENAMENX / MOVE / SWAPDB keep the set and its TTL": [
        ints("s", 1, 2), ("EXPIREAT", "s", FAR_FUTURE_S), ("RENAME", "s", "t"),
        ("SMEMBERS", "t"), ("EXPIRETIME", "t"), ints("k", 9), ("RENAMENX", "t", "k"),
        ("RENAME", "t", "k"), ("SMEMBERS", "k"), ("MOVE", "k", "1"), ("EXISTS", "k"),
        ("SELECT", "1"), ("SMEMBERS", "k"), ("EXPIRETIME", "k"), ("OBJECT", "ENCODING", "k"),
        ("SELECT", "0"), ("SWAPDB", "0", "1"), ("SMEMBERS", "k"), ("SADD", "k", "3"),
        ("SWAPDB", "0", "1"), ("SELECT", "1"), ("SMEMBERS", "k"), ("SELECT", "0"),
    ],
    "COPY makes an independent set, with REPLACE and DB": [
        ints("s", 1, 2), ("COPY", "s", "c"), ("SADD", "s", "3"), ("SREM", "s", "1"),
        ("SADD", "c", "9"), ("SMEMBERS", "s"), ("SMEMBERS", "c"), ("COPY", "s", "c"),
        ("COPY", "s", "c", "REPLACE"), ("SMEMBERS", "c"), ("COPY", "c", "c", "DB", "1"),
        ("SADD", "c", "4"), ("SELECT", "1"), ("SMEMBERS", "c"), ("OBJECT", "ENCODING", "c"),
        ("SELECT", "0"), ("SADD", "h", "x", "y"), ("COPY", "h", "h2"), ("SADD", "h", "z"),
        u("SMEMBERS", "h2"), u("SMEMBERS", "h"),
    ],
    "EXPIRE and PERSIST on sets; a past expiry deletes; writes keep the TTL": [
        ints("s", 1), ("EXPIREAT", "s", FAR_FUTURE_S), ("SADD", "s", "2"), ("EXPIRETIME", "s"),
        ("SREM", "s", "2"), ("EXPIRETIME", "s"), ("SPOP", "s", "0"), ("EXPIRETIME", "s"),
        ("PERSIST", "s"), ("TTL", "s"), ("EXPIREAT", "s", "1000"), ("EXISTS", "s"),
        ("SMEMBERS", "s"), ("SADD", "s", "1"), ("EXPIRE", "s", "-1"), ("SCARD", "s"),
        ints("p", 1, 2, 3), ("EXPIREAT", "p", FAR_FUTURE_S), N(("SPOP", "p", "1")),
        ("EXPIRETIME", "p"), ("SMOVE", "p", "q", "5"), ("EXPIRETIME", "p"),
    ],
    "SCAN TYPE set and KEYS": [
        ints("s", 1), ("SET", "str", "x"), ("HSET", "h", "f", "v"), stream("t"),
        ("SCAN", "0", "TYPE", "set"), ("SCAN", "0", "TYPE", "SET"), ("KEYS", "s"),
    ],
    "CONFIG: set-max-intset-entries": [
        ("CONFIG", "GET", "set-max-intset-entries"),
        ("CONFIG", "SET", "set-max-intset-entries", "-1"),
        ("CONFIG", "SET", "set-max-intset-entries", "abc"),
        ("CONFIG", "SET", "set-max-intset-entries", "9223372036854775808"),
        ("CONFIG", "GET", "set-max-intset-entries"),
    ],
    # Encodings the 7.0 reference shares
    "OBJECT ENCODING: an intset up to 512 members, then a hashtable for good": [
        ("SADD", "s", *[str(i) for i in range(512)]), ("OBJECT", "ENCODING", "s"),
        ("SADD", "s", "512"), ("OBJECT", "ENCODING", "s"), ("SCARD", "s"),
        ("SREM", "s", *[str(i) for i in range(500)]), ("OBJECT", "ENCODING", "s"),
        ("SADD", "t", *[str(i) for i in range(600)]), ("OBJECT", "ENCODING", "t"),
    ],
    "SINTERSTORE / SUNIONSTORE of integers store an intset": [
        ("SADD", "big", *[str(i) for i in range(600)]), ints("small", 5, 700, 3),
        ("SINTERSTORE", "d", "big", "small"), ("OBJECT", "ENCODING", "d"), ("SMEMBERS", "d"),
        ("SUNIONSTORE", "e", "small", "small"), ("OBJECT", "ENCODING", "e"),
        ("SDIFFSTORE", "f", "small", "big"), ("OBJECT", "ENCODING", "f"), ("SMEMBERS", "f"),
        ("SINTERSTORE", "g", "big", "big"), ("OBJECT", "ENCODING", "g"), ("SCARD", "g"),
    ],
    "COMMAND GETKEYS of the set commands": [
        ("COMMAND", "GETKEYS", "SADD", "s", "a", "b"),
        ("COMMAND", "GETKEYS", "SMOVE", "a", "b", "m"),
        ("COMMAND", "GETKEYS", "SINTER", "a", "b", "c"),
        ("COMMAND", "GETKEYS", "SINTERSTORE", "d", "a", "b"),
        ("COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1"),
        ("COMMAND", "GETKEYS", "SINTERCARD", "3", "a", "b"),
        ("COMMAND", "GETKEYSANDFLAGS", "SDIFFSTORE", "d", "a", "b"),
        ("COMMAND", "GETKEYSANDFLAGS", "SMOVE", "a", "b", "m"),
        ("COMMAND", "GETKEYSANDFLAGS", "SPOP", "s", "2"), ("COMMAND", "GETKEYS", "SSCAN", "s", "0"),
        ("COMMAND", "INFO", "SINTERCARD", "SMOVE", "SPOP", "SORT", "SORT_RO"),
    ],
    # Transactions
    "MULTI: each reply shows the set as it was at that command": [
        ints("k", 1), ("MULTI",), ("SMEMBERS", "k"), ("SADD", "k", "2"), ("SMEMBERS", "k"),
        ("SINTER", "k", "k"), ("SUNION", "k"), ("SRANDMEMBER", "k", "5"), ("SSCAN", "k", "0"),
        ("SREM", "k", "1", "2"), ("SMEMBERS", "k"), ("EXEC",), ("EXISTS", "k"),
    ],
    "MULTI: arity errors abort, WRONGTYPE does not": [
        ("SET", "str", "x"), ("MULTI",), ("SADD", "k"), ("SADD", "k", "1"), ("EXEC",),
        ("MULTI",), ("SADD", "k", "1"), ("SADD", "str", "1"), ("SMEMBERS", "k"), ("EXEC",),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_set_scenario(pair: Pair, scenario: str) -> None:
    play(pair, *SCENARIOS[scenario])


# -- configuration-dependent encodings (shared with 7.0: intset to hashtable) ----------------------


@pytest.fixture
def small_intsets(pair: Pair) -> Iterator[None]:
    """Both servers with a tiny intset limit, restored afterwards (the servers are shared)."""
    play(pair, ("CONFIG", "SET", "set-max-intset-entries", "3"))
    try:
        yield
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "set-max-intset-entries", "512")


def test_intset_limit_from_config(pair: Pair, small_intsets: None) -> None:
    play(pair, ints("s", 1, 2, 3), ("OBJECT", "ENCODING", "s"), ints("s", 4),
         ("OBJECT", "ENCODING", "s"), ("SREM", "s", "1", "2", "3"), ("OBJECT", "ENCODING", "s"),
         ints("t", 1, 2), ("SMOVE", "s", "t", "4"), ("OBJECT", "ENCODING", "t"),
         ("SMEMBERS", "t"), ("SMOVE", "t", "u", "4"), ("OBJECT", "ENCODING", "u"),
         ints("a", 1, 2, 3), ints("b", 4, 5, 6), ("SUNIONSTORE", "d", "a", "b"),
         ("OBJECT", "ENCODING", "d"), ("SCARD", "d"),
         ("CONFIG", "SET", "set-max-intset-entries", "0"), ("SMOVE", "t", "w", "1"),
         ("OBJECT", "ENCODING", "t"))


# -- Redis 7.2 and later: listpack sets ------------------------------------------------------------


def _set_reply(resp: int, members: list[str]) -> bytes:
    head = b"~" if resp == 3 else b"*"
    body = b"".join(b"$%d\r\n%s\r\n" % (len(m.encode()), m.encode()) for m in members)
    return head + b"%d\r\n" % len(members) + body


def _bulk(text: str) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(text), text.encode())


def expect(pair: Pair, cmd: Step, reply: bytes) -> None:
    got = pair.ours.call(*cmd)
    assert got == reply, f"{cmd}: expected {reply!r}, resplite {got!r}"


def expect_members(pair: Pair, key: str, members: list[str], encoding: str) -> None:
    """resplite's SMEMBERS in exactly this order, and its encoding; the reference agrees on
    the contents."""
    expect(pair, ("SMEMBERS", key), _set_reply(pair.resp, members))
    expect(pair, ("OBJECT", "ENCODING", key), _bulk(encoding))
    ref = decode(pair.ref.call("SMEMBERS", key))
    assert sorted(ref) == sorted(m.encode() for m in members)


@pytest.mark.redis_version("7.2")
def test_small_string_sets_are_listpacks_in_insertion_order(pair: Pair) -> None:
    play(pair, ("SADD", "s", "c", "a", "b"))
    expect_members(pair, "s", ["c", "a", "b"], "listpack")
    play(pair, ("SREM", "s", "a"), ("SADD", "s", "a", "d"))
    expect_members(pair, "s", ["c", "b", "a", "d"], "listpack")
    # The first member decides: an integer starts an intset, converted by the first string
    # into a listpack that begins with the integers in ascending order.
    play(pair, ("SADD", "m", "3", "1", "x", "2"))
    expect_members(pair, "m", ["1", "3", "x", "2"], "listpack")
    play(pair, ("SADD", "n", "x", "3", "1"))
    expect_members(pair, "n", ["x", "3", "1"], "listpack")
    expect(pair, ("SSCAN", "n", "0"), b"*2\r\n$1\r\n0\r\n" + _set_reply(2, ["x", "3", "1"]))
    expect(pair, ("SRANDMEMBER", "n", "3"), _set_reply(2, ["x", "3", "1"]))
    if ref_version(pair) >= (7, 2):
        for key in ("s", "m", "n"):
            pair.check("OBJECT", "ENCODING", key)
            pair.check("SMEMBERS", key)
    else:  # 7.0 keeps such sets as hashtables.
        assert pair.ref.call("OBJECT", "ENCODING", "m") == _bulk("hashtable")


@pytest.mark.redis_version("7.2")
def test_listpack_limits(pair: Pair) -> None:
    members = [f"m{i}" for i in range(128)]
    play(pair, ("SADD", "s", *members))
    expect_members(pair, "s", members, "listpack")
    play(pair, ("SADD", "s", "m0"))
    expect(pair, ("OBJECT", "ENCODING", "s"), _bulk("listpack"))
    play(pair, ("SADD", "s", "m128"))
    expect(pair, ("OBJECT", "ENCODING", "s"), _bulk("hashtable"))
    play(pair, ("SREM", "s", *members), ("SCARD", "s"))
    expect(pair, ("OBJECT", "ENCODING", "s"), _bulk("hashtable"))  # never converts back
    # Member length: 64 bytes fit, 65 do not.
    play(pair, ("SADD", "v", "a", LONG_64))
    expect(pair, ("OBJECT", "ENCODING", "v"), _bulk("listpack"))
    play(pair, ("SADD", "v", LONG_65))
    expect(pair, ("OBJECT", "ENCODING", "v"), _bulk("hashtable"))
    play(pair, ("SADD", "w", LONG_65))
    expect(pair, ("OBJECT", "ENCODING", "w"), _bulk("hashtable"))
    # One SADD bringing more than 128 members converts first, duplicates included.
    play(pair, ("SADD", "d", "x"), ("SADD", "d", *(["x"] * 129)), ("SCARD", "d"))
    expect(pair, ("OBJECT", "ENCODING", "d"), _bulk("hashtable"))
    play(pair, ("SADD", "e", *[f"e{i}" for i in range(129)]))
    expect(pair, ("OBJECT", "ENCODING", "e"), _bulk("hashtable"))
    play(pair, ("SADD", "i", "1"), ("SADD", "i", *(["1"] * 513)))
    expect(pair, ("OBJECT", "ENCODING", "i"), _bulk("hashtable"))
    play(pair, ("SADD", "j", "1"), ("SADD", "j", *(["1"] * 512)))
    expect(pair, ("OBJECT", "ENCODING", "j"), _bulk("intset"))


@pytest.mark.redis_version("7.2")
def test_a_string_converts_an_intset_to_listpack_only_if_everything_fits(pair: Pair) -> None:
    play(pair, ("SADD", "big", *[str(i) for i in range(128)]), ("SADD", "big", "x"))
    expect(pair, ("OBJECT", "ENCODING", "big"), _bulk("hashtable"))
    play(pair, ("SADD", "fits", *[str(i) for i in range(127)]), ("SADD", "fits", "x"))
    expect(pair, ("OBJECT", "ENCODING", "fits"), _bulk("listpack"))
    play(pair, ("SADD", "long", "1"), ("SADD", "long", LONG_65))
    expect(pair, ("OBJECT", "ENCODING", "long"), _bulk("hashtable"))


@pytest.fixture
def small_listpacks(pair: Pair) -> Iterator[None]:
    for conn in (pair.ref, pair.ours):
        conn.call("CONFIG", "SET", "set-max-intset-entries", "3")
    assert pair.ours.call("CONFIG", "SET", "set-max-listpack-entries", "4") == b"+OK\r\n"
    assert pair.ours.call("CONFIG", "SET", "set-max-listpack-value", "19") == b"+OK\r\n"
    try:
        yield
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "set-max-intset-entries", "512")
        pair.ours.call("CONFIG", "SET", "set-max-listpack-entries", "128")
        pair.ours.call("CONFIG", "SET", "set-max-listpack-value", "64")


@pytest.mark.redis_version("7.2")
def test_encodings_follow_the_listpack_directives(
    pair: Pair, small_listpacks: None
) -> None:
    ours = pair.ours
    # Four integers brought at once: too many for an intset of 3, so a listpack from the start.
    ours.call("SADD", "a", "1", "2", "3", "4")
    expect(pair, ("OBJECT", "ENCODING", "a"), _bulk("listpack"))
    expect(pair, ("SMEMBERS", "a"), _set_reply(pair.resp, ["1", "2", "3", "4"]))
    ours.call("SADD", "a", "5")
    expect(pair, ("OBJECT", "ENCODING", "a"), _bulk("hashtable"))
    # An intset whose widest integer is longer than the value limit cannot become a listpack.
    ours.call("SADD", "w", I64_MIN)
    ours.call("SADD", "w", "x")
    expect(pair, ("OBJECT", "ENCODING", "w"), _bulk("hashtable"))
    ours.call("SADD", "n", I64_MAX)
    ours.call("SADD", "n", "x")
    expect(pair, ("OBJECT", "ENCODING", "n"), _bulk("listpack"))
    # An intset grown past its limit becomes a hashtable, never a listpack.
    ours.call("SADD", "g", "1", "2", "3")
    ours.call("SADD", "g", "4")
    expect(pair, ("OBJECT", "ENCODING", "g"), _bulk("hashtable"))
    # set-max-intset-entries 0: a new set of integers starts as a listpack.
    ours.call("CONFIG", "SET", "set-max-intset-entries", "0")
    ours.call("SADD", "z", "1")
    expect(pair, ("OBJECT", "ENCODING", "z"), _bulk("listpack"))


@pytest.mark.redis_version("7.2")
def test_config_names_of_the_listpack_directives(pair: Pair) -> None:
    ours = pair.ours
    for name, default in (("set-max-listpack-entries", "128"), ("set-max-listpack-value", "64")):
        assert decode(ours.call("CONFIG", "GET", name)) in (
            [name.encode(), default.encode()], {name.encode(): default.encode()})
        assert ours.call("CONFIG", "SET", name, "-1").startswith(b"-ERR CONFIG SET failed")
        assert ours.call("CONFIG", "SET", name, "x").startswith(b"-ERR CONFIG SET failed")
        assert ours.call("CONFIG", "SET", name, default) == b"+OK\r\n"
    if ref_version(pair) >= (7, 2):
        for name in ("set-max-listpack-entries", "set-max-listpack-value"):
            pair.check("CONFIG", "GET", name)
            pair.check("CONFIG", "SET", name, "x")
    else:  # the 7.0 reference does not know them
        assert decode(pair.ref.call("CONFIG", "GET", "set-max-listpack-entries")) in ([], {})


@pytest.mark.redis_version("7.2")
def test_set_algebra_orders_and_encodings(pair: Pair) -> None:
    play(pair, ("SADD", "c", "x", "5", "2"), ("SREM", "c", "x"), ("SADD", "c", "x"))
    expect_members(pair, "c", ["5", "2", "x"], "listpack")
    # SUNION builds its result from an empty intset: the integers seen before the first
    # string come out sorted, and so does a whole-set SPOP.
    expect(pair, ("SUNION", "c"), _set_reply(pair.resp, ["2", "5", "x"]))
    play(pair, ("SADD", "d", "q", "5"))
    expect(pair, ("SUNION", "c", "d"), _set_reply(pair.resp, ["2", "5", "x", "q"]))
    expect(pair, ("SDIFF", "c", "d"), _set_reply(pair.resp, ["2", "x"]))
    expect(pair, ("SINTER", "c", "d"), _set_reply(pair.resp, ["5"]))
    # SINTER follows the smallest set's order.
    play(pair, ("SADD", "e", "x", "2", "5", "zz"))
    expect(pair, ("SINTER", "e", "c"), _set_reply(pair.resp, ["5", "2", "x"]))
    play(pair, ("SUNIONSTORE", "u", "c", "d"))
    expect_members(pair, "u", ["2", "5", "x", "q"], "listpack")
    # SINTERSTORE of integers only becomes an intset.
    play(pair, ("SINTERSTORE", "i", "c", "e"))
    expect_members(pair, "i", ["5", "2", "x"], "listpack")
    play(pair, ("SREM", "e", "x"), ("SINTERSTORE", "i", "c", "e"))
    expect_members(pair, "i", ["2", "5"], "intset")
    expect(pair, ("SPOP", "c", "3"), _set_reply(pair.resp, ["2", "5", "x"]))
    pair.ref.call("SPOP", "c", "3")
    play(pair, ("EXISTS", "c"))
    # SDIFF's two algorithms leave different encodings. Few other members: the survivors
    # of the first set are added one by one (all integers: an intset) ...
    play(pair, ("SADD", "a", "1", "x", "2", "3", "4", "5"), ("SADD", "b", "x"), ("SADD", "z", "zz"))
    play(pair, ("SDIFFSTORE", "d1", "a", "b"))
    expect_members(pair, "d1", ["1", "2", "3", "4", "5"], "intset")
    # ... more work to check each member against every set: the whole first set is added,
    # then the others are removed, and the string already made it a listpack.
    play(pair, ("SDIFFSTORE", "d2", "a", "b", "z"))
    expect_members(pair, "d2", ["1", "2", "3", "4", "5"], "listpack")
    expect(pair, ("SDIFF", "a", "b", "z"), _set_reply(pair.resp, ["1", "2", "3", "4", "5"]))
    play(pair, ("COPY", "a", "a2"))
    expect_members(pair, "a2", ["1", "x", "2", "3", "4", "5"], "listpack")
    play(pair, ("SMOVE", "a", "fresh", "x"))
    expect_members(pair, "fresh", ["x"], "listpack")
    play(pair, ("SMOVE", "a", "fresh", "3"))
    expect_members(pair, "fresh", ["x", "3"], "listpack")


@pytest.mark.redis_version("7.2")
def test_spop_rebuilds_a_mostly_popped_set(pair: Pair) -> None:
    """When most of a set is popped Redis draws the members to keep into a new set: an
    intset stays one, a hashtable of a few survivors becomes a listpack."""
    ours = pair.ours
    play(pair, ("SADD", "h", *[str(i) for i in range(1000)]))
    expect(pair, ("OBJECT", "ENCODING", "h"), _bulk("hashtable"))
    popped = decode(ours.call("SPOP", "h", "900"))
    assert isinstance(popped, list) and len(set(popped)) == 900
    expect(pair, ("OBJECT", "ENCODING", "h"), _bulk("listpack"))
    left = decode(ours.call("SMEMBERS", "h"))
    assert isinstance(left, list) and len(left) == 100
    assert set(left) | set(popped) == {str(i).encode() for i in range(1000)}
    # An intset popped down to a few: the popped members answer in ascending order.
    play(pair, ("SADD", "i", *[str(i) for i in range(20)]))
    popped = decode(ours.call("SPOP", "i", "18"))
    assert isinstance(popped, list) and len(popped) == 18
    assert popped == sorted(popped, key=int)
    expect(pair, ("OBJECT", "ENCODING", "i"), _bulk("intset"))
    # A listpack answers in its own order both ways.
    members = [f"m{i}" for i in range(30)]
    for count in ("3", "28"):
        ours.call("DEL", "l")
        ours.call("SADD", "l", *members)
        drawn = decode(ours.call("SPOP", "l", count))
        assert isinstance(drawn, list) and len(drawn) == int(count)
        positions = [members.index(m.decode()) for m in drawn]
        assert positions == sorted(positions)
        expect(pair, ("OBJECT", "ENCODING", "l"), _bulk("listpack"))
        left = decode(ours.call("SMEMBERS", "l"))
        assert isinstance(left, list)
        assert [members.index(m.decode()) for m in left] == sorted(
            members.index(m.decode()) for m in left)


@pytest.mark.redis_version("7.4")
def test_sscan_novalues_is_refused(pair: Pair) -> None:
    play(pair, ints("s", 1))
    expect(pair, ("SSCAN", "s", "0", "NOVALUES"),
           b"-ERR NOVALUES option can only be used in HSCAN\r\n")
    if ref_version(pair) >= (7, 4):
        pair.check("SSCAN", "s", "0", "NOVALUES")
    else:
        assert pair.ref.call("SSCAN", "s", "0", "NOVALUES") == b"-ERR syntax error\r\n"


# -- large sets (hashtables everywhere) ------------------------------------------------------------


def _fill(pair: Pair, key: str, n: int, prefix: str = "member:") -> None:
    play(pair, ("SADD", key, *[f"{prefix}{i}" for i in range(n)]))


def test_large_sets_compared_sorted(pair: Pair) -> None:
    _fill(pair, "a", 600)
    _fill(pair, "b", 300)
    play(pair, ("SADD", "b", *[f"other:{i}" for i in range(50)]), ints("c", 1, 2),
         ("OBJECT", "ENCODING", "a"), ("SCARD", "a"), ("SISMEMBER", "a", "member:599"),
         ("SMISMEMBER", "a", "member:0", "nope"), ("SINTERCARD", "2", "a", "b"),
         ("SINTERCARD", "2", "a", "b", "LIMIT", "7"), ("SREM", "a", "member:1", "member:2"),
         u("SMEMBERS", "a"), u("SINTER", "a", "b"), u("SINTER", "b", "a"),
         u("SUNION", "a", "b", "c"), u("SDIFF", "a", "b"), u("SDIFF", "b", "a"),
         ("SINTERSTORE", "d", "a", "b"), ("OBJECT", "ENCODING", "d"), ("SCARD", "d"),
         ("SUNIONSTORE", "e", "a", "b"), ("OBJECT", "ENCODING", "e"), ("SCARD", "e"),
         ("SDIFFSTORE", "f", "b", "a"), ("SCARD", "f"), u("SMEMBERS", "f"),
         ("SMOVE", "a", "c", "member:3"), u("SMEMBERS", "c"), ("COPY", "a", "g"),
         ("OBJECT", "ENCODING", "g"), u("SMEMBERS", "g"), ("SRANDMEMBER", "a", "0"))


def test_sinterstore_of_hashtables_of_integers_is_an_intset(pair: Pair) -> None:
    play(pair, ("SADD", "a", *[str(i) for i in range(1000)]),
         ("SADD", "b", *[str(i) for i in range(0, 2000, 3)]), ("SADD", "b", "x"),
         ("SINTERSTORE", "d", "a", "b"), ("OBJECT", "ENCODING", "d"), ("SCARD", "d"),
         ("SMEMBERS", "d"), ("SINTERSTORE", "d", "b", "b"), ("OBJECT", "ENCODING", "d"))


def _sscan_all(
    client: RawClient,
    key: str,
    *options: str | int,
    between: Callable[[int], None] | None = None,
) -> list[list[bytes]]:
    """Every batch of a full SSCAN iteration; ``between(step)`` runs after each call."""
    cursor = b"0"
    batches = []
    step = 0
    while True:
        reply = decode(client.call("SSCAN", key, cursor, *options))
        assert isinstance(reply, list) and len(reply) == 2
        cursor, batch = reply
        batches.append(batch)
        if between is not None:
            between(step)
        step += 1
        if cursor == b"0":
            return batches
        assert step < 10_000, "SSCAN did not terminate"


def test_sscan_of_a_hashtable_returns_every_member(pair: Pair) -> None:
    _fill(pair, "s", 700)
    for options in ((), ("COUNT", "1"), ("COUNT", "37"), ("COUNT", "1000"),
                    ("MATCH", "member:1*", "COUNT", "20")):
        expected = {m for b in _sscan_all(pair.ref, "s", *options) for m in b}
        batches = _sscan_all(pair.ours, "s", *options)
        got = [m for b in batches for m in b]
        assert set(got) == expected and expected
        assert len(got) == len(set(got)), "a member was returned twice without any write"
        if options == ("COUNT", "37"):
            assert len(batches) > 5 and all(len(b) <= 2 * 60 for b in batches)


def test_sscan_cursor_survives_writes(pair: Pair) -> None:
    """A member present for the whole iteration is returned, whatever is written meanwhile."""
    _fill(pair, "s", 800)
    ours = pair.ours
    rng = random.Random(5)
    removed: set[bytes] = set()

    def churn(step: int) -> None:
        ours.call("SADD", "s", *[f"new:{step}:{i}" for i in range(20)])
        victim = f"member:{rng.randrange(800)}".encode()
        ours.call("SREM", "s", victim)
        removed.add(victim)
        ours.call("SPOP", "s")  # may take anything; what it takes is not stable
        ours.call("SRANDMEMBER", "s", "-3")

    seen = {m for b in _sscan_all(ours, "s", "COUNT", "25", between=churn) for m in b}
    left = set(decode(ours.call("SMEMBERS", "s")))
    stable = {f"member:{i}".encode() for i in range(800)} - removed
    assert stable & left <= seen


# -- random picks ----------------------------------------------------------------------------------


def _members(client: RawClient, *cmd: str) -> list[bytes]:
    reply = decode(client.call(*cmd))
    assert isinstance(reply, list) and all(isinstance(m, bytes) for m in reply)
    return reply


@pytest.mark.parametrize("size", [5, 40, 300, 900], ids=["intset", "listpack", "intset-big",
                                                         "hashtable"])
def test_srandmember_draws(pair: Pair, size: int) -> None:
    if size in (5, 300, 900):
        members = [str(i * 3) for i in range(size)]
    else:
        members = [f"m{i}" for i in range(size)]
    play(pair, ("SADD", "s", *members))
    contents = {m.encode() for m in members}
    for client in (pair.ref, pair.ours):
        assert decode(client.call("SRANDMEMBER", "s")) in contents
        for count in (1, 2, 3, size // 3, size // 2, size - 1, -1, -3, -(size + 7)):
            if count == 0:
                continue
            drawn = _members(client, "SRANDMEMBER", "s", str(count))
            assert len(drawn) == abs(count) and set(drawn) <= contents
            if count > 0:
                assert len(set(drawn)) == count
        assert client.call("SCARD", "s") == b":%d\r\n" % size


def _chi_square_ok(counts: Counter[bytes], k: int) -> bool:
    """A loose uniformity check: the chi-square statistic of ``counts`` over ``k`` equally
    likely categories stays within six standard deviations of its mean."""
    total = sum(counts.values())
    expected = total / k
    stat = sum((counts.get(c, 0) - expected) ** 2 / expected for c in counts)
    stat += (k - len(counts)) * expected  # categories never drawn
    return stat <= (k - 1) + 6 * (2 * (k - 1)) ** 0.5 + 10


def test_srandmember_is_uniform(pair: Pair) -> None:
    """Negative counts draw independently and uniformly; positive counts give every member
    the same chance; single draws too. resplite's draws are checked for uniformity; Redis's
    (whose hashtable picks are only roughly fair) for covering the set, so the test itself is
    known to be sound."""
    for key, members in (("i", [str(i) for i in range(8)]), ("l", [f"m{i}" for i in range(8)]),
                         ("h", [f"h{i}" for i in range(200)])):
        play(pair, ("SADD", key, *members))
        n = len(members)
        for client in (pair.ref, pair.ours):
            draws = Counter(_members(client, "SRANDMEMBER", key, str(-400 * n)))
            assert set(draws) == {m.encode() for m in members}
            subsets: Counter[bytes] = Counter()
            for _ in range(300 if n < 100 else 60):
                picked = _members(client, "SRANDMEMBER", key, str(n // 4))
                assert len(set(picked)) == n // 4
                subsets.update(picked)
            assert len(subsets) > n * 0.9
            if client is pair.ours:
                assert _chi_square_ok(draws, n), draws
                assert _chi_square_ok(subsets, n), subsets
        singles = Counter(decode(pair.ours.call("SRANDMEMBER", key)) for _ in range(40 * 8))
        assert len(singles) >= 8


@pytest.mark.parametrize("kind", ["intset", "listpack", "hashtable"])
def test_spop_draws(pair: Pair, kind: str) -> None:
    size = {"intset": 50, "listpack": 60, "hashtable": 700}[kind]
    members = ([str(i) for i in range(size)] if kind != "listpack"
               else [f"m{i}" for i in range(size)])
    if kind == "hashtable":
        members = [f"h{i}" for i in range(size)]
    everything = {m.encode() for m in members}
    for client in (pair.ref, pair.ours):
        for count in ("1", "7", str(size // 2), str(size - 3), str(size - 1)):
            client.call("DEL", "s")
            client.call("SADD", "s", *members)
            popped = _members(client, "SPOP", "s", count)
            assert len(popped) == int(count) and len(set(popped)) == len(popped)
            left = set(_members(client, "SMEMBERS", "s"))
            assert left | set(popped) == everything and not left & set(popped)
            assert client.call("SCARD", "s") == b":%d\r\n" % (size - int(count))
        client.call("DEL", "s")
        client.call("SADD", "s", *members)
        singles = [decode(client.call("SPOP", "s")) for _ in range(size)]
        assert set(singles) == everything
        assert client.call("EXISTS", "s") == b":0\r\n"


def test_spop_is_uniform(pair: Pair) -> None:
    for client in (pair.ref, pair.ours):
        firsts: Counter[object] = Counter()
        for _ in range(400):
            client.call("SADD", "s", "a", "b", "c", "d")
            firsts[decode(client.call("SPOP", "s"))] += 1
            client.call("DEL", "s")
        assert set(firsts) == {b"a", b"b", b"c", b"d"}
        assert all(60 <= c <= 140 for c in firsts.values()), firsts


def test_srandmember_huge_negative_count_is_refused_not_built(pair: Pair) -> None:
    """Redis would try to build a reply of 2**63 members; resplite answers at once."""
    pair.ours.call("SADD", "s", "a")
    assert pair.ours.call("SRANDMEMBER", "s", "-9223372036854775807") == (
        b"-ERR value is out of range\r\n")
    assert pair.ours.call("PING") == b"+PONG\r\n"


# -- WATCH -----------------------------------------------------------------------------------------


def test_watch_sees_set_writes_but_not_no_ops(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        play(pair, ints("s", 1), ints("d", 5))
        # These leave the sets alone and signal nothing.
        for no_op in (("SADD", "s", "1"), ("SREM", "s", "9"), ("SMOVE", "s", "d", "9"),
                      ("SMOVE", "s", "s", "1"), ("SPOP", "s", "0"), ("SMEMBERS", "s"),
                      ("SINTERSTORE", "nokey", "s", "nokey")):
            play(pair, ("WATCH", "s", "nokey"))
            play(other, no_op)
            play(pair, ("MULTI",), ("SCARD", "s"), ("EXEC",))
        for write in (("SADD", "s", "2"), ("SREM", "s", "2"), ("SMOVE", "d", "s", "5"),
                      ("SMOVE", "s", "d", "5"), ("SPOP", "s", "1"), ("SADD", "s", "7"),
                      ("SUNIONSTORE", "s", "s", "d"), ("SINTERSTORE", "s", "s", "nokey"),
                      ("SADD", "s", "3"), ("DEL", "s")):
            play(pair, ("WATCH", "s"))
            play(other, write)
            play(pair, ("MULTI",), ("SCARD", "s"), ("EXEC",))
    finally:
        other.close()


# -- odds and ends ---------------------------------------------------------------------------------


def test_values_helper_agrees_on_reply_types(pair: Pair) -> None:
    """Set replies are RESP3 sets; SRANDMEMBER and SMISMEMBER are arrays in both versions."""
    play(pair, ints("s", 1, 2))
    ref, ours = values(pair, "SMEMBERS", "s")
    assert ref == ours == [b"1", b"2"]
    set_head = b"~" if pair.resp == 3 else b"*"
    for cmd in (("SMEMBERS", "s"), ("SINTER", "s"), ("SUNION", "s"), ("SDIFF", "s"),
                ("SPOP", "nokey", "1"), ("SMEMBERS", "nokey")):
        assert pair.ours.call(*cmd)[:1] == pair.ref.call(*cmd)[:1] == set_head
    for cmd in (("SRANDMEMBER", "s", "2"), ("SMISMEMBER", "s", "1"), ("SRANDMEMBER", "nokey", "2"),
                ("SSCAN", "s", "0")):
        assert pair.ours.call(*cmd)[:1] == pair.ref.call(*cmd)[:1] == b"*"


# -- keyspace hits and misses ----------------------------------------------------------------------

# Read lookups count as keyspace hits or misses, write lookups do not (Redis's lookupKeyRead
# and lookupKeyWrite); each command runs on a fresh data set after CONFIG RESETSTAT.
_LOOKUP_COMMANDS = [
    "SADD s 9", "SADD nx 1", "SREM s 1", "SREM nx 1", "SMOVE s t 1", "SMOVE nx t 1",
    "SISMEMBER s 1", "SISMEMBER nx 1", "SMISMEMBER s 1 2", "SCARD s", "SCARD nx", "SMEMBERS s",
    "SMEMBERS nx", "SPOP s", "SPOP s 0", "SPOP nx 2", "SRANDMEMBER s", "SRANDMEMBER nx 2",
    "SRANDMEMBER s 0", "SINTER s t nx", "SINTER nx s", "SINTERCARD 2 s t", "SUNION s nx t",
    "SDIFF s t", "SINTERSTORE d s t", "SUNIONSTORE d s nx", "SDIFFSTORE d nx s",
    "SSCAN s 0", "SSCAN nx 0", "SORT s", "SORT nx", "SORT s BY w_*", "SORT s GET w_* GET #",
    "SORT s BY h_*->f GET h_*->f", "SORT_RO s BY nosort", "SORT s STORE nx2", "SADD str 1",
]


def _lookup_counts(client: RawClient) -> tuple[int, int]:
    text = decode(client.call("INFO", "stats"))
    assert isinstance(text, bytes)
    fields = dict(line.split(b":", 1) for line in text.splitlines() if b":" in line)
    return int(fields[b"keyspace_hits"]), int(fields[b"keyspace_misses"])


def test_keyspace_hits_and_misses_count_read_lookups_as_redis(pair: Pair) -> None:
    for command in _LOOKUP_COMMANDS:
        counts = []
        for client in (pair.ref, pair.ours):
            client.call("FLUSHALL")
            client.call("SADD", "s", "1", "2", "3")
            client.call("SADD", "t", "2", "3", "4")
            client.call("SET", "w_1", "5")
            client.call("SET", "str", "x")
            client.call("HSET", "h_2", "f", "7")
            client.call("CONFIG", "RESETSTAT")
            client.call(*command.split())
            counts.append(_lookup_counts(client))
        assert counts[1] == counts[0], f"{command}: redis {counts[0]}, resplite {counts[1]}"


# -- keyspace events -------------------------------------------------------------------------------


def test_set_keyspace_events(pair: Pair, request: pytest.FixtureRequest) -> None:
    """The events of every set write, in Redis's order, new keys included."""
    run_events(pair, request.getfixturevalue("events"), "KEAn", [
        ("SADD", "s", "1", "2", "3"), ("SADD", "s", "1"), ("SREM", "s", "9"), ("SREM", "s", "1"),
        ("SMOVE", "s", "t", "2"), ("SMOVE", "s", "t", "3"), ("SMOVE", "t", "t", "2"),
        ("SMOVE", "t", "u", "9"), ("SADD", "u", "1"), ("SMOVE", "u", "t", "1"),
        ("SPOP", "t", "0"), ("SPOP", "nokey"), ("SPOP", "t", "5"), ("SADD", "p", "1"),
        ("SPOP", "p"), ("SADD", "a", "1", "2"), ("SADD", "b", "2", "3"),
        ("SINTERSTORE", "d", "a", "b"), ("SUNIONSTORE", "d", "a", "b"),
        ("SDIFFSTORE", "d", "a", "b"), ("SDIFFSTORE", "d", "a", "a"),
        ("SDIFFSTORE", "d", "a", "a"), ("SINTERSTORE", "d", "a", "nokey"),
        ("SUNIONSTORE", "e", "nokey"), ("SREM", "a", "1", "2"), ("SORT", "nokey", "STORE", "b"),
    ])


# -- Redis 8.10: SUNIONCARD, SDIFFCARD -------------------------------------------------------------


def _card_fixture(pair: Pair) -> dict[str, list[str]]:
    """The same sets on both servers: an intset, listpacks, a hashtable, a missing key."""
    rng = random.Random(810)
    sets = {
        "ints": [str(i) for i in range(0, 40, 3)],
        "small": ["a", "b", "c", "9", "12"],
        "other": ["c", "d", "e", "15", "a"],
        "big": [f"m{rng.randrange(400)}" for _ in range(300)] + ["a", "3", "d"],
    }
    for client in (pair.ref, pair.ours):
        for key, members in sets.items():
            client.call("SADD", key, *members)
    return sets


@pytest.mark.redis_version("8.10")
def test_sunioncard_sdiffcard_count_what_sunion_sdiff_return(pair: Pair) -> None:
    """Every count equals the size of the reference's SUNION / SDIFF of the same keys, and
    LIMIT caps it (0: no limit)."""
    _card_fixture(pair)
    combos = [("ints",), ("small", "other"), ("other", "small", "ints"), ("big", "small"),
              ("small", "nokey"), ("nokey", "small"), ("small", "small"), ("big", "big", "ints"),
              ("nokey",)]
    for keys in combos:
        for kind in ("SUNION", "SDIFF"):
            full = len(decode(pair.ref.call(kind, *keys)))
            for limit in (None, 0, 1, full, full + 1, 1000):
                extra = () if limit is None else ("LIMIT", limit)
                want = full if not limit else min(full, limit)
                got = pair.ours.call(f"{kind}CARD", len(keys), *keys, *extra)
                assert got == b":%d\r\n" % want, (kind, keys, limit)


@pytest.mark.redis_version("8.10")
def test_sunioncard_approx_is_the_hyperloglog_estimate(pair: Pair) -> None:
    """APPROX estimates with a HyperLogLog: the count PFCOUNT gives for the same members (on
    the reference), capped by LIMIT."""
    sets = _card_fixture(pair)
    for keys in (("ints",), ("small", "other"), ("big", "small", "ints"), ("nokey",)):
        members = [m for k in keys for m in sets.get(k, [])]
        pair.ref.call("DEL", "hll")
        pair.ref.call("PFADD", "hll", *members)
        estimate = decode(pair.ref.call("PFCOUNT", "hll"))
        got = pair.ours.call("SUNIONCARD", len(keys), *keys, "APPROX")
        assert got == b":%d\r\n" % estimate, keys
        assert pair.ours.call("SUNIONCARD", len(keys), *keys, "LIMIT", 2, "APPROX") == (
            b":%d\r\n" % min(estimate, 2))


@pytest.mark.redis_version("8.10")
def test_sunioncard_sdiffcard_errors(pair: Pair) -> None:
    ours = pair.ours
    ours.call("SET", "str", "x")
    ours.call("SADD", "s", "a")
    for name in ("SUNIONCARD", "SDIFFCARD"):
        assert ours.call(name, "0", "s") == b"-ERR numkeys should be greater than 0\r\n"
        assert ours.call(name, "x", "s") == b"-ERR numkeys should be greater than 0\r\n"
        assert ours.call(name, "3", "s") == (
            b"-ERR Number of keys can't be greater than number of args\r\n")
        assert ours.call(name, "1", "s", "LIMIT", "-1") == b"-ERR LIMIT can't be negative\r\n"
        assert ours.call(name, "1", "s", "LIMIT") == b"-ERR syntax error\r\n"
        assert ours.call(name, "1", "s", "FOO") == b"-ERR syntax error\r\n"
        assert ours.call(name, "2", "s", "str").startswith(b"-WRONGTYPE")
        assert ours.call(name, "1", "s", "limit", "0") == b":1\r\n"
    # APPROX is SUNIONCARD's alone.
    assert ours.call("SDIFFCARD", "1", "s", "APPROX") == b"-ERR syntax error\r\n"
    assert ours.call("SUNIONCARD", "1", "s", "approx") == b":1\r\n"
    # Read-only commands with movable keys: COMMAND GETKEYS finds the keys from numkeys.
    assert decode(ours.call("COMMAND", "GETKEYS", "SUNIONCARD", "2", "a", "b", "LIMIT", "1")) \
        == [b"a", b"b"]
    assert decode(ours.call("COMMAND", "GETKEYS", "SDIFFCARD", "1", "a")) == [b"a"]


@pytest.mark.redis_version("8.10")
def test_sunioncard_sdiffcard_with_redis_py(resplite_srv: ServerProcess) -> None:
    """redis-py's sunioncard / sdiffcard (which always send LIMIT), as its own tests use them."""
    r = redis.Redis(host=resplite_srv.host, port=resplite_srv.port)
    try:
        r.flushall()
        r.sadd("s0", "a", "b", "c", "d", "e")
        r.sadd("s1", "c", "d", "x")
        r.sadd("s2", "e", "y")
        assert r.sdiffcard(3, ["s0", "s1", "s2"]) == 2
        assert r.sdiffcard(3, ["s0", "s1", "s2"], limit=1) == 1
        assert r.sdiffcard(2, ["s0", "missing"]) == 5
        assert r.sdiffcard(2, ["missing", "s0"]) == 0
        assert r.sunioncard(2, ["s1", "s2"]) == 5
        assert r.sunioncard(2, ["s1", "s2"], approx=True) == 5
        assert r.sunioncard(2, ["s1", "missing"]) == 3
        assert r.sunioncard(2, ["s1", "s2"], limit=3) == 3
        assert r.sunioncard(2, ["s1", "s2"], limit=3, approx=True) == 3
    finally:
        r.close()


# -- large replies (sent in pieces from 4096 members on) -------------------------------------


def test_large_smembers(pair: Pair) -> None:
    # A hashtable in both servers: the same reply type and members, in table order.
    pair.check("SADD", "s", *(f"m{i}" for i in range(9000)))
    check_unordered(pair, "SMEMBERS", "s")
    pair.check("SADD", "n", *(str(i) for i in range(5000)))
    check_unordered(pair, "SMEMBERS", "n")
    pair.check("MULTI")
    pair.check("SMEMBERS", "s")
    pair.check("SADD", "s", "after")
    ref, ours = pair.both("EXEC")
    # The same reply type and count; the members' order is each table's own.
    assert ours[:11] == ref[:11]
    assert sorted(decode(ours)[0]) == sorted(decode(ref)[0])
