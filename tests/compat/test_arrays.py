"""The array type (Redis 8.8): ARSET ... ARSCAN, and arrays across the generic commands.

The 8.6.3 reference has no arrays, so these tests run against resplite alone answering as
its newest version (``@pytest.mark.redis_version("8.8")``), under RESP2 and RESP3, and
assert the facts of Redis's ``t_array.c`` and ``sparsearray.c`` and of its own test unit
(``tests/unit/type/array.tcl``, whose cases are restated here): error texts byte for byte,
reply shapes (big numbers above 2**63 - 1), the layout ARINFO reports. What the reference
does share (an 8.6 server has no array command, no ``@array`` category) is compared byte for
byte with it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from support.newer import Conn, as_map, value

if TYPE_CHECKING:
    from support.pair import Pair

    from resplite.testing.embedded import ServerHandle

MAX = 2**64 - 2  # the highest index
U64 = 2**64 - 1
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
INVALID_INDEX = b"-ERR invalid array index\r\n"
NOT_INTEGER = b"-ERR value is not an integer or out of range\r\n"
SYNTAX = b"-ERR syntax error\r\n"
NULL2, NULL3 = b"$-1\r\n", b"_\r\n"

newer = pytest.mark.redis_version("8.8")


@pytest.fixture
def dbg(pair: Pair) -> Iterator[Conn]:
    """resplite of the ``pair`` (answering as its newest version under ``redis_version``),
    which allows DEBUG, as a :class:`Conn` of the pair's protocol."""
    host, port = pair.ours.sock.getpeername()[:2]
    c = Conn(host, port, resp=pair.resp)
    yield c
    c.close()


def arity(name: str) -> bytes:
    return b"-ERR wrong number of arguments for '%s' command\r\n" % name.encode()


def err(text: str) -> bytes:
    return b"-ERR " + text.encode() + b"\r\n"


def null(c: Conn) -> bytes:
    return NULL3 if c.resp == 3 else NULL2


def big(c: Conn, n: int) -> bytes:
    """Redis's addReplyUnsignedLongLong above 2**63 - 1."""
    text = b"%d" % n
    return b"(" + text + b"\r\n" if c.resp == 3 else b"$%d\r\n%s\r\n" % (len(text), text)


def bulk(s: bytes | str) -> bytes:
    data = s.encode() if isinstance(s, str) else s
    return b"$%d\r\n%s\r\n" % (len(data), data)


# -- ARSET / ARGET / ARMSET / ARMGET ------------------------------------------------------


@newer
def test_set_and_get(xs: Conn) -> None:
    assert xs.call("ARSET", "a", "0", "hello") == b":1\r\n"
    assert xs.call("ARGET", "a", "0") == bulk("hello")
    assert xs.call("ARGET", "a", "1") == null(xs)  # a hole
    assert xs.call("ARGET", "nokey", "0") == null(xs)
    assert xs.call("ARSET", "a", "0", "world") == b":0\r\n"  # overwriting adds nothing
    assert xs.call("ARGET", "a", "0") == bulk("world")
    assert xs.call("ARSET", "a", "2", "x", "y", "z") == b":3\r\n"
    assert xs.v("ARGETRANGE", "a", "0", "4") == ["world", None, "x", "y", "z"]
    assert xs.call("ARSET", "a", "3", "Y", "Z", "w") == b":1\r\n"


@newer
def test_values_come_back_as_written(dbg: Conn) -> None:
    """Whatever form Redis keeps a value in (integer, double, short or long string), it
    replies the bytes it was given, and DUMP/RESTORE and a reload keep them."""
    forms = ["12345", "3.14159", "1.0", "-1.0", "0.0", "-0.0", "42.0", "1000000.0", "0.00",
             "10.500", "001.25", "1.0e-10", "1.0e+100", "3.141592653589793", "-1",
             "-9223372036854775808", "9223372036854775807", "12345678901234567890", "",
             "abc", "x" * 100]
    values = [form.encode() for form in forms] + [b"\x00bin\xff"]
    for i, form in enumerate(values):
        dbg.call("ARSET", "a", str(i), form)
    expected = [bulk(form) for form in values]
    assert [dbg.call("ARGET", "a", str(i)) for i in range(len(values))] == expected
    raw = dbg.call("DUMP", "a")
    assert raw.startswith(b"$") and b"\r\n\x1c" in raw[:12]  # RDB type 28
    assert dbg.call("DEBUG", "RELOAD") == b"+OK\r\n"
    assert [dbg.call("ARGET", "a", str(i)) for i in range(len(values))] == expected


@newer
def test_index_parsing(xs: Conn) -> None:
    """Indexes are read by string2ull: strtoull's leniency (blanks, +, leading zeros, a
    wrapping -) once the strict form fails; 2**64 - 1 and above, or text, are refused."""
    for bad in ("not-an-index", "-1", "", "1.5", str(U64), str(U64 + 1), "1 ", "0x10"):
        assert xs.call("ARSET", "a", bad, "v") == INVALID_INDEX, bad
        assert xs.call("ARGET", "nokey", bad) == INVALID_INDEX, bad
    for good, index in ((" 7", 7), ("+8", 8), ("009", 9), ("-0", 0), (str(MAX), MAX)):
        xs.call("DEL", "a")
        assert xs.call("ARSET", "a", good, "v") == b":1\r\n", good
        assert xs.v("ARSCAN", "a", "0", str(MAX))[0][1:] == ["v"]
        assert xs.call("ARGET", "a", str(index)) == bulk("v"), good
    # " -2" is strtoull's wrap-around: 2**64 - 2.
    xs.call("DEL", "a")
    assert xs.call("ARSET", "a", " -2", "w") == b":1\r\n"
    assert xs.call("ARGET", "a", str(MAX)) == bulk("w")


