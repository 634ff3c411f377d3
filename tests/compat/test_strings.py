"""String commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Each scenario is a short command sequence sent to both servers on freshly flushed databases;
every reply must be identical, errors included. Values that depend on the passage of time
(PTTL right after an expiry was set) are compared with :func:`check_close`; everything else,
expiry included, is made deterministic with times far in the future or in the past.
"""

from __future__ import annotations

import random
import time
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import redis
from compat_helpers import Command, check_close, decode, run
from redis.commands.core import DataPersistOptions
from support.newer import T0, Conn, as_map
from support.pair import Pair
from support.servers import ServerProcess

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, ServerHandle

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


# -- Redis 8.4: compare-and-set, compare-and-delete, DIGEST, MSETEX -----------------------------
#
# Newer than the 7.0 reference: asserted on resplite alone (``xs``: flushed, RESP2 then RESP3,
# clock frozen at support.newer.T0) from Redis 8.4's documentation and source.

HELLO_DIGEST = "b6acb9d84a38ff74"  # DIGEST of "Hello world", from the DIGEST page
# A value whose digest has leading zeros (redis/redis#14496): DIGEST pads to 16 digits.
PADDED_VALUE = (
    "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd"
)
PADDED_DIGEST = "00006c38adf31777"
EMPTY_DIGEST = "2d06800538d394c2"  # XXH3-64 of the empty string
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
SYNTAX = b"-ERR syntax error\r\n"
BAD_DIGEST = b"-ERR must be exactly 16 hexadecimal characters\r\n"
OK_REPLY = b"+OK\r\n"


def null(c: Conn) -> bytes:
    return b"_\r\n" if c.resp == 3 else b"$-1\r\n"


def bulk(text: str) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(text), text.encode())


def integer(n: int) -> bytes:
    return b":%d\r\n" % n


@pytest.mark.redis_version("8.4")
def test_digest_is_xxh3_in_16_lower_case_hex_digits(xs: Conn) -> None:
    c = xs
    c.call("SET", "k", "Hello world")
    assert c.call("DIGEST", "k") == bulk(HELLO_DIGEST)
    c.call("SET", "p", PADDED_VALUE)
    assert c.call("DIGEST", "p") == bulk(PADDED_DIGEST)
    c.call("SET", "e", "")
    assert c.call("DIGEST", "e") == bulk(EMPTY_DIGEST)
    # An integer-encoded value is digested as its text; so is a value APPEND or SETBIT built.
    c.call("SET", "n", "12345")
    c.call("APPEND", "a", "1234")
    c.call("APPEND", "a", "5")
    assert c.call("OBJECT", "ENCODING", "n") == bulk("int")
    assert c.call("DIGEST", "n") == c.call("DIGEST", "a")
    c.call("SETBIT", "b", "1", "1")  # "@"
    c.call("SET", "at", "@")
    assert c.call("DIGEST", "b") == c.call("DIGEST", "at")
    assert c.call("DIGEST", "nokey") == null(c)
    c.call("LPUSH", "l", "x")
    assert c.call("DIGEST", "l") == WRONGTYPE
    assert c.call("DIGEST") == b"-ERR wrong number of arguments for 'digest' command\r\n"
    assert c.call("DIGEST", "k", "k") == b"-ERR wrong number of arguments for 'digest' command\r\n"


@pytest.mark.redis_version("8.4")
def test_set_ifeq_and_ifne_compare_the_value(xs: Conn) -> None:
    c = xs
    c.call("SET", "k", "v1")
    assert c.call("SET", "k", "v2", "IFEQ", "other") == null(c)
    assert c.call("GET", "k") == bulk("v1")
    assert c.call("SET", "k", "v2", "IFEQ", "v1") == OK_REPLY
    assert c.call("GET", "k") == bulk("v2")
    assert c.call("SET", "k", "v3", "IFNE", "v2") == null(c)
    assert c.call("SET", "k", "v3", "ifne", "zz") == OK_REPLY
    assert c.call("GET", "k") == bulk("v3")
    # Comparison is byte for byte: case and binary content count.
    assert c.call("SET", "k", "v4", "IFEQ", "V3") == null(c)
    c.call("SET", "bin", b"a\x00b")
    assert c.call("SET", "bin", "c", "IFEQ", b"a\x00b") == OK_REPLY
    # An integer-encoded value compares as its text.
    c.call("SET", "n", "100")
    assert c.call("SET", "n", "101", "IFEQ", "100") == OK_REPLY
    # A missing key: IFEQ does not create it, IFNE does.
    assert c.call("SET", "new", "x", "IFEQ", "x") == null(c)
    assert c.call("EXISTS", "new") == integer(0)
    assert c.call("SET", "new", "x", "IFNE", "x") == OK_REPLY
    assert c.call("GET", "new") == bulk("x")


