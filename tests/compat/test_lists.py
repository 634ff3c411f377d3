"""List commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Scenarios are short command sequences on freshly flushed servers whose replies must be
identical, errors included. Blocking commands are compared with second and third connections
to each server: a client is known to be parked once INFO counts it among ``blocked_clients``
(waiting on that is synchronisation, not timing), and the order in which Redis serves
clients is part of what is compared.

Redis 7.0 reports every list as ``quicklist``; the ``listpack`` encoding and its conversion
points, the 7.2+ timeout range checks and the 7.2 / 7.4 argument bounds are asserted in the
tests marked with those versions (their expectations were taken from Redis 7.4's source and
behaviour; the 7.0 reference is shown to answer otherwise).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from compat_helpers import Command, decode, ref_version, run
from support.notifications import run as run_watched
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerProcess

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"
FAR_FUTURE_S = "4102444800"

Scenario = list[Command]


def stream(key: str = "t") -> Command:
    return ("XADD", key, "1-1", "f", "v")


SCENARIOS: dict[str, Scenario] = {
    # Pushing
    "LPUSH / RPUSH: several elements, the order they land in, the new length": [
        ("RPUSH", "l", "a", "b", "c"), ("LPUSH", "l", "x", "y", "z"), ("LRANGE", "l", "0", "-1"),
        ("LLEN", "l"), ("RPUSH", "l", "d"), ("LPUSH", "l", "w"), ("LRANGE", "l", "0", "-1"),
    ],
    "LPUSH / RPUSH: binary-safe and empty elements, integers come back as written": [
        ("RPUSH", "l", "", b"\x00\r\n\xff", "1", "-1", "0", "007", "-0", "+5", I64_MAX,
         "9223372036854775808", I64_MIN, "-9223372036854775809", "1.5", " 1", "1e3"),
        ("LRANGE", "l", "0", "-1"), ("LINDEX", "l", "0"), ("LINDEX", "l", "1"),
        ("LPOP", "l", "3"), ("RPOP", "l", "5"), ("LRANGE", "l", "0", "-1"),
    ],
    "LPUSHX / RPUSHX: only an existing list, several elements": [
        ("LPUSHX", "l", "a"), ("RPUSHX", "l", "a", "b"), ("EXISTS", "l"), ("RPUSH", "l", "m"),
        ("LPUSHX", "l", "a", "b"), ("RPUSHX", "l", "y", "z"), ("LRANGE", "l", "0", "-1"),
    ],
    "Push commands: arity": [
        ("LPUSH", "l"), ("RPUSH", "l"), ("LPUSHX", "l"), ("RPUSHX", "l"), ("LPUSH",),
        ("EXISTS", "l"),
    ],
    # Popping
    "LPOP / RPOP: one element, then a missing key answers nil": [
        ("RPUSH", "l", "a", "b", "c"), ("LPOP", "l"), ("RPOP", "l"), ("LPOP", "l"),
        ("EXISTS", "l"), ("LPOP", "l"), ("RPOP", "l"),
    ],
    "LPOP / RPOP with a count: order, more than the length, deletes the emptied key": [
        ("RPUSH", "l", "a", "b", "c", "d", "e"), ("LPOP", "l", "2"), ("RPOP", "l", "2"),
        ("LRANGE", "l", "0", "-1"), ("RPOP", "l", "10"), ("EXISTS", "l"), ("LPOP", "l", "1"),
        ("RPOP", "l", "0"),
    ],
    "LPOP / RPOP: count 0, bad counts, arity": [
        ("RPUSH", "l", "a"), ("LPOP", "l", "0"), ("RPOP", "l", "0"), ("LPOP", "l", "-1"),
        ("RPOP", "l", "x"), ("LPOP", "l", "1.5"), ("LPOP", "l", ""), ("LPOP", "l", " 1"),
        ("LPOP", "l", "9223372036854775808"), ("LPOP", "l", I64_MIN), ("LPOP", "l", "1", "2"),
        ("RPOP", "l", "1", "2", "3"), ("LPOP", "nokey", "-1"), ("LPOP", "nokey", "0"),
        ("LPOP", "l", I64_MAX), ("EXISTS", "l"),
    ],
    "LPOP / RPOP: a bad count wins over WRONGTYPE, WRONGTYPE over count 0": [
        ("SET", "s", "x"), ("LPOP", "s", "-1"), ("LPOP", "s", "0"), ("RPOP", "s"),
        ("LPOP", "s", "x"), ("RPOP", "s", "2"),
    ],
    # Reading
    "LLEN / LRANGE / LINDEX on a missing key": [
        ("LLEN", "nokey"), ("LRANGE", "nokey", "0", "-1"), ("LINDEX", "nokey", "0"),
        ("LINDEX", "nokey", "x"), ("LRANGE", "nokey", "x", "0"), ("EXISTS", "nokey"),
    ],
    "LRANGE: negative, reversed and out-of-range indexes": [
        ("RPUSH", "l", "a", "b", "c", "d", "e"),
        *[("LRANGE", "l", a, b) for a, b in [
            ("0", "-1"), ("1", "3"), ("-2", "-1"), ("-100", "100"), ("3", "1"), ("5", "10"),
            ("-1", "-1"), ("0", "0"), ("-6", "0"), ("-5", "-5"), ("4", "4"), ("2", "-3"),
            ("0", "-6"), (I64_MIN, I64_MAX), (I64_MAX, I64_MAX), (I64_MIN, I64_MIN),
        ]],
    ],
    "LRANGE: bad indexes, read before the key": [
        ("RPUSH", "l", "a"), ("LRANGE", "l", "x", "1"), ("LRANGE", "l", "0", "1.5"),
        ("LRANGE", "l", "0", "9223372036854775808"), ("LRANGE", "l", "", "0"),
        ("SET", "s", "x"), ("LRANGE", "s", "x", "0"), ("LRANGE", "s", "0", "1"),
        ("LRANGE", "l", "0"), ("LRANGE", "l", "0", "1", "2"),
    ],
    "LINDEX: positive, negative and out-of-range indexes": [
        ("RPUSH", "l", "a", "b", "c"),
        *[("LINDEX", "l", i) for i in ("0", "2", "3", "-1", "-3", "-4", I64_MAX, I64_MIN)],
    ],
    "LINDEX: the key is looked at before the index": [
        ("RPUSH", "l", "a"), ("LINDEX", "l", "x"), ("LINDEX", "l", "1.0"), ("SET", "s", "x"),
        ("LINDEX", "s", "x"), ("LINDEX", "s", "0"), ("LINDEX", "nokey", "x"),
    ],
    # Writing in place
    "LSET: positive and negative indexes, out of range, missing key": [
        ("RPUSH", "l", "a", "b", "c"), ("LSET", "l", "0", "A"), ("LSET", "l", "-1", "C"),
        ("LSET", "l", "1", ""), ("LRANGE", "l", "0", "-1"), ("LSET", "l", "3", "x"),
        ("LSET", "l", "-4", "x"), ("LSET", "nokey", "0", "x"), ("LSET", "nokey", "x", "x"),
        ("LSET", "l", "x", "v"), ("LSET", "l", I64_MIN, "v"), ("EXISTS", "nokey"),
        ("SET", "s", "x"), ("LSET", "s", "x", "v"), ("LSET", "s", "0", "v"),
    ],
    "LINSERT: before and after the first pivot, missing pivot and key": [
        ("RPUSH", "l", "a", "b", "a", "c"), ("LINSERT", "l", "BEFORE", "a", "x"),
        ("LINSERT", "l", "after", "a", "y"), ("LINSERT", "l", "After", "c", "z"),
        ("LINSERT", "l", "before", "nope", "w"), ("LRANGE", "l", "0", "-1"),
        ("LINSERT", "nokey", "BEFORE", "a", "x"), ("EXISTS", "nokey"),
        ("LINSERT", "l", "BEFORE", "", "e"), ("RPUSH", "l", ""),
        ("LINSERT", "l", "BEFORE", "", "e"), ("LRANGE", "l", "0", "-1"),
    ],
    "LINSERT: the position is read first, as a C string": [
        ("RPUSH", "l", "a"), ("LINSERT", "l", "middle", "a", "x"),
        ("LINSERT", "nokey", "middle", "a", "x"), ("LINSERT", "l", b"after\x00junk", "a", "x"),
        ("LINSERT", "l", "afte", "a", "x"), ("SET", "s", "x"), ("LINSERT", "s", "BEFORE", "a", "x"),
        ("LINSERT", "s", "nowhere", "a", "x"), ("LINSERT", "l", "BEFORE", "a"),
        ("LRANGE", "l", "0", "-1"),
    ],
    # Removing
    "LREM: from the head, from the tail, all": [
        ("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"), ("LREM", "l", "2", "a"),
        ("LRANGE", "l", "0", "-1"), ("LREM", "l", "-1", "a"), ("LRANGE", "l", "0", "-1"),
        ("LREM", "l", "0", "b"), ("LRANGE", "l", "0", "-1"), ("LREM", "l", "5", "nope"),
        ("LREM", "l", "0", "a"), ("LREM", "l", "0", "c"), ("EXISTS", "l"), ("LREM", "l", "0", "c"),
    ],
    "LREM: bad counts and WRONGTYPE": [
        ("RPUSH", "l", "a"), ("LREM", "l", "x", "a"), ("LREM", "l", "1.5", "a"),
        ("LREM", "l", "9223372036854775808", "a"), ("LREM", "nokey", "x", "a"),
        ("SET", "s", "x"), ("LREM", "s", "x", "a"), ("LREM", "s", "0", "a"),
        ("LREM", "l", I64_MAX, "a"), ("EXISTS", "l"),
    ],
    "LTRIM: ranges, an empty result deletes the key, missing key": [
        ("RPUSH", "l", "a", "b", "c", "d", "e"), ("LTRIM", "l", "1", "-2"),
        ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "-100", "100"), ("LRANGE", "l", "0", "-1"),
        ("LTRIM", "l", "1", "1"), ("LRANGE", "l", "0", "-1"), ("LTRIM", "l", "5", "10"),
        ("EXISTS", "l"), ("LTRIM", "l", "0", "-1"), ("RPUSH", "l", "a", "b"),
        ("LTRIM", "l", "1", "0"), ("EXISTS", "l"), ("RPUSH", "l", "a", "b", "c"),
        ("LTRIM", "l", "-1", "-2"), ("EXISTS", "l"), ("RPUSH", "l", "a", "b", "c"),
        ("LTRIM", "l", I64_MIN, I64_MAX), ("LRANGE", "l", "0", "-1"),
    ],
    "LTRIM: bad indexes before WRONGTYPE": [
        ("RPUSH", "l", "a"), ("LTRIM", "l", "x", "0"), ("LTRIM", "l", "0", "y"),
        ("SET", "s", "x"), ("LTRIM", "s", "x", "0"), ("LTRIM", "s", "0", "1"),
        ("LTRIM", "nokey", "x", "0"), ("LTRIM", "nokey", "0", "1"),
    ],
    # LPOS
    "LPOS: first match, RANK from both ends, COUNT, MAXLEN": [
        ("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"),
        ("LPOS", "l", "c"), ("LPOS", "l", "nope"), ("LPOS", "l", "c", "RANK", "2"),
        ("LPOS", "l", "c", "RANK", "-1"), ("LPOS", "l", "c", "RANK", "-3"),
        ("LPOS", "l", "c", "RANK", "4"), ("LPOS", "l", "c", "COUNT", "2"),
        ("LPOS", "l", "c", "COUNT", "0"), ("LPOS", "l", "c", "COUNT", "0", "RANK", "2"),
        ("LPOS", "l", "c", "COUNT", "0", "RANK", "-1"), ("LPOS", "l", "c", "MAXLEN", "3"),
        ("LPOS", "l", "c", "MAXLEN", "3", "COUNT", "0"), ("LPOS", "l", "c", "RANK", "-1",
                                                          "MAXLEN", "1"),
        ("LPOS", "l", "c", "RANK", "-1", "MAXLEN", "2", "COUNT", "0"),
        ("LPOS", "l", "nope", "COUNT", "3"), ("LPOS", "l", "1"), ("LPOS", "l", "3", "rank", "1",
                                                                   "count", "1", "maxlen", "0"),
        ("LPOS", "l", "c", "RANK", "1", "RANK", "2"), ("LPOS", "l", "c", "RANK", I64_MAX),
        ("LPOS", "l", "c", "RANK", "-9223372036854775807", "COUNT", "0"),
        ("LPOS", "l", "c", "COUNT", I64_MAX, "MAXLEN", I64_MAX),
    ],
    "LPOS: option errors and a missing key": [
        ("RPUSH", "l", "a"), ("LPOS", "l", "a", "RANK", "0"), ("LPOS", "l", "a", "RANK", "x"),
        ("LPOS", "l", "a", "COUNT", "-1"), ("LPOS", "l", "a", "COUNT", "x"),
        ("LPOS", "l", "a", "MAXLEN", "-1"), ("LPOS", "l", "a", "MAXLEN", "1.5"),
        ("LPOS", "l", "a", "RANK"), ("LPOS", "l", "a", "BOGUS", "1"), ("LPOS", "l", "a", "COUNT"),
        ("LPOS", "l", "a", b"count\x00x", "1"), ("LPOS", "nokey", "a"),
        ("LPOS", "nokey", "a", "COUNT", "1"), ("LPOS", "nokey", "a", "RANK", "0"),
        ("SET", "s", "x"), ("LPOS", "s", "a"), ("LPOS", "s", "a", "COUNT", "-1"),
        ("LPOS", "l"),
    ],
    # Moving
    "LMOVE / RPOPLPUSH: between lists, all four directions, creating the target": [
        ("RPUSH", "src", "a", "b", "c", "d"), ("LMOVE", "src", "dst", "LEFT", "RIGHT"),
        ("LMOVE", "src", "dst", "RIGHT", "LEFT"), ("LMOVE", "src", "dst", "left", "left"),
        ("LMOVE", "src", "dst", "Right", "Right"), ("LRANGE", "dst", "0", "-1"),
        ("EXISTS", "src"), ("RPOPLPUSH", "dst", "src"), ("RPOPLPUSH", "dst", "src"),
        ("LRANGE", "src", "0", "-1"), ("LRANGE", "dst", "0", "-1"),
    ],
    "LMOVE / RPOPLPUSH: one list rotates onto itself, also with one element": [
        ("RPUSH", "l", "a", "b", "c"), ("LMOVE", "l", "l", "LEFT", "RIGHT"),
        ("LRANGE", "l", "0", "-1"), ("RPOPLPUSH", "l", "l"), ("LRANGE", "l", "0", "-1"),
        ("LMOVE", "l", "l", "LEFT", "LEFT"), ("RPUSH", "one", "x"),
        ("LMOVE", "one", "one", "LEFT", "RIGHT"), ("LRANGE", "one", "0", "-1"),
        ("RPOPLPUSH", "one", "one"), ("LLEN", "one"),
    ],
    "LMOVE / RPOPLPUSH: missing source, WRONGTYPE source or target, bad directions": [
        ("LMOVE", "nokey", "dst", "LEFT", "RIGHT"), ("RPOPLPUSH", "nokey", "dst"),
        ("EXISTS", "dst"), ("SET", "s", "x"), ("RPUSH", "l", "a"),
        ("LMOVE", "l", "s", "LEFT", "RIGHT"), ("RPOPLPUSH", "l", "s"), ("LRANGE", "l", "0", "-1"),
        ("LMOVE", "s", "l", "LEFT", "RIGHT"), ("RPOPLPUSH", "s", "l"),
        ("LMOVE", "nokey", "s", "LEFT", "RIGHT"), ("LMOVE", "l", "d", "UP", "RIGHT"),
        ("LMOVE", "l", "d", "LEFT", "DOWN"), ("LMOVE", "nokey", "d", "UP", "RIGHT"),
        ("LMOVE", "s", "d", "UP", "RIGHT"), ("LMOVE", "l", "d", b"left\x00x", b"RIGHT\x00"),
        ("LRANGE", "d", "0", "-1"), ("LMOVE", "l", "d", "LEFT"), ("RPOPLPUSH", "l"),
    ],
    # LMPOP
    "LMPOP: the first non-empty list, count, direction": [
        ("RPUSH", "b", "1", "2", "3"), ("RPUSH", "c", "x"),
        ("LMPOP", "3", "a", "b", "c", "LEFT"), ("LMPOP", "3", "a", "b", "c", "RIGHT", "COUNT", "5"),
        ("LMPOP", "3", "a", "b", "c", "left", "count", "2"), ("LMPOP", "2", "a", "b", "LEFT"),
        ("EXISTS", "b", "c"), ("RPUSH", "a", "z"), ("LMPOP", "1", "a", "RIGHT", "COUNT", "1"),
        ("LMPOP", "2", "a", "a", "LEFT"),
    ],
    "LMPOP: numkeys, direction and COUNT errors": [
        ("RPUSH", "l", "a"),
        *[("LMPOP", *args) for args in [
            ("0", "l", "LEFT"), ("-1", "l", "LEFT"), ("x", "l", "LEFT"), ("1.5", "l", "LEFT"),
            ("2", "l", "LEFT"), ("3", "l", "LEFT"), ("1", "l", "UP"), ("1", "l", "LEFT", "COUNT"),
            ("1", "l", "LEFT", "COUNT", "0"), ("1", "l", "LEFT", "COUNT", "-1"),
            ("1", "l", "LEFT", "COUNT", "x"), ("1", "l", "LEFT", "COUNT", "1", "COUNT", "1"),
            ("1", "l", "LEFT", "BOGUS"), ("1", "l", "LEFT", "1"),
            ("9223372036854775808", "l", "LEFT"), (I64_MAX, "l", "LEFT"),
            ("1", "l", b"LEFT\x00x"),
        ]],
        ("LMPOP", "1", "l"), ("LMPOP", "1"), ("LRANGE", "l", "0", "-1"),
    ],
    "LMPOP: a key of another type is WRONGTYPE only when reached": [
        ("SET", "s", "x"), ("RPUSH", "l", "a", "b"), ("LMPOP", "2", "l", "s", "LEFT"),
        ("LMPOP", "2", "nokey", "s", "LEFT"), ("LMPOP", "2", "s", "l", "LEFT"),
        ("LMPOP", "2", "nokey", "other", "LEFT"), ("LRANGE", "l", "0", "-1"),
    ],
    # Blocking commands that do not need to wait
    "BLPOP / BRPOP: a non-empty list answers at once with the key": [
        ("RPUSH", "b", "1", "2", "3"), ("BLPOP", "a", "b", "0"), ("BRPOP", "a", "b", "0"),
        ("BLPOP", "b", "b", "1.5"), ("EXISTS", "b"), ("RPUSH", "a", "x"),
        ("BRPOP", "a", "0.01"), ("BLPOP", "a"), ("BRPOP", "a"),
    ],
    "BLMOVE / BRPOPLPUSH / BLMPOP: a non-empty source answers at once": [
        ("RPUSH", "src", "a", "b", "c", "d"), ("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"),
        ("BRPOPLPUSH", "src", "dst", "0"), ("BLMPOP", "0", "2", "nokey", "src", "LEFT"),
        ("BLMPOP", "1", "1", "src", "RIGHT", "COUNT", "9"), ("LRANGE", "dst", "0", "-1"),
        ("EXISTS", "src"), ("BLMOVE", "dst", "dst", "RIGHT", "LEFT", "0"),
        ("LRANGE", "dst", "0", "-1"),
    ],
    "Blocking list commands: timeouts that are not floats or negative": [
        ("RPUSH", "l", "a"),
        *[cmd for t in ("x", "-1", "", " 1", "1 ", "nan", "-nan", "1e", "0x", "-1.5",
                        "1..1", "--1")
          for cmd in [("BLPOP", "l", t), ("BRPOP", "nokey", t),
                      ("BLMOVE", "l", "d", "LEFT", "LEFT", t), ("BRPOPLPUSH", "l", "d", t),
                      ("BLMPOP", t, "1", "l", "LEFT")]],
        ("LRANGE", "l", "0", "-1"),
    ],
    "Blocking list commands: timeouts that are floats in odd spellings": [
        *[("BRPOP", "nokey", t) for t in ("0.001", "0x0.01p-4", "1e-3", "+0.001", ".001",
                                           "0.00000000000000001", "1e-300")],
        ("RPUSH", "l", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"),
        *[("BLPOP", "l", t) for t in ("+1", "1E1", "0X1P1", "100000000", "0.0", "-0", "0e9",
                                      "0x0", "-0.001")],
    ],
    "Blocking list commands: argument errors come in Redis's order": [
        ("SET", "s", "x"), ("BLPOP", "s", "x"), ("BLPOP", "s", "0"), ("BLPOP", "nokey", "s", "0"),
        ("BLMOVE", "s", "d", "UP", "LEFT", "x"), ("BLMOVE", "s", "d", "LEFT", "LEFT", "x"),
        ("BLMOVE", "s", "d", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "s", "d", "x"),
        ("RPUSH", "l", "a"), ("BLMOVE", "l", "s", "LEFT", "LEFT", "0"),
        ("BLMPOP", "x", "0", "l", "LEFT"), ("BLMPOP", "x", "1", "l", "UP"),
        ("BLMPOP", "x", "1", "l", "LEFT", "COUNT", "0"), ("BLMPOP", "x", "1", "l", "LEFT"),
        ("BLMPOP", "0", "1", "s", "LEFT"), ("BLMPOP", "0", "2", "l", "LEFT"),
        ("BLMOVE", "l", "d", "LEFT", "LEFT"), ("BLMPOP", "0", "1", "l"), ("BLMPOP", "0"),
        ("LRANGE", "l", "0", "-1"),
    ],
    "Blocking list commands inside MULTI do not block": [
        ("RPUSH", "l", "a"), ("MULTI",), ("BLPOP", "nokey", "0"), ("BRPOP", "nokey", "0"),
        ("BLMOVE", "nokey", "d", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "nokey", "d", "0"),
        ("BLMPOP", "0", "1", "nokey", "LEFT"), ("BLPOP", "nokey", "l", "0"),
        ("BLPOP", "nokey", "-1"), ("EXEC",), ("EXISTS", "d", "l"),
    ],
    # WRONGTYPE everywhere
    "List commands on a string, a hash or a stream are WRONGTYPE": [
        ("SET", "s", "x"), ("HSET", "h", "f", "v"), stream("t"),
        *[cmd for key in ("s", "h", "t") for cmd in [
            ("LPUSH", key, "a"), ("RPUSH", key, "a"), ("LPUSHX", key, "a"), ("RPUSHX", key, "a"),
            ("LPOP", key), ("RPOP", key, "2"), ("LLEN", key), ("LRANGE", key, "0", "-1"),
            ("LINDEX", key, "0"), ("LSET", key, "0", "a"), ("LINSERT", key, "BEFORE", "a", "b"),
            ("LREM", key, "0", "a"), ("LTRIM", key, "0", "1"), ("LPOS", key, "a"),
            ("LMOVE", key, "d", "LEFT", "LEFT"), ("RPOPLPUSH", key, "d"),
            ("LMPOP", "1", key, "LEFT"), ("BLPOP", key, "0"), ("BRPOP", key, "0"),
            ("BLMOVE", key, "d", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", key, "d", "0"),
            ("BLMPOP", "0", "1", key, "RIGHT"),
        ]],
        ("GET", "s"), ("HGETALL", "h"), ("XLEN", "t"), ("EXISTS", "d"),
    ],
    "String, hash and stream commands on a list are WRONGTYPE": [
        ("RPUSH", "l", "1"), ("GET", "l"), ("INCR", "l"), ("APPEND", "l", "x"), ("STRLEN", "l"),
        ("GETRANGE", "l", "0", "1"), ("SETRANGE", "l", "0", "x"), ("GETDEL", "l"),
        ("SET", "l", "v", "GET"), ("HSET", "l", "f", "v"), ("HGETALL", "l"), ("HLEN", "l"),
        ("XADD", "l", "1-1", "f", "v"), ("XLEN", "l"), ("XRANGE", "l", "-", "+"),
        ("MGET", "l", "nokey"), ("LRANGE", "l", "0", "-1"),
    ],
    "SET, SETNX, MSET and DEL on a list": [
        ("RPUSH", "l", "a"), ("SETNX", "l", "x"), ("LRANGE", "l", "0", "-1"), ("SET", "l", "v"),
        ("GET", "l"), ("TYPE", "l"), ("RPUSH", "m", "a"), ("MSET", "m", "v"), ("TYPE", "m"),
        ("RPUSH", "k", "a"), ("DEL", "k"), ("EXISTS", "k"), ("LLEN", "k"),
    ],
    # Keyspace commands on lists
    "TYPE, EXISTS, TOUCH, UNLINK, OBJECT REFCOUNT of a list": [
        ("RPUSH", "l", "a"), ("TYPE", "l"), ("EXISTS", "l"), ("TOUCH", "l"),
        ("OBJECT", "REFCOUNT", "l"), ("UNLINK", "l"), ("TYPE", "l"), ("OBJECT", "ENCODING", "l"),
    ],
    "RENAME / RENAMENX / MOVE keep the list and its TTL": [
        ("RPUSH", "l", "a", "b"), ("EXPIREAT", "l", FAR_FUTURE_S), ("RENAME", "l", "m"),
        ("LRANGE", "m", "0", "-1"), ("EXPIRETIME", "m"), ("RPUSH", "k", "x"),
        ("RENAMENX", "m", "k"), ("RENAME", "m", "k"), ("LRANGE", "k", "0", "-1"),
        ("MOVE", "k", "1"), ("EXISTS", "k"), ("SELECT", "1"), ("LRANGE", "k", "0", "-1"),
        ("EXPIRETIME", "k"), ("RPOP", "k"), ("EXPIRETIME", "k"),
    ],
    "COPY makes an independent list, with REPLACE and DB": [
        ("RPUSH", "l", "a", "b", "c"), ("COPY", "l", "c"), ("LPUSH", "l", "new"),
        ("LSET", "l", "1", "changed"), ("RPOP", "c"), ("LRANGE", "l", "0", "-1"),
        ("LRANGE", "c", "0", "-1"), ("COPY", "l", "c"), ("COPY", "l", "c", "REPLACE"),
        ("LRANGE", "c", "0", "-1"), ("COPY", "c", "c", "DB", "1"), ("RPUSH", "c", "more"),
        ("SELECT", "1"), ("LRANGE", "c", "0", "-1"),
    ],
    "Expiry: writes keep the TTL, a past expiry deletes, an emptied list loses it": [
        ("RPUSH", "l", "a", "b"), ("EXPIREAT", "l", FAR_FUTURE_S), ("RPUSH", "l", "c"),
        ("LPOP", "l"), ("LSET", "l", "0", "x"), ("LTRIM", "l", "0", "-1"), ("EXPIRETIME", "l"),
        ("PERSIST", "l"), ("TTL", "l"), ("EXPIREAT", "l", "1000"), ("EXISTS", "l"),
        ("LLEN", "l"), ("RPUSH", "l", "a"), ("EXPIRE", "l", "100"), ("RPOP", "l"), ("TTL", "l"),
        ("RPUSH", "l", "a"), ("TTL", "l"),
    ],
    "SCAN TYPE list and KEYS": [
        ("RPUSH", "l", "a"), ("SET", "s", "x"), ("HSET", "h", "f", "v"), stream("t"),
        ("SCAN", "0", "TYPE", "list"), ("SCAN", "0", "TYPE", "LIST"), ("KEYS", "l*"),
    ],
    "CONFIG: the list directives and their old names": [
        ("CONFIG", "GET", "list-max-listpack-size"), ("CONFIG", "GET", "list-max-ziplist-size"),
        ("CONFIG", "GET", "list-compress-depth"),
        ("CONFIG", "SET", "list-max-listpack-size", "x"),
        ("CONFIG", "SET", "list-max-listpack-size", "2147483648"),
        ("CONFIG", "SET", "list-max-listpack-size", "-2147483649"),
        ("CONFIG", "SET", "list-compress-depth", "-1"),
        ("CONFIG", "SET", "list-compress-depth", "x"),
    ],
    # Transactions
    "MULTI: each reply shows the list as it was at that command": [
        ("RPUSH", "l", "a"), ("MULTI",), ("LRANGE", "l", "0", "-1"), ("RPUSH", "l", "b"),
        ("LRANGE", "l", "0", "-1"), ("LPOP", "l", "5"), ("LRANGE", "l", "0", "-1"),
        ("RPUSH", "l", "c"), ("LINDEX", "l", "0"), ("EXEC",),
    ],
    "MULTI: arity errors abort, WRONGTYPE does not": [
        ("SET", "s", "x"), ("MULTI",), ("LPUSH", "l"), ("LPUSH", "l", "a"), ("EXEC",),
        ("MULTI",), ("LPUSH", "l", "a"), ("LPUSH", "s", "a"), ("LPOP", "l", "1", "2"),
        ("LRANGE", "l", "0", "-1"), ("EXEC",),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_list_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *SCENARIOS[scenario])


def test_long_lists_across_many_nodes(pair: Pair) -> None:
    """Thousands of elements of mixed sizes, so that indexes cross node boundaries."""
    for chunk in range(10):
        run(pair, ("RPUSH", "l", *[f"{chunk}-{i}-" + "x" * (i % 70) for i in range(300)]),
            ("LPUSH", "l", *[str(chunk * 1000 + i) for i in range(100)]))
    run(pair, ("LLEN", "l"), ("LRANGE", "l", "990", "1010"), ("LRANGE", "l", "-1005", "-995"),
        ("LINDEX", "l", "2500"), ("LINDEX", "l", "-2500"), ("LSET", "l", "2000", "set"),
        ("LINSERT", "l", "BEFORE", "5-150-" + "x" * 10, "ins"), ("LPOS", "l", "ins"),
        ("LPOS", "l", "7050", "RANK", "-1"), ("LREM", "l", "-3", "set"),
        ("LPOP", "l", "777"), ("RPOP", "l", "1234"), ("LTRIM", "l", "100", "-100"),
        ("LLEN", "l"), ("LRANGE", "l", "0", "-1"), ("LMPOP", "1", "l", "RIGHT", "COUNT", "50"),
        ("LRANGE", "l", "0", "-1"))


def test_large_elements(pair: Pair) -> None:
    big = "B" * 9000
    huge = "H" * 70000
    run(pair, ("RPUSH", "l", "a", big, "b"), ("LPUSH", "l", huge), ("LINDEX", "l", "2"),
        ("LINSERT", "l", "AFTER", "a", big), ("LSET", "l", "-1", huge), ("LSET", "l", "0", "s"),
        ("LRANGE", "l", "0", "-1"), ("LREM", "l", "0", big), ("LPOS", "l", huge),
        ("LMOVE", "l", "m", "RIGHT", "LEFT"), ("LRANGE", "l", "0", "-1"),
        ("LRANGE", "m", "0", "-1"), ("LTRIM", "l", "1", "1"), ("LRANGE", "l", "0", "-1"))


# -- WATCH ---------------------------------------------------------------------------------------


def test_watch_sees_list_writes_but_not_no_ops(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        run(pair, ("RPUSH", "l", "a", "b"))
        # These leave the list alone and signal nothing.
        run(pair, ("WATCH", "l"))
        run(other, ("LINSERT", "l", "BEFORE", "nope", "x"), ("LREM", "l", "0", "nope"),
            ("LPOP", "nokey"), ("LPUSHX", "nokey", "x"), ("LRANGE", "l", "0", "-1"),
            ("LPOS", "l", "a"), ("LSET", "l", "9", "x"), ("LMOVE", "nokey", "l", "LEFT", "LEFT"),
            ("LPOP", "l", "0"))
        run(pair, ("MULTI",), ("LLEN", "l"), ("EXEC",))
        for write in (("RPUSH", "l", "c"), ("LPOP", "l"), ("LSET", "l", "0", "x"),
                      ("LINSERT", "l", "AFTER", "x", "y"), ("LREM", "l", "1", "y"),
                      ("LTRIM", "l", "0", "-1"), ("RPOPLPUSH", "l", "l"),
                      ("LMOVE", "other", "l", "LEFT", "LEFT"), ("LMPOP", "1", "l", "LEFT")):
            run(pair, ("WATCH", "l"))
            if write[0] == "LMOVE":
                run(other, ("RPUSH", "other", "o"))
            run(other, write)
            run(pair, ("MULTI",), ("LRANGE", "l", "0", "-1"), ("EXEC",))
    finally:
        other.close()


# -- blocking ------------------------------------------------------------------------------------


def wait_blocked(client: RawClient, count: int = 1) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        info = client.call("INFO", "clients")
        for line in info.split(b"\r\n"):
            if line.startswith(b"blocked_clients:") and int(line.split(b":")[1]) == count:
                return
        time.sleep(0.005)
    raise AssertionError(f"expected {count} blocked clients")


def both_blocked(pair: Pair, count: int = 1) -> None:
    wait_blocked(pair.ref, count)
    wait_blocked(pair.ours, count)


@pytest.fixture
def extra(pair: Pair) -> Iterator[list[Pair]]:
    """Four more connection pairs to the same two servers."""
    made = [pair.connect_extra() for _ in range(4)]
    yield made
    for p in made:
        p.close()


def send(p: Pair, *cmd: str) -> None:
    for conn in (p.ref, p.ours):
        conn.send(*cmd)


def same_reply(p: Pair) -> bytes:
    ours, ref = p.ours.read_reply(), p.ref.read_reply()
    assert ours == ref, f"RESP{p.resp}\n redis:    {ref!r}\n resplite: {ours!r}"
    return ours


def test_blocked_clients_are_served_in_the_order_they_blocked(
    pair: Pair, extra: list[Pair]
) -> None:
    waiters = [pair, *extra[:3]]
    writer = extra[3]
    for n, w in enumerate(waiters, start=1):
        send(w, "BLPOP", "q", "0")
        both_blocked(writer, n)
    writer.check("RPUSH", "q", "1", "2", "3")
    for w in waiters[:3]:
        same_reply(w)
    both_blocked(writer, 1)
    writer.check("LPUSH", "q", "4")
    same_reply(waiters[3])
    writer.check("EXISTS", "q")


def test_brpop_on_several_keys_pops_the_first_that_has_elements(
    pair: Pair, extra: list[Pair]
) -> None:
    writer = extra[0]
    send(pair, "BRPOP", "a", "b", "c", "0")
    both_blocked(writer)
    writer.check("RPUSH", "c", "x", "y")
    same_reply(pair)
    send(pair, "BRPOP", "a", "b", "c", "0")
    both_blocked(writer, 0)  # c still holds x: served at once
    same_reply(pair)
    writer.check("EXISTS", "c")


def test_a_transaction_wakes_clients_only_after_exec(pair: Pair, extra: list[Pair]) -> None:
    first, second, writer = pair, extra[0], extra[1]
    send(first, "BLPOP", "q", "0")
    both_blocked(writer, 1)
    send(second, "BRPOP", "q", "0")
    both_blocked(writer, 2)
    run(writer, ("MULTI",), ("RPUSH", "q", "a"), ("LPOP", "q"), ("RPUSH", "q", "b", "c", "d"),
        ("LRANGE", "q", "0", "-1"), ("EXEC",))
    same_reply(first)
    same_reply(second)
    writer.check("LRANGE", "q", "0", "-1")


def test_a_push_then_pop_in_one_transaction_wakes_nobody(pair: Pair, extra: list[Pair]) -> None:
    writer = extra[0]
    send(pair, "BLPOP", "q", "0")
    both_blocked(writer)
    run(writer, ("MULTI",), ("RPUSH", "q", "a"), ("DEL", "q"), ("EXEC",))
    both_blocked(writer, 1)
    writer.check("RPUSH", "q", "later")
    same_reply(pair)


def test_a_blocked_client_is_served_between_pipelined_commands(
    pair: Pair, extra: list[Pair]
) -> None:
    writer = extra[0]
    send(pair, "BLPOP", "q", "0")
    both_blocked(writer)
    for conn in (writer.ref, writer.ours):
        conn.send_raw(b"*3\r\n$5\r\nRPUSH\r\n$1\r\nq\r\n$1\r\nx\r\n*2\r\n$4\r\nLPOP\r\n$1\r\nq\r\n")
    same_reply(writer)
    same_reply(writer)
    same_reply(pair)


def test_key_deleted_or_of_another_type_keeps_clients_waiting(
    pair: Pair, extra: list[Pair]
) -> None:
    writer = extra[0]
    send(pair, "BLPOP", "q", "0")
    both_blocked(writer)
    run(writer, ("SET", "q", "string"), ("DEL", "q"), ("HSET", "q", "f", "v"), ("DEL", "q"),
        ("MULTI",), ("RPUSH", "q", "a"), ("DEL", "q"), ("EXEC",), ("SET", "q", "x"),
        ("RENAME", "q", "gone"))
    both_blocked(writer, 1)
    run(writer, ("RPUSH", "src", "moved"), ("RENAME", "src", "q"))
    same_reply(pair)
    writer.check("EXISTS", "q")


def test_blmove_chains_serve_each_other(pair: Pair, extra: list[Pair]) -> None:
    mover1, mover2, popper, writer = pair, extra[0], extra[1], extra[2]
    send(mover1, "BLMOVE", "a", "b", "RIGHT", "LEFT", "0")
    both_blocked(writer, 1)
    send(mover2, "BRPOPLPUSH", "b", "c", "0")
    both_blocked(writer, 2)
    send(popper, "BLPOP", "c", "0")
    both_blocked(writer, 3)
    writer.check("RPUSH", "a", "job")
    same_reply(mover1)
    same_reply(mover2)
    same_reply(popper)
    run(writer, ("EXISTS", "a", "b", "c"))


def test_blmpop_serves_a_count_from_the_pushed_list(pair: Pair, extra: list[Pair]) -> None:
    writer = extra[0]
    send(pair, "BLMPOP", "0", "2", "x", "y", "RIGHT", "COUNT", "2")
    both_blocked(writer)
    writer.check("RPUSH", "y", "1", "2", "3")
    same_reply(pair)
    writer.check("LRANGE", "y", "0", "-1")


def test_blocking_timeouts_answer_null(pair: Pair) -> None:
    pair.check("BLPOP", "a", "b", "0.02")
    pair.check("BRPOP", "a", "0.02")
    pair.check("BLMOVE", "a", "b", "LEFT", "LEFT", "0.02")
    pair.check("BRPOPLPUSH", "a", "b", "0.02")
    pair.check("BLMPOP", "0.02", "1", "a", "LEFT")
    pair.check("EXISTS", "a", "b")


def test_client_unblock_ends_a_blocking_pop(pair: Pair, extra: list[Pair]) -> None:
    admin = extra[0]
    ids = {}
    for name, conn in (("ref", pair.ref), ("ours", pair.ours)):
        ids[name] = decode(conn.call("CLIENT", "ID"))
    for command in (("BLPOP", "q", "0"), ("BLMOVE", "q", "d", "LEFT", "LEFT", "0"),
                    ("BLMPOP", "0", "1", "q", "LEFT")):
        for reason in ("TIMEOUT", "ERROR"):
            send(pair, *command)
            both_blocked(admin)
            assert admin.ref.call("CLIENT", "UNBLOCK", ids["ref"], reason) == b":1\r\n"
            assert admin.ours.call("CLIENT", "UNBLOCK", ids["ours"], reason) == b":1\r\n"
            same_reply(pair)
    run(admin, ("EXISTS", "q", "d"))


def test_a_stream_reader_and_a_list_reader_on_the_same_key(pair: Pair, extra: list[Pair]) -> None:
    lister, writer = extra[0], extra[1]
    send(pair, "XREAD", "BLOCK", "0", "STREAMS", "k", "$")
    both_blocked(writer, 1)
    send(lister, "BLPOP", "k", "0")
    both_blocked(writer, 2)
    writer.check("RPUSH", "k", "element")
    same_reply(lister)
    both_blocked(writer, 1)
    writer.check("XADD", "k", "1-1", "f", "v")
    same_reply(pair)


def test_swapdb_serves_waiters_of_the_database_swapped_in(pair: Pair, extra: list[Pair]) -> None:
    writer = extra[0]
    send(pair, "BLPOP", "q", "0")
    both_blocked(writer)
    run(writer, ("SELECT", "1"), ("RPUSH", "q", "from-db1", "second"), ("FLUSHDB",),
        ("RPUSH", "q", "again"))
    both_blocked(writer, 1)  # a list in another database serves nobody
    run(writer, ("SWAPDB", "0", "1"))
    same_reply(pair)
    run(writer, ("LRANGE", "q", "0", "-1"), ("SELECT", "0"), ("LRANGE", "q", "0", "-1"))


def test_flushall_leaves_waiters_blocked(pair: Pair, extra: list[Pair]) -> None:
    writer = extra[0]
    send(pair, "BLPOP", "q", "0")
    both_blocked(writer)
    run(writer, ("SET", "q", "x"), ("FLUSHALL",), ("FLUSHDB",))
    both_blocked(writer, 1)
    run(writer, ("RPUSH", "q", "a", "b"), ("LRANGE", "q", "0", "-1"))
    same_reply(pair)


def test_lpop_and_lmove_of_clients_served_in_turn(pair: Pair, extra: list[Pair]) -> None:
    """Several waiters on the same key with different commands; one push serves them in
    blocking order, each with its own command's reply shape."""
    a, b, c, writer = pair, extra[0], extra[1], extra[2]
    send(a, "BRPOP", "q", "0")
    both_blocked(writer, 1)
    send(b, "BLMOVE", "q", "done", "LEFT", "RIGHT", "0")
    both_blocked(writer, 2)
    send(c, "BLMPOP", "0", "1", "q", "LEFT", "COUNT", "10")
    both_blocked(writer, 3)
    writer.check("RPUSH", "q", "1", "2", "3", "4", "5")
    same_reply(a)
    same_reply(b)
    same_reply(c)
    run(writer, ("LRANGE", "done", "0", "-1"), ("EXISTS", "q"))