@newer
def test_edge_indexes_and_big_numbers(xs: Conn) -> None:
    assert xs.call("ARSET", "a", "0", "first") == b":1\r\n"
    assert xs.call("ARSET", "a", str(MAX), "last") == b":1\r\n"
    assert xs.call("ARLEN", "a") == big(xs, U64)
    assert xs.call("ARCOUNT", "a") == b":2\r\n"
    assert xs.call("ARGET", "a", str(MAX)) == bulk("last")
    scan = xs.call("ARSCAN", "a", str(MAX), "0")
    assert scan == b"*2\r\n*2\r\n" + big(xs, MAX) + bulk("last") + b"*2\r\n:0\r\n" + bulk("first")
    assert xs.call("ARGETRANGE", "a", str(MAX - 1), str(MAX)) == \
        b"*2\r\n" + null(xs) + bulk("last")
    # A run may end on the last index, not past it.
    assert xs.call("ARSET", "a", str(MAX - 1), "x", "y") == b":1\r\n"
    assert xs.call("ARSET", "a", str(MAX), "x", "y") == err("array index overflow")
    assert xs.call("ARSET", "b", str(MAX - 1), "x", "y", "z") == err("array index overflow")
    assert xs.call("EXISTS", "b") == b":0\r\n"  # nothing created


@newer
def test_huge_sparse_gaps(xs: Conn) -> None:
    for index in (0, 10_000, 1_000_000, 10_000_000, 2**40, 2**63):
        xs.call("ARSET", "a", str(index), f"v{index}")
    assert xs.call("ARCOUNT", "a") == b":6\r\n"
    assert xs.call("ARLEN", "a") == big(xs, 2**63 + 1)
    assert xs.v("ARGET", "a", str(2**40)) == f"v{2**40}"
    assert xs.call("AROP", "a", "0", str(MAX), "USED") == b":6\r\n"
    assert xs.v("ARGREP", "a", "-", "+", "MATCH", "v1") == [10_000, 1_000_000, 10_000_000, 2**40]
    assert xs.call("ARDELRANGE", "a", "1", str(MAX)) == b":5\r\n"
    assert xs.call("ARLEN", "a") == b":1\r\n"


@newer
def test_armset_and_armget(xs: Conn) -> None:
    assert xs.call("ARMSET", "a", "0", "a", "1", "b", "2", "c") == b":3\r\n"
    assert xs.call("ARMSET", "a", "0", "aa", "5", "b", "5", "bb") == b":1\r\n"  # last wins
    assert xs.v("ARMGET", "a", "0", "1", "5", "3") == ["aa", "b", "bb", None]
    assert xs.call("ARMGET", "nokey", "0", "1") == b"*2\r\n" + null(xs) * 2
    assert xs.call("ARMSET", "a", "0", "x", "1") == arity("armset")
    # Every index is checked before anything is written.
    assert xs.call("ARMSET", "b", "0", "x", "bad", "y") == INVALID_INDEX
    assert xs.call("EXISTS", "b") == b":0\r\n"
    assert xs.call("ARMGET", "a", "0", "bad") == INVALID_INDEX
    assert xs.call("ARMGET", "nokey", "bad") == INVALID_INDEX


@newer
def test_wrongtype_everywhere(xs: Conn) -> None:
    xs.call("SET", "s", "v")
    for cmd in (("ARGET", "s", "0"), ("ARSET", "s", "0", "x"), ("ARMSET", "s", "0", "x"),
                ("ARMGET", "s", "0"), ("ARGETRANGE", "s", "0", "1"), ("ARDEL", "s", "0"),
                ("ARDELRANGE", "s", "0", "1"), ("ARLEN", "s"), ("ARCOUNT", "s"),
                ("ARINFO", "s"), ("ARNEXT", "s"), ("ARSEEK", "s", "1"), ("ARINSERT", "s", "x"),
                ("ARRING", "s", "3", "x"), ("ARLASTITEMS", "s", "1"), ("AROP", "s", "0", "1",
                "SUM"), ("ARGREP", "s", "-", "+", "MATCH", "x"), ("ARSCAN", "s", "0", "1")):
        assert xs.call(*cmd) == WRONGTYPE, cmd
    # ARGET and ARMGET look the key up first, so WRONGTYPE beats a bad index...
    assert xs.call("ARGET", "s", "bad") == WRONGTYPE
    # ...while the others parse first.
    assert xs.call("ARSET", "s", "bad", "x") == INVALID_INDEX
    assert xs.call("ARGETRANGE", "s", "0", "bad") == INVALID_INDEX
    # ARLASTITEMS answers a count of 0 or less before looking at the key at all.
    assert xs.call("ARLASTITEMS", "s", "0") == b"*0\r\n"
    xs.call("ARSET", "a", "0", "v")
    for cmd in (("GET", "a"), ("LPUSH", "a", "x"), ("HGET", "a", "f"), ("SORT", "a")):
        assert xs.call(*cmd) == WRONGTYPE, cmd


# -- deleting ----------------------------------------------------------------------------------


@newer
def test_ardel(xs: Conn) -> None:
    xs.call("ARSET", "a", "0", "a", "b", "c", "d")
    assert xs.call("ARDEL", "a", "1") == b":1\r\n"
    assert xs.call("ARDEL", "a", "1") == b":0\r\n"
    assert xs.call("ARCOUNT", "a") == b":3\r\n"
    assert xs.call("ARDEL", "a", "0", "2", "2", "9") == b":2\r\n"
    assert xs.call("ARDEL", "a", "bad") == INVALID_INDEX
    assert xs.call("ARDEL", "nokey", "0") == b":0\r\n"
    assert xs.call("ARDEL", "nokey", "bad") == INVALID_INDEX  # checked before the lookup
    assert xs.call("ARDEL", "a", "3") == b":1\r\n"
    assert xs.call("EXISTS", "a") == b":0\r\n"  # the last element took the key


