"""Sorted set commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Scenarios are short command sequences on freshly flushed servers whose replies must be
identical, errors included. A sorted set's order is defined (score, then member), so whole
replies are compared exactly, large sorted sets (skiplists) included; only ZSCAN over a
skiplist walks Redis's hash order, and is checked for what a cursor guarantees. Random
picks (ZRANDMEMBER) are checked by shape, count, uniqueness and distribution.

Where resplite follows a newer Redis than the 7.0 reference (ZRANK / ZREVRANK WITHSCORE
from 7.2, ZSCAN NOVALUES's error from 7.4, 7.2's early conversion of a wide ZADD, 7.2's
listpack order of distinct ZRANDMEMBER picks, 7.2's printing of doubles), the test is marked
with that version. Scenarios with fractional scores compare the printed doubles through
:func:`support.normalize.doubles` (7.0 prints ``0.10000000000000001`` where 7.2+ prints
``0.1``), and resplite's own bytes are asserted by the 7.2 tests below.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import pytest
import redis
from compat_helpers import Command, decode, ref_version, run, values
from support.normalize import doubles
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerProcess

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"
FAR_FUTURE_S = "4102444800"
LONG_64 = "m" * 64
LONG_65 = "m" * 65

Scenario = list[Command]


def stream(key: str = "t") -> Command:
    return ("XADD", key, "1-1", "f", "v")


SCORES = [
    "0", "-0", "1", "-1", "1.5", "0.1", "1e3", "1E-3", "+2", "1.", ".5", "-.5", "007", "1e17",
    "100000000000000000", "4611686018427387904", "4611686018427387905", "9007199254740993",
    "1e300", "-1e300", "5e-324", "2.2250738585072014e-308", "inf", "-inf", "+inf", "Infinity",
    "-INF", "0x10", "0x1.8p3", "-0x1p-2", "123456789.123456789", "3.14159265358979323846",
]

SCENARIOS: dict[str, Scenario] = {
    # ZADD
    "ZADD: adds and updates, counts only new members": [
        ("ZADD", "z", "1", "a", "2", "b"), ("ZADD", "z", "3", "a", "4", "c"),
        ("ZADD", "z", "3", "a"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZCARD", "z"),
        ("ZADD", "z", "5", "d", "6", "d", "7", "d"), ("ZSCORE", "z", "d"),
    ],
    "ZADD: scores as Redis reads and prints them": [
        *[("ZADD", "z", score, f"m{i}") for i, score in enumerate(SCORES)],
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZSCAN", "z", "0"),
        *[("ZSCORE", "z", f"m{i}") for i in range(len(SCORES))],
        ("ZMSCORE", "z", *[f"m{i}" for i in range(len(SCORES))]),
    ],
    "ZADD: scores Redis refuses": [
        *[("ZADD", "z", bad, "m") for bad in (
            "nan", "NaN", "-nan", "abc", "", " 1", "1 ", "1\t", "1e400", "-1e400", "1e-400",
            "1_000", "1e", "1e+", "0x", "0x1p", "inf1", "infinit", "1,5", "--1", "+-1",
            b"1\x00", "(1", "[1", "0b1", "nan(123)",
        )],
        ("EXISTS", "z"),
    ],
    "ZADD: binary members, empty member, integers as members": [
        ("ZADD", "z", "1", b"\x00\r\n\xff", "2", "", "3", "12", "4", "-5", "5", "007", "6", "-0",
         "7", I64_MAX, "8", "9223372036854775808"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZSCORE", "z", ""), ("ZRANK", "z", "12"),
        ("ZSCORE", "z", b"\x00\r\n\xff"), ("ZSCAN", "z", "0"),
    ],
    "ZADD: NX, XX, GT, LT, CH": [
        ("ZADD", "z", "10", "a", "20", "b"),
        ("ZADD", "z", "NX", "1", "a", "3", "c"), ("ZADD", "z", "XX", "2", "a", "4", "d"),
        ("ZADD", "z", "GT", "5", "a", "30", "b", "1", "e"), ("ZADD", "z", "LT", "100", "b", "1",
        "a"),
        ("ZADD", "z", "XX", "GT", "1", "a", "99", "b"), ("ZADD", "z", "XX", "LT", "0", "a", "0",
        "nope"),
        ("ZADD", "z", "CH", "1", "a", "2", "f", "0", "a"), ("ZADD", "z", "CH", "XX", "5", "a"),
        ("ZADD", "z", "GT", "CH", "1", "b", "500", "c"), ("ZADD", "z", "ch", "nx", "7", "a", "7",
        "g"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ],
    "ZADD: option clashes and their order": [
        ("ZADD", "z", "NX", "XX", "1", "a"), ("ZADD", "z", "NX", "GT", "1", "a"),
        ("ZADD", "z", "NX", "LT", "1", "a"), ("ZADD", "z", "GT", "LT", "1", "a"),
        ("ZADD", "z", "NX", "XX", "GT", "LT", "1", "a"), ("ZADD", "z", "INCR", "1", "a", "2", "b"),
        ("ZADD", "z", "INCR", "NX", "XX", "1", "a", "2", "b"), ("ZADD", "z", "GT", "LT", "x", "a"),
        ("ZADD", "z", "INCR", "x", "a", "2", "b"), ("ZADD", "z", "NX", "XX", "1", "a", "2"),
        ("ZADD", "z", "1"), ("ZADD", "z", "NX"), ("ZADD", "z", "NX", "1"), ("ZADD", "z", "x", "a",
        "y"),
        ("ZADD", "z", "1", "a", "x", "b"), ("ZADD", "z", "BOGUS", "1", "a"),
        ("ZADD", "z", b"nx\x00junk", "1", "a"), ("ZADD", "z", "Incr", "1", "a"), ("EXISTS", "z"),
        ("ZADD", "z"), ("ZADD", "z", "1", "a", "2"),
    ],
    "ZADD INCR: replies the new score, null when nothing happened": [
        ("ZADD", "z", "INCR", "1.5", "a"), ("ZADD", "z", "INCR", "2", "a"),
        ("ZADD", "z", "INCR", "NX", "5", "a"), ("ZADD", "z", "INCR", "XX", "5", "b"),
        ("ZADD", "z", "INCR", "GT", "-1", "a"), ("ZADD", "z", "INCR", "LT", "-1", "a"),
        ("ZADD", "z", "INCR", "GT", "1", "a"), ("ZADD", "z", "INCR", "CH", "0", "a"),
        ("ZADD", "nokey", "INCR", "XX", "1", "a"), ("ZADD", "nokey", "XX", "1", "a"),
        ("EXISTS", "nokey"), ("ZADD", "z", "INCR", "0.1", "c"), ("ZADD", "z", "INCR", "0.2", "c"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ],
    "ZADD INCR / ZINCRBY: infinities and the NaN they can make": [
        ("ZADD", "z", "inf", "a", "-inf", "b", "1", "c"), ("ZINCRBY", "z", "-inf", "a"),
        ("ZINCRBY", "z", "inf", "b"), ("ZADD", "z", "INCR", "-inf", "a"),
        ("ZINCRBY", "z", "inf", "a"), ("ZINCRBY", "z", "1e308", "c"), ("ZINCRBY", "z", "1e308",
        "c"),
        ("ZINCRBY", "z", "-inf", "c"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZINCRBY", "z", "nan", "c"), ("ZINCRBY", "z", "x", "c"), ("ZINCRBY", "z", "", "c"),
    ],
    "ZINCRBY: creates members and keys; its options are read as ZADD's": [
        ("ZINCRBY", "z", "5", "a"), ("ZINCRBY", "z", "-2.5", "a"), ("ZINCRBY", "z", "1", "b"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZINCRBY", "z", "nx", "a"),
        ("ZINCRBY", "z", "xx", "1"), ("ZINCRBY", "z", "ch", "a"), ("ZINCRBY", "z", "incr", "a"),
        ("ZINCRBY", "z", "1", "a", "2"), ("ZINCRBY", "z", "1"),
    ],
    "ZADD / ZINCRBY of -0: the listpack writes it as 0": [
        ("ZADD", "z", "-0", "a"), ("ZSCORE", "z", "a"), ("ZADD", "z", "INCR", "-0", "b"),
        ("ZSCORE", "z", "b"), ("ZINCRBY", "z", "-0", "c"), ("ZADD", "z", "0", "a"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZSCAN", "z", "0"),
    ],
    # ZREM, ZCARD, ZSCORE, ZMSCORE
    "ZREM: counts removed members once, deletes the emptied key": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZREM", "z", "a", "a", "x"),
        ("ZCARD", "z"), ("ZREM", "z", "b", "c", "b", "x"), ("EXISTS", "z"), ("TYPE", "z"),
        ("ZREM", "z", "b"), ("ZREM", "nokey", "a"), ("ZREM", "z"),
    ],
    "ZCARD / ZSCORE / ZMSCORE / ZRANK on a missing key": [
        ("ZCARD", "nokey"), ("ZSCORE", "nokey", "a"), ("ZMSCORE", "nokey", "a", "b"),
        ("ZRANK", "nokey", "a"), ("ZREVRANK", "nokey", "a"), ("ZCOUNT", "nokey", "-inf", "inf"),
        ("ZLEXCOUNT", "nokey", "-", "+"), ("ZRANGE", "nokey", "0", "-1"),
        ("ZRANGEBYSCORE", "nokey", "-inf", "inf"), ("ZRANGEBYLEX", "nokey", "-", "+"),
        ("ZPOPMIN", "nokey"), ("ZPOPMAX", "nokey", "3"), ("ZRANDMEMBER", "nokey"),
        ("ZRANDMEMBER", "nokey", "5"), ("ZRANDMEMBER", "nokey", "-5", "WITHSCORES"),
        ("ZSCAN", "nokey", "0"), ("ZREMRANGEBYRANK", "nokey", "0", "-1"),
        ("ZREMRANGEBYSCORE", "nokey", "-inf", "inf"), ("ZREMRANGEBYLEX", "nokey", "-", "+"),
        ("EXISTS", "nokey"),
    ],
    "ZRANK / ZREVRANK: positions from both ends": [
        ("ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d"),
        *[(cmd, "z", m) for cmd in ("ZRANK", "ZREVRANK") for m in ("a", "b", "c", "d", "x")],
    ],
    # Ranges by position
    "ZRANGE / ZREVRANGE by position, negative and out-of-range indexes": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
        *[(cmd, "z", s, e) for cmd in ("ZRANGE", "ZREVRANGE") for s, e in (
            ("0", "-1"), ("1", "3"), ("-2", "-1"), ("-100", "100"), ("3", "1"), ("5", "10"),
            ("-1", "-2"), ("0", "0"), ("-6", "-5"), (I64_MIN, I64_MAX))],
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZREVRANGE", "z", "0", "2", "withscores"),
        ("ZRANGE", "z", "0", "-1", "REV", "WITHSCORES"), ("ZRANGE", "z", "x", "1"),
        ("ZRANGE", "z", "0", "1.5"), ("ZRANGE", "z", "0", "9223372036854775808"),
    ],
    "ZRANGE: option errors and their order": [
        ("ZADD", "z", "1", "a", "2", "b"),
        ("ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"), ("ZRANGE", "z", "0", "-1", "LIMIT", "0",
        "-1"),
        ("ZRANGE", "z", "(0", "1", "BYLEX"), ("ZRANGE", "z", "[a", "[b", "BYLEX", "WITHSCORES"),
        ("ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX"), ("ZRANGE", "z", "0", "1", "BYLEX",
        "BYSCORE"),
        ("ZRANGE", "z", "0", "1", "REV", "REV"), ("ZRANGE", "z", "0", "1", "LIMIT", "0"),
        ("ZRANGE", "z", "0", "1", "LIMIT", "x", "1"), ("ZRANGE", "z", "0", "1", "LIMIT", "1", "x"),
        ("ZRANGE", "z", "x", "y", "LIMIT", "0", "1"), ("ZRANGE", "z", "x", "1", "BYSCORE"),
        ("ZRANGE", "z", "a", "b", "BYLEX"), ("ZRANGE", "z", "0", "1", "BOGUS"),
        ("ZRANGE", "z", "0", "1", "WITHSCORE"), ("ZRANGE", "z", "0"), ("ZREVRANGE", "z", "0", "1",
        "REV"),
        ("ZREVRANGE", "z", "0", "1", "BYSCORE"), ("ZREVRANGE", "z", "0", "1", "LIMIT", "0", "1"),
        ("ZRANGEBYSCORE", "z", "0", "1", "REV"), ("ZRANGEBYSCORE", "z", "0", "1", "BYLEX"),
        ("ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"), ("ZRANGEBYLEX", "z", "-", "+", "BYSCORE"),
        ("ZRANGE", "z", "0", "1", b"withscores\x00x"),
    ],
    # Ranges by score
    "ZRANGEBYSCORE / ZREVRANGEBYSCORE: inclusive, exclusive, infinite bounds": [
        ("ZADD", "z", "-inf", "ninf", "1", "a", "2", "b", "2", "c", "3", "d", "inf", "pinf"),
        *[("ZRANGEBYSCORE", "z", lo, hi, "WITHSCORES") for lo, hi in (
            ("-inf", "+inf"), ("1", "2"), ("(1", "2"), ("1", "(2"), ("(1", "(3"), ("2", "2"),
            ("(2", "2"), ("2", "(2"), ("3", "1"), ("-inf", "-inf"), ("(-inf", "inf"),
            ("inf", "inf"), ("(inf", "inf"), ("-inf", "(-inf"), ("(1.5", "+inf"), ("", ""),
            ("(", "3"), (" 2", "3"), ("0x1", "0x2"), ("1e0", "2e0"), (b"2\x00junk", "3"),
            ("-1e400", "1e400"), ("1e-400", "2"))],
        *[("ZREVRANGEBYSCORE", "z", hi, lo, "WITHSCORES") for lo, hi in (
            ("-inf", "+inf"), ("1", "2"), ("(1", "2"), ("1", "(2"), ("2", "2"), ("3", "1"))],
        ("ZRANGE", "z", "(1", "3", "BYSCORE", "WITHSCORES"),
        ("ZRANGE", "z", "3", "(1", "BYSCORE", "REV", "WITHSCORES"),
    ],
    "ZRANGEBYSCORE: bounds Redis refuses": [
        ("ZADD", "z", "1", "a"),
        *[("ZRANGEBYSCORE", "z", lo, hi) for lo, hi in (
            ("x", "1"), ("1", "x"), ("nan", "1"), ("1", "(nan"), ("((1", "2"), ("1 ", "2"),
            ("[1", "2"), ("1_0", "2"), ("-", "+"), ("1", "2x"))],
        ("ZCOUNT", "z", "x", "1"), ("ZREMRANGEBYSCORE", "z", "1", "nan"),
        ("ZRANGE", "z", "x", "1", "BYSCORE"), ("ZRANGESTORE", "d", "z", "x", "1", "BYSCORE"),
    ],
    "ZRANGEBYSCORE: LIMIT offset and count": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
        *[("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", off, cnt) for off, cnt in (
            ("0", "2"), ("1", "2"), ("4", "10"), ("5", "1"), ("100", "1"), ("0", "0"),
            ("0", "-1"), ("2", "-5"), ("-1", "2"), ("-1", "-1"), (I64_MAX, "1"),
            ("0", I64_MAX), ("0", I64_MIN))],
        ("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "1", "2", "WITHSCORES"),
        ("ZREVRANGEBYSCORE", "z", "4", "(1", "LIMIT", "0", "2"),
        ("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "-2", "2"),
        ("ZRANGEBYSCORE", "z", "(1", "4", "WITHSCORES", "LIMIT", "1", "1", "LIMIT", "0", "5"),
        ("ZRANGE", "z", "0", "10", "BYSCORE", "LIMIT", "2", "2", "WITHSCORES"),
        ("ZRANGE", "z", "10", "0", "BYSCORE", "REV", "LIMIT", "1", "3"),
    ],
    "ZCOUNT: counts within score ranges": [
        ("ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d", "inf", "e"),
        *[("ZCOUNT", "z", lo, hi) for lo, hi in (
            ("-inf", "+inf"), ("2", "2"), ("(2", "3"), ("(1", "(3"), ("3", "1"), ("inf", "inf"),
            ("(inf", "+inf"), ("-inf", "0"), ("", "2"))],
    ],
    # Lexicographic ranges
    "ZRANGEBYLEX / ZREVRANGEBYLEX / ZLEXCOUNT with one score for all": [
        ("ZADD", "z", *[x for m in ("a", "aa", "ab", "b", "ba", "c", "d", "", "\xff")
                         for x in ("0", m)]),
        *[("ZRANGEBYLEX", "z", lo, hi) for lo, hi in (
            ("-", "+"), ("[a", "[b"), ("(a", "(b"), ("[aa", "(ba"), ("[", "(a"), ("(", "+"),
            ("+", "-"), ("-", "-"), ("+", "+"), ("[b", "[a"), ("[b", "[b"), ("(b", "[b"),
            ("[b", "(b"), ("-", "[a"), ("[c", "+"), (b"+\x00x", "-"), ("[\xff", "+"))],
        *[("ZREVRANGEBYLEX", "z", hi, lo) for lo, hi in (
            ("-", "+"), ("[a", "[b"), ("(a", "(b"), ("[b", "[a"))],
        *[("ZLEXCOUNT", "z", lo, hi) for lo, hi in (
            ("-", "+"), ("[a", "[b"), ("(a", "(b"), ("+", "-"), ("[b", "[b"), ("(b", "(b"))],
        ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "2", "3"),
        ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "-1", "3"),
        ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "0"),
        ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "8", "-1"),
        ("ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", "1", "2"),
        ("ZREVRANGEBYLEX", "z", "+", "[b", "LIMIT", "20", "2"),
        ("ZRANGE", "z", "[a", "[c", "BYLEX", "LIMIT", "1", "2"),
        ("ZRANGE", "z", "[c", "[a", "BYLEX", "REV"),
    ],
    "ZRANGEBYLEX: bounds Redis refuses": [
        ("ZADD", "z", "0", "a"),
        *[("ZRANGEBYLEX", "z", lo, hi) for lo, hi in (
            ("a", "+"), ("-", "b"), ("", "+"), ("-x", "+"), ("-", "+x"), ("{a", "+"),
            ("1", "2"))],
        ("ZLEXCOUNT", "z", "a", "b"), ("ZREMRANGEBYLEX", "z", "[a", "b"),
        ("ZRANGESTORE", "d", "z", "a", "b", "BYLEX"),
    ],
    "ZRANGEBYLEX on a listpack with mixed scores follows Redis's walk": [
        ("ZADD", "z", "1", "d", "2", "a", "3", "c", "4", "b", "5", "e"),
        *[(cmd, "z", lo, hi) for cmd in ("ZRANGEBYLEX", "ZLEXCOUNT") for lo, hi in (
            ("-", "+"), ("[b", "[d"), ("[a", "(c"), ("(c", "+"), ("-", "[b"))],
        *[("ZREVRANGEBYLEX", "z", hi, lo) for lo, hi in (("-", "+"), ("[b", "[d"), ("[a", "(c"))],
        ("ZRANGEBYLEX", "z", "[b", "[z", "LIMIT", "2", "2"),
        ("ZREMRANGEBYLEX", "z", "[b", "[d"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ],
    # ZREMRANGEBY*
    "ZREMRANGEBYRANK / BYSCORE / BYLEX": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
        ("ZREMRANGEBYRANK", "z", "0", "0"), ("ZREMRANGEBYRANK", "z", "-1", "-1"),
        ("ZREMRANGEBYRANK", "z", "3", "1"), ("ZREMRANGEBYRANK", "z", "10", "20"),
        ("ZRANGE", "z", "0", "-1"), ("ZREMRANGEBYSCORE", "z", "(2", "4"),
        ("ZREMRANGEBYSCORE", "z", "10", "20"), ("ZRANGE", "z", "0", "-1"),
        ("ZREMRANGEBYRANK", "z", "0", "-1"), ("EXISTS", "z"),
        ("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d"), ("ZREMRANGEBYLEX", "l", "(a", "[c"),
        ("ZRANGE", "l", "0", "-1"), ("ZREMRANGEBYLEX", "l", "-", "+"), ("EXISTS", "l"),
        ("ZADD", "z", "1", "a"), ("ZREMRANGEBYRANK", "z", "x", "1"), ("ZREMRANGEBYRANK", "z", "0",
        "1.5"),
        ("ZREMRANGEBYRANK", "z", I64_MIN, I64_MAX), ("EXISTS", "z"),
    ],
    # ZPOPMIN / ZPOPMAX / ZMPOP
    "ZPOPMIN / ZPOPMAX with and without a count": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
        ("ZPOPMIN", "z"), ("ZPOPMAX", "z"), ("ZPOPMIN", "z", "1"), ("ZPOPMAX", "z", "0"),
        ("ZPOPMAX", "z", "5"), ("EXISTS", "z"), ("ZPOPMIN", "z"), ("ZPOPMIN", "z", "2"),
        ("ZADD", "z", "1", "a"), ("ZPOPMIN", "z", "-1"), ("ZPOPMIN", "z", "x"),
        ("ZPOPMIN", "z", "1", "2"), ("ZPOPMAX", "z", I64_MAX), ("ZPOPMIN", "z", "1.5"),
    ],
    "ZMPOP: keys, sides, counts and their errors": [
        ("ZADD", "a", "1", "x", "2", "y", "3", "z"), ("ZADD", "b", "10", "p"),
        ("ZMPOP", "2", "nokey", "a", "MIN"), ("ZMPOP", "2", "a", "b", "max", "COUNT", "10"),
        ("ZMPOP", "1", "a", "MIN", "COUNT", "1"), ("ZMPOP", "2", "a", "b", "MIN"),
        ("ZMPOP", "2", "a", "b", "MIN"), ("EXISTS", "a", "b"),
        ("ZMPOP", "0", "a", "MIN"), ("ZMPOP", "-1", "a", "MIN"), ("ZMPOP", "x", "a", "MIN"),
        ("ZMPOP", "2", "a", "MIN"), ("ZMPOP", "1", "a", "MIDDLE"), ("ZMPOP", "1", "a", "MIN",
        "COUNT"),
        ("ZMPOP", "1", "a", "MIN", "COUNT", "0"), ("ZMPOP", "1", "a", "MIN", "COUNT", "-1"),
        ("ZMPOP", "1", "a", "MIN", "COUNT", "x"), ("ZMPOP", "1", "a", "MIN", "COUNT", "1", "COUNT",
        "1"),
        ("ZMPOP", "1", "a", "MIN", "BOGUS"), ("ZMPOP", "1", "a"), ("ZMPOP", "5", "a", "MIN"),
        ("ZMPOP", I64_MAX, "a", "MIN"), ("ZMPOP", "1", "a", b"min\x00x"),
    ],
    # ZRANDMEMBER: the deterministic cases
    "ZRANDMEMBER: missing key, errors, count 0": [
        ("ZRANDMEMBER", "nokey", "3", "WITHSCORES"), ("ZRANDMEMBER", "nokey", "x"),
        ("ZADD", "z", "1", "a"), ("ZRANDMEMBER", "z", "0"), ("ZRANDMEMBER", "z", "0", "WITHSCORES"),
        ("ZRANDMEMBER", "z", "x"), ("ZRANDMEMBER", "z", "1.5"), ("ZRANDMEMBER", "z", ""),
        ("ZRANDMEMBER", "z", I64_MIN), ("ZRANDMEMBER", "z", "9223372036854775808"),
        ("ZRANDMEMBER", "z", "1", "x"), ("ZRANDMEMBER", "z", "1", "WITHSCORES", "x"),
        ("ZRANDMEMBER", "z", "x", "y"), ("ZRANDMEMBER", "z", I64_MIN, "y"),
        ("ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"),
        ("ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"),
        ("ZRANDMEMBER", "z", "4611686018427387903", "withscores"),
        ("ZRANDMEMBER", "nokey", "-4611686018427387904", "WITHSCORES"),
        ("ZRANDMEMBER", "z", "1", b"withscores\x00junk"),
    ],
    "ZRANDMEMBER: one member, any count; a count of the size or more answers all": [
        ("ZADD", "z", "1.5", "only"), ("ZRANDMEMBER", "z"), ("ZRANDMEMBER", "z", "1"),
        ("ZRANDMEMBER", "z", "5"), ("ZRANDMEMBER", "z", "-3"), ("ZRANDMEMBER", "z", "-3",
        "WITHSCORES"),
        ("ZRANDMEMBER", "z", "1", "WITHSCORES"), ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
        ("ZRANDMEMBER", "z", "4"), ("ZRANDMEMBER", "z", "100", "WITHSCORES"),
        ("ZRANDMEMBER", "z", I64_MAX),
    ],
    "ZRANDMEMBER: syntax comes before WRONGTYPE, WRONGTYPE before count 0": [
        ("SET", "s", "x"), ("ZRANDMEMBER", "s"), ("ZRANDMEMBER", "s", "0"),
        ("ZRANDMEMBER", "s", "1", "x"), ("ZRANDMEMBER", "s", "x"), ("ZRANDMEMBER", "s", "-2"),
    ],
    # Algebra
    "ZUNION / ZINTER / ZDIFF with WEIGHTS and AGGREGATE": [
        ("ZADD", "a", "1", "x", "2", "y", "3", "z"), ("ZADD", "b", "10", "y", "20", "z", "30", "w"),
        ("ZADD", "c", "-1", "z", "inf", "x"),
        *[(cmd, "2", "a", "b", *opts) for cmd in ("ZUNION", "ZINTER") for opts in (
            (), ("WITHSCORES",), ("WEIGHTS", "2", "0.5", "WITHSCORES"),
            ("AGGREGATE", "MIN", "WITHSCORES"), ("AGGREGATE", "max", "WITHSCORES"),
            ("AGGREGATE", "sum", "WEIGHTS", "1", "-1", "WITHSCORES"),
            ("WEIGHTS", "1", "2", "WEIGHTS", "3", "4", "WITHSCORES"))],
        ("ZUNION", "3", "a", "b", "c", "WITHSCORES"), ("ZINTER", "3", "a", "b", "c", "WITHSCORES"),
        ("ZUNION", "2", "a", "c", "WEIGHTS", "0", "0", "WITHSCORES"),
        ("ZUNION", "2", "a", "c", "WEIGHTS", "1", "-inf", "WITHSCORES"),
        ("ZINTER", "2", "a", "c", "WEIGHTS", "inf", "-inf", "WITHSCORES"),
        ("ZINTER", "2", "a", "a", "WITHSCORES"), ("ZUNION", "2", "a", "a", "WITHSCORES"),
        ("ZUNION", "3", "a", "nokey", "b", "WITHSCORES"), ("ZINTER", "2", "a", "nokey"),
        ("ZDIFF", "2", "b", "a", "WITHSCORES"), ("ZDIFF", "1", "a"), ("ZDIFF", "2", "a", "a"),
        ("ZDIFF", "3", "b", "nokey", "c", "WITHSCORES"), ("ZDIFF", "2", "nokey", "a"),
        ("ZUNION", "1", "nokey"), ("ZINTERCARD", "2", "a", "b"), ("ZINTERCARD", "2", "a", "nokey"),
        ("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), ("ZINTERCARD", "2", "a", "b", "LIMIT", "0"),
        ("ZINTERCARD", "1", "a", "LIMIT", "2"),
    ],
    "ZUNION / ZINTER / ZDIFF / ZINTERCARD: argument errors and their order": [
        ("ZADD", "a", "1", "x"), ("SET", "s", "v"),
        ("ZUNION", "0", "a"), ("ZINTER", "-1", "a"), ("ZDIFF", "0", "a"), ("ZINTERCARD", "0", "a"),
        ("ZUNION", "x", "a"), ("ZUNION", "2", "a"), ("ZUNION", "1", "s"), ("ZUNION", "2", "a", "s"),
        ("ZUNION", "2", "s", "a", "BOGUS"), ("ZUNION", "1", "a", "BOGUS"),
        ("ZUNION", "1", "a", "WEIGHTS"), ("ZUNION", "1", "a", "WEIGHTS", "x"),
        ("ZUNION", "2", "a", "a", "WEIGHTS", "1"), ("ZUNION", "1", "a", "WEIGHTS", "nan"),
        ("ZUNION", "1", "a", "WEIGHTS", "1", "2"), ("ZUNION", "1", "a", "AGGREGATE"),
        ("ZUNION", "1", "a", "AGGREGATE", "AVG"), ("ZUNION", "1", "a", "AGGREGATE", "MIN", "x"),
        ("ZDIFF", "1", "a", "WEIGHTS", "1"), ("ZDIFF", "1", "a", "AGGREGATE", "MIN"),
        ("ZINTERCARD", "1", "a", "WITHSCORES"), ("ZINTERCARD", "1", "a", "LIMIT"),
        ("ZINTERCARD", "1", "a", "LIMIT", "-1"), ("ZINTERCARD", "1", "a", "LIMIT", "x"),
        ("ZINTERCARD", "1", "a", "WEIGHTS", "1"), ("ZINTERCARD", "x", "a"),
        ("ZUNIONSTORE", "d", "1", "a", "WITHSCORES"), ("ZINTERSTORE", "d", "0", "a"),
        ("ZDIFFSTORE", "d", "2", "a"), ("ZUNION", "1", "a", "withscores", "WITHSCORES"),
        ("ZUNION", "1", "a", "WEIGHTS", " 1"), ("ZUNION", "1", "a", "WEIGHTS", "1e400"),
        ("EXISTS", "d"),
    ],
    "ZUNIONSTORE / ZINTERSTORE / ZDIFFSTORE: replace the destination, delete it when empty": [
        ("ZADD", "a", "1", "x", "2", "y"), ("ZADD", "b", "3", "y", "4", "z"), ("SET", "d", "old"),
        ("EXPIREAT", "d", FAR_FUTURE_S), ("ZUNIONSTORE", "d", "2", "a", "b"),
        ("TYPE", "d"), ("TTL", "d"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "2", "3", "AGGREGATE", "MIN"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZDIFFSTORE", "d", "2", "a", "b"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZINTERSTORE", "d", "2", "a", "nokey"),
        ("EXISTS", "d"), ("ZDIFFSTORE", "d", "1", "nokey"), ("ZUNIONSTORE", "a", "2", "a", "b"),
        ("ZRANGE", "a", "0", "-1", "WITHSCORES"), ("ZINTERSTORE", "b", "2", "a", "b"),
        ("ZRANGE", "b", "0", "-1", "WITHSCORES"), ("OBJECT", "ENCODING", "b"),
    ],
    "ZRANGESTORE: every range kind, dst replaced or deleted": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"), ("SET", "d", "x"),
        ("ZRANGESTORE", "d", "z", "1", "2"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZRANGESTORE", "d", "z", "(1", "+inf", "BYSCORE", "LIMIT", "1", "5"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("ZRANGESTORE", "d", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "2"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZRANGESTORE", "d", "z", "0", "1", "REV"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZRANGESTORE", "d", "z", "5", "10"),
        ("EXISTS", "d"), ("ZRANGESTORE", "d", "z", "0", "-1"), ("ZRANGESTORE", "d", "nokey", "0",
        "-1"),
        ("EXISTS", "d"), ("ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"),
        ("ZRANGESTORE", "d", "z", "0", "-1", "LIMIT", "0", "1"),
        ("ZRANGESTORE", "d", "z", "-", "+", "BYLEX", "LIMIT", "-1", "1"), ("EXISTS", "d"),
        ("ZADD", "l", "0", "a", "0", "b"), ("ZRANGESTORE", "z", "l", "[a", "[a", "BYLEX"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZRANGESTORE", "d", "z", "0", "-1", "BOGUS"),
    ],
    # ZSCAN
    "ZSCAN: a small sorted set comes whole with cursor 0": [
        ("ZADD", "z", "3", "c", "1.5", "a", "2", "b", "-7", "12", "1e20", "big", "inf", "i"),
        ("ZSCAN", "z", "0"), ("ZSCAN", "z", "12345"), ("ZSCAN", "z", "0", "COUNT", "1"),
        ("ZSCAN", "z", "0", "MATCH", "?"), ("ZSCAN", "z", "0", "MATCH", "1*"),
        ("ZSCAN", "z", "0", "MATCH", "*", "COUNT", "100"), ("ZSCAN", "z", "0", "match", "[ab]"),
    ],
    "ZSCAN: option and cursor errors": [
        ("ZADD", "z", "1", "a"), ("ZSCAN", "z", "x"), ("ZSCAN", "z", "-1"), ("ZSCAN", "z", ""),
        ("ZSCAN", "z", "0", "COUNT", "0"), ("ZSCAN", "z", "0", "COUNT", "x"),
        ("ZSCAN", "z", "0", "COUNT"), ("ZSCAN", "z", "0", "MATCH"), ("ZSCAN", "z", "0", "TYPE",
        "zset"),
        ("ZSCAN", "z", "0", "BOGUS"), ("ZSCAN", "nokey", "0", "BOGUS"), ("ZSCAN", "nokey", "x"),
        ("SET", "s", "x"), ("ZSCAN", "s", "0"), ("ZSCAN", "s", "x"),
    ],
    # WRONGTYPE everywhere
    "Sorted set commands on a string, a hash or a stream are WRONGTYPE": [
        ("SET", "s", "x"), ("HSET", "h", "f", "v"), stream("t"),
        *[cmd for key in ("s", "h", "t") for cmd in [
            ("ZADD", key, "1", "a"), ("ZADD", key, "XX", "1", "a"), ("ZINCRBY", key, "1", "a"),
            ("ZREM", key, "a"), ("ZCARD", key), ("ZSCORE", key, "a"), ("ZMSCORE", key, "a"),
            ("ZRANK", key, "a"), ("ZREVRANK", key, "a"), ("ZCOUNT", key, "0", "1"),
            ("ZLEXCOUNT", key, "-", "+"), ("ZRANGE", key, "0", "-1"),
            ("ZRANGEBYSCORE", key, "0", "1"), ("ZREVRANGEBYSCORE", key, "1", "0"),
            ("ZRANGEBYLEX", key, "-", "+"), ("ZREVRANGEBYLEX", key, "+", "-"),
            ("ZREVRANGE", key, "0", "1"), ("ZRANGESTORE", "d", key, "0", "1"),
            ("ZREMRANGEBYRANK", key, "0", "1"), ("ZREMRANGEBYSCORE", key, "0", "1"),
            ("ZREMRANGEBYLEX", key, "-", "+"), ("ZPOPMIN", key), ("ZPOPMAX", key, "0"),
            ("ZMPOP", "1", key, "MIN"), ("ZRANDMEMBER", key), ("ZRANDMEMBER", key, "0"),
            ("ZUNION", "1", key), ("ZINTER", "1", key), ("ZDIFF", "1", key),
            ("ZUNIONSTORE", "d", "1", key), ("ZINTERCARD", "1", key), ("ZSCAN", key, "0"),
            ("BZPOPMIN", key, "0"), ("BZPOPMAX", "nokey", key, "0"), ("BZMPOP", "0", "1", key,
            "MAX"),
        ]],
        ("GET", "s"), ("HGETALL", "h"), ("XLEN", "t"), ("EXISTS", "d"),
    ],
    "Errors are reported in Redis's order: ranges and scores before the type": [
        ("SET", "s", "x"), ("ZADD", "s", "x", "a"), ("ZADD", "s", "NX", "XX", "1", "a"),
        ("ZCOUNT", "s", "x", "1"), ("ZLEXCOUNT", "s", "x", "+"), ("ZRANGE", "s", "x", "1"),
        ("ZRANGE", "s", "0", "1", "BOGUS"), ("ZREMRANGEBYRANK", "s", "x", "1"),
        ("ZPOPMIN", "s", "-1"), ("ZMPOP", "1", "s", "BAD"), ("ZSCAN", "s", "x"),
        ("BZPOPMIN", "s", "x"), ("BZMPOP", "x", "1", "s", "MIN"), ("BZMPOP", "0", "1", "s", "BAD"),
        ("ZMPOP", "2", "nokey", "s", "MIN"), ("ZMPOP", "2", "s", "nokey", "MIN"),
    ],
    "String, hash and stream commands on a sorted set are WRONGTYPE": [
        ("ZADD", "z", "1", "a"), ("GET", "z"), ("INCR", "z"), ("APPEND", "z", "x"),
        ("STRLEN", "z"), ("GETRANGE", "z", "0", "1"), ("SETRANGE", "z", "0", "x"), ("HGET", "z",
        "f"),
        ("HSET", "z", "f", "v"), ("XADD", "z", "1-1", "f", "v"), ("XLEN", "z"), ("MGET", "z", "x"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ],
    # Keyspace commands on sorted sets
    "TYPE, OBJECT ENCODING, EXISTS, TOUCH, UNLINK, DEL, SCAN TYPE": [
        ("ZADD", "z", "1", "a"), ("SET", "s", "x"), ("TYPE", "z"), ("OBJECT", "ENCODING", "z"),
        ("OBJECT", "REFCOUNT", "z"), ("EXISTS", "z"), ("TOUCH", "z"), ("SCAN", "0", "TYPE", "zset"),
        ("SCAN", "0", "TYPE", "ZSET"), ("KEYS", "z*"), ("UNLINK", "z"), ("TYPE", "z"),
        ("ZADD", "y", "1", "a"), ("DEL", "y", "s"), ("EXISTS", "y"),
    ],
    "RENAME / RENAMENX / MOVE keep the sorted set and its TTL": [
        ("ZADD", "z", "1", "a", "2", "b"), ("EXPIREAT", "z", FAR_FUTURE_S), ("RENAME", "z", "y"),
        ("ZRANGE", "y", "0", "-1", "WITHSCORES"), ("EXPIRETIME", "y"), ("ZADD", "k", "1", "x"),
        ("RENAMENX", "y", "k"), ("RENAME", "y", "k"), ("ZRANGE", "k", "0", "-1"),
        ("MOVE", "k", "1"), ("EXISTS", "k"), ("SELECT", "1"), ("ZRANGE", "k", "0", "-1",
        "WITHSCORES"),
        ("EXPIRETIME", "k"), ("OBJECT", "ENCODING", "k"),
    ],
    "COPY makes an independent sorted set, with REPLACE and DB": [
        ("ZADD", "z", "1", "a", "2", "b"), ("COPY", "z", "c"), ("ZADD", "z", "10", "a"),
        ("ZREM", "z", "b"), ("ZADD", "c", "26", "z"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZRANGE", "c", "0", "-1", "WITHSCORES"), ("COPY", "z", "c"), ("COPY", "z", "c", "REPLACE"),
        ("ZRANGE", "c", "0", "-1", "WITHSCORES"), ("COPY", "c", "c", "DB", "1"),
        ("ZINCRBY", "c", "1", "a"), ("SELECT", "1"), ("ZRANGE", "c", "0", "-1", "WITHSCORES"),
        ("OBJECT", "ENCODING", "c"),
    ],
    "EXPIRE and PERSIST on sorted sets; a past expiry deletes": [
        ("ZADD", "z", "1", "a"), ("EXPIREAT", "z", FAR_FUTURE_S), ("ZADD", "z", "2", "b"),
        ("EXPIRETIME", "z"), ("ZREM", "z", "b"), ("ZINCRBY", "z", "1", "a"), ("EXPIRETIME", "z"),
        ("PERSIST", "z"), ("TTL", "z"), ("EXPIREAT", "z", "1000"), ("EXISTS", "z"),
        ("ZCARD", "z"), ("ZADD", "z", "1", "a"), ("EXPIRE", "z", "-1"), ("ZCARD", "z"),
    ],
    # Encodings
    "OBJECT ENCODING: listpack up to 64-byte members": [
        ("ZADD", "a", "1", LONG_64), ("OBJECT", "ENCODING", "a"),
        ("ZADD", "b", "1", LONG_65), ("OBJECT", "ENCODING", "b"),
        ("ZADD", "c", "1", "x"), ("ZADD", "c", "2", LONG_65), ("OBJECT", "ENCODING", "c"),
        ("ZREM", "c", LONG_65), ("OBJECT", "ENCODING", "c"),
        ("ZADD", "d", "1", "x", "2", LONG_65), ("OBJECT", "ENCODING", "d"),
        ("ZINCRBY", "e", "1", LONG_65), ("OBJECT", "ENCODING", "e"),
        ("ZADD", "f", "1e300", "x", "-0.1", "y"), ("OBJECT", "ENCODING", "f"),
        ("COPY", "b", "b2"), ("OBJECT", "ENCODING", "b2"), ("ZRANGE", "b2", "0", "-1",
        "WITHSCORES"),
    ],
    "OBJECT ENCODING: listpack up to 128 members (the default)": [
        ("ZADD", "z", *[x for i in range(128) for x in (str(i), f"m{i}")]),
        ("OBJECT", "ENCODING", "z"), ("ZADD", "z", "5", "m0"), ("OBJECT", "ENCODING", "z"),
        ("ZADD", "z", "1", "one-more"), ("OBJECT", "ENCODING", "z"), ("ZCARD", "z"),
        ("ZREMRANGEBYRANK", "z", "0", "119"), ("OBJECT", "ENCODING", "z"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ],
    "Results stored as listpacks when they fit, skiplists when not": [
        ("ZADD", "big", *[x for i in range(200) for x in (str(i), f"m{i}")]),
        ("ZADD", "small", "1", "m1", "2", "m2"), ("ZADD", "long", "1", LONG_65),
        ("ZUNIONSTORE", "u", "1", "small"), ("OBJECT", "ENCODING", "u"),
        ("ZUNIONSTORE", "u", "2", "small", "big"), ("OBJECT", "ENCODING", "u"),
        ("ZINTERSTORE", "i", "2", "small", "big"), ("OBJECT", "ENCODING", "i"),
        ("ZDIFFSTORE", "d", "2", "big", "small"), ("OBJECT", "ENCODING", "d"),
        ("ZUNIONSTORE", "l", "2", "small", "long"), ("OBJECT", "ENCODING", "l"),
        ("ZRANGESTORE", "r", "big", "0", "9"), ("OBJECT", "ENCODING", "r"),
        ("ZRANGESTORE", "r", "big", "0", "150"), ("OBJECT", "ENCODING", "r"),
        ("ZRANGESTORE", "r", "big", "-inf", "+inf", "BYSCORE", "LIMIT", "0", "128"),
        ("OBJECT", "ENCODING", "r"), ("ZRANGESTORE", "r", "long", "0", "-1"),
        ("OBJECT", "ENCODING", "r"), ("ZDIFFSTORE", "d", "2", "big", "big"), ("EXISTS", "d"),
    ],
    "Scores in a skiplist: -0 keeps its sign there": [
        ("ZADD", "z", *[x for i in range(130) for x in (str(i), f"m{i}")]),
        ("ZADD", "z", "-0", "neg0", "0.1", "tenth", "1e17", "e17"),
        ("ZSCORE", "z", "neg0"), ("ZSCORE", "z", "tenth"), ("ZSCORE", "z", "e17"),
        ("ZRANGEBYSCORE", "z", "-0", "0", "WITHSCORES"), ("ZINCRBY", "z", "-0", "m0"),
        ("ZSCORE", "z", "m0"),
        ("ZRANGESTORE", "small", "z", "-1", "0", "BYSCORE"), ("ZRANGE", "small", "0", "-1",
        "WITHSCORES"),
        ("ZUNIONSTORE", "u", "1", "z", "WEIGHTS", "-1"), ("ZRANGE", "u", "0", "3", "WITHSCORES"),
    ],
    "CONFIG: the sorted set directives and their old names": [
        ("CONFIG", "GET", "zset-max-listpack-entries"), ("CONFIG", "GET",
        "zset-max-listpack-value"),
        ("CONFIG", "GET", "zset-max-ziplist-entries"), ("CONFIG", "GET", "zset-max-ziplist-value"),
        ("CONFIG", "GET", "ZSET-MAX-ZIPLIST-VALUE"),
        ("CONFIG", "SET", "zset-max-listpack-entries", "-1"),
        ("CONFIG", "SET", "zset-max-listpack-entries", "abc"),
        ("CONFIG", "SET", "zset-max-listpack-value", "-1"),
        ("CONFIG", "SET", "zset-max-ziplist-value", "x"),
    ],
    # Transactions
    "MULTI: each reply shows the sorted set as it was at that command": [
        ("ZADD", "z", "1", "a"), ("MULTI",), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZADD", "z", "2", "b"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZPOPMIN", "z"),
        ("ZRANDMEMBER", "z", "5", "WITHSCORES"), ("ZREM", "z", "b"), ("ZCARD", "z"), ("EXEC",),
        ("EXISTS", "z"),
    ],
    "MULTI: blocking pops do not block, arity errors abort": [
        ("MULTI",), ("BZPOPMIN", "z", "0"), ("BZMPOP", "0", "1", "z", "MIN"), ("ZADD", "z", "1",
        "a"),
        ("BZPOPMAX", "z", "0"), ("BZPOPMIN", "z", "0"), ("EXEC",), ("MULTI",), ("ZADD", "z"),
        ("ZADD", "z", "1", "a"), ("EXEC",), ("EXISTS", "z"),
    ],
    "BZPOPMIN / BZPOPMAX / BZMPOP serve at once when a key has members": [
        ("ZADD", "a", "1", "x", "2", "y"), ("ZADD", "b", "5", "p"),
        ("BZPOPMIN", "nokey", "a", "b", "0"), ("BZPOPMAX", "b", "a", "1"),
        ("BZMPOP", "0", "2", "nokey", "a", "MAX", "COUNT", "5"), ("EXISTS", "a", "b"),
        ("ZADD", "a", "1", "x"), ("BZMPOP", "1.5", "1", "a", "MIN"),
    ],
    "Blocking pops: timeout errors": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f", "7", "g"),
        *[("BZPOPMIN", "z", t) for t in (
            "x", "-1", "-0.001", "-inf", "nan", "-1e300", " 1", "",
            "0x10", "1e-3", "1.", "1e-400", b"1\x00")],
        ("BZMPOP", "x", "1", "z", "MIN"), ("BZMPOP", "-1", "1", "z", "MIN"),
        ("BZMPOP", "0", "0", "z", "MIN"), ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"),
        ("BZMPOP", "0", "1", "z"), ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "1", "EXTRA"),
        ("BZPOPMIN", "z"), ("BZMPOP", "0", "1"),
    ],
}


# Scenarios whose replies carry fractional scores (or integers past 2^62, which Redis 7.0
# prints as 1e+17 and 7.2+ in full): compared through the doubles normaliser.
FRACTIONAL = {
    "ZADD: scores as Redis reads and prints them",
    "ZADD INCR: replies the new score, null when nothing happened",
    "Scores in a skiplist: -0 keeps its sign there",
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_sorted_set_scenario(pair: Pair, scenario: str) -> None:
    normalize = doubles if scenario in FRACTIONAL else None
    for cmd in SCENARIOS[scenario]:
        pair.check(*cmd, normalize=normalize)


# -- configuration-dependent encodings -------------------------------------------------------------


@pytest.fixture
def small_limits(pair: Pair) -> Iterator[None]:
    """Both servers with tiny listpack limits, restored afterwards (the servers are shared)."""
    run(pair, ("CONFIG", "SET", "zset-max-listpack-entries", "3"),
        ("CONFIG", "SET", "zset-max-ziplist-value", "8"))
    try:
        yield
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "zset-max-listpack-entries", "128")
            conn.call("CONFIG", "SET", "zset-max-listpack-value", "64")


def test_encoding_follows_lowered_limits(pair: Pair, small_limits: None) -> None:
    run(
        pair,
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("OBJECT", "ENCODING", "z"),
        ("ZADD", "z", "4", "d"), ("OBJECT", "ENCODING", "z"),
        ("ZADD", "v", "1", "8bytes!!"), ("OBJECT", "ENCODING", "v"),
        ("ZADD", "v", "1", "9 bytes!!"), ("OBJECT", "ENCODING", "v"),
        ("ZINCRBY", "i", "1", "a"), ("ZINCRBY", "i", "1", "b"), ("ZINCRBY", "i", "1", "c"),
        ("OBJECT", "ENCODING", "i"), ("ZINCRBY", "i", "1", "d"), ("OBJECT", "ENCODING", "i"),
        ("ZADD", "u", "1", "a", "2", "b"), ("ZUNIONSTORE", "w", "2", "u", "z"),
        ("OBJECT", "ENCODING", "w"), ("ZINTERSTORE", "w", "2", "u", "z"), ("OBJECT", "ENCODING",
        "w"),
        ("ZRANGESTORE", "r", "z", "0", "2"), ("OBJECT", "ENCODING", "r"),
        ("ZRANGESTORE", "r", "z", "0", "3"), ("OBJECT", "ENCODING", "r"),
        ("ZADD", "x", "1", "a"), ("ZADD", "x", "XX", "1", "b", "1", "c", "1", "d"),
        ("OBJECT", "ENCODING", "x"),
    )


def test_raised_limits_do_not_convert_back(pair: Pair, small_limits: None) -> None:
    run(pair, ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"), ("OBJECT", "ENCODING", "z"),
        ("CONFIG", "SET", "zset-max-listpack-entries", "128"), ("ZREM", "z", "a", "b"),
        ("ZADD", "z", "5", "e"), ("OBJECT", "ENCODING", "z"), ("ZADD", "g", "1", "a"),
        ("CONFIG", "SET", "zset-max-listpack-entries", "0"), ("ZSCORE", "g", "a"),
        ("OBJECT", "ENCODING", "g"), ("ZREM", "g", "nope"), ("OBJECT", "ENCODING", "g"),
        ("ZINCRBY", "y", "1", "a"),
        ("OBJECT", "ENCODING", "y"), ("ZUNIONSTORE", "w", "1", "g"), ("OBJECT", "ENCODING", "w"))


@pytest.mark.redis_version("7.2")
def test_a_single_pair_zadd_converts_as_a_wide_one(pair: Pair) -> None:
    """ZADD key score member (resplite's shortcut) converts where the general path would:
    Redis 7.2 converts a listpack for more pairs than the limit, even for an update or a
    no-op, and before storing a member that does not fit."""
    ours = pair.ours
    enc = b"$8\r\nskiplist\r\n"
    try:
        for cmd in (("ZADD", "a", "1", "x"), ("ZADD", "b", "1", "x"), ("ZADD", "c", "1", "x")):
            assert ours.call(*cmd) == b":1\r\n"
        ours.call("CONFIG", "SET", "zset-max-listpack-entries", "0")
        assert ours.call("ZADD", "a", "1", "x") == b":0\r\n"  # the same score: a no-op
        assert ours.call("ZADD", "b", "2", "x") == b":0\r\n"  # an update
        assert ours.call("ZADD", "c", "1", "y") == b":1\r\n"  # a new member
        assert ours.call("ZADD", "d", "1", "x") == b":1\r\n"  # a new key
        for key in ("a", "b", "c", "d"):
            assert ours.call("OBJECT", "ENCODING", key) == enc
        ours.call("CONFIG", "SET", "zset-max-listpack-entries", "2")
        ours.call("CONFIG", "SET", "zset-max-listpack-value", "3")
        assert ours.call("ZADD", "e", "1", "long") == b":1\r\n"
        assert ours.call("OBJECT", "ENCODING", "e") == enc
        ours.call("ZADD", "f", "1", "a")
        ours.call("ZADD", "f", "2", "b")
        assert ours.call("OBJECT", "ENCODING", "f") == b"$8\r\nlistpack\r\n"
        assert ours.call("ZADD", "f", "3", "c") == b":1\r\n"
        assert ours.call("OBJECT", "ENCODING", "f") == enc
        assert ours.call("ZRANGE", "f", "0", "-1", "WITHSCORES") == (
            b"*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"
            if pair.resp == 2 else
            b"*3\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\nc\r\n,3\r\n")
    finally:
        ours.call("CONFIG", "SET", "zset-max-listpack-entries", "128")
        ours.call("CONFIG", "SET", "zset-max-listpack-value", "64")


@pytest.mark.redis_version("7.2")
def test_wide_zadd_converts_before_writing_even_with_repeated_members(
    pair: Pair, small_limits: None
) -> None:
    """Redis 7.2+ makes a skiplist when a ZADD brings more pairs than the entry limit,
    repeated members included; 7.0 only looks at the resulting size."""
    cmd: tuple[str, ...] = ("ZADD", "z", "1", "m", "2", "m", "3", "m", "4", "m")
    assert pair.ours.call(*cmd) == pair.ref.call(*cmd) == b":1\r\n"
    assert pair.ours.call("OBJECT", "ENCODING", "z") == b"$8\r\nskiplist\r\n"
    newer = ref_version(pair) >= (7, 2)
    if newer:
        pair.check("OBJECT", "ENCODING", "z")
    else:
        assert pair.ref.call("OBJECT", "ENCODING", "z") == b"$8\r\nlistpack\r\n"
    run(pair, ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZADD", "g", "1", "a", "2", "b", "3", "c"), ("OBJECT", "ENCODING", "g"))
    # An existing listpack converts too, even when the command only updates a member.
    run(pair, ("CONFIG", "SET", "zset-max-listpack-entries", "1"), ("ZADD", "h", "1", "a"))
    cmd = ("ZADD", "h", "2", "a", "3", "a")
    assert pair.ours.call(*cmd) == pair.ref.call(*cmd) == b":0\r\n"
    assert pair.ours.call("OBJECT", "ENCODING", "h") == b"$8\r\nskiplist\r\n"
    if newer:
        pair.check("OBJECT", "ENCODING", "h")
    else:
        assert pair.ref.call("OBJECT", "ENCODING", "h") == b"$8\r\nlistpack\r\n"


@pytest.mark.redis_version("7.2")
def test_timeouts_past_the_64_bit_range_are_out_of_range(pair: Pair) -> None:
    """Redis 7.0 let such timeouts wrap around (and called them negative); 7.2+ refuses
    them as out of range."""
    run(pair, ("ZADD", "z", "1", "a"))
    for timeout in ("inf", "1e300", "9223372036854775807", "9223372036854775.807"):
        for cmd in (("BZPOPMIN", "z", timeout), ("BZMPOP", timeout, "1", "z", "MIN")):
            assert pair.ours.call(*cmd) == b"-ERR timeout is out of range\r\n", cmd
    if ref_version(pair) >= (7, 2):
        for timeout in ("inf", "1e300", "9223372036854775807", "9223372036854775.807"):
            pair.check("BZPOPMIN", "z", timeout)
            pair.check("BZMPOP", timeout, "1", "z", "MIN")
    else:
        assert pair.ref.call("BZPOPMIN", "z", "inf") == b"-ERR timeout is negative\r\n"


# -- large sorted sets (skiplist encoding) ---------------------------------------------------------


def _fill(
    pair: Pair,
    key: str,
    n: int,
    score: Callable[[int], float] = lambda i: i * 7 % 1000 / 8,
    prefix: str = "m:",
) -> None:
    args: list[str] = []
    for i in range(n):
        args += [repr(score(i)), f"{prefix}{i}"]
    run(pair, ("ZADD", key, *args))


def test_skiplist_ranges_match_exactly(pair: Pair) -> None:
    _fill(pair, "z", 700)
    rng = random.Random(7)
    cmds: list[Command] = [("OBJECT", "ENCODING", "z"), ("ZCARD", "z")]
    for _ in range(60):
        a, b = sorted(rng.sample(range(-800, 800), 2))
        lo, hi = sorted(rng.sample(range(0, 130), 2))
        off, cnt = rng.randrange(-2, 50), rng.randrange(-2, 30)
        m = f"m:{rng.randrange(750)}"
        cmds += [
            ("ZRANGE", "z", a, b, "WITHSCORES"), ("ZREVRANGE", "z", a, b),
            ("ZRANGEBYSCORE", "z", f"({lo}", hi, "WITHSCORES", "LIMIT", off, cnt),
            ("ZREVRANGEBYSCORE", "z", hi, lo, "LIMIT", off, cnt),
            ("ZCOUNT", "z", lo, f"({hi}"), ("ZRANK", "z", m), ("ZREVRANK", "z", m),
            ("ZSCORE", "z", m), ("ZMSCORE", "z", m, "m:1", "nope"),
        ]
    cmds += [("ZPOPMIN", "z", "3"), ("ZPOPMAX", "z"), ("ZREMRANGEBYSCORE", "z", "10", "20"),
             ("ZREMRANGEBYRANK", "z", "100", "150"), ("ZCARD", "z"), ("ZRANGE", "z", "0", "-1")]
    run(pair, *cmds)


def test_skiplist_lex_ranges_match_exactly(pair: Pair) -> None:
    _fill(pair, "z", 500, score=lambda i: 0)
    rng = random.Random(3)
    cmds: list[Command] = [("OBJECT", "ENCODING", "z")]
    for _ in range(60):
        lo, hi = sorted(f"m:{rng.randrange(520)}" for _ in range(2))
        lo_b = rng.choice(["[", "("]) + lo
        hi_b = rng.choice(["[", "("]) + hi
        off, cnt = rng.randrange(-1, 20), rng.randrange(-1, 15)
        cmds += [("ZRANGEBYLEX", "z", lo_b, hi_b), ("ZREVRANGEBYLEX", "z", hi_b, lo_b),
                 ("ZRANGEBYLEX", "z", lo_b, "+", "LIMIT", off, cnt),
                 ("ZREVRANGEBYLEX", "z", "+", lo_b, "LIMIT", off, cnt),
                 ("ZLEXCOUNT", "z", lo_b, hi_b), ("ZLEXCOUNT", "z", "-", hi_b)]
    cmds += [("ZREMRANGEBYLEX", "z", "[m:2", "(m:3"), ("ZCARD", "z"), ("ZRANGE", "z", "0", "20")]
    run(pair, *cmds)


def test_skiplist_algebra_matches_exactly(pair: Pair) -> None:
    _fill(pair, "a", 400, score=lambda i: i / 3)
    _fill(pair, "b", 300, score=lambda i: -i * 1.1)
    _fill(pair, "c", 50, score=lambda i: 1e300 if i % 2 else -1e300)
    for opts in ((), ("WEIGHTS", "0.1", "3", "7"), ("AGGREGATE", "MIN"), ("AGGREGATE", "MAX"),
                 ("WEIGHTS", "1e10", "1e300", "-2", "AGGREGATE", "SUM")):
        for cmd in (("ZUNION", "3", "a", "b", "c", *opts, "WITHSCORES"),
                    ("ZINTER", "3", "a", "b", "c", *opts, "WITHSCORES"),
                    ("ZUNIONSTORE", "u", "3", "a", "b", "c", *opts), ("OBJECT", "ENCODING", "u"),
                    ("ZRANGE", "u", "0", "-1", "WITHSCORES")):
            pair.check(*cmd, normalize=doubles)
    pair.check("ZDIFF", "2", "a", "b", "WITHSCORES", normalize=doubles)
    run(pair, ("ZDIFF", "3", "b", "a", "c"),
        ("ZINTERCARD", "2", "a", "b"), ("ZINTERCARD", "2", "a", "b", "LIMIT", "7"),
        ("ZDIFFSTORE", "d", "2", "a", "c"), ("OBJECT", "ENCODING", "d"), ("ZCARD", "d"))


# -- ZSCAN over a skiplist -------------------------------------------------------------------------


def _zscan_all(
    client: RawClient,
    key: str,
    *options: str | int,
    between: Callable[[int], None] | None = None,
) -> list[list[bytes]]:
    cursor = b"0"
    batches = []
    step = 0
    while True:
        reply = decode(client.call("ZSCAN", key, cursor, *options))
        assert isinstance(reply, list) and len(reply) == 2
        cursor, batch = reply
        batches.append(batch)
        if between is not None:
            between(step)
        step += 1
        if cursor == b"0":
            return batches
        assert step < 10_000, "ZSCAN did not terminate"


def _pairs(flat: list[bytes]) -> list[tuple[bytes, bytes]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def test_zscan_of_a_skiplist_returns_every_pair_with_redis_score_text(pair: Pair) -> None:
    _fill(pair, "z", 600, score=lambda i: [0.1 * i, 1e17 + i, -1.5, float(i)][i % 4])
    for options in ((), ("COUNT", "1"), ("COUNT", "37"), ("MATCH", "m:1*", "COUNT", "50")):
        expected = dict(_pairs([x for b in _zscan_all(pair.ref, "z", *options) for x in b]))
        batches = _zscan_all(pair.ours, "z", *options)
        got = _pairs([x for b in batches for x in b])
        assert dict(got) == expected and expected
        assert len(got) == len(set(got)), "a pair was returned twice without any write"


def test_zscan_cursor_survives_writes(pair: Pair) -> None:
    """A member present for the whole iteration is returned, whatever is written meanwhile."""
    _fill(pair, "z", 800)
    ours = pair.ours
    rng = random.Random(5)
    deleted: set[bytes] = set()

    def churn(step: int) -> None:
        ours.call("ZADD", "z", *[x for i in range(20) for x in (str(i), f"new:{step}:{i}")])
        victim = f"m:{rng.randrange(800)}".encode()
        ours.call("ZREM", "z", victim)
        deleted.add(victim)
        ours.call("ZINCRBY", "z", "1", f"m:{rng.randrange(800)}")

    seen = {m for b in _zscan_all(ours, "z", "COUNT", "25", between=churn) for m in b[::2]}
    stable = {f"m:{i}".encode() for i in range(800)} - deleted
    assert stable <= seen


# -- ZRANDMEMBER draws -----------------------------------------------------------------------------


def _draw(client: RawClient, resp: int, *args: str) -> Sequence[tuple[bytes, bytes | None]]:
    """A ZRANDMEMBER reply as (member, score-or-None) pairs, checking its RESP shape."""
    raw = client.call("ZRANDMEMBER", *args)
    reply = decode(raw)
    assert isinstance(reply, list)
    if "WITHSCORES" not in args:
        assert all(isinstance(m, bytes) for m in reply)
        return [(m, None) for m in reply]
    if resp == 3:
        assert all(isinstance(p, list) and len(p) == 2 for p in reply)
        assert raw.count(b"\r\n,") == len(reply)  # scores are RESP3 doubles
        return [(p[0], p[1]) for p in reply]
    return _pairs(reply)


@pytest.mark.parametrize("size", [5, 300], ids=["listpack", "skiplist"])
def test_zrandmember_draws(pair: Pair, size: int) -> None:
    _fill(pair, "z", size, score=lambda i: i + 0.5)
    contents = {f"m:{i}".encode(): b"%r" % (i + 0.5) for i in range(size)}
    order = list(contents)
    for client in (pair.ref, pair.ours):
        single = decode(client.call("ZRANDMEMBER", "z"))
        assert single in contents
        for count in (1, 3, size - 1, -1, -3, -(size + 7)):
            for withscores in ((), ("WITHSCORES",)):
                drawn = _draw(client, pair.resp, "z", str(count), *withscores)
                assert len(drawn) == abs(count)
                for member, score in drawn:
                    assert member in contents
                    assert score is None or score == contents[member]
                members = [m for m, _ in drawn]
                if count > 0:
                    assert len(set(members)) == len(members)
                    if size <= 128 and client is pair.ours:
                        # Redis 7.2+ answers distinct draws from a listpack in its order.
                        positions = [order.index(m) for m in members]
                        assert positions == sorted(positions)


def test_zrandmember_distribution(pair: Pair) -> None:
    """Draws are uniform enough: each of 6 members gets its share of 3000 draws (a chi-square
    bound far beyond what chance produces), singles and distinct picks cover the set."""
    _fill(pair, "z", 6)
    for client in (pair.ref, pair.ours):
        counts = Counter(m for m, _ in _draw(client, pair.resp, "z", "-3000"))
        assert set(counts) == {f"m:{i}".encode() for i in range(6)}
        chi2 = sum((c - 500) ** 2 / 500 for c in counts.values())
        assert chi2 < 40, counts
        singles = {decode(client.call("ZRANDMEMBER", "z")) for _ in range(150)}
        assert len(singles) == 6
        subsets = {tuple(m for m, _ in _draw(client, pair.resp, "z", "3")) for _ in range(80)}
        assert len(subsets) > 5


def test_zrandmember_distribution_over_a_skiplist(pair: Pair) -> None:
    _fill(pair, "z", 200)
    counts = Counter(m for m, _ in _draw(pair.ours, pair.resp, "z", "-20000"))
    assert len(counts) == 200
    assert min(counts.values()) > 40 and max(counts.values()) < 180, counts
    picks = Counter(m for _ in range(100) for m, _ in _draw(pair.ours, pair.resp, "z", "50"))
    assert len(picks) == 200


# -- sets as inputs --------------------------------------------------------------------------------


def test_sets_count_as_sorted_sets_of_score_one(pair: Pair) -> None:
    if b"sadd" not in pair.ours.call("COMMAND", "INFO", "SADD"):
        pytest.skip("sets are not in this build yet")
    run(pair, ("SADD", "s", "x", "y", "1", "2"), ("SADD", "big", *[f"b{i}" for i in range(600)]),
        ("ZADD", "z", "5", "x", "7", "q"),
        ("ZUNION", "2", "s", "z", "WITHSCORES"), ("ZINTER", "2", "s", "z", "WITHSCORES"),
        ("ZUNION", "2", "s", "z", "WEIGHTS", "3", "1", "AGGREGATE", "MAX", "WITHSCORES"),
        ("ZDIFF", "2", "s", "z", "WITHSCORES"), ("ZDIFF", "2", "z", "s", "WITHSCORES"),
        ("ZINTERCARD", "2", "s", "z"), ("ZUNIONSTORE", "d", "2", "s", "big"),
        ("OBJECT", "ENCODING", "d"), ("ZCARD", "d"), ("ZINTERSTORE", "d", "1", "s"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("OBJECT", "ENCODING", "d"),
        ("ZRANGE", "s", "0", "-1"), ("ZRANGESTORE", "d", "s", "0", "-1"))


# -- newer Redis -----------------------------------------------------------------------------------


@pytest.mark.redis_version("7.2")
def test_zrank_withscore(pair: Pair) -> None:
    ours = pair.ours
    run(pair, ("ZADD", "z", "1.5", "a", "2", "b"))
    double = (lambda t: b"," + t + b"\r\n") if pair.resp == 3 else (
        lambda t: b"$%d\r\n%s\r\n" % (len(t), t))
    assert ours.call("ZRANK", "z", "a", "WITHSCORE") == b"*2\r\n:0\r\n" + double(b"1.5")
    assert ours.call("ZREVRANK", "z", "a", "withscore") == b"*2\r\n:1\r\n" + double(b"1.5")
    null_array = b"_\r\n" if pair.resp == 3 else b"*-1\r\n"
    assert ours.call("ZRANK", "z", "nope", "WITHSCORE") == null_array
    assert ours.call("ZRANK", "nokey", "a", "WITHSCORE") == null_array
    assert ours.call("ZRANK", "z", "a", "BOGUS") == b"-ERR syntax error\r\n"
    assert ours.call("ZRANK", "z", "a", "WITHSCORE", "x") == (
        b"-ERR wrong number of arguments for 'zrank' command\r\n")
    assert ours.call("ZREVRANK", "z", "a", "WITHSCORE", "x") == (
        b"-ERR wrong number of arguments for 'zrevrank' command\r\n")
    if ref_version(pair) >= (7, 2):
        for cmd in (("ZRANK", "z", "a", "WITHSCORE"), ("ZREVRANK", "z", "a", "withscore"),
                    ("ZRANK", "z", "nope", "WITHSCORE"), ("ZRANK", "nokey", "a", "WITHSCORE"),
                    ("ZRANK", "z", "a", "BOGUS"), ("ZRANK", "z", "a", "WITHSCORE", "x"),
                    ("ZREVRANK", "z", "a", "WITHSCORE", "x")):
            pair.check(*cmd)
    else:  # Redis 7.0 has no such option.
        assert pair.ref.call("ZRANK", "z", "a", "WITHSCORE") == (
            b"-ERR wrong number of arguments for 'zrank' command\r\n")


def _double(pair: Pair, text: bytes) -> bytes:
    return b"," + text + b"\r\n" if pair.resp == 3 else b"$%d\r\n%s\r\n" % (len(text), text)


def _bulk(text: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(text), text)


@pytest.mark.redis_version("7.2")
def test_scores_print_as_redis_7_2_prints_doubles(pair: Pair) -> None:
    """Every score reply is d2string: integers in full, the rest with fpconv's digits."""
    ours = pair.ours
    ours.call("ZADD", "z", "0.1", "a", "1e17", "b", "-0.5", "c", "9223372036854775808", "d",
              "1e-7", "e", "inf", "f", "123456.789", "g")
    d = lambda t: _double(pair, t)  # noqa: E731
    assert ours.call("ZSCORE", "z", "a") == d(b"0.1")
    assert ours.call("ZSCORE", "z", "b") == d(b"100000000000000000")
    assert ours.call("ZSCORE", "z", "d") == d(b"9223372036854776000")
    assert ours.call("ZSCORE", "z", "e") == d(b"1e-7")
    assert ours.call("ZMSCORE", "z", "a", "f", "x") == (
        b"*3\r\n" + d(b"0.1") + d(b"inf") + (b"_\r\n" if pair.resp == 3 else b"$-1\r\n"))
    assert ours.call("ZRANGE", "z", "0", "1", "WITHSCORES") == (
        b"*4\r\n$1\r\nc\r\n" + d(b"-0.5") + b"$1\r\ne\r\n" + d(b"1e-7")
        if pair.resp == 2 else
        b"*2\r\n*2\r\n$1\r\nc\r\n" + d(b"-0.5") + b"*2\r\n$1\r\ne\r\n" + d(b"1e-7"))
    assert ours.call("ZRANK", "z", "g", "WITHSCORE") == b"*2\r\n:3\r\n" + d(b"123456.789")
    # ZINCRBY and ZADD INCR reply with a double too: 0.1 + 0.2 is not 0.3.
    assert ours.call("ZINCRBY", "z", "0.2", "a") == d(b"0.30000000000000004")
    assert ours.call("ZADD", "z", "INCR", "0.7", "a") == d(b"1")
    assert ours.call("ZADD", "z", "INCR", "0.05", "a") == d(b"1.05")
    assert ours.call("ZPOPMIN", "z") == b"*2\r\n$1\r\nc\r\n" + d(b"-0.5")
    assert ours.call("BZPOPMIN", "z", "0") == (
        b"*3\r\n$1\r\nz\r\n$1\r\ne\r\n" + d(b"1e-7"))
    assert ours.call("ZMPOP", "1", "z", "MAX") == (
        b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nf\r\n" + d(b"inf"))
    ours.call("ZADD", "u", "0.1", "a")
    union = b"$1\r\na\r\n" + d(b"0.2")
    assert ours.call("ZUNION", "2", "u", "u", "WITHSCORES") == (
        b"*2\r\n" + union if pair.resp == 2 else b"*1\r\n*2\r\n" + union)
    assert ours.call("ZRANDMEMBER", "u", "1", "WITHSCORES") == (
        b"*2\r\n$1\r\na\r\n" + d(b"0.1") if pair.resp == 2
        else b"*1\r\n*2\r\n$1\r\na\r\n" + d(b"0.1"))


@pytest.mark.redis_version("7.2")
def test_zscan_prints_listpack_scores_short_and_skiplist_scores_with_17_digits(pair: Pair) -> None:
    """A listpack stores d2string's text; Redis 8.4's ZSCAN of a skiplist still uses %.17g."""
    ours = pair.ours
    ours.call("ZADD", "small", "0.1", "a", "-0", "b", "1e17", "c")
    assert ours.call("ZSCAN", "small", "0") == (
        b"*2\r\n$1\r\n0\r\n*6\r\n" + _bulk(b"b") + _bulk(b"0") + _bulk(b"a") + _bulk(b"0.1")
        + _bulk(b"c") + _bulk(b"100000000000000000"))
    ours.call("ZADD", "big", *[x for i in range(130) for x in (str(i), f"m{i}")])
    ours.call("ZADD", "big", "0.1", "tenth", "-0", "neg0", "1e17", "e17")
    for member, text in ((b"tenth", b"0.10000000000000001"), (b"neg0", b"-0"),
                         (b"e17", b"1e+17")):
        reply = decode(ours.call("ZSCAN", "big", "0", "MATCH", member, "COUNT", "1000"))
        assert reply == [b"0", [member, text]]
        assert ours.call("ZSCORE", "big", member) == _double(
            pair, b"100000000000000000" if member == b"e17" else text[:3])


def test_incrbyfloat_keeps_its_long_double_printing(pair: Pair) -> None:
    """INCRBYFLOAT and HINCRBYFLOAT print long doubles (%.17Lf, zeros cut) in every Redis
    version: what Redis 7.2 changed for doubles does not touch them."""
    run(pair, ("INCRBYFLOAT", "f", "0.1"), ("INCRBYFLOAT", "f", "0.2"),
        ("INCRBYFLOAT", "f", "1e17"), ("INCRBYFLOAT", "g", "1.5e-7"),
        ("INCRBYFLOAT", "g", "-3.0e3"), ("HINCRBYFLOAT", "h", "f", "0.1"),
        ("HINCRBYFLOAT", "h", "f", "0.2"), ("HINCRBYFLOAT", "h", "f", "5e-5"),
        ("HINCRBYFLOAT", "h", "g", "1e17"), ("GET", "f"), ("HGETALL", "h"))


@pytest.mark.redis_version("7.4")
def test_zscan_novalues_is_refused_with_74_wording(pair: Pair) -> None:
    run(pair, ("ZADD", "z", "1", "a"))
    assert pair.ours.call("ZSCAN", "z", "0", "NOVALUES") == (
        b"-ERR NOVALUES option can only be used in HSCAN\r\n")
    if ref_version(pair) >= (7, 4):
        pair.check("ZSCAN", "z", "0", "NOVALUES")
    else:
        assert pair.ref.call("ZSCAN", "z", "0", "NOVALUES") == b"-ERR syntax error\r\n"


# -- WATCH -----------------------------------------------------------------------------------------


def test_watch_sees_sorted_set_writes_but_not_no_ops(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        run(pair, ("ZADD", "z", "1", "a"))
        # These leave the sorted set alone and signal nothing.
        run(pair, ("WATCH", "z"))
        run(other, ("ZADD", "z", "1", "a"), ("ZADD", "z", "NX", "5", "a"), ("ZREM", "z", "nope"),
            ("ZADD", "z", "XX", "1", "b"), ("ZADD", "z", "GT", "0", "a"), ("ZRANGE", "z", "0",
            "-1"),
            ("ZREMRANGEBYSCORE", "z", "5", "6"), ("ZSCAN", "z", "0"), ("ZINCRBY", "z", "0", "a"),
            ("ZPOPMIN", "z", "0"), ("ZRANDMEMBER", "z", "-2"), ("ZINTERSTORE", "nokey", "1",
            "nope"))
        run(pair, ("MULTI",), ("ZSCORE", "z", "a"), ("EXEC",))
        for write in (("ZADD", "z", "2", "a"), ("ZINCRBY", "z", "1", "a"), ("ZADD", "z", "1", "b"),
                      ("ZREM", "z", "b"), ("ZPOPMAX", "z"), ("ZADD", "z", "1", "a", "2", "b"),
                      ("ZREMRANGEBYRANK", "z", "0", "0"), ("ZUNIONSTORE", "z", "1", "z"),
                      ("ZRANGESTORE", "z", "z", "0", "-1"), ("ZMPOP", "1", "z", "MIN")):
            run(pair, ("WATCH", "z"))
            run(other, write)
            run(pair, ("MULTI",), ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("EXEC",))
    finally:
        other.close()


def test_large_zrandmember_values_pass(pair: Pair) -> None:
    """The whole set for a large count, in Redis's order (highest first), both encodings."""
    _fill(pair, "z", 300)
    ref, ours = values(pair, "ZRANDMEMBER", "z", "1000", "WITHSCORES")
    assert ours == ref


# -- blocking pops with several clients ------------------------------------------------------------


def _wait_blocked(client: RawClient, count: int = 1) -> None:
    """Until INFO counts ``count`` blocked clients (synchronisation, not timing)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        info = client.call("INFO", "clients")
        for line in info.split(b"\r\n"):
            if line.startswith(b"blocked_clients:") and int(line.split(b":")[1]) >= count:
                return
        time.sleep(0.005)
    raise AssertionError("the client never blocked")


class _Clients:
    """``n`` extra connection pairs to both servers, closed at the end; ``block`` parks a
    command on one of them, watched through the main pair."""

    def __init__(self, pair: Pair, n: int) -> None:
        self.main = pair
        self.pairs = [pair.connect_extra() for _ in range(n)]
        self.blocked = 0

    def block(self, extra: Pair, *cmd: bytes | str | int) -> None:
        """Send ``cmd`` on both connections of ``extra``; wait until both servers park it."""
        extra.ref.send(*cmd)
        extra.ours.send(*cmd)
        self.blocked += 1
        _wait_blocked(self.main.ref, self.blocked)
        _wait_blocked(self.main.ours, self.blocked)

    def __enter__(self) -> _Clients:
        return self

    def __exit__(self, *exc: object) -> None:
        for extra in self.pairs:
            extra.close()


def _same_reply(extra: Pair) -> bytes:
    got, want = extra.ours.read_reply(), extra.ref.read_reply()
    assert got == want, f"RESP{extra.resp}\n redis:    {want!r}\n resplite: {got!r}"
    return got


def test_blocked_pops_are_served_in_blocking_order(pair: Pair) -> None:
    with _Clients(pair, 3) as clients:
        for extra, cmd in zip(clients.pairs, ("BZPOPMIN", "BZPOPMAX", "BZPOPMIN"), strict=True):
            clients.block(extra, cmd, "z", "0")
        run(pair, ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"))
        for extra in clients.pairs:
            _same_reply(extra)
        run(pair, ("ZRANGE", "z", "0", "-1", "WITHSCORES"))


def test_a_blocked_pop_on_several_keys_takes_the_written_one(pair: Pair) -> None:
    with _Clients(pair, 2) as clients:
        first, second = clients.pairs
        clients.block(first, "BZPOPMIN", "a", "b", "c", "0")
        clients.block(second, "BZMPOP", "0", "2", "c", "b", "MAX", "COUNT", "2")
        run(pair, ("ZADD", "b", "1", "x", "2", "y", "3", "z"))
        _same_reply(first)
        _same_reply(second)
        run(pair, ("EXISTS", "b"))


def test_a_transaction_wakes_blocked_pops_after_exec(pair: Pair) -> None:
    with _Clients(pair, 2) as clients:
        reader, writer = clients.pairs
        clients.block(reader, "BZMPOP", "0", "1", "z", "MIN", "COUNT", "10")
        run(writer, ("MULTI",), ("ZADD", "z", "5", "e"), ("ZADD", "z", "1", "a"),
            ("ZREM", "z", "e"), ("ZADD", "z", "3", "c"), ("EXEC",))
        _same_reply(reader)


def test_blocked_pops_wait_through_delete_and_type_change(pair: Pair) -> None:
    with _Clients(pair, 2) as clients:
        reader, writer = clients.pairs
        clients.block(reader, "BZPOPMAX", "z", "0")
        run(writer, ("SET", "z", "string"), ("DEL", "z"), ("HSET", "z", "f", "v"), ("DEL", "z"),
            ("ZADD", "z", "1", "a", "2", "b"))
        _same_reply(reader)
        run(pair, ("ZRANGE", "z", "0", "-1", "WITHSCORES"))


def test_stores_and_renames_into_a_waited_key_wake_it(pair: Pair) -> None:
    with _Clients(pair, 3) as clients:
        first, second, third = clients.pairs
        run(pair, ("ZADD", "src", "1", "a", "2", "b", "3", "c"))
        clients.block(first, "BZPOPMIN", "u", "0")
        clients.block(second, "BZPOPMIN", "r", "0")
        clients.block(third, "BZPOPMIN", "n", "0")
        run(pair, ("ZUNIONSTORE", "u", "1", "src"))
        _same_reply(first)
        run(pair, ("ZRANGESTORE", "r", "src", "1", "2"))
        _same_reply(second)
        run(pair, ("RENAME", "src", "n"))
        _same_reply(third)
        run(pair, ("ZRANGE", "n", "0", "-1", "WITHSCORES"), ("ZRANGE", "u", "0", "-1"))


def test_blocked_pop_times_out_with_a_null_array(pair: Pair) -> None:
    run(pair, ("BZPOPMIN", "z", "0.01"), ("BZMPOP", "0.01", "1", "z", "MAX"))


def test_swapdb_serves_a_pop_waiting_in_the_swapped_database(pair: Pair) -> None:
    with _Clients(pair, 1) as clients:
        (reader,) = clients.pairs
        clients.block(reader, "BZPOPMIN", "z", "0")
        run(pair, ("SELECT", "1"), ("ZADD", "z", "3", "c", "1", "a"), ("SWAPDB", "0", "1"))
        _same_reply(reader)
        run(pair, ("SELECT", "0"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"))


_LOOKUP_COMMANDS = [
    "ZADD z 1 a", "ZADD nx XX 1 a", "ZINCRBY z 1 a", "ZREM z a", "ZREM nx a", "ZCARD z",
    "ZCARD nx", "ZSCORE z a", "ZSCORE nx a", "ZMSCORE z a b", "ZMSCORE nx a", "ZRANK z a",
    "ZREVRANK nx a", "ZCOUNT z -inf +inf", "ZLEXCOUNT nx - +", "ZRANGE z 0 -1",
    "ZRANGE nx 0 -1", "ZRANGEBYSCORE z 0 1", "ZREVRANGEBYLEX z + -", "ZRANGESTORE d z 0 -1",
    "ZRANGESTORE d nx 0 -1", "ZREMRANGEBYRANK z 0 0", "ZREMRANGEBYSCORE nx 0 1",
    "ZPOPMIN z", "ZPOPMAX nx 2", "ZMPOP 2 nx z MIN", "BZPOPMIN z 0", "BZMPOP 0 2 nx z MAX",
    "ZRANDMEMBER z", "ZRANDMEMBER nx 2", "ZUNION 2 z nx", "ZINTER 2 z z", "ZDIFF 2 nx z",
    "ZUNIONSTORE d 2 z nx", "ZINTERCARD 2 z nx", "ZSCAN z 0", "ZSCAN nx 0",
]


def _lookup_counts(client: RawClient) -> tuple[int, int]:
    text = client.call("INFO", "stats").decode()
    fields = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
    return int(fields["keyspace_hits"]), int(fields["keyspace_misses"])


def test_keyspace_hits_and_misses_count_read_lookups_as_redis(pair: Pair) -> None:
    for command in _LOOKUP_COMMANDS:
        counts = []
        for client in (pair.ref, pair.ours):
            client.call("FLUSHALL")
            client.call("ZADD", "z", "1", "a", "2", "b")
            client.call("CONFIG", "RESETSTAT")
            client.call(*command.split())
            counts.append(_lookup_counts(client))
        assert counts[1] == counts[0], f"{command}: redis {counts[0]}, resplite {counts[1]}"


# -- Redis 8.8: AGGREGATE COUNT --------------------------------------------------------------------


@pytest.mark.redis_version("8.8")
def test_aggregate_count_counts_the_inputs_holding_each_member(pair: Pair) -> None:
    """AGGREGATE COUNT ignores the scores: each input holding a member adds 1, or its weight
    with WEIGHTS. Checked against the reference: the same as AGGREGATE SUM over copies of the
    inputs whose every score is 1 (plain sets score 1 already)."""
    for client in (pair.ref, pair.ours):
        client.call("ZADD", "a", "5", "x", "-2", "y", "1.5", "z")
        client.call("ZADD", "b", "7", "y", "3", "w")
        client.call("SADD", "c", "x", "y", "v")
        client.call("ZADD", "a1", "1", "x", "1", "y", "1", "z")
        client.call("ZADD", "b1", "1", "y", "1", "w")
    cases = [("a", "b", "c"), ("a", "b"), ("c",), ("a", "nokey")]
    for keys in cases:
        ones = ["a1" if k == "a" else "b1" if k == "b" else k for k in keys]
        for weights in ((), ("WEIGHTS", *["2", "0.5", "-1"][:len(keys)])):
            for name in ("ZUNION", "ZINTER"):
                want = pair.ref.call(name, len(ones), *ones, *weights, "AGGREGATE", "SUM",
                                     "WITHSCORES")
                got = pair.ours.call(name, len(keys), *keys, *weights, "AGGREGATE", "COUNT",
                                     "WITHSCORES")
                assert got == want, (name, keys, weights)
            for name in ("ZUNIONSTORE", "ZINTERSTORE"):
                want = pair.ref.call(name, "dst", len(ones), *ones, *weights, "AGGREGATE", "sum")
                got = pair.ours.call(name, "dst", len(keys), *keys, *weights, "aggregate",
                                     "count")
                assert got == want, (name, keys, weights)
                assert pair.ours.call("ZRANGE", "dst", "0", "-1", "WITHSCORES") == \
                    pair.ref.call("ZRANGE", "dst", "0", "-1", "WITHSCORES")
    # Still refused where there is no AGGREGATE, and by the 7.0 reference.
    assert pair.ours.call("ZDIFF", "1", "a", "AGGREGATE", "COUNT") == b"-ERR syntax error\r\n"
    assert pair.ref.call("ZUNION", "1", "a", "AGGREGATE", "COUNT") == b"-ERR syntax error\r\n"


@pytest.mark.redis_version("8.8")
def test_aggregate_count_with_redis_py(resplite_srv: ServerProcess) -> None:
    """redis-py's zunionstore / zinterstore with aggregate="COUNT", as its tests use them."""
    r = redis.Redis(host=resplite_srv.host, port=resplite_srv.port)
    try:
        r.flushall()
        r.zadd("a", {"a1": 1, "a2": 1, "a3": 1})
        r.zadd("b", {"a1": 2, "a2": 2, "a3": 2})
        r.zadd("c", {"a1": 6, "a3": 5, "a4": 4})
        assert r.zinterstore("d", ["a", "b", "c"], aggregate="COUNT") == 2
        assert r.zrange("d", 0, -1, withscores=True) == [(b"a1", 3.0), (b"a3", 3.0)]
        assert r.zinterstore("d", {"a": 1, "b": 2, "c": 3}, aggregate="COUNT") == 2
        assert r.zrange("d", 0, -1, withscores=True) == [(b"a1", 6.0), (b"a3", 6.0)]
        assert r.zunionstore("d", ["a", "b", "c"], aggregate="COUNT") == 4
        assert r.zrange("d", 0, -1, withscores=True) == \
            [(b"a4", 1.0), (b"a2", 2.0), (b"a1", 3.0), (b"a3", 3.0)]
        assert r.zunion(["a", "c"], aggregate="COUNT", withscores=True) == \
            [(b"a2", 1.0), (b"a4", 1.0), (b"a1", 2.0), (b"a3", 2.0)]
    finally:
        r.close()


@pytest.mark.redis_version("7.2")
def test_bzpopmin_bzpopmax_run_in_scripts_without_blocking(pair: Pair) -> None:
    """Redis 7.2 dropped their noscript flag (7.0 refuses them in scripts)."""
    ours = pair.ours
    ours.call("ZADD", "z", "1", "a", "2", "b")
    popped = decode(ours.call("EVAL", "return redis.call('bzpopmin', KEYS[1], 0)", "1", "z"))
    assert popped == [b"z", b"a", b"1"]
    popped = decode(ours.call("EVAL", "return redis.call('bzpopmax', KEYS[1], 0)", "1", "z"))
    assert popped == [b"z", b"b", b"2"]
    assert ours.call("EVAL", "return redis.call('bzpopmin', KEYS[1], 0)", "1", "z") in (
        b"$-1\r\n", b"_\r\n")
    if ref_version(pair) >= (7, 2):
        run(pair, ("ZADD", "y", "1", "a"))
        for script in ("return redis.call('bzpopmax', KEYS[1], 0)",
                       "return redis.call('bzpopmin', KEYS[1], 0)"):
            pair.check("EVAL", script, "1", "y")
    else:
        assert pair.ref.call("EVAL", "return redis.call('bzpopmax', KEYS[1], 0)", "1", "z") \
            .startswith(b"-ERR This Redis command is not allowed from script")


# -- large ranges (sent in pieces from 4096 entries on) --------------------------------------


def test_large_zrange(pair: Pair) -> None:
    args: list[str] = []
    for i in range(10000):
        args += [str(i * 0.25 if i % 2 else i), f"m{i:05d}"]
    pair.check("ZADD", "z", *args)
    pair.check("ZADD", "lex", *(x for i in range(10000) for x in ("0", f"m{i:05d}")))
    for cmd in [
        ("ZRANGE", "z", "0", "-1"),
        ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
        ("ZRANGE", "z", "10", "5000", "REV", "WITHSCORES"),
        ("ZRANGE", "z", "0", "4094", "WITHSCORES"),
        ("ZRANGE", "z", "(10", "+inf", "BYSCORE"),
        ("ZRANGE", "z", "(10", "+inf", "BYSCORE", "WITHSCORES"),
        ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "5", "6000"),
        ("ZRANGE", "lex", "[m00100", "+", "BYLEX"),
        ("ZREVRANGE", "z", "0", "-1", "WITHSCORES"),
    ]:
        pair.check(*cmd)
    pair.check("MULTI")
    pair.check("ZRANGE", "z", "0", "-1", "WITHSCORES")
    pair.check("ZADD", "z", "1.5", "m00000")
    pair.check("EXEC")