# -- newer Redis ---------------------------------------------------------------------------------

LISTPACK = b"$8\r\nlistpack\r\n"
QUICKLIST = b"$9\r\nquicklist\r\n"


def encoding(client: RawClient, key: str) -> bytes:
    return client.call("OBJECT", "ENCODING", key)


@pytest.fixture
def list_limits(pair: Pair) -> Iterator[None]:
    """Restore the list directives on both servers afterwards (the servers are shared)."""
    yield
    for conn in (pair.ref, pair.ours):
        conn.call("CONFIG", "SET", "list-max-listpack-size", "-2")


@pytest.mark.redis_version("7.2")
def test_small_lists_are_listpacks_and_convert_at_8kb(pair: Pair, list_limits: None) -> None:
    ours = pair.ours
    ours.call("RPUSH", "l", "a", "1", "2")
    assert encoding(ours, "l") == LISTPACK
    pair.ref.call("RPUSH", "l", "a", "1", "2")
    # Redis 7.0 has no listpack lists.
    assert encoding(pair.ref, "l") == (LISTPACK if ref_version(pair) >= (7, 2) else QUICKLIST)
    # A listpack converts when its bytes plus the raw bytes of what comes would pass 8192.
    # 132 elements of 60 bytes take 62 bytes each: 7 + 132 * 62 = 8191 bytes.
    ours.call("DEL", "l")
    ours.call("RPUSH", "l", *["v" * 60] * 132)
    assert encoding(ours, "l") == LISTPACK
    ours.call("RPUSH", "l", "x")  # 8191 + 1 = 8192: fits (and the listpack grows to 8194)
    assert encoding(ours, "l") == LISTPACK
    ours.call("RPUSH", "l", "y")  # 8194 + 1 > 8192
    assert encoding(ours, "l") == QUICKLIST
    assert b" ql_nodes:2 " in ours.call("DEBUG", "OBJECT", "l")
    # Back to a listpack only once one node of at most half the limit is left.
    ours.call("RPOP", "l")
    assert b" ql_nodes:1 " in ours.call("DEBUG", "OBJECT", "l")
    ours.call("LTRIM", "l", "0", "65")  # 7 + 66 * 62 = 4099 > 4096
    assert encoding(ours, "l") == QUICKLIST
    ours.call("RPOP", "l")  # 4037
    assert encoding(ours, "l") == LISTPACK
    # Raw bytes decide: 7 + 8185 = 8192 still fits a listpack, 7 + 8185 + 1 does not.
    ours.call("RPUSH", "big", "b" * 8185)
    assert encoding(ours, "big") == LISTPACK
    ours.call("RPUSH", "big2", "b" * 8185, "c")
    assert encoding(ours, "big2") == QUICKLIST