@newer
def test_ardelrange(xs: Conn) -> None:
    for i in range(20):
        xs.call("ARSET", "a", str(i), f"val{i}")
    assert xs.call("ARDELRANGE", "a", "6", "2") == b":5\r\n"  # either order
    assert xs.call("ARDELRANGE", "a", "10", "14", "12", "16") == b":7\r\n"  # overlapping
    assert xs.v("ARSCAN", "a", "0", "100") == [[i, f"val{i}"] for i in (0, 1, 7, 8, 9, 17,
                                                                           18, 19)]
    assert xs.call("ARDELRANGE", "a", "11", "12") == b":0\r\n"
    assert xs.call("ARDELRANGE", "a", "0") == arity("ardelrange")
    assert xs.call("ARDELRANGE", "a", "0", "1", "2", "bad") == INVALID_INDEX
    assert xs.call("ARCOUNT", "a") == b":8\r\n"  # nothing deleted by the refused call
    assert xs.call("ARDELRANGE", "nokey", "0", "1") == b":0\r\n"
    assert xs.call("ARDELRANGE", "a", "0", str(MAX)) == b":8\r\n"
    assert xs.call("EXISTS", "a") == b":0\r\n"


@newer
def test_ardelrange_across_superdir_blocks(xs: Conn) -> None:
    for index in (100, 8388608, 12000000, 16777200, 16777216, 20000000):
        xs.call("ARSET", "a", str(index), "v")
    assert xs.call("ARDELRANGE", "a", "8388608", "18000000") == b":4\r\n"
    assert xs.v("ARSCAN", "a", "0", "30000000") == [[100, "v"], [20000000, "v"]]
    xs.call("DEL", "a")
    for index in (8388590, 8388608, 8392704, 25165825):
        xs.call("ARSET", "a", str(index), "v")
    assert xs.call("ARDELRANGE", "a", "8388595", "25165824") == b":2\r\n"
    assert xs.v("ARSCAN", "a", "0", "30000000") == [[8388590, "v"], [25165825, "v"]]


# -- reading ranges -------------------------------------------------------------------------------


@newer
def test_argetrange(xs: Conn) -> None:
    xs.call("ARMSET", "a", "0", "a", "1", "b", "2", "c", "3", "d", "4", "e")
    assert xs.v("ARGETRANGE", "a", "1", "3") == ["b", "c", "d"]
    assert xs.v("ARGETRANGE", "a", "3", "1") == ["d", "c", "b"]
    assert xs.v("ARGETRANGE", "a", "4", "6") == ["e", None, None]
    assert xs.call("ARGETRANGE", "nokey", "5", "6") == b"*2\r\n" + null(xs) * 2
    too_long = err("range exceeds maximum of 1000000 items")
    assert xs.call("ARGETRANGE", "a", "0", "1000000") == too_long
    assert xs.call("ARGETRANGE", "a", "1000000", "0") == too_long
    assert xs.call("ARGETRANGE", "a", "0", str(MAX)) == too_long
    # Exactly a million positions is allowed (read raw: the test client's parser is slow on
    # a million elements).
    xs.send("ARGETRANGE", "nokey", "1", "1000000")
    expected = b"*1000000\r\n" + b"".join([null(xs)] * 1_000_000)
    got = b""
    while len(got) < len(expected):
        chunk = xs.sock.recv(1 << 20)
        assert chunk
        got += chunk
    assert got == expected
    # Across a slice and the super-directory's first block boundary.
    xs.call("ARSET", "b", "8388607", "left", "mid", "right")
    assert xs.v("ARGETRANGE", "b", "8388609", "8388607") == ["right", "mid", "left"]


@newer
def test_arscan(xs: Conn) -> None:
    xs.call("ARMSET", "a", "0", "a", "5", "b", "9", "c", "500", "x")
    assert xs.v("ARSCAN", "a", "0", "10") == [[0, "a"], [5, "b"], [9, "c"]]
    assert xs.v("ARSCAN", "a", "9", "0") == [[9, "c"], [5, "b"], [0, "a"]]
    assert xs.v("ARSCAN", "a", "10", "100") == []
    assert xs.v("ARSCAN", "a", "0", "1000", "LIMIT", "2") == [[0, "a"], [5, "b"]]
    assert xs.v("ARSCAN", "a", "1000", "0", "limit", "1") == [[500, "x"]]
    assert xs.call("ARSCAN", "nokey", "0", "1") == b"*0\r\n"
    assert xs.call("ARSCAN", "a", "0", "1", "LIMIT", "0") == err("LIMIT must be positive")
    assert xs.call("ARSCAN", "a", "0", "1", "LIMIT", "-1") == err("LIMIT must be positive")
    assert xs.call("ARSCAN", "a", "0", "1", "LIMIT", "x") == NOT_INTEGER
    assert xs.call("ARSCAN", "a", "0", "1", "COUNT", "1") == SYNTAX
    assert xs.call("ARSCAN", "a", "0", "1", "LIMIT") == arity("arscan")
    assert xs.call("ARSCAN", "a", "0", "1", "LIMIT", "1", "x") == arity("arscan")


# -- ARGREP --------------------------------------------------------------------------------------


@newer
def test_argrep_predicates(xs: Conn) -> None:
    xs.call("ARMSET", "a", "0", "alpha", "1", "beta", "2", "alphabet", "5", "gamma")
    assert xs.v("ARGREP", "a", "-", "+", "MATCH", "alpha") == [0, 2]
    assert xs.v("ARGREP", "a", "-", "+", "EXACT", "alpha") == [0]
    assert xs.v("ARGREP", "a", "3", "0", "MATCH", "alpha", "WITHVALUES") == \
        [[2, "alphabet"], [0, "alpha"]]
    assert xs.v("ARGREP", "a", "-", "+", "GLOB", "*a", "LIMIT", "2") == [0, 1]
    xs.call("DEL", "a")
    xs.call("ARMSET", "a", "0", "RedisArray", "1", "redis-match", "2", "array-only",
            "3", "plain")
    assert xs.v("ARGREP", "a", "-", "+", "MATCH", "redis", "GLOB", "*array*", "AND",
                "NOCASE") == [0]
    assert xs.v("ARGREP", "a", "-", "+", "MATCH", "redis", "GLOB", "*array*") == [1, 2]
    # Options mix with predicates in any order; the last of a repeated one wins.
    assert xs.v("ARGREP", "a", "-", "+", "OR", "MATCH", "redis", "LIMIT", "3", "GLOB",
                "*array*", "AND", "LIMIT", "1", "NOCASE") == [0]
    assert xs.call("ARGREP", "nokey", "-", "+", "MATCH", "x") == b"*0\r\n"


