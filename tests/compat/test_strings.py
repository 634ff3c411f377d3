"""String commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Each scenario is a short command sequence sent to both servers on freshly flushed databases;
every reply must be identical, errors included. Values that depend on the passage of time
(PTTL right after an expiry was set) are compared with :func:`check_close`; everything else,
expiry included, is made deterministic with times far in the future or in the past.
"""

from __future__ import annotations

import random
import time

import pytest
from compat_helpers import Command, check_close, run
from support.pair import Pair

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"
FAR_FUTURE_S = "4102444800"  # 2100-01-01
FAR_FUTURE_MS = "4102444800123"

Scenario = list[Command]


def stream(key: str = "s") -> Command:
    return ("XADD", key, "1-1", "f", "v")


SCENARIOS: dict[str, Scenario] = {
    # GET / SET
    "GET: missing key is a null": [("GET", "nokey")],
    "SET then GET, overwrite": [("SET", "k", "v1"), ("GET", "k"), ("SET", "k", "v2"), ("GET", "k")],
    "SET: binary-safe keys and values, empty value, empty key": [
        ("SET", b"\x00\r\n\xff", b"a\r\nb\x00"), ("GET", b"\x00\r\n\xff"),
        ("SET", "e", ""), ("GET", "e"), ("SET", "", "empty key"), ("GET", ""),
    ],
    "GET: a stream is WRONGTYPE": [stream(), ("GET", "s")],
    "SET: overwrites a stream": [stream(), ("SET", "s", "v"), ("GET", "s"), ("TYPE", "s")],
    "SET NX / XX": [
        ("SET", "k", "1", "NX"), ("SET", "k", "2", "NX"), ("GET", "k"),
        ("SET", "k", "3", "XX"), ("GET", "k"), ("SET", "other", "x", "XX"), ("EXISTS", "other"),
        ("SET", "k", "4", "nx"), ("SET", "k", "5", "xx"), ("GET", "k"),
    ],
    "SET GET: old value, null when absent, WRONGTYPE on a stream": [
        ("SET", "k", "new", "GET"), ("SET", "k", "newer", "GET"), ("GET", "k"),
        stream(), ("SET", "s", "v", "GET"), ("TYPE", "s"),
    ],
    "SET NX GET / XX GET (allowed since 7.0)": [
        ("SET", "k", "a", "NX", "GET"), ("SET", "k", "b", "NX", "GET"), ("GET", "k"),
        ("SET", "x", "a", "XX", "GET"), ("EXISTS", "x"), ("SET", "k", "c", "XX", "GET"),
        ("GET", "k"),
    ],
    "SET: option conflicts are syntax errors": [
        ("SET", "k", "v", "NX", "XX"), ("SET", "k", "v", "XX", "NX"),
        ("SET", "k", "v", "EX", "10", "PX", "100"), ("SET", "k", "v", "PX", "100", "EX", "10"),
        ("SET", "k", "v", "EX", "10", "EXAT", FAR_FUTURE_S),
        ("SET", "k", "v", "PXAT", FAR_FUTURE_MS, "EXAT", FAR_FUTURE_S),
        ("SET", "k", "v", "KEEPTTL", "EX", "10"), ("SET", "k", "v", "EX", "10", "KEEPTTL"),
        ("SET", "k", "v", "PX", "10", "KEEPTTL"), ("SET", "k", "v", "KEEPTTL", "PXAT", "10"),
        ("SET", "k", "v", "EX"), ("SET", "k", "v", "PXAT"), ("SET", "k", "v", "PERSIST"),
        ("SET", "k", "v", "BOGUS"), ("SET", "k", "v", "NX", "10"), ("EXISTS", "k"),
    ],
    "SET: repeated options are accepted, the last expiry wins": [
        ("SET", "k", "v", "NX", "NX"), ("SET", "k", "v", "EX", "10", "EX", FAR_FUTURE_S),
        ("SET", "k", "v", "GET", "GET"),
        ("SET", "k", "v", "PXAT", "1", "PXAT", FAR_FUTURE_MS), ("PEXPIRETIME", "k"),
    ],
    "SET: invalid expire times": [
        ("SET", "k", "v", "EX", "0"), ("SET", "k", "v", "EX", "-1"), ("SET", "k", "v", "PX", "0"),
        ("SET", "k", "v", "EXAT", "0"), ("SET", "k", "v", "PXAT", "-5"),
        ("SET", "k", "v", "EX", "abc"), ("SET", "k", "v", "EX", "1.5"), ("SET", "k", "v", "EX", ""),
        ("SET", "k", "v", "EX", I64_MAX), ("SET", "k", "v", "EX", "9223372036854776"),
        ("SET", "k", "v", "EXAT", "9223372036854776"),
        ("SET", "k", "v", "PX", I64_MAX), ("SET", "k", "v", "PX", "9223372036854775000"),
        ("SET", "k", "v", "EX", "9223372036854775808"), ("EXISTS", "k"),
    ],
    "SET: expiry in the error path comes before GET's WRONGTYPE": [
        stream(), ("SET", "s", "v", "GET", "EX", "0"), ("SET", "s", "v", "GET", "EX", "x"),
    ],
    "SET EXAT / PXAT far future, exact expire times": [
        ("SET", "k", "v", "EXAT", FAR_FUTURE_S), ("EXPIRETIME", "k"), ("PEXPIRETIME", "k"),
        ("SET", "k", "v", "PXAT", FAR_FUTURE_MS), ("PEXPIRETIME", "k"), ("EXPIRETIME", "k"),
        ("SET", "k", "v", "PXAT", "9223372036854775807"), ("PEXPIRETIME", "k"),
        ("SET", "k", "v"), ("PEXPIRETIME", "k"), ("TTL", "k"),
    ],
    "SET PXAT / EXAT in the past: the key is gone": [
        ("SET", "k", "v", "PXAT", "1"), ("GET", "k"), ("EXISTS", "k"),
        ("SET", "k2", "v", "EXAT", "1", "GET"), ("TTL", "k2"),
    ],
    "SET KEEPTTL keeps the expiry, plain SET clears it": [
        ("SET", "k", "v", "PXAT", FAR_FUTURE_MS), ("SET", "k", "w", "KEEPTTL"),
        ("PEXPIRETIME", "k"), ("GET", "k"), ("SET", "k", "x"), ("PEXPIRETIME", "k"),
        ("SET", "new", "v", "KEEPTTL"), ("TTL", "new"),
    ],
    "SET XX KEEPTTL GET together": [
        ("SET", "k", "v", "EXAT", FAR_FUTURE_S), ("SET", "k", "w", "XX", "KEEPTTL", "GET"),
        ("EXPIRETIME", "k"), ("GET", "k"),
    ],
    # SETNX / SETEX / PSETEX / GETSET / GETDEL
    "SETNX": [
        ("SETNX", "k", "a"), ("SETNX", "k", "b"), ("GET", "k"), stream(), ("SETNX", "s", "x"),
    ],
    "SETEX / PSETEX: errors name the command": [
        ("SETEX", "k", "0", "v"), ("SETEX", "k", "-10", "v"), ("SETEX", "k", "abc", "v"),
        ("SETEX", "k", I64_MAX, "v"), ("PSETEX", "k", "0", "v"), ("PSETEX", "k", I64_MAX, "v"),
        ("PSETEX", "k", "x", "v"), ("EXISTS", "k"),
    ],
    "SETEX / PSETEX store with an expiry and overwrite any type": [
        stream(), ("SETEX", "s", "100", "v"), ("GET", "s"), ("TTL", "s"),
        ("PSETEX", "p", "100000", "v"), ("TTL", "p"), ("GET", "p"),
    ],
    "GETSET: old value, clears the expiry, WRONGTYPE": [
        ("GETSET", "k", "a"), ("SET", "k", "b", "EX", "100"), ("GETSET", "k", "c"), ("TTL", "k"),
        ("GET", "k"), stream(), ("GETSET", "s", "x"), ("TYPE", "s"),
    ],
    "GETDEL": [
        ("GETDEL", "k"), ("SET", "k", "v"), ("GETDEL", "k"), ("EXISTS", "k"), stream(),
        ("GETDEL", "s"), ("EXISTS", "s"),
    ],
    # GETEX
    "GETEX: plain, missing, WRONGTYPE": [
        ("GETEX", "k"), ("SET", "k", "v"), ("GETEX", "k"), stream(), ("GETEX", "s"),
        ("GETEX", "s", "PERSIST"),
    ],
    "GETEX: options set, change and remove the expiry": [
        ("SET", "k", "v"), ("GETEX", "k", "EX", "100"), ("TTL", "k"),
        ("GETEX", "k", "EXAT", FAR_FUTURE_S), ("EXPIRETIME", "k"),
        ("GETEX", "k", "PXAT", FAR_FUTURE_MS), ("PEXPIRETIME", "k"),
        ("GETEX", "k", "PERSIST"), ("TTL", "k"), ("GETEX", "k", "persist"), ("TTL", "k"),
        ("GETEX", "k", "px", "100000"), ("TTL", "k"),
    ],
    "GETEX: a time in the past deletes the key after replying": [
        ("SET", "k", "v"), ("GETEX", "k", "EXAT", "1"), ("EXISTS", "k"),
        ("SET", "k", "v"), ("GETEX", "k", "PXAT", "1000"), ("GET", "k"),
    ],
    "GETEX: syntax is checked before the key, values after": [
        ("GETEX", "missing", "EX"), ("GETEX", "missing", "NX"), ("GETEX", "missing", "KEEPTTL"),
        ("GETEX", "missing", "EX", "0"), ("GETEX", "missing", "EX", "abc"),
        ("GETEX", "missing", "PERSIST", "EX", "10"), ("GETEX", "missing", "EX", "10", "PERSIST"),
        ("GETEX", "missing", "EX", "10", "PX", "10"), ("GETEX", "missing", "GET"),
        ("SET", "k", "v"), ("GETEX", "k", "EX", "0"), ("GETEX", "k", "EX", "abc"),
        ("GETEX", "k", "PX", I64_MAX), ("GETEX", "k", "EX", I64_MAX),
        ("GETEX", "k", "EXAT", "-1"), ("GETEX", "k", "EX", "10", "EX", "20"), ("TTL", "k"),
        stream(), ("GETEX", "s", "EX", "0"),
    ],
    # MGET / MSET / MSETNX
    "MGET: missing and non-string keys are nulls": [
        ("SET", "a", "1"), ("SET", "b", "2"), stream(), ("MGET", "a", "nokey", "s", "b", "a"),
    ],
    "MSET: pairs, overwrite, clears expiries, odd arguments": [
        ("MSET", "a", "1", "b", "2"), ("MGET", "a", "b"), ("SET", "c", "x", "EX", "100"),
        ("MSET", "c", "3", "a", "4", "a", "5"), ("MGET", "a", "c"), ("TTL", "c"),
        ("MSET", "a", "1", "b"), ("MSET", "a"), stream(), ("MSET", "s", "v"), ("GET", "s"),
    ],
    "MSETNX: all or nothing": [
        ("MSETNX", "a", "1", "b", "2"), ("MSETNX", "b", "3", "c", "4"), ("MGET", "a", "b", "c"),
        ("MSETNX", "a", "1", "b"), ("MSETNX", "x", "1", "x", "2"), ("GET", "x"),
    ],
    # INCR family
    "INCR / DECR / INCRBY / DECRBY": [
        ("INCR", "n"), ("INCR", "n"), ("DECR", "n"), ("DECR", "m"), ("INCRBY", "n", "100"),
        ("DECRBY", "n", "50"), ("INCRBY", "n", "-1000"), ("DECRBY", "n", "-7"), ("GET", "n"),
        ("SET", "z", "-5"), ("INCRBY", "z", "5"), ("GET", "z"),
    ],
    "INCR: values that are not canonical integers": [
        ("SET", "a", "abc"), ("INCR", "a"), ("SET", "a", " 1"), ("INCR", "a"),
        ("SET", "a", "1 "), ("INCR", "a"), ("SET", "a", "01"), ("INCR", "a"),
        ("SET", "a", "+1"), ("INCR", "a"), ("SET", "a", "-0"), ("INCR", "a"),
        ("SET", "a", "1.0"), ("DECR", "a"), ("SET", "a", ""), ("INCR", "a"),
        ("SET", "a", "9223372036854775808"), ("INCR", "a"),
        ("SET", "a", "00000000000000000000001"), ("INCR", "a"), ("SET", "a", "0"), ("INCR", "a"),
    ],
    "INCRBY: the increment is parsed before the key is looked up": [
        stream(), ("INCRBY", "s", "abc"), ("INCRBY", "s", "1"), ("DECRBY", "s", "x"),
        ("DECRBY", "s", "1"), ("INCR", "s"), ("DECR", "s"), ("INCRBY", "k", "1.5"),
        ("INCRBY", "k", ""), ("INCRBY", "k", "9223372036854775808"), ("DECRBY", "k", "+1"),
    ],
    "INCR family: overflow in both directions": [
        ("SET", "n", I64_MAX), ("INCR", "n"), ("INCRBY", "n", "1"), ("DECRBY", "n", "-1"),
        ("INCRBY", "n", "0"), ("DECR", "n"), ("SET", "m", I64_MIN), ("DECR", "m"),
        ("INCRBY", "m", "-1"), ("INCR", "m"), ("GET", "m"), ("DECRBY", "x", I64_MIN),
        ("INCRBY", "x", I64_MIN), ("DECR", "x"), ("SET", "y", "-1"),
        ("INCRBY", "y", I64_MIN), ("SET", "w", "1"), ("DECRBY", "w", I64_MAX),
        ("DECRBY", "w", I64_MAX),
    ],
    "INCR keeps the expiry": [
        ("SET", "n", "1", "EXAT", FAR_FUTURE_S), ("INCR", "n"), ("EXPIRETIME", "n"),
        ("INCRBYFLOAT", "n", "0.5"), ("EXPIRETIME", "n"), ("APPEND", "n", "0"),
        ("EXPIRETIME", "n"), ("SETRANGE", "n", "0", "9"), ("EXPIRETIME", "n"), ("GET", "n"),
    ],
    "INCRBYFLOAT: results formatted as Redis's long double": [
        ("INCRBYFLOAT", "f", "10.5"), ("INCRBYFLOAT", "f", "0.1"), ("INCRBYFLOAT", "f", "-5"),
        ("INCRBYFLOAT", "f", "5.0e3"), ("INCRBYFLOAT", "f", "-5000.6"), ("GET", "f"),
        ("SET", "g", "3.0"), ("INCRBYFLOAT", "g", "0"), ("INCRBYFLOAT", "g", "1.1"),
        ("INCRBYFLOAT", "g", "0x1p-3"), ("INCRBYFLOAT", "h", "1e400"), ("INCRBYFLOAT", "h", "1"),
        ("INCRBYFLOAT", "i", "-0.0"), ("INCRBYFLOAT", "i", "-1e-20"),
        ("INCRBYFLOAT", "j", "0.000003814697265625"),
        ("INCRBYFLOAT", "k", "1.7976931348623157e308"),
        ("INCRBYFLOAT", "k", "1.7976931348623157e308"), ("INCRBYFLOAT", "l", "3"),
        ("INCRBYFLOAT", "l", ".5"), ("INCRBYFLOAT", "l", "5."), ("INCRBYFLOAT", "l", "+2E+2"),
    ],
    "INCRBYFLOAT: invalid floats, NaN and infinity": [
        ("INCRBYFLOAT", "f", "abc"), ("INCRBYFLOAT", "f", "nan"), ("INCRBYFLOAT", "f", "inf"),
        ("INCRBYFLOAT", "f", "-infinity"), ("INCRBYFLOAT", "f", " 1"), ("INCRBYFLOAT", "f", "1 "),
        ("INCRBYFLOAT", "f", ""), ("INCRBYFLOAT", "f", "1e"), ("INCRBYFLOAT", "f", "1_0"),
        ("INCRBYFLOAT", "f", "1e5000"), ("INCRBYFLOAT", "f", "1e-5000"), ("INCRBYFLOAT", "f", "0x"),
        ("EXISTS", "f"), ("SET", "f", "1e4932"), ("INCRBYFLOAT", "f", "1e4932"),
        ("SET", "f", "inf"), ("INCRBYFLOAT", "f", "1"), ("SET", "f", "x"),
        ("INCRBYFLOAT", "f", "1"), ("SET", "f", "1"), ("INCRBYFLOAT", "f", "nan(1)"),
        stream(), ("INCRBYFLOAT", "s", "abc"), ("INCRBYFLOAT", "s", "1"),
    ],
    # APPEND / STRLEN
    "APPEND and STRLEN": [
        ("APPEND", "k", "hello"), ("APPEND", "k", " world"), ("GET", "k"), ("STRLEN", "k"),
        ("STRLEN", "nokey"), ("APPEND", "k", ""), ("STRLEN", "k"), ("SET", "n", "12"),
        ("APPEND", "n", "34"), ("INCR", "n"), stream(), ("APPEND", "s", "x"), ("STRLEN", "s"),
        ("APPEND", "e", ""), ("EXISTS", "e"),
    ],
    # GETRANGE / SUBSTR
    "GETRANGE / SUBSTR: index arithmetic": [
        ("SET", "k", "Hello World"), ("GETRANGE", "k", "0", "4"), ("GETRANGE", "k", "-5", "-1"),
        ("GETRANGE", "k", "0", "-1"), ("GETRANGE", "k", "5", "3"), ("GETRANGE", "k", "-1", "-5"),
        ("GETRANGE", "k", "-100", "100"), ("GETRANGE", "k", "100", "200"),
        ("GETRANGE", "k", "0", "0"), ("GETRANGE", "k", "-1", "-1"), ("GETRANGE", "k", "3", "-100"),
        ("GETRANGE", "k", "-100", "-50"), ("SUBSTR", "k", "1", "3"),
        ("GETRANGE", "k", I64_MIN, I64_MAX), ("GETRANGE", "nokey", "0", "-1"),
        ("SET", "n", "12345"), ("GETRANGE", "n", "1", "2"), ("SET", "e", ""),
        ("GETRANGE", "e", "0", "-1"), ("GETRANGE", "e", "0", "0"),
    ],
    "GETRANGE: integers first, then the key": [
        ("GETRANGE", "k", "a", "1"), ("GETRANGE", "k", "1", "1.5"), stream(),
        ("GETRANGE", "s", "0", "1"), ("GETRANGE", "s", "x", "1"), ("SUBSTR", "s", "0", "1"),
    ],
    # SETRANGE
    "SETRANGE: grows with zero bytes, overwrites in place": [
        ("SETRANGE", "k", "5", "abc"), ("GET", "k"), ("STRLEN", "k"), ("SET", "h", "Hello World"),
        ("SETRANGE", "h", "6", "Redis"), ("GET", "h"), ("SETRANGE", "h", "0", "J"), ("GET", "h"),
        ("SETRANGE", "h", "20", "!"), ("GET", "h"), ("SETRANGE", "h", "3", ""),
        ("SETRANGE", "missing", "10", ""), ("EXISTS", "missing"), ("SET", "n", "1234"),
        ("SETRANGE", "n", "1", "x"), ("GET", "n"),
    ],
    "SETRANGE: errors": [
        ("SETRANGE", "k", "-1", "x"), ("SETRANGE", "k", "abc", "x"), ("SETRANGE", "k", "1.5", "x"),
        ("SETRANGE", "k", "536870911", "xx"), ("SETRANGE", "k", "536870912", "x"),
        ("SETRANGE", "k", I64_MAX, "x"), ("SETRANGE", "k", "536870912", ""), ("EXISTS", "k"),
        ("SET", "k", "v"), ("SETRANGE", "k", "536870911", "xx"), ("SETRANGE", "k", "-1", ""),
        stream(), ("SETRANGE", "s", "0", "x"), ("SETRANGE", "s", "0", ""),
        ("SETRANGE", "s", "-1", "x"),
    ],
    # LCS
    "LCS: text, LEN, IDX, MINMATCHLEN, WITHMATCHLEN": [
        ("MSET", "key1", "ohmytext", "key2", "mynewtext"), ("LCS", "key1", "key2"),
        ("LCS", "key1", "key2", "LEN"), ("LCS", "key1", "key2", "IDX"),
        ("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4"),
        ("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"),
        ("LCS", "key1", "key2", "WITHMATCHLEN", "IDX"),
        ("LCS", "key1", "key2", "minmatchlen", "-3"),
        ("LCS", "key1", "key2", "IDX", "MINMATCHLEN", "0", "IDX"), ("LCS", "key2", "key1", "IDX"),
    ],
    "LCS: missing keys, empty strings, identical strings": [
        ("LCS", "a", "b"), ("LCS", "a", "b", "LEN"), ("LCS", "a", "b", "IDX"),
        ("SET", "a", "abc"), ("LCS", "a", "b", "IDX"), ("LCS", "a", "a"),
        ("LCS", "a", "a", "IDX", "WITHMATCHLEN"), ("SET", "b", "xyz"), ("LCS", "a", "b", "IDX"),
    ],
    "LCS: errors": [
        ("SET", "a", "abc"), stream(), ("LCS", "a", "s"), ("LCS", "s", "a", "BOGUS"),
        ("LCS", "a", "b", "LEN", "IDX"), ("LCS", "a", "b", "BOGUS"),
        ("LCS", "a", "b", "MINMATCHLEN"),
        ("LCS", "a", "b", "MINMATCHLEN", "x"), ("LCS", "a", "b", "IDX", "LEN", "BOGUS"),
    ],
    # OBJECT ENCODING / REFCOUNT of strings
    "OBJECT ENCODING follows how the value was written": [
        ("SET", "i", "12345"), ("OBJECT", "ENCODING", "i"), ("SET", "neg", "-42"),
        ("OBJECT", "ENCODING", "neg"), ("SET", "lead", "0123"), ("OBJECT", "ENCODING", "lead"),
        ("SET", "big", I64_MAX), ("OBJECT", "ENCODING", "big"),
        ("SET", "over", "9223372036854775808"),
        ("OBJECT", "ENCODING", "over"), ("SET", "e44", "x" * 44), ("OBJECT", "ENCODING", "e44"),
        ("SET", "e45", "x" * 45), ("OBJECT", "ENCODING", "e45"), ("SET", "empty", ""),
        ("OBJECT", "ENCODING", "empty"), ("APPEND", "i", "6"), ("OBJECT", "ENCODING", "i"),
        ("APPEND", "fresh", "99"), ("OBJECT", "ENCODING", "fresh"), ("SETRANGE", "sr", "0", "1"),
        ("OBJECT", "ENCODING", "sr"), ("SET", "sr2", "abc"), ("SETRANGE", "sr2", "0", "x"),
        ("OBJECT", "ENCODING", "sr2"), ("INCRBYFLOAT", "f", "3"), ("OBJECT", "ENCODING", "f"),
        ("INCRBYFLOAT", "g", "1e30"), ("OBJECT", "ENCODING", "g"), ("INCR", "c"),
        ("OBJECT", "ENCODING", "c"), ("INCRBY", "f", "1"), ("OBJECT", "ENCODING", "f"),
        ("GETSET", "gs", "7"), ("OBJECT", "ENCODING", "gs"), ("MSET", "m1", "8", "m2", "abc"),
        ("OBJECT", "ENCODING", "m1"), ("OBJECT", "ENCODING", "m2"), ("SETEX", "se", "100", "9"),
        ("OBJECT", "ENCODING", "se"), ("SET", "ws", " 1"), ("OBJECT", "ENCODING", "ws"),
    ],
    "OBJECT REFCOUNT: shared small integers": [
        ("SET", "a", "0"), ("OBJECT", "REFCOUNT", "a"), ("SET", "b", "9999"),
        ("OBJECT", "REFCOUNT", "b"), ("SET", "c", "10000"), ("OBJECT", "REFCOUNT", "c"),
        ("SET", "d", "-1"), ("OBJECT", "REFCOUNT", "d"), ("SET", "e", "text"),
        ("OBJECT", "REFCOUNT", "e"), ("INCR", "f"), ("OBJECT", "REFCOUNT", "f"),
        ("COPY", "a", "a2"), ("OBJECT", "REFCOUNT", "a2"), ("OBJECT", "ENCODING", "a2"),
        ("COPY", "a2", "a3"), ("OBJECT", "REFCOUNT", "a3"), ("INCRBYFLOAT", "g", "5"),
        ("OBJECT", "REFCOUNT", "g"), ("APPEND", "h", "5"), ("OBJECT", "REFCOUNT", "h"),
    ],
    # arity (the dispatcher's, checked for a few)
    "wrong arity": [
        ("GET",), ("GET", "a", "b"), ("SET", "k"), ("GETEX",), ("MGET",), ("MSET", "k"),
        ("INCRBYFLOAT", "k"), ("SETRANGE", "k", "0"), ("LCS", "a"), ("GETDEL", "a", "b"),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_string_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *SCENARIOS[scenario])


def test_expiring_values_report_close_ttls(pair: Pair) -> None:
    run(pair, ("SET", "k", "v", "PX", "100000"), ("SET", "e", "v", "EX", "100"))
    check_close(pair, "PTTL", "k")
    check_close(pair, "PTTL", "e")
    run(pair, ("TTL", "e"), ("PSETEX", "p", "5000", "v"), ("TTL", "p"))
    check_close(pair, "PTTL", "p")
    run(pair, ("GETEX", "k", "PX", "7000"), ("TTL", "k"))


def test_lazy_expiry_of_a_short_ttl(pair: Pair) -> None:
    run(pair, ("SET", "k", "v", "PX", "1"), ("SET", "n", "5", "PX", "1"),
        ("SET", "g", "v", "PX", "1"))
    time.sleep(0.01)  # both servers see the 1 ms expiry pass
    run(pair, ("GET", "k"), ("INCR", "n"), ("TTL", "n"), ("SET", "g", "w", "KEEPTTL"),
        ("TTL", "g"), ("GET", "g"))


def test_setrange_and_append_respect_proto_max_bulk_len(pair: Pair) -> None:
    run(pair, ("CONFIG", "SET", "proto-max-bulk-len", "1mb"))
    try:
        run(
            pair,
            ("SETRANGE", "k", "1048575", "x"), ("STRLEN", "k"), ("SETRANGE", "k", "1048575", "xy"),
            ("SETRANGE", "k", "1048576", "x"), ("APPEND", "k", "y"), ("APPEND", "k", ""),
            ("STRLEN", "k"), ("SET", "a", "x" * 600), ("SET", "b", "y" * 600),
            ("LCS", "a", "b", "LEN"), ("SET", "a", "x" * 400), ("LCS", "a", "b", "LEN"),
        )
    finally:
        run(pair, ("CONFIG", "SET", "proto-max-bulk-len", "512mb"))


def test_lcs_table_limit_at_the_default_size(pair: Pair) -> None:
    run(pair, ("SET", "a", "a" * 12000), ("SET", "b", "b" * 12000), ("LCS", "a", "b"),
        ("LCS", "a", "b", "LEN"))


def test_lcs_random_strings(pair: Pair) -> None:
    rng = random.Random(7)
    for _ in range(60):
        alphabet = "ab" if rng.random() < 0.5 else "abcdefgh"
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        run(
            pair, ("MSET", "a", a, "b", b), ("LCS", "a", "b"), ("LCS", "a", "b", "LEN"),
            ("LCS", "a", "b", "IDX", "WITHMATCHLEN"), ("LCS", "a", "b", "IDX", "MINMATCHLEN", "2"),
        )


def test_lcs_longer_strings(pair: Pair) -> None:
    rng = random.Random(11)
    a = "".join(rng.choice("ACGT") for _ in range(700))
    b = "".join(rng.choice("ACGT") for _ in range(900))
    run(pair, ("MSET", "a", a, "b", b), ("LCS", "a", "b"),
        ("LCS", "a", "b", "IDX", "MINMATCHLEN", "5"))


def test_incrbyfloat_random_operands(pair: Pair) -> None:
    rng = random.Random(3)
    for _ in range(100):
        start = rng.choice(
            [f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 17)}f}", str(rng.randint(-10**12, 10**12)),
             f"{rng.uniform(-1, 1):.20e}"]
        )
        step = rng.choice([f"{rng.uniform(-1e3, 1e3):.{rng.randint(0, 20)}f}", f"{rng.random():e}"])
        run(pair, ("SET", "f", start), ("INCRBYFLOAT", "f", step), ("GET", "f"))


def test_set_options_under_multi(pair: Pair) -> None:
    run(pair, ("MULTI",), ("SET", "k", "1", "NX", "GET"), ("INCR", "k"), ("GETDEL", "k"),
        ("SET", "k", "v", "EX", "0"), ("EXEC",))