@pytest.mark.redis_version("7.2")
def test_count_limits_convert_and_shrink_back(pair: Pair, list_limits: None) -> None:
    ours = pair.ours
    assert ours.call("CONFIG", "SET", "list-max-ziplist-size", "4") == b"+OK\r\n"
    assert decode(ours.call("CONFIG", "GET", "list-max-listpack-size")) in (
        [b"list-max-listpack-size", b"4"], {b"list-max-listpack-size": b"4"})
    ours.call("RPUSH", "l", "1", "2", "3", "4")
    assert encoding(ours, "l") == LISTPACK
    ours.call("RPUSH", "l", "5")
    assert encoding(ours, "l") == QUICKLIST
    debug = ours.call("DEBUG", "OBJECT", "l")
    assert b" ql_nodes:2 ql_avg_node:2.50 ql_listpack_max:4 ql_compressed:0 " in debug
    ours.call("LPOP", "l", "3")  # nodes of 1 and 1 element
    assert encoding(ours, "l") == QUICKLIST
    ours.call("LPOP", "l")  # one node of one element: at most half of 4
    assert encoding(ours, "l") == LISTPACK
    assert b"ql_nodes" not in ours.call("DEBUG", "OBJECT", "l")
    # LSET and LINSERT check before writing, even when nothing ends up written.
    ours.call("CONFIG", "SET", "list-max-listpack-size", "2")
    ours.call("RPUSH", "m", "a", "b")
    assert ours.call("LINSERT", "m", "BEFORE", "nope", "x") == b":-1\r\n"
    assert encoding(ours, "m") == QUICKLIST
    ours.call("RPUSH", "n", "a", "b")
    assert ours.call("LSET", "n", "5", "x") == b"-ERR index out of range\r\n"
    assert encoding(ours, "n") == QUICKLIST
    ours.call("LSET", "n", "0", "x")  # two elements > half of 2: stays
    assert encoding(ours, "n") == QUICKLIST
    # COPY keeps the encoding and the node layout.
    ours.call("COPY", "l", "c")
    assert encoding(ours, "c") == LISTPACK
    ours.call("COPY", "m", "d")
    assert encoding(ours, "d") == QUICKLIST