@newer
def test_argrep_regular_expressions(xs: Conn) -> None:
    xs.call("ARMSET", "a", "0", "foo123", "1", "bar", "2", "zoo999", "3", "Foo777")
    assert xs.v("ARGREP", "a", "-", "+", "RE", "^.*[0-9]{3}$") == [0, 2, 3]
    assert xs.v("ARGREP", "a", "-", "+", "RE", "^foo[0-9]+$", "NOCASE") == [0, 3]
    assert xs.v("ARGREP", "a", "-", "+", "RE", "^[[:alpha:]]+$") == [1]
    xs.call("DEL", "a")
    xs.call("ARMSET", "a", "0", "foo", "1", "bar", "2", "baz", "3", "foobar", "4", "BAR",
            "5", "quxfoo", "6", "zedbar", "7", "plain", "8", "ALPS", "9", "alphabet")
    for pattern, nocase, expected in (
            ("foo|bar", False, [0, 1, 3, 5, 6]), ("foo|bar", True, [0, 1, 3, 4, 5, 6]),
            ("^(foo|bar)$", True, [0, 1, 4]), ("^(foo|bar)", True, [0, 1, 3, 4]),
            ("(foo|bar)$", True, [0, 1, 3, 4, 5, 6]), ("alpha|alps", True, [8, 9])):
        extra = ["NOCASE"] if nocase else []
        assert xs.v("ARGREP", "a", "-", "+", "RE", pattern, *extra) == expected, pattern
    xs.call("DEL", "a")
    xs.call("ARMSET", "a", "0", "item-foo-123", "1", "ITEM-BAR-456", "2", "item-baz")
    assert xs.v("ARGREP", "a", "-", "+", "RE", "^item-(foo|bar)-[0-9]{3}$", "NOCASE") == [0, 1]
    # $ is the end of the value only, and . matches a newline (no REG_NEWLINE).
    xs.call("ARMSET", "b", "0", "ab\n", "1", "a\nb")
    assert xs.v("ARGREP", "b", "-", "+", "RE", "b$") == [1]
    assert xs.v("ARGREP", "b", "-", "+", "RE", "a.b") == [1]


@newer
def test_argrep_errors(xs: Conn) -> None:
    xs.call("ARSET", "a", "0", "a" * 2048)
    assert xs.v("ARGREP", "a", "-", "+", "RE", "a" * 2048) == [0]
    assert xs.call("ARGREP", "a", "-", "+", "RE", "a" * 2049) == \
        err("regular expression is too long, maximum is 2048 bytes")
    assert xs.call("ARGREP", "a", "-", "+", "RE", r"(a)\1") == \
        err("regular expression backreferences are not supported")
    assert xs.call("ARGREP", "a", "-", "+", "RE", "") == err("regular expression is empty")
    assert xs.call("ARGREP", "a", "-", "+", "RE", "(") == \
        err("invalid regular expression: Missing ')'")
    assert xs.call("ARGREP", "a", "-", "+", "RE", "[a") == \
        err("invalid regular expression: Missing ']'")
    assert xs.call("ARGREP", "a", "-", "+", "RE", "*a") == \
        err("invalid regular expression: Invalid use of repetition operators")
    assert xs.call("ARGREP", "a", "-", "+", "RE", "\\x{1").startswith(
        b"-ERR invalid regular expression: ")
    assert xs.call("ARGREP", "a", "-", "+", "RE", "\\x{1", "NOCASE").startswith(
        b"-ERR invalid regular expression: ")
    assert xs.call("ARGREP", "a", "-", "+", "LIMIT", "1", "NOCASE") == SYNTAX  # no predicate
    assert xs.call("ARGREP", "a", "-", "+", "MATCH", "x", "FOO") == SYNTAX
    assert xs.call("ARGREP", "a", "-", "+", "MATCH", "x", "LIMIT") == SYNTAX
    assert xs.call("ARGREP", "a", "-", "+", "MATCH", "x", "MATCH") == SYNTAX
    assert xs.call("ARGREP", "a", "-", "+", "MATCH", "x", "LIMIT", "0") == \
        err("LIMIT must be positive")
    assert xs.call("ARGREP", "a", "x", "+", "MATCH", "x") == INVALID_INDEX
    assert xs.call("ARGREP", "a", "-", "+", "MATCH") == arity("argrep")
    many = ["MATCH", "a"] * 250
    assert xs.v("ARGREP", "a", "-", "+", *many) == [0]
    assert xs.call("ARGREP", "a", "-", "+", *many, "MATCH", "a") == \
        err("too many predicates, maximum is 250")
    # The regular expression is checked even when the key does not exist.
    assert xs.call("ARGREP", "nokey", "-", "+", "RE", "(") == \
        err("invalid regular expression: Missing ')'")


# -- AROP -----------------------------------------------------------------------------------------