@pytest.mark.redis_version("8.4")
def test_set_ifdeq_and_ifdne_compare_the_digest(xs: Conn) -> None:
    c = xs
    c.call("SET", "k", "Hello world")
    assert c.call("SET", "k", "v", "IFDEQ", PADDED_DIGEST) == null(c)
    assert c.call("SET", "k", "v", "IFDNE", HELLO_DIGEST) == null(c)
    # Upper-case hex names the same digest.
    assert c.call("SET", "k", "v", "IFDEQ", HELLO_DIGEST.upper()) == OK_REPLY
    assert c.call("GET", "k") == bulk("v")
    assert c.call("SET", "k", "w", "IFDNE", HELLO_DIGEST) == OK_REPLY
    c.call("SET", "p", PADDED_VALUE)
    assert c.call("SET", "p", "q", "IFDEQ", PADDED_DIGEST) == OK_REPLY
    assert c.call("SET", "gone", "x", "IFDEQ", HELLO_DIGEST) == null(c)
    assert c.call("EXISTS", "gone") == integer(0)
    assert c.call("SET", "gone", "x", "IFDNE", HELLO_DIGEST) == OK_REPLY
    # The digest must be 16 characters: no short form without leading zeros. Redis 8.6.3
    # checks the length alone: 16 other characters are a digest no value has.
    for bad in (PADDED_DIGEST.lstrip("0"), HELLO_DIGEST + "0", ""):
        assert c.call("SET", "p", "r", "IFDEQ", bad) == BAD_DIGEST
        assert c.call("SET", "p", "r", "IFDNE", bad) == BAD_DIGEST
    for other in ("g" * 16, "0x" + "0" * 14):
        assert c.call("SET", "p", "r", "IFDEQ", other) == null(c)
    assert c.call("GET", "p") == bulk("q")
    # ... but it is checked only against a value: a missing key or another type answer as
    # they would for any digest (Redis's own tests use "1234567890" there).
    assert c.call("SET", "none", "x", "IFDEQ", "1234567890") == null(c)
    assert c.call("SET", "none", "x", "IFDNE", "1234567890") == OK_REPLY
    c.call("SADD", "set", "m")
    assert c.call("SET", "set", "x", "IFDEQ", "1234567890") == WRONGTYPE


@pytest.mark.redis_version("8.4")
def test_set_conditions_with_get_expiry_and_other_types(xs: Conn) -> None:
    c = xs
    c.call("SET", "k", "v1")
    # GET answers the old value whether the condition held or not.
    assert c.call("SET", "k", "v2", "IFEQ", "nope", "GET") == bulk("v1")
    assert c.call("SET", "k", "v2", "GET", "IFEQ", "v1") == bulk("v1")
    assert c.call("GET", "k") == bulk("v2")
    assert c.call("SET", "missing", "x", "IFNE", "a", "GET") == null(c)
    assert c.call("GET", "missing") == bulk("x")
    assert c.call("SET", "missing2", "x", "IFEQ", "a", "GET") == null(c)
    assert c.call("EXISTS", "missing2") == integer(0)
    # The expiry is set with the value, only when the condition held.
    assert c.call("SET", "k", "v3", "IFEQ", "nope", "EX", "100") == null(c)
    assert c.call("TTL", "k") == integer(-1)
    assert c.call("SET", "k", "v3", "IFEQ", "v2", "PX", "5000") == OK_REPLY
    assert c.call("PTTL", "k") == integer(5000)
    assert c.call("SET", "k", "v4", "IFNE", "x", "KEEPTTL") == OK_REPLY
    assert c.call("PTTL", "k") == integer(5000)
    assert c.call("SET", "k", "v5", "IFDNE", EMPTY_DIGEST) == OK_REPLY
    assert c.call("TTL", "k") == integer(-1)
    # Another type: every condition is WRONGTYPE, nothing changes.
    c.call("LPUSH", "l", "a")
    for cond, arg in (("IFEQ", "a"), ("IFNE", "a"), ("IFDEQ", HELLO_DIGEST),
                      ("IFDNE", HELLO_DIGEST)):
        assert c.call("SET", "l", "x", cond, arg) == WRONGTYPE
    assert c.call("SET", "l", "x", "IFNE", "a", "GET") == WRONGTYPE
    assert c.call("TYPE", "l") == b"+list\r\n"


@pytest.mark.redis_version("8.4")
def test_set_condition_syntax(xs: Conn) -> None:
    c = xs
    c.call("SET", "k", "v")
    for args in (
        ("NX", "IFEQ", "v"), ("IFEQ", "v", "NX"), ("XX", "IFNE", "v"),
        ("IFDEQ", HELLO_DIGEST, "XX"),
        ("IFEQ", "v", "IFNE", "w"), ("IFDEQ", HELLO_DIGEST, "IFDNE", HELLO_DIGEST),
        ("IFEQ", "v", "IFDEQ", HELLO_DIGEST), ("IFEQ",), ("IFNE",), ("IFDEQ",), ("IFDNE",),
        ("IFEQ", "v", "EX"), ("IFEQ", "v", "BOGUS"),
    ):
        assert c.call("SET", "k", "x", *args) == SYNTAX, args
    # Syntax comes first, then the expiry, then (on a string value) the digest.
    assert c.call("SET", "k", "x", "IFDEQ", "short", "NX") == SYNTAX
    assert c.call("SET", "k", "x", "IFDEQ", "short", "EX", "0") == (
        b"-ERR invalid expire time in 'set' command\r\n"
    )
    assert c.call("SET", "k", "x", "IFDEQ", "short", "EX", "10") == BAD_DIGEST
    assert c.call("SET", "k", "x", "IFEQ", "v", "EX", "0") == (
        b"-ERR invalid expire time in 'set' command\r\n"
    )
    # A condition repeated is accepted, the last argument counting (as NX NX is).
    assert c.call("SET", "k", "x", "IFEQ", "nope", "IFEQ", "v") == OK_REPLY
    assert c.call("GET", "k") == bulk("x")