@pytest.mark.redis_version("7.4")
def test_large_elements_get_nodes_of_their_own(pair: Pair) -> None:
    """Redis 7.4+ keeps an element larger than the node size limit in a plain node."""
    ours = pair.ours
    ours.call("RPUSH", "l", "a", "b" * 9000, "c")
    debug = ours.call("DEBUG", "OBJECT", "l")
    assert b" ql_nodes:3 " in debug and b"encoding:quicklist" in debug
    ours.call("LSET", "l", "0", "x" * 9000)  # a packed node's only element becomes plain
    assert b" ql_nodes:3 " in ours.call("DEBUG", "OBJECT", "l")
    ours.call("RPOP", "l")
    ours.call("RPOP", "l")
    assert encoding(ours, "l") == QUICKLIST  # a plain node never becomes a listpack
    ours.call("LSET", "l", "0", "small")
    assert encoding(ours, "l") == LISTPACK


@pytest.mark.redis_version("7.2")
def test_timeouts_past_the_clock_range_are_refused(pair: Pair) -> None:
    """Redis 7.0 wraps such timeouts (and reads "inf" as negative); 7.2+ refuses them."""
    out_of_range = b"-ERR timeout is out of range\r\n"
    ours = pair.ours
    for timeout in ("inf", "1e300", "9223372036854775807", "9223372036854775.807", "0x1p70"):
        assert ours.call("BLPOP", "q", timeout) == out_of_range
        assert ours.call("BLMOVE", "q", "d", "LEFT", "LEFT", timeout) == out_of_range
        assert ours.call("BLMPOP", timeout, "1", "q", "LEFT") == out_of_range
    assert ours.call("BRPOP", "q", "-inf") == b"-ERR timeout is negative\r\n"
    if ref_version(pair) >= (7, 2):
        for timeout in ("inf", "1e300", I64_MAX, "0x1p70", "-inf"):
            pair.check("BLPOP", "q", timeout)
    else:
        assert pair.ref.call("BLPOP", "q", "inf") == b"-ERR timeout is negative\r\n"
    # A long timeout that fits is accepted (and answered at once inside MULTI).
    assert ours.call("MULTI") == b"+OK\r\n"
    ours.call("BLPOP", "q", "9223372036854")
    assert ours.call("EXEC") in (b"*1\r\n*-1\r\n", b"*1\r\n_\r\n")