@newer
def test_arop(xs: Conn) -> None:
    xs.call("ARMSET", "a", "0", "30", "1", "10", "2", "20")
    assert xs.v("AROP", "a", "0", "2", "SUM") == "60"
    assert xs.v("AROP", "a", "0", "2", "MIN") == "10"
    assert xs.v("AROP", "a", "0", "2", "MAX") == "30"
    assert xs.v("AROP", "a", "2", "0", "sum") == "60"  # either direction
    xs.call("ARMSET", "b", "0", "hello", "1", "world", "2", "hello", "3", "foo", "9", "x")
    assert xs.call("AROP", "b", "0", "3", "MATCH", "hello") == b":2\r\n"
    assert xs.call("AROP", "b", "0", "3", "MATCH", "bar") == b":0\r\n"
    assert xs.call("AROP", "b", "0", "10", "USED") == b":5\r\n"
    assert xs.call("AROP", "b", "0", "10", "SUM") == null(xs)  # nothing numeric
    assert xs.call("AROP", "b", "0", "10", "AND") == null(xs)
    xs.call("ARMSET", "c", "0", "255", "1", "15", "2", "240")
    assert [xs.call("AROP", "c", "0", "2", op) for op in ("AND", "OR", "XOR")] == \
        [b":0\r\n", b":255\r\n", b":0\r\n"]
    xs.call("ARMSET", "d", "0", "7.9", "1", "3.2", "2", "1.8")  # truncated: 7, 3, 1
    assert [xs.call("AROP", "d", "0", "2", op) for op in ("AND", "OR", "XOR")] == \
        [b":1\r\n", b":7\r\n", b":5\r\n"]
    xs.call("ARMSET", "e", "0", "10.0", "1", "20.0", "2", "30.0", "3", "20.5", "4", "x")
    assert xs.v("AROP", "e", "0", "2", "SUM") == "60"
    assert xs.v("AROP", "e", "0", "4", "SUM") == "80.5"
    assert xs.call("AROP", "e", "0", "4", "MATCH", "10.0") == b":1\r\n"
    # Missing keys: 0 for the counts, null for the others.
    assert xs.call("AROP", "nokey", "0", "1", "USED") == b":0\r\n"
    assert xs.call("AROP", "nokey", "0", "1", "MATCH", "x") == b":0\r\n"
    assert xs.call("AROP", "nokey", "0", "1", "MAX") == null(xs)


@newer
def test_arop_numbers(xs: Conn) -> None:
    """Text that is no tagged number is read by strtold: sums are exact in extended
    precision and printed with %.17Lg."""
    xs.call("ARMSET", "a", "0", "0.1", "1", "0.2", "2", "1e2", "3", " 5", "4", "inf")
    assert xs.v("AROP", "a", "0", "1", "SUM") == "0.30000000000000000001"[:3]
    assert xs.v("AROP", "a", "0", "2", "SUM") == "100.3"
    assert xs.v("AROP", "a", "3", "3", "SUM") is None  # a leading blank is refused
    assert xs.v("AROP", "a", "0", "4", "SUM") == "inf"
    assert xs.v("AROP", "a", "0", "4", "MIN") == "0.1"
    assert xs.v("AROP", "a", "0", "4", "AND") == 0  # 0, 0, 100 (inf does not fit)
    xs.call("ARMSET", "b", "0", "9223372036854775807", "1", "1")
    assert xs.v("AROP", "b", "0", "1", "SUM") == "9.2233720368547758e+18"
    assert xs.v("AROP", "b", "0", "1", "XOR") == 9223372036854775806
    xs.call("ARMSET", "c", "0", "1e300", "1", "1e300")
    assert xs.v("AROP", "c", "0", "1", "SUM") == "2e+300"  # 1e300 read by strtold


@newer
def test_arop_errors(xs: Conn) -> None:
    xs.call("ARSET", "a", "0", "1")
    assert xs.call("AROP", "a", "0", "1", "AVG") == err("unknown operation")
    assert xs.call("AROP", "a", "0", "1", "MATCH") == err("MATCH requires a value argument")
    assert xs.call("AROP", "a", "0", "1", "MATCH", "x", "y") == \
        err("MATCH requires a value argument")
    assert xs.call("AROP", "a", "0", "1", "SUM", "x") == arity("arop")
    assert xs.call("AROP", "a", "x", "1", "SUM") == INVALID_INDEX
    assert xs.call("AROP", "a", "0", "1") == arity("arop")


# -- sizes and ARINFO -----------------------------------------------------------------------------


@newer
def test_arlen_and_arcount(xs: Conn) -> None:
    assert xs.call("ARLEN", "a") == b":0\r\n"
    assert xs.call("ARCOUNT", "a") == b":0\r\n"
    xs.call("ARSET", "a", "0", "a")
    xs.call("ARSET", "a", "5", "b")
    xs.call("ARSET", "a", "1000000", "c")
    assert xs.call("ARLEN", "a") == b":1000001\r\n"
    assert xs.call("ARCOUNT", "a") == b":3\r\n"
    xs.call("ARDEL", "a", "1000000")
    assert xs.call("ARLEN", "a") == b":6\r\n"


@newer
def test_arinfo(xs: Conn) -> None:
    xs.call("ARMSET", "a", "0", "a", "1", "b", "100", "c")
    info = as_map(xs.v("ARINFO", "a"))
    assert list(info) == ["count", "len", "next-insert-index", "slices", "directory-size",
                          "super-dir-entries", "slice-size"]
    assert info == {"count": 3, "len": 101, "next-insert-index": 0, "slices": 1,
                    "directory-size": 1, "super-dir-entries": 0, "slice-size": 4096}
    full = xs.call("ARINFO", "a", "full")
    dbl = (lambda t: b"," + t + b"\r\n") if xs.resp == 3 else bulk
    assert full.endswith(bulk("dense-slices") + b":0\r\n" + bulk("sparse-slices") + b":1\r\n"
                         + bulk("avg-dense-size") + dbl(b"0") + bulk("avg-dense-fill")
                         + dbl(b"0") + bulk("avg-sparse-size") + dbl(b"4"))
    assert xs.call("ARINFO", "nokey") == err("no such key")
    assert xs.call("ARINFO", "a", "FULL", "x") == SYNTAX
    assert xs.call("ARINFO", "a", "x") == SYNTAX
    xs.call("ARSEEK", "a", str(U64))  # the exhausted cursor reports 0
    assert as_map(xs.v("ARINFO", "a"))["next-insert-index"] == 0
    xs.call("ARSEEK", "a", str(2**63 + 5))
    assert xs.call("ARINFO", "a").count(big(xs, 2**63 + 5)) == 1