@pytest.mark.redis_version("8.4")
def test_delex(xs: Conn) -> None:
    c = xs
    # Without a condition: any type, as DEL of one key.
    c.call("LPUSH", "l", "a")
    assert c.call("DELEX", "l") == integer(1)
    assert c.call("DELEX", "l") == integer(0)
    c.call("SET", "k", "Hello world")
    assert c.call("DELEX", "k", "IFEQ", "hello world") == integer(0)
    assert c.call("DELEX", "k", "IFNE", "Hello world") == integer(0)
    assert c.call("DELEX", "k", "IFDEQ", PADDED_DIGEST) == integer(0)
    assert c.call("DELEX", "k", "IFDNE", HELLO_DIGEST) == integer(0)
    assert c.call("GET", "k") == bulk("Hello world")
    assert c.call("DELEX", "k", "ifdeq", HELLO_DIGEST.upper()) == integer(1)
    for cond, arg in (("IFEQ", "x"), ("IFNE", "x"), ("IFDEQ", EMPTY_DIGEST),
                      ("IFDNE", EMPTY_DIGEST)):
        c.call("SET", "k", "x")
        expected = 1 if cond in ("IFEQ", "IFDNE") else 0
        assert c.call("DELEX", "k", cond, arg) == integer(expected), cond
        assert c.call("EXISTS", "k") == integer(1 - expected)
    # A missing key is 0 whatever the condition, its name or the digest's form.
    assert c.call("DELEX", "nokey", "IFNE", "x") == integer(0)
    assert c.call("DELEX", "nokey", "IFDEQ", "1234567890") == integer(0)
    assert c.call("DELEX", "nokey", "BOGUS", "x") == integer(0)
    c.call("SET", "k", "x")
    # Two or four arguments, else the arity error, before the key is looked up.
    arity = b"-ERR wrong number of arguments for 'delex' command\r\n"
    for key in ("k", "nokey"):
        assert c.call("DELEX", key, "IFEQ") == arity
        assert c.call("DELEX", key, "IFEQ", "x", "extra") == arity
    assert c.call("DELEX") == arity
    assert c.call("DELEX", "k", "IFDEQ", "abc") == BAD_DIGEST
    assert c.call("EXISTS", "k") == integer(1)


@pytest.mark.parametrize("args", [
    ("h", "IFEQ", "v"), ("h", "IFDNE", "0123456789abcdef"), ("h", "BOGUS", "v"),
    ("h", "IFDEQ", "abc"), ("l", "IFNE", "x"), ("k", "BOGUS", "x"), ("k", "IF", "x"),
    ("k", "IFDEQ", "abc"), ("k", "IFDNE", "z" * 16), ("k", "IFDEQ", "Z" * 16),
    ("k", "IFDEQ", "0123456789abcdef0"), ("nokey", "BOGUS", "x"), ("h",), ("k",),
], ids=lambda c: " ".join(c))
def test_delex_conditions_need_a_string_and_a_known_condition(pair: Pair,
                                                              args: tuple[str, ...]) -> None:
    """Redis 8.6.3's order and texts: the key (missing: 0), its type (its own error, not
    WRONGTYPE), the condition's name, the digest's length (only its length)."""
    pair.check("SET", "k", "x")
    pair.check("HSET", "h", "f", "v")
    pair.check("LPUSH", "l", "x")
    pair.check("DELEX", *args)
    pair.check("EXISTS", "k", "h", "l")