@pytest.mark.redis_version("7.2")
def test_lpos_rank_must_be_above_the_long_minimum(pair: Pair) -> None:
    ours = pair.ours
    ours.call("RPUSH", "l", "a")
    assert ours.call("LPOS", "l", "a", "RANK", I64_MIN) == (
        b"-ERR value is out of range, value must between -9223372036854775807 and "
        b"9223372036854775807\r\n"
    )


@pytest.mark.redis_version("7.4")
def test_lrem_count_must_be_above_the_long_minimum(pair: Pair) -> None:
    ours = pair.ours
    ours.call("RPUSH", "l", "a", "a")
    assert ours.call("LREM", "l", I64_MIN, "a") == (
        b"-ERR value is out of range, value must between -9223372036854775807 and "
        b"9223372036854775807\r\n"
    )
    assert ours.call("LLEN", "l") == b":2\r\n"
    assert pair.ref.call("RPUSH", "l", "a", "a") == b":2\r\n"
    if ref_version(pair) >= (7, 2):
        pair.check("LREM", "l", I64_MIN, "a")
    else:
        assert pair.ref.call("LREM", "l", I64_MIN, "a") == b":2\r\n"  # 7.0 removed them all


# -- COMMAND GETKEYS and INFO --------------------------------------------------------------------