def _full(xs: Conn, key: str) -> dict[str, Any]:
    return as_map(xs.v("ARINFO", key, "FULL"))


@newer
def test_arinfo_layout(xs: Conn) -> None:
    """The slice layout Redis reports, through its transitions (array.tcl's cases)."""
    for i in range(100):
        xs.call("ARSET", "a", str(i), f"val{i}")
    info = _full(xs, "a")
    assert (info["dense-slices"], info["sparse-slices"]) == (1, 0)
    assert float(info["avg-dense-size"]) == 128.0
    assert float(info["avg-dense-fill"]) == 100 / 128
    for i in range(15):  # scattered in one slice: past 10 elements it turns dense
        xs.call("ARSET", "b", str(i * 100), "v")
        if i == 4:
            assert (_full(xs, "b")["dense-slices"], _full(xs, "b")["sparse-slices"]) == (0, 1)
    assert (_full(xs, "b")["dense-slices"], _full(xs, "b")["sparse-slices"]) == (1, 0)
    for i in range(50):
        xs.call("ARSET", "c", str(i), "v")
    assert xs.call("ARDELRANGE", "c", "3", "49") == b":47\r\n"  # 3 left: sparse again
    info = _full(xs, "c")
    assert (info["dense-slices"], info["sparse-slices"]) == (0, 1)
    assert float(info["avg-sparse-size"]) == 5.0
    # Many slices: the flat directory grows to fit; a slice id of 2048 or more switches to
    # the super-directory (blocks of 2048 slices).
    for i in range(20):
        xs.call("ARSET", "d", str(i * 4096), f"slice{i}")
    info = _full(xs, "d")
    assert (info["slices"], info["directory-size"], info["super-dir-entries"]) == (20, 32, 0)
    for index in ("8388608", "50000000", "100000000"):
        xs.call("ARSET", "d", index, "high")
    info = _full(xs, "d")
    assert (info["slices"], info["directory-size"], info["super-dir-entries"]) == (23, 4, 4)


@newer
def test_bulk_write_promotes_ahead(xs: Conn) -> None:
    """ARSET of a run makes dense, before writing, a sparse slice the run would fill past
    10 elements (array.tcl's superdir case)."""
    for i in range(9):
        xs.call("ARSET", "a", str(8388608 + 2 * i), f"old{2 * i}")
    assert _full(xs, "a")["sparse-slices"] == 1
    values = [f"n{i}" for i in range(10)]
    assert xs.call("ARSET", "a", "8388608", *values) == b":5\r\n"
    info = _full(xs, "a")
    assert (info["dense-slices"], info["sparse-slices"]) == (1, 0)
    assert xs.v("ARGETRANGE", "a", "8388608", "8388617") == values
    assert xs.v("ARGET", "a", str(8388608 + 16)) == "old16"


# -- the insert cursor -----------------------------------------------------------------------------


@newer
def test_arinsert_arnext_arseek(xs: Conn) -> None:
    assert xs.call("ARNEXT", "a") == b":0\r\n"
    assert xs.call("ARINSERT", "a", "a") == b":0\r\n"
    assert xs.call("ARINSERT", "a", "b", "c") == b":2\r\n"
    assert xs.call("ARNEXT", "a") == b":3\r\n"
    assert xs.call("ARSEEK", "a", "10") == b":1\r\n"
    assert xs.call("ARINSERT", "a", "d") == b":10\r\n"
    assert xs.call("ARNEXT", "a") == b":11\r\n"
    xs.call("ARSET", "a", "50", "x")  # ARSET leaves the cursor alone
    assert xs.call("ARNEXT", "a") == b":11\r\n"
    assert xs.call("ARSEEK", "nokey", "100") == b":0\r\n"
    assert xs.call("EXISTS", "nokey") == b":0\r\n"
    assert xs.call("ARSEEK", "a", "bad") == INVALID_INDEX
    assert xs.call("ARSEEK", "a", str(U64 + 1)) == INVALID_INDEX
    # 2**64 - 1 is the exhausted cursor: ARNEXT null, ARINSERT refused.
    assert xs.call("ARSEEK", "a", str(U64)) == b":1\r\n"
    assert xs.call("ARNEXT", "a") == null(xs)
    assert xs.call("ARINSERT", "a", "x") == err("insert index overflow")
    assert xs.call("ARSEEK", "a", str(MAX)) == b":1\r\n"
    assert xs.call("ARINSERT", "a", "x", "y") == err("insert index overflow")
    assert xs.call("ARINSERT", "a", "x") == big(xs, MAX)
    assert xs.call("ARSEEK", "a", str(2**63)) == b":1\r\n"
    assert xs.call("ARNEXT", "a") == big(xs, 2**63)
    assert xs.call("ARSEEK", "a", "0") == b":1\r\n"
    assert xs.call("ARNEXT", "a") == b":0\r\n"


@newer
def test_arring(xs: Conn) -> None:
    for i in range(20):
        assert xs.call("ARRING", "a", "10", f"val{i}") == b":%d\r\n" % (i % 10)
    assert xs.call("ARCOUNT", "a") == b":10\r\n"
    assert xs.v("ARGETRANGE", "a", "0", "9") == [f"val{i}" for i in range(10, 20)]
    for i in range(100):
        xs.call("ARRING", "one", "1", f"v{i}")
    assert xs.v("ARGETRANGE", "one", "0", "1") == ["v99", None]
    assert xs.call("ARRING", "a", "0", "x") == err("size must be positive")
    assert xs.call("ARRING", "a", "-3", "x") == err("size must be positive")
    assert xs.call("ARRING", "a", "x", "x") == err("invalid size")


