"""Bitmap commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, their errors and limits,
and how the strings they write look to GET, STRLEN, GETRANGE, APPEND, SETRANGE and OBJECT
ENCODING. Behaviour that changed after 7.0 (BITCOUNT and BITPOS parse every argument before
looking the key up since 7.4; BITOP's DIFF, DIFF1, ANDOR and ONE since 8.2) is asserted on
resplite alone, with the version marked.
"""

from __future__ import annotations

import pytest
from compat_helpers import Command, ref_version, run
from support import normalize
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerPairFactory

Scenario = list[Command]

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"


def bits(key: str, *offsets: int) -> list[Command]:
    return [("SETBIT", key, str(o), "1") for o in offsets]


SCENARIOS: dict[str, Scenario] = {
    # SETBIT / GETBIT
    "SETBIT creates a zero-filled string and returns the old bit": [
        ("SETBIT", "k", "7", "1"), ("GET", "k"), ("SETBIT", "k", "7", "1"),
        ("SETBIT", "k", "7", "0"),
        ("GET", "k"), ("SETBIT", "k", "100", "1"), ("STRLEN", "k"), ("GET", "k"),
        ("OBJECT", "ENCODING", "k"), ("TYPE", "k"),
    ],
    "GETBIT: missing key, past the end, each bit of a byte": [
        ("GETBIT", "nokey", "0"), ("SET", "k", "\x81"),
        *[("GETBIT", "k", str(i)) for i in range(10)], ("GETBIT", "k", "1000000"),
    ],
    "SETBIT on an integer-encoded and an embstr string turns it raw": [
        ("SET", "n", "12345"), ("OBJECT", "ENCODING", "n"), ("SETBIT", "n", "0", "0"),
        ("OBJECT", "ENCODING", "n"), ("GET", "n"), ("SETBIT", "n", "2", "1"), ("GET", "n"),
        ("SET", "e", "hello"), ("GETBIT", "e", "1"), ("OBJECT", "ENCODING", "e"),
        ("SETBIT", "e", "1", "1"), ("OBJECT", "ENCODING", "e"), ("GET", "e"),
    ],
    "SETBIT / GETBIT argument errors": [
        ("SETBIT", "k", "-1", "1"), ("SETBIT", "k", "abc", "1"), ("SETBIT", "k", "1.5", "1"),
        ("SETBIT", "k", "4294967296", "1"), ("SETBIT", "k", "0", "2"), ("SETBIT", "k", "0", "-1"),
        ("SETBIT", "k", "0", "x"), ("SETBIT", "k", "0", ""), ("SETBIT", "k", "#1", "1"),
        ("SETBIT", "k", I64_MAX, "1"), ("GETBIT", "k", "-1"), ("GETBIT", "k", "4294967296"),
        ("GETBIT", "k", "x"), ("EXISTS", "k"), ("SETBIT", "k"), ("GETBIT", "k"),
        ("SETBIT", "k", "1", "1", "1"),
    ],
    "SETBIT / GETBIT on a hash are WRONGTYPE, after the argument checks": [
        ("HSET", "h", "f", "v"), ("SETBIT", "h", "0", "1"), ("GETBIT", "h", "0"),
        ("SETBIT", "h", "-1", "1"), ("SETBIT", "h", "0", "5"), ("GETBIT", "h", "x"),
    ],
    "SETBIT keeps the TTL": [
        ("SET", "k", "a", "EX", "1000"), ("SETBIT", "k", "20", "1"), ("TTL", "k"), ("GET", "k"),
    ],
    "strings written by SETBIT work with APPEND, SETRANGE, GETRANGE, STRLEN, INCR": [
        *bits("k", 1, 2, 10), ("APPEND", "k", "xyz"), ("GET", "k"), ("STRLEN", "k"),
        ("SETRANGE", "k", "8", "AB"), ("GET", "k"), ("SETRANGE", "k", "12", "Z"), ("GET", "k"),
        ("GETRANGE", "k", "1", "-2"), ("SETBIT", "k", "0", "1"), ("GETRANGE", "k", "0", "0"),
        ("SUBSTR", "k", "0", "1"), ("OBJECT", "ENCODING", "k"), ("INCR", "k"),
        ("SETBIT", "n", "2", "1"), ("SETBIT", "n", "3", "1"), ("SETBIT", "n", "7", "1"),
        ("GET", "n"), ("INCR", "n"), ("GET", "n"), ("OBJECT", "ENCODING", "n"),
        ("APPEND", "n", "0"), ("GET", "n"), ("GETDEL", "n"),
    ],
    "a bitmap survives COPY, RENAME and GETSET independently": [
        *bits("k", 3, 9), ("COPY", "k", "c"), ("SETBIT", "c", "4", "1"), ("GET", "k"),
        ("GET", "c"), ("OBJECT", "ENCODING", "c"), ("RENAME", "c", "d"), ("GET", "d"),
        ("GETSET", "d", "x"), ("GET", "d"), ("LCS", "k", "k"), ("MGET", "k", "d"),
        ("GETEX", "k"), ("SET", "k", "v", "GET"),
    ],
    "MULTI: GET's reply is not changed by a later SETBIT in the transaction": [
        *bits("k", 0), ("MULTI",), ("GET", "k"), ("SETBIT", "k", "1", "1"), ("GET", "k"),
        ("APPEND", "k", "z"), ("GET", "k"), ("EXEC",),
    ],
    # BITCOUNT
    "BITCOUNT: whole string, byte ranges, negative ranges": [
        ("SET", "k", "foobar"), ("BITCOUNT", "k"), ("BITCOUNT", "k", "0", "0"),
        ("BITCOUNT", "k", "1", "1"), ("BITCOUNT", "k", "1", "-2"), ("BITCOUNT", "k", "-3", "-1"),
        ("BITCOUNT", "k", "-1", "-3"), ("BITCOUNT", "k", "-100", "100"),
        ("BITCOUNT", "k", "5", "2"),
        ("BITCOUNT", "k", "10", "20"), ("BITCOUNT", "k", "0", "-100"), ("BITCOUNT", "k", "0", "-1"),
        ("BITCOUNT", "k", "0", "-1", "BYTE"), ("BITCOUNT", "k", "0", "-1", "byte"),
        ("BITCOUNT", "nokey"), ("BITCOUNT", "nokey", "0", "5"),
        ("SET", "n", "1234567"), ("BITCOUNT", "n"), ("BITCOUNT", "n", "1", "3"),
        ("SET", "e", ""), ("BITCOUNT", "e"), ("BITCOUNT", "e", "0", "-1"),
        ("BITCOUNT", "e", "0", "-1", "BIT"),
    ],
    "BITCOUNT BIT ranges": [
        ("SET", "k", "foobar"), ("BITCOUNT", "k", "5", "30", "BIT"),
        ("BITCOUNT", "k", "0", "0", "BIT"), ("BITCOUNT", "k", "1", "1", "BIT"),
        ("BITCOUNT", "k", "3", "4", "BIT"), ("BITCOUNT", "k", "-10", "-1", "BIT"),
        ("BITCOUNT", "k", "-1", "-10", "bit"), ("BITCOUNT", "k", "7", "8", "BIT"),
        ("BITCOUNT", "k", "0", "47", "BIT"), ("BITCOUNT", "k", "0", "1000", "BIT"),
        ("BITCOUNT", "k", "9", "9", "BIT"), ("BITCOUNT", "k", "12", "13", "BIT"),
    ],
    "BITCOUNT errors on an existing string": [
        ("SET", "k", "foobar"), ("BITCOUNT", "k", "0"), ("BITCOUNT", "k", "0", "1", "2"),
        ("BITCOUNT", "k", "a", "1"), ("BITCOUNT", "k", "0", "b"),
        ("BITCOUNT", "k", "0", "1", "BITS"),
        ("BITCOUNT", "k", "0", "1", "BIT", "x"), ("BITCOUNT", "k", "1.5", "2"),
        ("BITCOUNT",), ("HSET", "h", "f", "v"), ("BITCOUNT", "h"), ("BITCOUNT", "h", "0", "1"),
    ],
    # BITPOS
    "BITPOS: first set and clear bits": [
        ("SET", "k", "\xff\xf0\x00"), ("BITPOS", "k", "0"), ("BITPOS", "k", "1"),
        ("BITPOS", "k", "1", "1"), ("BITPOS", "k", "1", "2"), ("BITPOS", "k", "0", "2"),
        ("BITPOS", "k", "1", "2", "-1"), ("BITPOS", "k", "0", "0", "0"),
        ("BITPOS", "k", "1", "-1"), ("BITPOS", "k", "0", "-2", "-1"), ("BITPOS", "k", "1", "5"),
        ("BITPOS", "k", "1", "1", "0"),
        ("SET", "ones", "\xff\xff\xff"), ("BITPOS", "ones", "0"), ("BITPOS", "ones", "0", "1"),
        ("BITPOS", "ones", "0", "0", "-1"), ("BITPOS", "ones", "1"),
        ("SET", "zeros", "\x00\x00\x00"), ("BITPOS", "zeros", "1"), ("BITPOS", "zeros", "0"),
        ("BITPOS", "zeros", "1", "0", "-1"), ("BITPOS", "zeros", "1", "1"),
        ("BITPOS", "nokey", "1"), ("BITPOS", "nokey", "0"),
        ("SET", "e", ""), ("BITPOS", "e", "0"), ("BITPOS", "e", "1"), ("BITPOS", "e", "0", "0"),
    ],
    "BITPOS BIT ranges": [
        ("SET", "k", "\x00\xff\xf0\x0f"), ("BITPOS", "k", "1", "0", "-1", "BIT"),
        ("BITPOS", "k", "1", "7", "15", "BIT"), ("BITPOS", "k", "0", "8", "15", "BIT"),
        ("BITPOS", "k", "0", "8", "19", "BIT"), ("BITPOS", "k", "0", "9", "30", "bit"),
        ("BITPOS", "k", "1", "20", "27", "BIT"), ("BITPOS", "k", "1", "20", "28", "BIT"),
        ("BITPOS", "k", "1", "-5", "-1", "BIT"), ("BITPOS", "k", "0", "-3", "-1", "BIT"),
        ("BITPOS", "k", "1", "3", "3", "BIT"), ("BITPOS", "k", "1", "10", "10", "BIT"),
        ("BITPOS", "k", "1", "30", "10", "BIT"), ("BITPOS", "k", "0", "0", "0", "BYTE"),
        ("BITPOS", "k", "1", "1", "2", "byte"), ("BITPOS", "k", "0", "12", "13", "BIT"),
        ("SET", "long", "\x00" * 40 + "\x01" + "\x00" * 5),
        ("BITPOS", "long", "1", "3", "-2", "BIT"), ("BITPOS", "long", "1", "0", "330", "BIT"),
        ("BITPOS", "long", "1", "0", "326", "BIT"), ("BITPOS", "long", "1", "2", "-1"),
        ("BITPOS", "long", "0", "5", "-1", "BIT"),
    ],
    "BITPOS errors on an existing string": [
        ("SET", "k", "ab"), ("BITPOS", "k", "2"), ("BITPOS", "k", "-1"), ("BITPOS", "k", "x"),
        ("BITPOS", "k", "1", "x"), ("BITPOS", "k", "1", "0", "y"),
        ("BITPOS", "k", "1", "0", "1", "BITS"), ("BITPOS", "k", "1", "0", "1", "BIT", "z"),
        ("BITPOS", "k"), ("HSET", "h", "f", "v"), ("BITPOS", "h", "1"), ("BITPOS", "h", "0", "1"),
    ],
    # BITOP
    "BITOP AND / OR / XOR / NOT with different lengths and missing keys": [
        ("SET", "a", "\xff\x0f\x55"), ("SET", "b", "\xf0"), ("SET", "c", "foobar"),
        ("BITOP", "AND", "d", "a", "b"), ("GET", "d"), ("BITOP", "OR", "d", "a", "b", "c"),
        ("GET", "d"), ("BITOP", "XOR", "d", "a", "c"), ("GET", "d"), ("BITOP", "NOT", "d", "a"),
        ("GET", "d"), ("BITOP", "and", "d", "a", "nokey"), ("GET", "d"),
        ("BITOP", "Or", "d", "nokey", "b"), ("GET", "d"), ("OBJECT", "ENCODING", "d"),
        ("BITOP", "xor", "d", "a", "a"), ("GET", "d"), ("BITOP", "AND", "d", "c"), ("GET", "d"),
        ("SET", "n", "123"), ("BITOP", "NOT", "d", "n"), ("GET", "d"),
        ("OBJECT", "ENCODING", "d"),
    ],
    "BITOP: long inputs (the word-at-a-time path)": [
        ("SET", "a", "0123456789abcdefghijklmnopqrstuvwxyz" * 3),
        ("SET", "b", "ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210" * 2 + "tail"),
        ("BITOP", "AND", "d", "a", "b"), ("GET", "d"), ("BITOP", "OR", "d", "a", "b"), ("GET", "d"),
        ("BITOP", "XOR", "d", "a", "b", "a"), ("GET", "d"), ("BITOP", "NOT", "d", "b"),
        ("GET", "d"),
    ],
    "BITOP: all sources empty deletes the destination": [
        ("SET", "d", "x"), ("BITOP", "AND", "d", "nokey"), ("EXISTS", "d"),
        ("SET", "e", ""), ("SET", "d", "x"), ("BITOP", "OR", "d", "e", "nokey"), ("EXISTS", "d"),
        ("BITOP", "NOT", "d", "e"), ("EXISTS", "d"),
    ],
    "BITOP overwrites the destination's type and TTL": [
        ("SET", "a", "x"), ("HSET", "d", "f", "v"), ("BITOP", "NOT", "d", "a"), ("TYPE", "d"),
        ("SET", "t", "v", "EX", "100"), ("BITOP", "OR", "t", "a"), ("TTL", "t"),
        ("BITOP", "AND", "a", "a"), ("GET", "a"),
    ],
    "BITOP errors": [
        ("SET", "a", "x"), ("HSET", "h", "f", "v"), ("BITOP", "NAND", "d", "a"),
        ("BITOP", "NOT", "d", "a", "a"), ("BITOP", "NOT", "d", "h"),
        ("BITOP", "AND", "d", "a", "h"),
        ("BITOP", "AND", "d", "h", "nokey"), ("EXISTS", "d"), ("BITOP", "AND", "d"),
        ("BITOP", "and\x00x", "d", "a"), ("BITOP", "", "d", "a"),
    ],
    # BITFIELD
    "BITFIELD GET / SET / INCRBY, signed and unsigned": [
        ("BITFIELD", "k", "SET", "i8", "0", "-100", "GET", "i8", "0", "GET", "u8", "0"),
        ("BITFIELD", "k", "INCRBY", "i5", "100", "1", "GET", "u4", "0"),
        ("BITFIELD", "k", "SET", "u8", "#2", "255", "GET", "u8", "#2", "GET", "i8", "#2"),
        ("BITFIELD", "k", "INCRBY", "u2", "102", "1", "INCRBY", "u2", "102", "1",
         "INCRBY", "u2", "102", "1"),
        ("GET", "k"), ("STRLEN", "k"),
        ("BITFIELD", "k", "GET", "i64", "0", "GET", "u63", "1", "GET", "i1", "0", "GET", "u1", "0"),
        ("BITFIELD", "k", "SET", "i64", "3", I64_MIN, "GET", "i64", "3", "GET", "u63", "4"),
        ("GET", "k"), ("OBJECT", "ENCODING", "k"),
    ],
    "BITFIELD: reads past the end and on a missing key": [
        ("BITFIELD", "nokey", "GET", "u8", "0", "GET", "i64", "1000"), ("EXISTS", "nokey"),
        ("SET", "k", "\x01\x02"), ("BITFIELD", "k", "GET", "u16", "4", "GET", "i13", "12"),
        ("BITFIELD", "k"), ("BITFIELD", "nokey"), ("BITFIELD", "k", "OVERFLOW", "SAT"),
    ],
    "BITFIELD OVERFLOW WRAP / SAT / FAIL on INCRBY": [
        ("BITFIELD", "k", "SET", "u8", "0", "250", "INCRBY", "u8", "0", "10",
         "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300", "INCRBY", "u8", "0", "-1000",
         "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1", "INCRBY", "u8", "0", "-1",
         "OVERFLOW", "WRAP", "INCRBY", "u8", "0", "-1"),
        ("BITFIELD", "s", "SET", "i8", "0", "120", "INCRBY", "i8", "0", "10",
         "OVERFLOW", "SAT", "INCRBY", "i8", "0", "100", "INCRBY", "i8", "0", "-1000",
         "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "-1", "INCRBY", "i8", "0", "1",
         "OVERFLOW", "wrap", "INCRBY", "i8", "0", "-1"),
        ("BITFIELD", "b", "OVERFLOW", "SAT", "INCRBY", "i64", "0", I64_MAX,
         "INCRBY", "i64", "0", "1", "INCRBY", "i64", "0", I64_MIN, "INCRBY", "i64", "0", I64_MIN,
         "OVERFLOW", "WRAP", "INCRBY", "i64", "0", "-1", "OVERFLOW", "FAIL",
         "INCRBY", "i64", "0", "-1"),
        ("BITFIELD", "w", "INCRBY", "u63", "0", I64_MAX, "INCRBY", "u63", "0", "1",
         "INCRBY", "u63", "0", I64_MIN, "OVERFLOW", "SAT", "INCRBY", "u63", "0", I64_MIN,
         "INCRBY", "u63", "0", I64_MAX, "INCRBY", "u63", "0", I64_MAX),
    ],
    "BITFIELD OVERFLOW on SET (out-of-range values)": [
        ("BITFIELD", "k", "SET", "u8", "0", "256", "SET", "u8", "0", "-1", "GET", "u8", "0",
         "OVERFLOW", "SAT", "SET", "u8", "0", "300", "SET", "u8", "0", "-5",
         "OVERFLOW", "FAIL", "SET", "u8", "0", "256", "SET", "u8", "0", "-1", "GET", "u8", "0"),
        ("BITFIELD", "s", "SET", "i4", "0", "8", "SET", "i4", "0", "-9", "GET", "i4", "0",
         "OVERFLOW", "SAT", "SET", "i4", "0", "100", "SET", "i4", "0", "-100",
         "SET", "i8", "8", I64_MIN, "SET", "i8", "8", I64_MAX, "GET", "i8", "8",
         "OVERFLOW", "FAIL", "SET", "i4", "0", "8", "SET", "i4", "0", "-8"),
        ("BITFIELD", "w", "SET", "i8", "0", I64_MIN, "SET", "i8", "8", I64_MAX,
         "SET", "u8", "16", I64_MIN, "SET", "i64", "24", I64_MIN, "SET", "u63", "100", "-1"),
        ("GET", "k"), ("GET", "s"), ("GET", "w"),
    ],
    "BITFIELD FAIL on a missing key still creates it": [
        ("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10"), ("EXISTS", "k"),
        ("GET", "k"), ("STRLEN", "k"),
    ],
    "BITFIELD errors": [
        ("BITFIELD", "k", "GET", "u64", "0"), ("BITFIELD", "k", "GET", "i65", "0"),
        ("BITFIELD", "k", "GET", "i0", "0"), ("BITFIELD", "k", "GET", "x8", "0"),
        ("BITFIELD", "k", "GET", "I8", "0"), ("BITFIELD", "k", "GET", "u", "0"),
        ("BITFIELD", "k", "GET", "u-1", "0"), ("BITFIELD", "k", "GET", "u8", "-1"),
        ("BITFIELD", "k", "GET", "u8", "#-1"), ("BITFIELD", "k", "GET", "u8", "#x"),
        ("BITFIELD", "k", "GET", "u8", "4294967296"), ("BITFIELD", "k", "GET", "u8", "#536870912"),
        ("BITFIELD", "k", "GET", "u8", "#536870911"), ("BITFIELD", "k", "SET", "u8", "0", "x"),
        ("BITFIELD", "k", "INCRBY", "u8", "0", "1.5"), ("BITFIELD", "k", "GET", "u8"),
        ("BITFIELD", "k", "SET", "u8", "0"), ("BITFIELD", "k", "OVERFLOW"),
        ("BITFIELD", "k", "OVERFLOW", "SATURATE", "GET", "u8", "0"),
        ("BITFIELD", "k", "FOO", "u8", "0"), ("BITFIELD", "k", "GET", "u8", "0", "extra"),
        ("BITFIELD", "k", "SET", "u8", "0", "1", "GET", "u64", "0"), ("EXISTS", "k"),
        ("BITFIELD", "k", "GET", "u8", "#2305843009213693953"),
        ("HSET", "h", "f", "v"), ("BITFIELD", "h", "GET", "u8", "0"),
        ("BITFIELD", "h", "SET", "u8", "0", "1"), ("BITFIELD", "h", "GET", "u64", "0"),
    ],
    "BITFIELD_RO": [
        ("SET", "k", "\x0f\xf0"), ("BITFIELD_RO", "k", "GET", "u8", "4", "GET", "i4", "#1"),
        ("BITFIELD_RO", "k"), ("BITFIELD_RO", "nokey", "GET", "i8", "0"),
        ("BITFIELD_RO", "k", "SET", "u8", "0", "1"), ("BITFIELD_RO", "k", "INCRBY", "u8", "0", "1"),
        ("BITFIELD_RO", "k", "OVERFLOW", "WRAP", "GET", "u8", "0"),
        ("BITFIELD_RO", "k", "SET", "u8", "0", "1", "GET", "u64", "0"), ("GET", "k"),
        ("BITFIELD_RO", "nokey", "SET", "u8", "0", "1"), ("EXISTS", "nokey"),
        ("HSET", "h", "f", "v"), ("BITFIELD_RO", "h", "GET", "u8", "0"),
        ("BITFIELD_RO", "h", "SET", "u8", "0", "1"),
    ],
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario(pair: Pair, name: str) -> None:
    run(pair, *SCENARIOS[name])


def test_offsets_are_bounded_by_proto_max_bulk_len(server_pair_factory: ServerPairFactory) -> None:
    from support.pair import open_pair

    ref, ours = server_pair_factory("--proto-max-bulk-len", "1mb")
    for resp in (2, 3):
        pair = open_pair(ref, ours, resp)
        try:
            run(pair, ("SETBIT", "k", str(8 * 1024 * 1024), "1"),
                ("SETBIT", "k", str(8 * 1024 * 1024 - 1), "1"), ("STRLEN", "k"),
                ("GETBIT", "k", str(8 * 1024 * 1024)),
                ("BITFIELD", "b", "SET", "u8", str(8 * 1024 * 1024 - 8), "1"), ("STRLEN", "b"),
                ("BITFIELD", "b", "SET", "i64", str(8 * 1024 * 1024 - 1), "1"), ("STRLEN", "b"),
                ("BITFIELD", "b", "GET", "u8", "#131072"), ("DEL", "k", "b"))
        finally:
            pair.close()


def test_watch_sees_bit_changes_but_not_no_ops(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        run(pair, ("SETBIT", "k", "3", "1"))
        for change, expect_abort in [
            (("SETBIT", "k", "3", "1"), False),
            (("SETBIT", "k", "3", "0"), True),
            (("BITFIELD", "k", "SET", "u4", "0", "0"), False),
            (("BITFIELD", "k", "INCRBY", "u4", "0", "1"), True),
            (("SETBIT", "k", "100", "0"), True),
            (("BITOP", "AND", "k", "k"), True),
        ]:
            run(pair, ("WATCH", "k"))
            for client in (other.ref, other.ours):
                client.call(*change)
            run(pair, ("MULTI",), ("PING",))
            expected, got = pair.both("EXEC")
            assert expected == got
            assert (expected in (b"*-1\r\n", b"_\r\n")) == expect_abort, change
    finally:
        other.close()


# -- newer Redis -----------------------------------------------------------------------------------


@pytest.mark.redis_version("7.4")
def test_bitcount_and_bitpos_check_arguments_before_the_key(pair: Pair) -> None:
    """Redis 7.4+ parses every argument first; 7.0 answers 0 / -1 for a missing key."""
    ours = pair.ours
    syntax, not_int = b"-ERR syntax error\r\n", b"-ERR value is not an integer or out of range\r\n"
    assert ours.call("BITCOUNT", "nokey", "0") == syntax
    assert ours.call("BITCOUNT", "nokey", "0", "1", "2") == syntax
    assert ours.call("BITCOUNT", "nokey", "a", "1") == not_int
    assert ours.call("BITCOUNT", "nokey", "0", "1", "BITS") == syntax
    assert ours.call("BITPOS", "nokey", "1", "x") == not_int
    assert ours.call("BITPOS", "nokey", "0", "0", "1", "x") == syntax
    assert ours.call("BITPOS", "nokey", "1", "0", "1", "2", "3") == syntax
    assert ours.call("BITPOS", "nokey", "2") == b"-ERR The bit argument must be 1 or 0.\r\n"
    assert ours.call("BITPOS", "nokey", "1", "0", "1", "BIT") == b":-1\r\n"
    assert ours.call("BITPOS", "nokey", "0", "0", "1", "BIT") == b":0\r\n"
    assert ours.call("BITCOUNT", "nokey", "0", "1", "BIT") == b":0\r\n"
    if ref_version(pair) >= (7, 4):
        for cmd in (("BITCOUNT", "nokey", "0"), ("BITCOUNT", "nokey", "0", "1", "2"),
                    ("BITCOUNT", "nokey", "a", "1"), ("BITCOUNT", "nokey", "0", "1", "BITS"),
                    ("BITPOS", "nokey", "1", "x"), ("BITPOS", "nokey", "0", "0", "1", "x"),
                    ("BITPOS", "nokey", "1", "0", "1", "2", "3"), ("BITPOS", "nokey", "2"),
                    ("BITPOS", "nokey", "1", "0", "1", "BIT"),
                    ("BITPOS", "nokey", "0", "0", "1", "BIT"),
                    ("BITCOUNT", "nokey", "0", "1", "BIT")):
            pair.check(*cmd)
    else:  # Redis 7.0 looks the key up first.
        assert pair.ref.call("BITCOUNT", "nokey", "0") == b":0\r\n"
        assert pair.ref.call("BITPOS", "nokey", "1", "x") == b":-1\r\n"


def _get(client: RawClient, key: str) -> bytes:
    return client.call("GET", key)


@pytest.mark.redis_version("8.2")
def test_bitop_diff_diff1_andor_one(pair: Pair) -> None:
    ours = pair.ours
    ours.call("SET", "x", b"\xf0\xff\x0f")
    ours.call("SET", "y1", b"\x30\x0f")
    ours.call("SET", "y2", b"\x0c\x00\x01\x80")
    cases = {
        # X and not (Y1 or Y2)
        ("DIFF", "x", "y1", "y2"): b"\xc0\xf0\x0e\x00",
        # (not X) and (Y1 or Y2)
        ("DIFF1", "x", "y1", "y2"): b"\x0c\x00\x00\x80",
        # X and (Y1 or Y2)
        ("ANDOR", "x", "y1", "y2"): b"\x30\x0f\x01\x00",
        # set in exactly one source
        ("ONE", "x", "y1", "y2"): b"\xcc\xf0\x0e\x80",
        ("ONE", "x", "x"): None,
        ("one", "x"): b"\xf0\xff\x0f",
        ("diff", "x", "nokey"): b"\xf0\xff\x0f",
        ("andor", "nokey", "x"): None,
    }
    for (op, *keys), expected in cases.items():
        length = 4 if any(k.startswith("y2") for k in keys) else 3
        assert ours.call("BITOP", op, "d", *keys) == b":%d\r\n" % length, op
        body = expected if expected is not None else bytes(length)
        assert ours.call("GET", "d") == b"$%d\r\n%s\r\n" % (len(body), body), (op, keys)
    for op in ("DIFF", "DIFF1", "ANDOR"):
        assert ours.call("BITOP", op, "d", "x") == (
            b"-ERR BITOP %s must be called with at least two source keys.\r\n" % op.encode()
        )
    assert ours.call("BITOP", "diff1", "d", "x") == (
        b"-ERR BITOP DIFF1 must be called with at least two source keys.\r\n"
    )
    ours.call("HSET", "h", "f", "v")
    assert ours.call("BITOP", "ONE", "d", "x", "h").startswith(b"-WRONGTYPE")
    assert ours.call("BITOP", "DIFF", "d", "nokey", "nokey2") == b":0\r\n"
    assert ours.call("EXISTS", "d") == b":0\r\n"
    if ref_version(pair) >= (8, 2):
        ref = pair.ref
        ref.call("SET", "x", b"\xf0\xff\x0f")
        ref.call("SET", "y1", b"\x30\x0f")
        ref.call("SET", "y2", b"\x0c\x00\x01\x80")
        ref.call("HSET", "h", "f", "v")
        for op, *keys in (*cases, ("DIFF", "x"), ("diff1", "x"), ("ANDOR", "x"),
                          ("ONE", "x", "h"), ("DIFF", "nokey", "nokey2")):
            pair.check("BITOP", op, "d", *keys)
            pair.check("GET", "d")
    else:  # Redis 7.0 knows only AND, OR, XOR and NOT.
        assert pair.ref.call("BITOP", "DIFF", "d", "a", "b") == b"-ERR syntax error\r\n"


_LOOKUP_COMMANDS = [
    "GETBIT s 0", "GETBIT nx 0", "SETBIT s 1 1", "SETBIT nx 1 1", "BITCOUNT s", "BITCOUNT nx",
    "BITCOUNT s 0 1", "BITPOS s 1", "BITPOS nx 0", "BITPOS s 1 0 1 BIT", "BITOP AND d s nx",
    "BITOP NOT s s", "BITFIELD s GET u8 0", "BITFIELD nx GET u8 0", "BITFIELD s SET u8 0 1",
    "BITFIELD_RO s GET i4 0", "BITFIELD_RO nx GET i4 0",
    "PFADD p a", "PFADD nx a", "PFCOUNT p", "PFCOUNT nx", "PFCOUNT p nx p", "PFMERGE p nx",
    "PFMERGE d p", "PFDEBUG ENCODING p", "PFDEBUG ENCODING nx",
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
            client.call("SET", "s", "val")
            client.call("PFADD", "p", "x", "y")
            client.call("CONFIG", "RESETSTAT")
            client.call(*command.split())
            counts.append(_lookup_counts(client))
        assert counts[1] == counts[0], f"{command}: redis {counts[0]}, resplite {counts[1]}"


# -- the ACL: BITFIELD reads or writes as its operations say --------------------------------

BITFIELD_LINES: list[tuple[str, ...]] = [
    ("BITFIELD", "k", "GET", "u8", "0"),
    ("BITFIELD", "k", "GET", "u8", "0", "GET", "i4", "4"),
    ("BITFIELD", "k", "OVERFLOW", "SAT", "GET", "u8", "0"),
    ("BITFIELD", "k", "get\0x", "u8", "0"),  # options are C strings
    ("BITFIELD", "k", "GET", "u8", "0", "SET", "u8", "0", "1"),
    ("BITFIELD", "k", "INCRBY", "u8", "0", "1"),
    ("BITFIELD", "k", "GET", "u8"),  # incomplete: taken as a write, as Redis does
    ("BITFIELD", "k", "OVERFLOW"),
    ("BITFIELD", "k"),
    ("BITFIELD_RO", "k", "GET", "u8", "0"),
]


@pytest.mark.parametrize("line", BITFIELD_LINES, ids=lambda a: " ".join(a))
def test_bitfield_key_flags_follow_the_operations(pair: Pair, line: tuple[str, ...]) -> None:
    pair.check("COMMAND", "GETKEYSANDFLAGS", *line)


def test_a_read_only_user_may_read_bitfields(pair: Pair) -> None:
    pair.check("SET", "k", "v")
    pair.check("ACL", "SETUSER", "bitreader", "on", ">pw", "+@all", "%R~*")
    user = pair.connect_extra()
    user.normalize = normalize.acl_texts_as_redis8("bitreader")
    try:
        user.check("AUTH", "bitreader", "pw")
        for line in BITFIELD_LINES:
            user.check(*line)
        pair.check("GET", "k")
    finally:
        user.close()
        pair.check("ACL", "DELUSER", "bitreader")


def _dirty(pair: Pair) -> tuple[int, int]:
    """The change counter (INFO's rdb_changes_since_last_save) on each server."""
    ref, ours = pair.info("persistence")
    return (int(dict(ref["Persistence"])["rdb_changes_since_last_save"]),
            int(dict(ours["Persistence"])["rdb_changes_since_last_save"]))


def test_setbit_and_bitfield_count_only_changes(pair: Pair) -> None:
    # A new or longer string, or a bit that flips, is a change; setting a bit to what it
    # already is, or a BITFIELD of GETs alone, is not. BITFIELD counts each changing write.
    steps: list[tuple[str | int, ...]] = [
        ("SETBIT", "a", 0, 0), ("BITFIELD", "b", "SET", "i5", 0, 0),
        ("SETBIT", "a", 0, 0), ("BITFIELD", "b", "SET", "i5", 0, 0),
        ("SETBIT", "a", 0, 1), ("SETBIT", "a", 0, 1), ("SETBIT", "a", 100, 0),
        ("BITFIELD", "b", "SET", "u8", 0, 7, "SET", "u8", 0, 7, "INCRBY", "u8", 8, 0),
        ("BITFIELD", "b", "GET", "u8", 0), ("BITFIELD", "b", "SET", "u4", 100, 0),
        ("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 9),
    ]
    before = _dirty(pair)
    for step in steps:
        pair.check(*step)
        after = _dirty(pair)
        assert after[1] - before[1] == after[0] - before[0], step
        before = after