GETKEYS_LINES = [
    "lpush l a b", "rpushx l a", "lpop l 2", "llen l", "lrange l 0 -1", "lindex l 0",
    "lset l 0 v", "linsert l BEFORE p v", "lrem l 0 v", "ltrim l 0 1", "lpos l v RANK 2",
    "lmove a b LEFT RIGHT", "rpoplpush a b", "lmpop 2 a b LEFT COUNT 2", "lmpop 1 a RIGHT",
    "blpop a b c 0", "brpop a 1.5", "blmove a b LEFT LEFT 0", "brpoplpush a b 0",
    "blmpop 0 2 a b LEFT", "blmpop 0 3 a b c RIGHT COUNT 5",
    "lmpop 0 a LEFT", "lmpop 5 a LEFT", "blmpop 0 x a LEFT", "lmpop x a LEFT",
]


@pytest.mark.parametrize("line", GETKEYS_LINES)
@pytest.mark.parametrize("sub", ["GETKEYS", "GETKEYSANDFLAGS"])
def test_command_getkeys_of_list_commands(pair: Pair, sub: str, line: str) -> None:
    pair.check("COMMAND", sub, *line.split(" "))


def test_command_info_of_list_commands(pair: Pair) -> None:
    # (BLPOP, BRPOP, BLMOVE and BRPOPLPUSH carry Redis 7.2's flags: test_introspection.py.)
    names = ["lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen", "lrange", "lindex",
             "lset", "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop",
             "blmpop"]
    pair.check("COMMAND", "INFO", *names)


# -- keyspace notifications ----------------------------------------------------------------------

EVENT_SCENARIOS: dict[str, list[Command]] = {
    "pushes, pops and the del of an emptied list": [
        ("LPUSH", "l", "a", "b"), ("RPUSH", "l", "c"), ("LPUSHX", "nokey", "x"),
        ("RPUSHX", "l", "d"), ("LPOP", "l"), ("RPOP", "l", "2"), ("LPOP", "l", "0"),
        ("LPOP", "l"), ("LPOP", "l"), ("RPOP", "nokey", "3"),
    ],
    "in-place writes: LINSERT, LSET, LREM, LTRIM (even when nothing is trimmed)": [
        ("RPUSH", "l", "a", "b", "a"), ("LINSERT", "l", "BEFORE", "b", "x"),
        ("LINSERT", "l", "BEFORE", "nope", "x"), ("LSET", "l", "0", "z"),
        ("LSET", "l", "9", "z"), ("LREM", "l", "0", "nope"), ("LREM", "l", "1", "a"),
        ("LTRIM", "l", "0", "-1"), ("LTRIM", "l", "1", "0"), ("LTRIM", "nokey", "0", "1"),
        ("RPUSH", "m", "a"), ("LREM", "m", "0", "a"),
    ],
    "moves: LMOVE, RPOPLPUSH, a rotation, emptying the source": [
        ("RPUSH", "s", "a", "b"), ("LMOVE", "s", "d", "LEFT", "RIGHT"), ("RPOPLPUSH", "s", "d"),
        ("LMOVE", "d", "d", "RIGHT", "LEFT"), ("LMOVE", "nokey", "d", "LEFT", "LEFT"),
        ("BLMOVE", "d", "e", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "d", "e", "0"),
    ],
    "multi-key pops: LMPOP, BLPOP, BRPOP, BLMPOP that do not wait": [
        ("RPUSH", "a", "1", "2", "3"), ("LMPOP", "2", "nokey", "a", "LEFT", "COUNT", "2"),
        ("BLPOP", "nokey", "a", "0"), ("RPUSH", "b", "x", "y"), ("BRPOP", "b", "0"),
        ("BLMPOP", "0", "1", "b", "RIGHT", "COUNT", "5"),
    ],
    "SORT ... STORE writes a list (sortstore) or deletes the destination": [
        ("RPUSH", "l", "3", "1", "2"), ("SORT", "l", "STORE", "d"), ("SORT", "l", "STORE", "d"),
        ("SORT", "l", "LIMIT", "5", "1", "STORE", "d"), ("SORT", "nokey", "STORE", "d"),
    ],
    "reads report keymiss, writes do not": [
        ("LLEN", "nokey"), ("LRANGE", "nokey", "0", "-1"), ("LINDEX", "nokey", "0"),
        ("LPOS", "nokey", "a"), ("LPOP", "nokey"), ("LREM", "nokey", "0", "a"),
        ("LSET", "nokey", "0", "a"), ("LMOVE", "nokey", "x", "LEFT", "LEFT"),
    ],
}