@newer
def test_arring_resizes(xs: Conn) -> None:
    for i in range(15):
        xs.call("ARRING", "a", "10", f"v{i}")
    # Shrinking keeps the newest values, oldest first from 0, then writes.
    assert xs.call("ARRING", "a", "5", "truncated") == b":0\r\n"
    assert xs.v("ARGETRANGE", "a", "0", "5") == ["truncated", "v11", "v12", "v13", "v14", None]
    for i in range(8):
        xs.call("ARRING", "b", "5", f"v{i}")
    # Growing after a wrap repacks first, so the new capacity is used.
    assert xs.call("ARRING", "b", "8", "grown") == b":5\r\n"
    assert xs.v("ARGETRANGE", "b", "0", "5") == ["v3", "v4", "v5", "v6", "v7", "grown"]
    assert xs.call("ARNEXT", "b") == b":6\r\n"
    # ARSEEK 0 is honoured on grow: no repack, the next write goes to 0.
    for i in range(5):
        xs.call("ARRING", "c", "3", f"ring{i}")
    assert xs.call("ARSEEK", "c", "0") == b":1\r\n"
    xs.call("ARRING", "c", "8", "grown")
    assert xs.v("ARGETRANGE", "c", "0", "2") == ["grown", "ring4", "ring2"]
    # A value outside the ring goes at the next ARRING.
    xs.call("ARSET", "c", "100", "outside")
    xs.call("ARRING", "c", "3", "ring5")
    assert xs.call("ARCOUNT", "c") == b":3\r\n"
    assert xs.call("ARGET", "c", "100") == null(xs)
    # The rebuild stops at the first hole.
    for i in range(5):
        xs.call("ARRING", "d", "5", f"v{i}")
    xs.call("ARDEL", "d", "3")
    xs.call("ARRING", "d", "3", "new")
    assert xs.v("ARGETRANGE", "d", "0", "2") == ["v4", "new", None]
    # After ARSEEK past the ring: ARSEEK 16 then a ring of 10 keeps indexes 6..15 as 0..9.
    for i in range(20):
        xs.call("ARSET", "e", str(i), f"val{i}")
    xs.call("ARSEEK", "e", "16")
    assert xs.call("ARRING", "e", "10", "wrap") == b":0\r\n"
    assert xs.v("ARGETRANGE", "e", "0", "10") == ["wrap"] + [f"val{i}" for i in range(7, 16)] \
        + [None]


@newer
def test_arlastitems(xs: Conn) -> None:
    for i in range(5):
        xs.call("ARINSERT", "a", str(i * 10))
    assert xs.v("ARLASTITEMS", "a", "3") == ["20", "30", "40"]
    assert xs.v("ARLASTITEMS", "a", "3", "REV") == ["40", "30", "20"]
    xs.call("ARSEEK", "a", "0")  # no cursor: from the tail
    assert xs.v("ARLASTITEMS", "a", "3") == ["20", "30", "40"]
    xs.call("ARINSERT", "b", "a", "b", "c", "d", "e")
    xs.call("ARDEL", "b", "1")
    assert xs.v("ARLASTITEMS", "b", "10") == ["a", None, "c", "d", "e"]
    assert xs.v("ARLASTITEMS", "b", "10", "rev") == ["e", "d", "c", None, "a"]
    xs.call("ARDEL", "b", "4")  # the cursor is now past the end: from the tail
    assert xs.v("ARLASTITEMS", "b", "10") == ["a", None, "c", "d"]
    for i in range(12):
        xs.call("ARRING", "c", "8", f"v{i}")
    assert xs.v("ARLASTITEMS", "c", "4") == ["v8", "v9", "v10", "v11"]
    assert len(xs.v("ARLASTITEMS", "c", "100")) == 8
    assert xs.call("ARLASTITEMS", "nokey", "5") == b"*0\r\n"
    assert xs.call("ARLASTITEMS", "a", "-1", "junk", "more") == b"*0\r\n"  # count first
    assert xs.call("ARLASTITEMS", "a", "x") == err("invalid COUNT")
    assert xs.call("ARLASTITEMS", "a", "1", "FOO") == SYNTAX
    assert xs.call("ARLASTITEMS", "a", "1", "REV", "x") == arity("arlastitems")
    xs.call("ARSET", "d", "0", "a")
    xs.call("ARSET", "d", "2000000", "b")
    assert xs.call("ARLASTITEMS", "d", "1000001") == err("count exceeds maximum of 1000000 items")
    assert xs.v("ARLASTITEMS", "d", "2") == [None, "b"]


# -- arrays among the other commands -------------------------------------------------------------


@newer
def test_type_encoding_and_keyspace_commands(dbg: Conn) -> None:
    dbg.call("ARMSET", "a", "0", "x", "9", "y")
    dbg.call("ARSEEK", "a", "5")
    assert dbg.call("TYPE", "a") == b"+array\r\n"
    assert dbg.call("OBJECT", "ENCODING", "a") == bulk("sliced-array")
    assert dbg.v("MEMORY", "USAGE", "a") > 0
    dbg.call("SET", "s", "v")
    assert dbg.v("SCAN", "0", "TYPE", "array") == ["0", ["a"]]
    assert dbg.call("COPY", "a", "b") == b":1\r\n"
    dbg.call("ARSET", "b", "0", "changed")
    assert dbg.v("ARGET", "a", "0") == "x"  # an independent copy...
    assert dbg.call("ARNEXT", "b") == b":5\r\n"  # ...with the cursor
    assert dbg.call("RENAME", "b", "c") == b"+OK\r\n"
    assert dbg.v("ARGET", "c", "0") == "changed"
    assert dbg.call("UNLINK", "c") == b":1\r\n"
    payload = dbg.call("DUMP", "a")
    data = payload[payload.index(b"\r\n") + 2:-2]
    assert data[0] == 28 and data[-10:-8] == b"\x0e\x00"  # type 28, RDB 14
    assert dbg.call("RESTORE", "r", "0", data) == b"+OK\r\n"
    assert dbg.v("ARSCAN", "r", "0", "100") == [[0, "x"], [9, "y"]]
    assert dbg.call("ARNEXT", "r") == b":5\r\n"
    first = dbg.call("DEBUG", "DIGEST-VALUE", "a")
    assert first == dbg.call("DEBUG", "DIGEST-VALUE", "r")
    dbg.call("ARSET", "r", "0", "other")
    assert dbg.call("DEBUG", "DIGEST-VALUE", "r") != first