@pytest.mark.redis_version("8.4")
def test_msetex(xs: Conn) -> None:
    c = xs
    assert c.call("MSETEX", "2", "a", "1", "b", "2") == integer(1)
    assert c.call("MGET", "a", "b") == b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    assert c.call("TTL", "a") == integer(-1)
    # One expiry for every key; options in any order, any case.
    assert c.call("MSETEX", "2", "a", "3", "b", "4", "px", "1500", "XX") == integer(1)
    assert c.call("PTTL", "a") == integer(1500)
    assert c.call("PTTL", "b") == integer(1500)
    assert c.call("MSETEX", "1", "a", "5", "KEEPTTL") == integer(1)
    assert c.call("PTTL", "a") == integer(1500)
    assert c.call("MSETEX", "1", "a", "6") == integer(1)
    assert c.call("TTL", "a") == integer(-1)  # without an option the TTL goes, as with MSET
    assert c.call("MSETEX", "1", "e", "x", "EXAT", str(T0 // 1000 + 20)) == integer(1)
    assert c.call("PEXPIRETIME", "e") == integer(T0 + 20_000)
    assert c.call("MSETEX", "1", "e", "x", "PXAT", str(T0 + 300)) == integer(1)
    assert c.call("PTTL", "e") == integer(300)
    assert c.call("MSETEX", "1", "e", "x", "EX", "7") == integer(1)
    assert c.call("TTL", "e") == integer(7)
    # NX: none may exist; XX: all must. Otherwise nothing is set.
    assert c.call("MSETEX", "2", "a", "x", "new", "y", "NX") == integer(0)
    assert c.call("MSETEX", "2", "a", "x", "new", "y", "XX") == integer(0)
    assert c.call("MGET", "a", "new") == b"*2\r\n$1\r\n6\r\n" + null(c)
    assert c.call("MSETEX", "2", "n1", "x", "n2", "y", "NX", "EX", "10") == integer(1)
    assert c.call("TTL", "n2") == integer(10)
    # Another type counts as existing and is overwritten.
    c.call("LPUSH", "l", "a")
    assert c.call("MSETEX", "1", "l", "s", "NX") == integer(0)
    assert c.call("MSETEX", "1", "l", "s", "XX") == integer(1)
    assert c.call("GET", "l") == bulk("s")
    # The same key twice: the last value stays.
    assert c.call("MSETEX", "2", "d", "1", "d", "2") == integer(1)
    assert c.call("GET", "d") == bulk("2")


@pytest.mark.redis_version("8.4")
def test_msetex_errors(xs: Conn) -> None:
    c = xs
    numkeys = b"-ERR invalid numkeys value\r\n"
    pairs = b"-ERR wrong number of key-value pairs\r\n"
    for n in ("0", "-1", "x", "1.5", "2147483648", ""):
        assert c.call("MSETEX", n, "a", "1") == numkeys, n
    assert c.call("MSETEX", "2", "a", "1") == pairs
    assert c.call("MSETEX", "2", "a", "1", "b") == pairs
    assert c.call("MSETEX", "1", "a") == b"-ERR wrong number of arguments for 'msetex' command\r\n"
    for args in (
        ("NX", "XX"), ("XX", "NX"), ("EX", "1", "PX", "1"), ("KEEPTTL", "EX", "1"),
        ("PX", "1", "KEEPTTL"), ("GET",), ("IFEQ", "x"), ("PERSIST",), ("EX",), ("b",),
    ):
        assert c.call("MSETEX", "1", "a", "1", *args) == SYNTAX, args
    # A key-value pair counted as options is a syntax error too.
    assert c.call("MSETEX", "1", "a", "1", "b", "2") == SYNTAX
    for args in (("EX", "0"), ("PX", "-5"), ("EXAT", "0"), ("EX", "9223372036854776")):
        assert c.call("MSETEX", "1", "a", "1", *args) == (
            b"-ERR invalid expire time in 'msetex' command\r\n"
        ), args
    assert c.call("MSETEX", "1", "a", "1", "EX", "x") == (
        b"-ERR value is not an integer or out of range\r\n"
    )
    assert c.call("EXISTS", "a") == integer(0)


@pytest.mark.redis_version("8.4")
def test_new_string_commands_in_command_info_getkeys_and_acl(xs: Conn) -> None:
    c = xs
    info = decode(c.call("COMMAND", "INFO", "delex", "digest", "msetex"))
    assert [entry[:6] for entry in info] == [
        [b"delex", -2, [b"write", b"fast"], 1, 1, 1],
        [b"digest", 2, [b"readonly", b"fast"], 1, 1, 1],
        [b"msetex", -4, [b"write", b"denyoom", b"movablekeys"], 0, 0, 0],
    ]
    assert [entry[6] for entry in info] == [
        [b"@write", b"@string", b"@fast"], [b"@read", b"@string", b"@fast"],
        [b"@write", b"@string", b"@slow"],
    ]
    # MSETEX's keys are every other argument after numkeys, however many options follow.
    assert decode(c.call("COMMAND", "GETKEYS", "MSETEX", "2", "k1", "v1", "k2", "v2",
                         "KEEPTTL")) == [b"k1", b"k2"]
    assert decode(c.call("COMMAND", "GETKEYS", "MSETEX", "3", "a", "1", "b", "2", "c", "3",
                         "NX", "EX", "5")) == [b"a", b"b", b"c"]
    assert decode(c.call("COMMAND", "GETKEYS", "DELEX", "k", "IFEQ", "v")) == [b"k"]
    assert decode(c.call("COMMAND", "GETKEYS", "SET", "k", "v", "IFDEQ", HELLO_DIGEST)) == [b"k"]
    # The key's flags follow the arguments: a comparison reads the value (Redis 8.4's
    # VARIABLE_FLAGS for SET IF* and DELEX).
    flags = {
        args: decode(c.call("COMMAND", "GETKEYSANDFLAGS", *args))[0][1]
        for args in (("SET", "k", "v"), ("SET", "k", "v", "IFEQ", "x"),
                     ("SET", "k", "v", "IFNE", "x", "GET"), ("DELEX", "k"),
                     ("DELEX", "k", "IFEQ", "v"))
    }
    assert list(flags.values()) == [
        [b"OW", b"update"], [b"RW", b"update"], [b"RW", b"access", b"update"],
        [b"RM", b"delete"], [b"RW", b"delete"],
    ]
    cat = decode(c.call("ACL", "CAT", "string"))
    assert {b"delex", b"digest", b"msetex"} <= set(cat)
    set_doc = as_map(as_map(c.v("COMMAND", "DOCS", "set"))["set"])
    assert ["8.4.0", "`IFEQ`, `IFNE`, `IFDEQ` and `IFDNE` conditions introduced."] in (
        set_doc["history"]
    )
    # A user without @string cannot run them.
    c.call("ACL", "SETUSER", "nostr", "on", "nopass", "~*", "+@all", "-@string")
    try:
        user = Conn(*_address(c))
        user.call("AUTH", "nostr", "x")
        for cmd in (("DELEX", "k"), ("DIGEST", "k"), ("MSETEX", "1", "k", "v")):
            assert user.call(*cmd).startswith(b"-NOPERM"), cmd
        user.close()
        # Every key of MSETEX is checked against the user's key patterns, not only the
        # first one (Redis 8.6 fixed its key-pattern bypass, redis/redis#14659).
        c.call("ACL", "SETUSER", "akeys", "on", "nopass", "~a*", "+@all")
        user = Conn(*_address(c))
        user.call("AUTH", "akeys", "x")
        assert user.call("MSETEX", "2", "a1", "v", "a2", "v", "KEEPTTL") == integer(1)
        assert user.call("MSETEX", "2", "a1", "v", "b1", "v", "KEEPTTL").startswith(b"-NOPERM")
        assert user.call("MSETEX", "2", "a1", "v", "a2", "b1", "NX") == integer(0)
        assert c.call("EXISTS", "b1") == integer(0)
        user.close()
    finally:
        c.call("ACL", "DELUSER", "nostr", "akeys")


def _address(c: Conn) -> tuple[str, int]:
    host, port = c.sock.getpeername()[:2]
    return host, port


def _events(watcher: Conn, n: int) -> list[tuple[bytes, bytes]]:
    """The next ``n`` keyevent messages as (event, key)."""
    out = []
    for _ in range(n):
        message = decode(watcher.read_reply())
        out.append((message[2].split(b":", 1)[1], message[3]))
    return out


@pytest.mark.redis_version("8.4")
def test_keyspace_events_of_the_new_string_commands(xs: Conn) -> None:
    c = xs
    watcher = Conn(*_address(c))
    c.call("CONFIG", "SET", "notify-keyspace-events", "E$g")
    try:
        watcher.call("PSUBSCRIBE", "__keyevent@0__:*")
        c.call("SET", "k", "v")
        c.call("SET", "k", "w", "IFEQ", "nope")  # refused: no event
        c.call("SET", "k", "w", "IFEQ", "v", "EX", "10")
        c.call("DELEX", "k", "IFNE", "w")  # refused
        c.call("DELEX", "k", "IFDNE", EMPTY_DIGEST)
        c.call("MSETEX", "2", "a", "1", "b", "2", "NX", "PX", "100")
        c.call("MSETEX", "1", "a", "1", "NX")  # refused
        c.call("DIGEST", "a")  # a read
        c.call("MSETEX", "1", "a", "2")
        c.call("DELEX", "b")
        assert _events(watcher, 10) == [
            (b"set", b"k"), (b"set", b"k"), (b"expire", b"k"), (b"del", b"k"),
            (b"set", b"a"), (b"expire", b"a"), (b"set", b"b"), (b"expire", b"b"),
            (b"set", b"a"), (b"del", b"b"),
        ]
    finally:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
        watcher.close()


@pytest.mark.redis_version("8.4")
def test_changes_counted_watch_and_tracking(xs: Conn) -> None:
    c = xs
    other = Conn(*_address(c))
    try:
        c.call("SET", "k", "v")
        before = c.dirty()
        c.call("SET", "k", "x", "IFEQ", "nope")
        c.call("SET", "k", "x", "NX")
        c.call("DELEX", "k", "IFEQ", "nope")
        c.call("MSETEX", "2", "k", "1", "z", "2", "XX")
        assert c.dirty() == before  # refused writes change nothing
        c.call("SET", "k", "x", "IFEQ", "v")
        c.call("MSETEX", "2", "k", "1", "z", "2")
        c.call("DELEX", "z")
        assert c.dirty() == before + 4  # MSETEX counts each key, as MSET does
        # WATCH sees a compare-and-set, a compare-and-delete and MSETEX.
        for write in (("SET", "k", "y", "IFNE", "q"), ("DELEX", "k", "IFEQ", "y"),
                      ("MSETEX", "1", "k", "m")):
            c.call("WATCH", "k")
            other.call(*write)
            c.call("MULTI")
            c.call("GET", "k")
            assert c.call("EXEC") == (b"_\r\n" if c.resp == 3 else b"*-1\r\n"), write
        # A refused one leaves the transaction alone.
        c.call("WATCH", "k")
        other.call("SET", "k", "y", "IFEQ", "nope")
        other.call("DELEX", "k", "IFNE", "m")
        c.call("MULTI")
        c.call("GET", "k")
        assert c.call("EXEC") == b"*1\r\n$1\r\nm\r\n"
        if c.resp == 3:
            # Client-side caching: DELEX invalidates a key this client read.
            c.call("CLIENT", "TRACKING", "on")
            c.call("GET", "k")
            other.call("DELEX", "k", "IFEQ", "m")
            assert c.call("PING") == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
            assert c.read_reply() == b"+PONG\r\n"
            c.call("CLIENT", "TRACKING", "off")
    finally:
        other.close()


@pytest.mark.redis_version("8.4")
def test_new_string_commands_in_multi_and_scripts(xs: Conn) -> None:
    c = xs
    c.call("MULTI")
    c.call("MSETEX", "2", "a", "1", "b", "2", "EX", "100")
    c.call("SET", "a", "Hello world", "IFEQ", "1")
    c.call("DIGEST", "a")
    c.call("DELEX", "b", "IFDEQ", "0" * 16)
    c.call("DELEX", "b", "IFEQ", "2")
    c.call("SET", "a", "4", "IFDEQ", "short")
    assert c.call("EXEC") == (
        b"*6\r\n:1\r\n+OK\r\n" + bulk(HELLO_DIGEST) + b":0\r\n:1\r\n" + BAD_DIGEST
    )
    # A syntax error found when queueing is only the arity check's: the rest runs in EXEC.
    c.call("MULTI")
    assert c.call("MSETEX", "1", "a") == (
        b"-ERR wrong number of arguments for 'msetex' command\r\n"
    )
    assert c.call("EXEC").startswith(b"-EXECABORT")
    # redis.call goes through the same dispatcher.
    script = (
        "local ok = redis.call('SET', KEYS[1], ARGV[2], 'IFDEQ', redis.call('DIGEST', KEYS[1]))\n"
        "return {ok, redis.call('GET', KEYS[1]), redis.call('DELEX', KEYS[1], 'IFNE', ARGV[2]),"
        " redis.call('DELEX', KEYS[1], 'IFEQ', ARGV[2]),"
        " redis.call('MSETEX', 1, KEYS[1], ARGV[1], 'XX')}"
    )
    assert decode(c.call("EVAL", script, "1", "a", "v1", "v2")) == [
        b"OK", b"v2", 0, 1, 0,
    ]
    c.call("SET", "a", "v")
    assert c.call("EVAL", "return redis.pcall('SET', KEYS[1], 'x', 'IFDNE', 'zz')", "1", "a") == (
        BAD_DIGEST
    )
    c.call("DEL", "a")
    assert c.call("EVAL", "return redis.call('DIGEST', KEYS[1])", "1", "a") == (
        b"_\r\n" if c.resp == 3 else b"$-1\r\n"
    )


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def rpy(
    resplite_instance: ServerHandle, resplite_clock: ClockControl, request: pytest.FixtureRequest
) -> Iterator[redis.Redis]:
    """redis-py on a flushed resplite alone with its clock frozen at T0, in RESP2 then RESP3;
    its experimental-command warnings (redis-py 8 marks DELEX, DIGEST and SET's comparisons
    so) silenced."""
    resplite_clock.freeze()
    resplite_clock.set(T0)
    client = redis.Redis(host=resplite_instance.host, port=resplite_instance.port,
                         protocol=request.param)
    client.flushall()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield client
    client.close()
    resplite_clock.reset()


@pytest.mark.redis_version("8.4")
def test_redis_py_compare_and_set(rpy: redis.Redis) -> None:
    r = rpy
    assert r.set("k", "Hello world") is True
    assert r.digest("k") == HELLO_DIGEST.encode()
    assert r.digest("nokey") is None
    assert r.set("k", "v2", ifeq="nope") is None
    assert r.set("k", "v2", ifdeq=HELLO_DIGEST, px=2000) is True
    assert r.pttl("k") == 2000
    assert r.set("k", "v3", ifne="v2") is None
    assert r.set("k", "v3", ifdne=PADDED_DIGEST, get=True) == b"v2"
    assert r.get("k") == b"v3"
    assert r.delex("k", ifne="v3") == 0
    assert r.delex("k", ifeq="v3") == 1
    assert r.delex("k") == 0
    r.set("k", "v")
    with pytest.raises(redis.ResponseError, match="16 hexadecimal"):
        r.set("k", "v", ifdeq="abc")
    r.lpush("l", "a")
    with pytest.raises(redis.ResponseError, match="string type if conditions"):
        r.delex("l", ifeq="a")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.digest("l")


@pytest.mark.redis_version("8.4")
def test_redis_py_msetex(rpy: redis.Redis) -> None:
    r = rpy
    assert r.msetex({"a": "1", "b": "2"}, ex=30) == 1
    assert r.ttl("a") == 30 and r.ttl("b") == 30
    assert r.msetex({"a": "x", "c": "y"}, data_persist_option=DataPersistOptions.NX) == 0
    assert r.msetex({"a": "3", "b": "4"}, data_persist_option=DataPersistOptions.XX,
                    keepttl=True) == 1
    assert r.mget("a", "b", "c") == [b"3", b"4", None]
    assert r.ttl("b") == 30
    assert r.msetex({"c": "5"}, pxat=T0 + 1234) == 1
    assert r.pttl("c") == 1234


def _release(r: redis.Redis, name: str, token: str) -> bool:
    """Release a lock only while it is still ours: one DELEX instead of a Lua script."""
    return r.delex(name, ifeq=token) == 1


def _extend(r: redis.Redis, name: str, token: str, ms: int) -> bool:
    """Push a held lock's expiry out, only while it is still ours."""
    return r.set(name, token, ifeq=token, px=ms) is True


@pytest.mark.redis_version("8.4")
def test_lock_release_by_compare_and_delete(
    rpy: redis.Redis, resplite_clock: ClockControl
) -> None:
    r = rpy
    # Client A takes the lock; B cannot, nor can it release A's.
    assert r.set("lock", "token-a", nx=True, px=1000) is True
    assert r.set("lock", "token-b", nx=True, px=1000) is None
    assert _release(r, "lock", "token-b") is False
    assert _extend(r, "lock", "token-a", 5000) is True
    assert r.pttl("lock") == 5000
    # A's lease runs out while it is paused; B takes the lock; A's late release is refused.
    resplite_clock.advance(5001)
    assert r.set("lock", "token-b", nx=True, px=1000) is True
    assert _extend(r, "lock", "token-a", 5000) is False
    assert _release(r, "lock", "token-a") is False
    assert r.get("lock") == b"token-b"
    assert _release(r, "lock", "token-b") is True
    assert r.exists("lock") == 0
    # redis-py's own Lock still works next to it (its Lua scripts), and DELEX can free it.
    lock = r.lock("lock2", timeout=10)
    assert lock.acquire(blocking=False)
    token = lock.local.token
    assert isinstance(token, bytes)
    assert r.delex("lock2", ifeq=token) == 1
    assert not lock.owned()


@pytest.mark.redis_version("8.4")
def test_msetex_keys_route_in_a_cluster() -> None:
    """Every MSETEX key counts for slot routing: keys of two slots are CROSSSLOT, keys of
    another node's slot are MOVED, keys sharing a hash tag of this node's slots are set."""
    import resplite

    with resplite.serve(port=0, cluster=3) as handle:
        c = Conn(handle.host, handle.port)
        try:
            assert c.call("MSETEX", "2", "{a}1", "x", "{b}1", "y") == (
                b"-CROSSSLOT Keys in request don't hash to the same slot\r\n"
            )
            ranges = decode(c.call("CLUSTER", "SLOTS"))

            def owner(tag: str) -> int:
                slot = decode(c.call("CLUSTER", "KEYSLOT", tag))
                return next(r[2][1] for r in ranges if r[0] <= slot <= r[1])

            tags = [f"{{t{i}}}" for i in range(50)]
            here = next(t for t in tags if owner(t) == handle.port)
            there = next(t for t in tags if owner(t) != handle.port)
            assert c.call("MSETEX", "2", here + "a", "1", here + "b", "2", "EX", "5") == (
                integer(1)
            )
            assert 0 < decode(c.call("PTTL", here + "b")) <= 5000
            assert c.call("MSETEX", "1", there + "a", "1").startswith(b"-MOVED ")
        finally:
            c.close()


# -- Redis 8.8: INCREX -----------------------------------------------------------------------------


def _ints(a: int, b: int) -> bytes:
    return b"*2\r\n:%d\r\n:%d\r\n" % (a, b)


def _floats(p: Pair, a: str, b: str) -> bytes:
    if p.resp == 2:
        return b"*2\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(x), x.encode()) for x in (a, b))
    return b"*2\r\n,%s\r\n,%s\r\n" % (a.encode(), b.encode())


@pytest.mark.redis_version("8.8")
def test_increx_increments_within_bounds(pair: Pair) -> None:
    """The documented examples: [new value, increment applied]; out of bounds changes
    nothing ([current, 0]) unless SATURATE clamps to the bound."""
    ours = pair.ours
    assert ours.call("INCREX", "c") == _ints(1, 1)
    assert ours.call("INCREX", "c") == _ints(2, 1)
    ours.call("SET", "c", "100")
    assert ours.call("INCREX", "c", "BYINT", "5") == _ints(105, 5)
    assert ours.call("INCREX", "c", "byint", "-10") == _ints(95, -10)
    assert ours.call("GET", "c") == b"$2\r\n95\r\n"
    ours.call("SET", "c", "99")
    assert ours.call("INCREX", "c", "BYINT", "5", "UBOUND", "100") == _ints(99, 0)
    assert ours.call("INCREX", "c", "BYINT", "5", "UBOUND", "100", "SATURATE") == _ints(100, 1)
    ours.call("SET", "c", "5")
    assert ours.call("INCREX", "c", "BYINT", "1", "LBOUND", "10") == _ints(5, 0)
    assert ours.call("INCREX", "c", "BYINT", "1", "LBOUND", "10", "SATURATE") == _ints(10, 5)
    ours.call("SET", "c", "50")
    assert ours.call("INCREX", "c", "BYINT", "-1", "LBOUND", "0", "SATURATE") == _ints(49, -1)
    # The type's limits bound it without LBOUND / UBOUND.
    ours.call("SET", "c", "9223372036854775806")
    assert ours.call("INCREX", "c", "BYINT", "2") == _ints(9223372036854775806, 0)
    assert ours.call("INCREX", "c", "BYINT", "2", "SATURATE") == _ints(9223372036854775807, 1)
    # A missing key starts at 0 and is not created by a rejected increment.
    assert ours.call("INCREX", "new", "BYINT", "5", "UBOUND", "3") == _ints(0, 0)
    assert ours.call("EXISTS", "new") == b":0\r\n"
    # BYFLOAT: long doubles, printed as INCRBYFLOAT prints them.
    ours.call("SET", "f", "1.5")
    assert ours.call("INCREX", "f", "BYFLOAT", "0.25") == _floats(pair, "1.75", "0.25")
    assert ours.call("INCREX", "f", "BYFLOAT", "0.25", "LBOUND", "0", "UBOUND", "2") == \
        _floats(pair, "2", "0.25")
    assert ours.call("INCREX", "f", "BYFLOAT", "1", "UBOUND", "2.5") == _floats(pair, "2", "0")
    ours.call("SET", "f", "1.8")
    assert ours.call("INCREX", "f", "BYFLOAT", "0.7", "UBOUND", "2", "SATURATE") == \
        _floats(pair, "2", "0.2")
    assert ours.call("GET", "f") == b"$1\r\n2\r\n"
    # An integer reads as a float; a float does not read as an integer.
    ours.call("SET", "n", "3")
    assert ours.call("INCREX", "n", "BYFLOAT", "0.5") == _floats(pair, "3.5", "0.5")
    assert ours.call("INCREX", "n") == b"-ERR value is not an integer or out of range\r\n"


@pytest.mark.redis_version("8.8")
def test_increx_expiry_options(pair: Pair) -> None:
    ours = pair.ours
    ours.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        assert ours.call("INCREX", "k", "BYINT", "1", "EX", "100") == _ints(1, 1)
        assert ours.call("TTL", "k") == b":100\r\n"
        # No expiry option: the TTL stays.
        assert ours.call("INCREX", "k") == _ints(2, 1)
        assert ours.call("TTL", "k") == b":100\r\n"
        # ENX: only on a key without a TTL; the increment applies either way.
        ours.call("SET", "k", "10", "EX", "500")
        assert ours.call("INCREX", "k", "BYINT", "1", "EX", "10", "ENX") == _ints(11, 1)
        assert ours.call("TTL", "k") == b":500\r\n"
        ours.call("SET", "k", "10")
        assert ours.call("INCREX", "k", "BYINT", "1", "PX", "100000", "ENX") == _ints(11, 1)
        assert ours.call("TTL", "k") == b":100\r\n"
        assert ours.call("INCREX", "k", "PERSIST") == _ints(12, 1)
        assert ours.call("TTL", "k") == b":-1\r\n"
        # A rejected increment leaves the TTL alone, even with an expiry option.
        ours.call("SET", "k", "10", "EX", "60")
        assert ours.call("INCREX", "k", "BYINT", "5", "UBOUND", "12", "EX", "6000") == \
            _ints(10, 0)
        assert ours.call("TTL", "k") == b":60\r\n"
        # An absolute time in the past removes the key (the reply is still the increment).
        assert ours.call("INCREX", "k", "EXAT", "1") == _ints(11, 1)
        assert ours.call("EXISTS", "k") == b":0\r\n"
    finally:
        ours.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


@pytest.mark.redis_version("8.8")
def test_increx_errors(pair: Pair) -> None:
    ours = pair.ours
    ours.call("SET", "k", "1")
    ours.call("SET", "s", "abc")
    ours.call("RPUSH", "l", "x")
    syntax = b"-ERR syntax error\r\n"
    for args in (("BYINT", "1", "BYFLOAT", "1"), ("BYINT",), ("EX", "1", "PX", "1"),
                 ("ENX",), ("PERSIST", "ENX"), ("EX", "1", "PERSIST"), ("FOO",),
                 ("LBOUND", "1", "LBOUND", "2")):
        assert ours.call("INCREX", "k", *args) == syntax, args
    not_int = b"-ERR value is not an integer or out of range\r\n"
    assert ours.call("INCREX", "k", "BYINT", "1.5") == not_int
    assert ours.call("INCREX", "k", "UBOUND", "x") == not_int
    assert ours.call("INCREX", "s") == not_int
    not_float = b"-ERR value is not a valid float\r\n"
    assert ours.call("INCREX", "k", "BYFLOAT", "x") == not_float
    assert ours.call("INCREX", "s", "BYFLOAT", "1") == not_float
    assert ours.call("INCREX", "k", "BYFLOAT", "inf") == \
        b"-ERR increment would produce NaN or Infinity\r\n"
    assert ours.call("INCREX", "k", "LBOUND", "5", "UBOUND", "1") == \
        b"-ERR LBOUND must be less than or equal to UBOUND\r\n"
    for option in ("EX", "PX", "EXAT", "PXAT"):
        assert ours.call("INCREX", "k", option, "0") == \
            b"-ERR invalid expire time in 'increx' command\r\n"
    assert ours.call("INCREX", "k", "EX", "x") == not_int
    assert ours.call("INCREX", "l").startswith(b"-WRONGTYPE")
    assert ours.call("GET", "k") == b"$1\r\n1\r\n"
    assert ours.call("INCREX") == b"-ERR wrong number of arguments for 'increx' command\r\n"


@pytest.mark.redis_version("8.8")
def test_increx_keyspace_events(pair: Pair) -> None:
    ours, watcher = pair.ours, pair.connect_extra().ours
    ours.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        watcher.call("PSUBSCRIBE", "__keyevent@0__:*")
        ours.call("INCREX", "k", "BYINT", "1", "EX", "100")
        ours.call("INCREX", "k", "BYFLOAT", "1", "PERSIST")
        ours.call("INCREX", "k", "BYINT", "1", "UBOUND", "0")  # rejected: no event
        ours.call("SET", "done", "1")
        seen = []
        for _ in range(5):
            message = watcher.read_reply()
            seen.append(message.split(b"__keyevent@0__:")[-1].split(b"\r\n")[0])
        assert seen == [b"incrby", b"expire", b"incrbyfloat", b"persist", b"set"]
    finally:
        ours.call("CONFIG", "SET", "notify-keyspace-events", "")
        watcher.close()


@pytest.mark.redis_version("8.8")
def test_increx_with_redis_py(resplite_srv: ServerProcess) -> None:
    """redis-py's increx, as its own tests against Redis use it."""
    r = redis.Redis(host=resplite_srv.host, port=resplite_srv.port)
    try:
        r.flushall()
        r.set("a", 10)
        assert r.increx("a") == [11, 1]
        assert r.increx("a", byint=4) == [15, 4]
        r.set("f", "1.5")
        assert [float(v) for v in r.increx("f", byfloat=0.25, lbound=0, ubound=2)] == \
            [1.75, 0.25]
        r.set("o", 10)
        r.expire("o", 60)
        assert r.increx("o", byint=5, ubound=12) == [10, 0]
        assert 0 < r.ttl("o") <= 60
        r.set("e", 40)
        assert r.increx("e", byint=2, ex=60, enx=True) == [42, 2]
        assert r.increx("e", byint=3, ex=600, enx=True) == [45, 3]
        assert 0 < r.ttl("e") <= 60
    finally:
        r.close()