@pytest.fixture
def watcher(pair: Pair) -> Iterator[object]:
    """A pair subscribed to every keyspace and keyevent channel (as in test_notifications)."""
    watching = pair.connect_extra()
    for conn in (watching.ref, watching.ours):
        conn.call("PSUBSCRIBE", "__key*__:*")
    yield watching
    for conn in (pair.ref, pair.ours):
        conn.call("CONFIG", "SET", "notify-keyspace-events", "")
    watching.close()


@pytest.mark.parametrize("name", list(EVENT_SCENARIOS))
def test_list_events(pair: Pair, watcher: Pair, name: str) -> None:
    flags = "KEAm" if name.startswith("reads") else "KEA"
    run_watched(pair, watcher, flags, EVENT_SCENARIOS[name])


def test_events_of_a_served_blocked_client(pair: Pair, watcher: Pair, extra: list[Pair]) -> None:
    pair.check("CONFIG", "SET", "notify-keyspace-events", "KEA")
    waiter = extra[0]
    send(waiter, "BLMOVE", "q", "done", "LEFT", "RIGHT", "0")
    both_blocked(pair)
    run_watched(pair, watcher, "KEA", [("RPUSH", "q", "job")])
    same_reply(waiter)
    run_watched(pair, watcher, "KEA", [("LLEN", "done")])


# -- the change counter (INFO persistence rdb_changes_since_last_save) ----------------------------

CHANGING_COMMANDS = [
    "LPUSH l a b c", "RPUSH l x", "LPUSHX l a b", "RPUSHX nokey a", "LPUSH new a",
    "LPOP l", "RPOP l 3", "LPOP l 0", "LPOP l 100", "LPOP nokey", "LSET l 0 z", "LSET l 99 z",
    "LINSERT l BEFORE b x", "LINSERT l BEFORE nope x", "LREM l 0 a", "LREM l 0 nope",
    "LTRIM l 0 -1", "LTRIM l 1 -2", "LTRIM l 5 1", "LMOVE l m LEFT RIGHT", "RPOPLPUSH l l",
    "LMOVE nokey m LEFT LEFT", "LMPOP 2 nokey l LEFT COUNT 3", "BLPOP l 0", "BRPOP l 0",
    "BLMPOP 0 1 l RIGHT COUNT 10", "BLMOVE l m RIGHT LEFT 0", "BRPOPLPUSH l m 0",
    "BLPOP nokey 0.001", "LLEN l", "LRANGE l 0 -1", "LPOS l a", "LINDEX l 0",
]


def _changes(conn: RawClient, command: str) -> int:
    conn.call("FLUSHALL")
    conn.call("RPUSH", "l", "a", "b", "a", "c", "d")
    before = _dirty_of(conn)
    conn.call(*command.split())
    return _dirty_of(conn) - before


@pytest.mark.parametrize("command", CHANGING_COMMANDS)
def test_list_commands_count_changes_as_redis(pair: Pair, command: str) -> None:
    assert _changes(pair.ours, command) == _changes(pair.ref, command), command


def test_a_served_blocked_pop_counts_its_changes(pair: Pair, extra: list[Pair]) -> None:
    waiter, writer = extra[0], extra[1]
    counts = []
    for conn, wconn, side in ((pair.ref, waiter.ref, "ref"), (pair.ours, waiter.ours, "ours")):
        conn.call("FLUSHALL")
        wconn.send("BLMPOP", "0", "1", "q", "LEFT", "COUNT", "2")
        wait_blocked(conn, 1)
        before = _dirty_of(conn)
        (writer.ref if side == "ref" else writer.ours).call("RPUSH", "q", "a", "b", "c")
        wconn.read_reply()
        counts.append(_dirty_of(conn) - before)
    assert counts[0] == counts[1] == 5  # three pushed, two popped


def _dirty_of(conn: RawClient) -> int:
    text = conn.call("INFO", "persistence").decode(errors="replace")
    line = next(x for x in text.split("\r\n") if x.startswith("rdb_changes_since_last_save:"))
    return int(line.split(":")[1])


# -- Redis 8.10: LMOVEM, BLMOVEM -------------------------------------------------------------------


def _array(*items: str) -> bytes:
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i.encode())
                                               for i in items)


def _null_array(p: Pair) -> bytes:
    return b"*-1\r\n" if p.resp == 2 else b"_\r\n"


def _lrange(p: Pair, key: str) -> list[bytes]:
    reply = decode(p.ours.call("LRANGE", key, "0", "-1"))
    assert isinstance(reply, list)
    return reply


@pytest.mark.redis_version("8.10")
def test_lmovem_moves_and_orders_as_documented(pair: Pair) -> None:
    """OBO pushes each popped element in turn, BULK the run in its source order; the reply
    is the moved elements as they sit in the destination, left to right."""
    ours = pair.ours
    cases = [
        (("LEFT", "LEFT", "COUNT", "3", "OBO"), ["3", "2", "1"], ["3", "2", "1"]),
        (("LEFT", "LEFT", "COUNT", "3", "BULK"), ["1", "2", "3"], ["1", "2", "3"]),
        (("RIGHT", "RIGHT", "COUNT", "3", "OBO"), ["5", "4", "3"], ["5", "4", "3"]),
        (("RIGHT", "RIGHT", "COUNT", "3", "BULK"), ["3", "4", "5"], ["3", "4", "5"]),
        (("RIGHT", "LEFT", "COUNT", "2", "OBO"), ["4", "5"], ["4", "5"]),
        (("LEFT", "RIGHT", "EXACTLY", "2", "bulk"), ["1", "2"], ["1", "2"]),
        (("left", "right"), ["1"], ["1"]),
    ]
    for args, reply, dst in cases:
        ours.call("DEL", "src", "dst")
        ours.call("RPUSH", "src", "1", "2", "3", "4", "5")
        assert ours.call("LMOVEM", "src", "dst", *args) == _array(*reply), args
        assert _lrange(pair, "dst") == [d.encode() for d in dst], args
        assert ours.call("LLEN", "src") == b":%d\r\n" % (5 - len(reply))
    # Onto an existing destination, at either end.
    ours.call("DEL", "src", "dst")
    ours.call("RPUSH", "src", "a", "b", "c")
    ours.call("RPUSH", "dst", "x", "y")
    assert ours.call("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", "2", "OBO") == \
        _array("a", "b")
    assert ours.call("LMOVEM", "src", "dst", "LEFT", "LEFT", "COUNT", "9", "BULK") == _array("c")
    assert _lrange(pair, "dst") == [b"c", b"x", b"y", b"a", b"b"]
    assert ours.call("EXISTS", "src") == b":0\r\n"  # emptied: deleted


@pytest.mark.redis_version("8.10")
def test_lmovem_exactly_missing_source_and_same_key(pair: Pair) -> None:
    ours = pair.ours
    ours.call("RPUSH", "l", "a", "b", "c")
    # EXACTLY more than there is: nothing moves, nil.
    assert ours.call("LMOVEM", "l", "d", "LEFT", "LEFT", "EXACTLY", "5", "BULK") == \
        _null_array(pair)
    assert _lrange(pair, "l") == [b"a", b"b", b"c"]
    assert ours.call("EXISTS", "d") == b":0\r\n"
    # A missing source: nil, whatever the selector.
    for extra in ((), ("COUNT", "2", "BULK"), ("EXACTLY", "1", "OBO")):
        assert ours.call("LMOVEM", "nokey", "d", "LEFT", "RIGHT", *extra) == _null_array(pair)
    # The same key: OBO reverses the moved run in place, BULK leaves the list as it was.
    assert ours.call("LMOVEM", "l", "l", "LEFT", "LEFT", "EXACTLY", "2", "OBO") == \
        _array("b", "a")
    assert _lrange(pair, "l") == [b"b", b"a", b"c"]
    assert ours.call("LMOVEM", "l", "l", "LEFT", "LEFT", "COUNT", "3", "BULK") == \
        _array("b", "a", "c")
    assert _lrange(pair, "l") == [b"b", b"a", b"c"]
    assert ours.call("LMOVEM", "l", "l", "RIGHT", "LEFT", "COUNT", "3", "BULK") == \
        _array("b", "a", "c")
    assert ours.call("LMOVEM", "l", "l", "LEFT", "RIGHT", "COUNT", "10", "OBO") == \
        _array("b", "a", "c")
    assert _lrange(pair, "l") == [b"b", b"a", b"c"]