@newer
def test_survives_reload_and_aof_rewrite(dbg: Conn) -> None:
    dbg.call("ARMSET", "a", "0", "hello", "1", "world", "100", "test", "8388608", "high")
    dbg.call("ARSEEK", "a", "101")
    dbg.call("ARINSERT", "a", "value")
    for i in range(15):
        dbg.call("ARRING", "ring", "5", f"v{i}")
    scan = dbg.v("ARSCAN", "a", "0", str(MAX))
    ring = dbg.v("ARGETRANGE", "ring", "0", "4")
    assert dbg.call("DEBUG", "RELOAD") == b"+OK\r\n"
    assert dbg.v("ARSCAN", "a", "0", str(MAX)) == scan
    assert dbg.call("ARNEXT", "a") == b":102\r\n"
    assert dbg.v("ARGETRANGE", "ring", "0", "4") == ring
    assert dbg.call("ARNEXT", "ring") == b":5\r\n"
    assert dbg.call("CONFIG", "SET", "appendonly", "yes") == b"+OK\r\n"
    try:
        deadline = time.monotonic() + 60
        while dbg.info("persistence")["aof_rewrite_in_progress"] != "0" \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert dbg.call("DEBUG", "LOADAOF") == b"+OK\r\n"
        assert dbg.v("ARSCAN", "a", "0", str(MAX)) == scan
        assert dbg.call("ARNEXT", "a") == b":102\r\n"
    finally:
        dbg.call("CONFIG", "SET", "appendonly", "no")


@newer
def test_keyspace_events(xs: Conn, server: ServerHandle) -> None:
    xs.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    watcher = Conn(server.host, server.port)
    try:
        watcher.call("PSUBSCRIBE", "__key*__:*")
        xs.call("ARSET", "a", "0", "a", "b")
        xs.call("ARMSET", "a", "5", "c")
        xs.call("ARINSERT", "a", "d")
        xs.call("ARRING", "a", "10", "e")
        xs.call("ARSEEK", "a", "3")
        xs.call("ARSEEK", "nokey", "3")  # nothing
        xs.call("ARDEL", "a", "9")  # nothing removed: no event
        xs.call("ARDEL", "a", "1")
        xs.call("ARDELRANGE", "a", "0", str(MAX))
        expected = ["arset", "armset", "arinsert", "arring", "arseek", "ardel",
                    "ardelrange", "del"]
        seen = []
        for _ in expected:
            message = value(watcher.read_reply())
            if message[2].startswith("__keyspace@"):
                seen.append(message[3])
                value(watcher.read_reply())  # its keyevent twin
        assert seen == expected
    finally:
        watcher.close()
        xs.call("CONFIG", "SET", "notify-keyspace-events", "")


@newer
def test_notify_flags_class_a(xs: Conn) -> None:
    """``a`` prints after the other classes when ``A`` does not cover them all, and ``A``
    (which includes it) prints as before."""
    try:
        for given, shown in (("Ea", "aE"), ("Kga", "gaK"), ("KEA", "AKE"), ("A$E", "AE")):
            xs.call("CONFIG", "SET", "notify-keyspace-events", given)
            assert as_map(xs.v("CONFIG", "GET", "notify-keyspace-events")) == \
                {"notify-keyspace-events": shown}, given
    finally:
        xs.call("CONFIG", "SET", "notify-keyspace-events", "")


@newer
def test_dirty_counts_and_logging(xs: Conn) -> None:
    before = xs.dirty()
    xs.call("ARSET", "a", "0", "x", "y", "z")
    assert xs.dirty() == before + 3
    xs.call("ARDEL", "a", "7")  # nothing removed: no change counted
    assert xs.dirty() == before + 3
    xs.call("ARDELRANGE", "a", "0", "1")
    assert xs.dirty() == before + 5
    xs.call("ARSEEK", "a", "9")
    assert xs.dirty() == before + 6
    xs.call("ARGET", "a", "0")
    assert xs.dirty() == before + 6


@newer
def test_command_info_and_acl(xs: Conn) -> None:
    info = xs.v("COMMAND", "INFO", "ARSET")[0]
    assert info[:3] == ["arset", -4, ["write", "denyoom", "fast"]]
    assert info[6] == ["@write", "@fast", "@array"]
    docs = xs.v("COMMAND", "DOCS", "ARGREP")
    doc = docs["argrep"] if isinstance(docs, dict) else as_map(docs[1])
    doc = as_map(doc)
    assert (doc["group"], doc["since"]) == ("array", "8.8.0")
    assert sorted(xs.v("ACL", "CAT", "array")) == sorted(
        ["arset", "arget", "armset", "armget", "argetrange", "ardel", "ardelrange", "arlen",
         "arcount", "arinfo", "arnext", "arseek", "arinsert", "arring", "arlastitems",
         "arop", "argrep", "arscan"])
    assert "array" in xs.v("ACL", "CAT")
    assert xs.v("COMMAND", "GETKEYS", "ARSET", "k", "0", "v") == ["k"]


def test_absent_before_8_8(pair: Pair) -> None:
    """An 8.6 server has no array commands and no @array category: byte for byte as the
    8.6.3 reference."""
    pair.check("ARSET", "a", "0", "v")
    pair.check("ARGET", "a", "0")
    pair.check("COMMAND", "INFO", "ARSCAN")
    pair.check("ACL", "CAT", "array")
    pair.check("ACL", "CAT")
    assert pair.check("ACL", "SETUSER", "arrays-user", "+@array").startswith(b"-ERR")
    pair.check("COMMAND", "LIST", "FILTERBY", "ACLCAT", "array")