@pytest.mark.redis_version("8.10")
def test_lmovem_blmovem_errors(pair: Pair) -> None:
    ours = pair.ours
    ours.call("RPUSH", "l", "a")
    ours.call("SET", "str", "x")
    syntax = b"-ERR syntax error\r\n"
    count = b"-ERR count should be greater than 0\r\n"
    for name, timeout in (("LMOVEM", ()), ("BLMOVEM", ("0.01",))):
        base = (name, "l", "d", "LEFT", "RIGHT", *timeout)
        assert ours.call(name, "l", "d", "UP", "RIGHT", *timeout) == syntax
        assert ours.call(*base, "COUNT") == syntax
        assert ours.call(*base, "COUNT", "2") == syntax  # the ordering is required
        assert ours.call(*base, "OBO") == syntax
        assert ours.call(*base, "COUNT", "2", "FAST") == syntax
        assert ours.call(*base, "MANY", "2", "OBO") == syntax
        assert ours.call(*base, "COUNT", "2", "OBO", "X") == syntax
        assert ours.call(*base, "COUNT", "0", "OBO") == count
        assert ours.call(*base, "EXACTLY", "-1", "BULK") == count
        assert ours.call(*base, "COUNT", "x", "BULK") == count
        assert ours.call(name, "str", "d", "LEFT", "RIGHT", *timeout).startswith(b"-WRONGTYPE")
        assert ours.call(name, "l", "str", "LEFT", "RIGHT", *timeout).startswith(b"-WRONGTYPE")
    assert ours.call("BLMOVEM", "l", "d", "LEFT", "RIGHT", "-1") == \
        b"-ERR timeout is negative\r\n"
    assert ours.call("BLMOVEM", "l", "d", "LEFT", "RIGHT", "x") == \
        b"-ERR timeout is not a float or out of range\r\n"
    assert _lrange(pair, "l") == [b"a"]


@pytest.mark.redis_version("8.10")
def test_blmovem_count_waits_for_the_source(pair: Pair, extra: list[Pair]) -> None:
    """COUNT: blocked while the source is missing; the first push serves it with what is
    there, up to the count."""
    ours, writer = pair.ours, extra[0].ours
    ours.send("BLMOVEM", "src", "dst", "LEFT", "RIGHT", "0", "COUNT", "3", "BULK")
    wait_blocked(writer, 1)
    writer.call("RPUSH", "src", "a", "b")
    assert ours.read_reply() == _array("a", "b")
    assert _lrange(pair, "dst") == [b"a", b"b"]
    # Served at once when the source holds a list; a missing source times out with nil.
    writer.call("RPUSH", "src", "c")
    assert ours.call("BLMOVEM", "src", "dst", "LEFT", "LEFT", "0") == _array("c")
    assert ours.call("EXISTS", "src") == b":0\r\n"


@pytest.mark.redis_version("8.10")
def test_blmovem_exactly_waits_until_the_list_is_long_enough(
    pair: Pair, extra: list[Pair]
) -> None:
    ours, writer = pair.ours, extra[0].ours
    writer.call("RPUSH", "src", "a")
    ours.send("BLMOVEM", "src", "dst", "LEFT", "RIGHT", "0", "EXACTLY", "3", "OBO")
    wait_blocked(writer, 1)
    writer.call("RPUSH", "src", "b")  # an existing list grows: still short
    wait_blocked(writer, 1)
    writer.call("RPUSH", "src", "c", "d")
    assert ours.read_reply() == _array("a", "b", "c")
    assert _lrange(pair, "src") == [b"d"]
    assert _lrange(pair, "dst") == [b"a", b"b", b"c"]


@pytest.mark.redis_version("8.10")
def test_blmovem_in_multi_and_on_timeout(pair: Pair, extra: list[Pair]) -> None:
    """Inside MULTI BLMOVEM does not block: nil when it cannot move; CLIENT UNBLOCK and a
    timeout answer nil too."""
    ours = pair.ours
    ours.call("RPUSH", "short", "a")
    ours.call("MULTI")
    ours.call("BLMOVEM", "nokey", "d", "LEFT", "RIGHT", "0")
    ours.call("BLMOVEM", "short", "d", "LEFT", "RIGHT", "0", "EXACTLY", "2", "OBO")
    ours.call("BLMOVEM", "short", "d", "LEFT", "RIGHT", "0", "COUNT", "2", "OBO")
    null = _null_array(pair)
    assert ours.call("EXEC") == b"*3\r\n" + null + null + _array("a")
    watcher = extra[0].ours
    client_id = decode(ours.call("CLIENT", "ID"))
    ours.send("BLMOVEM", "nokey", "d", "LEFT", "RIGHT", "0")
    wait_blocked(watcher, 1)
    assert watcher.call("CLIENT", "UNBLOCK", client_id) == b":1\r\n"
    assert ours.read_reply() == null
    assert ours.call("BLMOVEM", "nokey", "d", "LEFT", "RIGHT", "0.01", "COUNT", "1", "OBO") == null


@pytest.mark.redis_version("8.10")
def test_lmovem_keyspace_events(pair: Pair, extra: list[Pair]) -> None:
    """The destination's push event, then the source's pop event (and ``del`` once empty),
    once per command whatever the number moved."""
    ours, watcher = pair.ours, extra[0].ours
    ours.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        watcher.call("PSUBSCRIBE", "__keyevent@0__:*")
        ours.call("RPUSH", "src", "a", "b", "c")
        ours.call("LMOVEM", "src", "dst", "RIGHT", "LEFT", "COUNT", "2", "OBO")
        ours.call("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", "5", "BULK")
        seen = []
        for _ in range(6):
            message = decode(watcher.read_reply())
            seen.append((message[2].split(b":")[1], message[3]))
        assert seen == [(b"rpush", b"src"), (b"lpush", b"dst"), (b"rpop", b"src"),
                        (b"rpush", b"dst"), (b"lpop", b"src"), (b"del", b"src")]
    finally:
        ours.call("CONFIG", "SET", "notify-keyspace-events", "")


@pytest.mark.redis_version("8.10")
def test_lmovem_blmovem_with_redis_py(resplite_srv: ServerProcess) -> None:
    """redis-py's lmovem / blmovem, as its own tests against Redis use them."""
    r = redis.Redis(host=resplite_srv.host, port=resplite_srv.port)
    try:
        r.flushall()
        r.rpush("a", "1", "2", "3", "4", "5")
        assert r.lmovem("a", "b") == [b"1"]
        assert r.lmovem("a", "b", "LEFT", "LEFT", count=3, ordering="OBO") == [b"4", b"3", b"2"]
        assert r.lmovem("a", "b", "LEFT", "LEFT", count=5, ordering="BULK") == [b"5"]
        assert r.lmovem("a", "b", count=2, ordering="BULK") is None
        r.rpush("names", "john")
        assert r.lmovem("names", "processed", "LEFT", "RIGHT", count=2, mode="EXACTLY",
                        ordering="BULK") is None
        r.rpush("names", "doe")
        assert r.lmovem("names", "processed", "LEFT", "RIGHT", count=2, mode="EXACTLY",
                        ordering="BULK") == [b"john", b"doe"]
        r.rpush("c", "1", "2", "3", "4", "5")
        assert r.blmovem("c", "d", 1) == [b"1"]
        assert r.blmovem("c", "d", 1, "LEFT", "LEFT", count=3, ordering="BULK") == \
            [b"2", b"3", b"4"]
        assert r.blmovem("c", "d", 1, count=5, ordering="BULK") == [b"5"]
        assert r.blmovem("foo", "bar", 0.05, count=2, ordering="BULK") is None
    finally:
        r.close()


@pytest.mark.redis_version("7.2")
def test_blocking_pops_run_in_scripts_without_blocking(pair: Pair) -> None:
    """Redis 7.2 dropped their noscript flag: in a script they answer at once, as in MULTI
    (7.0 refuses them)."""
    ours = pair.ours
    nil = b"$-1\r\n" if pair.resp == 2 else b"_\r\n"
    ours.call("RPUSH", "l", "a", "b")
    assert ours.call("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "l") == \
        _array("l", "a")
    assert ours.call("EVAL", "return redis.call('brpop', KEYS[1], 0)", "1", "l") == \
        _array("l", "b")
    for script in ("return redis.call('blpop', KEYS[1], 0)",
                   "return redis.call('brpop', KEYS[1], 0)",
                   "return redis.call('blmove', KEYS[1], 'd', 'LEFT', 'LEFT', 0)",
                   "return redis.call('brpoplpush', KEYS[1], 'd', 0)"):
        assert ours.call("EVAL", script, "1", "l") == nil, script
    ours.call("RPUSH", "l", "c")
    assert ours.call("EVAL", "return redis.call('brpoplpush', KEYS[1], 'd', 0)", "1", "l") == \
        b"$1\r\nc\r\n"
    if ref_version(pair) >= (7, 2):
        pair.ref.call("RPUSH", "l", "x")
        ours.call("RPUSH", "l", "x")
        pair.check("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "l")
        pair.check("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "l")
    else:
        assert pair.ref.call("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1",
                             "l").startswith(b"-ERR This Redis command is not allowed from script")


# -- large ranges (sent in pieces from 4096 elements on) -------------------------------------


def test_large_lrange(pair: Pair) -> None:
    values = [f"v{i}" if i % 3 else str(i) for i in range(12000)]
    pair.check("RPUSH", "l", *values)
    for cmd in [("LRANGE", "l", "0", "-1"), ("LRANGE", "l", "100", "4195"),
                ("LRANGE", "l", "100", "4194"), ("LRANGE", "l", "-9000", "-2")]:
        pair.check(*cmd)
    pair.check("MULTI")
    pair.check("LRANGE", "l", "0", "-1")
    pair.check("RPUSH", "l", "after")
    pair.check("EXEC")
    pair.check("EVAL", "local r = redis.call('LRANGE', KEYS[1], 0, -1) return {#r, r[1], r[#r]}",
               "1", "l")
