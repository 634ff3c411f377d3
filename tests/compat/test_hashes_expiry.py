"""Hash field expiry (``resplite/commands/hashes_expiry.py``): HEXPIRE, HPEXPIRE, HEXPIREAT,
HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST (Redis 7.4) and HGETDEL, HGETEX,
HSETEX (Redis 8.0).

Most are asserted on resplite alone, on a frozen clock that the test moves, with the replies
Redis 7.4 / 8.0 give (from its documentation and source); Redis 8.6's flexible option order,
its error texts, the change counter and a listpackex's field order are compared with the
8.6.3 reference byte for byte (the ``pair`` tests at the end).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from support.newer import Conn
from support.pair import Pair
from support.raw import RawClient
from support.resptree import parse, to_python

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, ServerHandle

T0 = 1_700_000_000_000  # ms; a whole second
FIELDS_MISSING = b"-ERR Mandatory argument FIELDS is missing or not at the right position\r\n"
NUMFIELDS_MISMATCH = b"-ERR The `numfields` parameter must match the number of arguments\r\n"
NUMFIELDS_POSITIVE = b"-ERR Number of fields must be a positive integer\r\n"


def ints(*values: int) -> bytes:
    return b"*%d\r\n" % len(values) + b"".join(b":%d\r\n" % v for v in values)


def bulks(resp: int, *values: bytes | None) -> bytes:
    null = b"_\r\n" if resp == 3 else b"$-1\r\n"
    return b"*%d\r\n" % len(values) + b"".join(
        null if v is None else b"$%d\r\n%s\r\n" % (len(v), v) for v in values
    )


@pytest.fixture
def hfe(
    resplite_instance: ServerHandle, resplite_clock: ClockControl, request: pytest.FixtureRequest
) -> Iterator[Conn]:
    """A raw connection to an in-process resplite with its clock frozen at T0, in RESP2 or 3."""
    resplite_clock.freeze()  # first: a running clock would move on before the freeze
    resplite_clock.set(T0)
    conn = Conn(resplite_instance.host, resplite_instance.port, resp=request.param)
    conn.call("FLUSHALL")
    yield conn
    conn.close()
    resplite_clock.reset()


both_protocols = pytest.mark.parametrize("hfe", [2, 3], indirect=True, ids=["resp2", "resp3"])


@pytest.mark.redis_version("7.4")
@both_protocols
def test_hexpire_sets_field_ttls_and_reports_each_field(
    hfe: Conn, resplite_clock: ClockControl
) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c.call("OBJECT", "ENCODING", "h") == b"$8\r\nlistpack\r\n"
    assert c.call("HEXPIRE", "h", "10", "FIELDS", "2", "a", "nofield") == ints(1, -2)
    assert c.call("OBJECT", "ENCODING", "h") == b"$10\r\nlistpackex\r\n"
    assert c.call("HTTL", "h", "FIELDS", "3", "a", "b", "nofield") == ints(10, -1, -2)
    assert c.call("HPTTL", "h", "FIELDS", "1", "a") == ints(10_000)
    assert c.call("HEXPIRETIME", "h", "FIELDS", "1", "a") == ints(T0 // 1000 + 10)
    assert c.call("HPEXPIRETIME", "h", "FIELDS", "2", "a", "b") == ints(T0 + 10_000, -1)
    assert c.call("HPEXPIRE", "h", "1500", "FIELDS", "1", "b") == ints(1)
    assert c.call("HPEXPIREAT", "h", str(T0 + 2500), "FIELDS", "1", "c") == ints(1)
    assert c.call("HEXPIREAT", "h", str(T0 // 1000 + 20), "FIELDS", "1", "c") == ints(1)
    # Seconds round up.
    resplite_clock.advance(1)
    assert c.call("HTTL", "h", "FIELDS", "2", "a", "b") == ints(10, 2)
    assert c.call("HPTTL", "h", "FIELDS", "2", "a", "b") == ints(9_999, 1_499)
    assert c.call("HLEN", "h") == b":3\r\n"
    resplite_clock.advance(1_499)
    # b's time has come: like a key, a field lives through its own millisecond. Only HTTL on
    # a listpack counts that millisecond as gone, as Redis's listpack branch does.
    assert c.call("HGET", "h", "b") == b"$1\r\n2\r\n"
    assert c.call("HPTTL", "h", "FIELDS", "1", "b") == ints(-2)
    assert c.call("HLEN", "h") == b":3\r\n"
    resplite_clock.advance(1)
    # b's time has passed: the clock jump's active cycle removed it.
    assert c.call("HGETALL", "h") == (
        b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n3\r\n" if c.resp == 3
        else b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n3\r\n"
    )
    assert c.call("HTTL", "h", "FIELDS", "1", "b") == ints(-2)
    assert c.call("HLEN", "h") == b":2\r\n"
    before = _stats(c)
    resplite_clock.advance(30_000)
    assert c.call("EXISTS", "h") == b":0\r\n"
    after = _stats(c)
    # Fields expire as subkeys; the key that went with its last field did not "expire".
    assert after["expired_subkeys"] - before["expired_subkeys"] == 2
    assert after["expired_keys"] == before["expired_keys"]


def _stats(c: Conn) -> dict[str, int]:
    text = c.call("INFO", "stats").decode()
    return {
        name: int(value)
        for line in text.split("\r\n") if line.count(":") == 1
        for name, value in [line.split(":")]
        if value.isdigit()
    }


@pytest.mark.redis_version("7.4")
@both_protocols
def test_hexpire_conditions(hfe: Conn) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2")
    c.call("HEXPIRE", "h", "100", "FIELDS", "1", "a")
    # a has a TTL of 100 s, b none.
    assert c.call("HEXPIRE", "h", "50", "NX", "FIELDS", "2", "a", "b") == ints(0, 1)
    assert c.call("HPERSIST", "h", "FIELDS", "1", "b") == ints(1)
    assert c.call("HEXPIRE", "h", "50", "XX", "FIELDS", "2", "a", "b") == ints(1, 0)
    assert c.call("HEXPIRE", "h", "40", "gt", "FIELDS", "2", "a", "b") == ints(0, 0)
    assert c.call("HEXPIRE", "h", "60", "GT", "FIELDS", "1", "a") == ints(1)
    assert c.call("HEXPIRE", "h", "70", "LT", "FIELDS", "2", "a", "b") == ints(0, 1)
    assert c.call("HEXPIRE", "h", "30", "lt", "FIELDS", "2", "a", "b") == ints(1, 1)
    assert c.call("HTTL", "h", "FIELDS", "2", "a", "b") == ints(30, 30)
    # The same field twice: each occurrence is judged on its own.
    assert c.call("HEXPIRE", "h", "20", "FIELDS", "2", "a", "a") == ints(1, 1)


@pytest.mark.redis_version("7.4")
@both_protocols
def test_hexpire_in_the_past_deletes_fields_and_then_the_key(hfe: Conn) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2")
    assert c.call("HEXPIRE", "h", "0", "FIELDS", "1", "a") == ints(2)
    assert c.call("HPEXPIREAT", "h", str(T0), "FIELDS", "2", "b", "a") == ints(2, -2)
    assert c.call("EXISTS", "h") == b":0\r\n"
    assert c.call("HEXPIRE", "nokey", "10", "FIELDS", "2", "a", "b") == ints(-2, -2)
    assert c.call("HTTL", "nokey", "FIELDS", "1", "a") == ints(-2)
    assert c.call("HPERSIST", "nokey", "FIELDS", "1", "a") == ints(-2)
    c.call("HSET", "g", "a", "1", "b", "2")
    assert c.call("HEXPIREAT", "g", "1", "NX", "FIELDS", "1", "a") == ints(2)
    assert c.call("HGETALL", "g") == (
        b"%1\r\n$1\r\nb\r\n$1\r\n2\r\n" if c.resp == 3 else b"*2\r\n$1\r\nb\r\n$1\r\n2\r\n"
    )


@pytest.mark.redis_version("7.4")
@both_protocols
def test_writes_clear_or_keep_field_ttls(hfe: Conn) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2", "c", "x", "d", "1.5")
    c.call("HEXPIRE", "h", "100", "FIELDS", "4", "a", "b", "c", "d")
    c.call("HSET", "h", "a", "10")  # HSET overwrites the TTL away
    c.call("HINCRBY", "h", "b", "5")  # increments keep it
    c.call("HINCRBYFLOAT", "h", "d", "1")
    c.call("HSETNX", "h", "c", "y")
    assert c.call("HTTL", "h", "FIELDS", "4", "a", "b", "c", "d") == ints(-1, 100, 100, 100)
    c.call("HDEL", "h", "c")
    c.call("HSET", "h", "c", "z")
    assert c.call("HTTL", "h", "FIELDS", "1", "c") == ints(-1)
    assert c.call("HPERSIST", "h", "FIELDS", "3", "a", "b", "zz") == ints(-1, 1, -2)
    assert c.call("HTTL", "h", "FIELDS", "1", "b") == ints(-1)
    # Once listpackex, always listpackex; too many fields make a hashtable that keeps TTLs.
    assert c.call("OBJECT", "ENCODING", "h") == b"$10\r\nlistpackex\r\n"
    c.call("HEXPIRE", "h", "100", "FIELDS", "1", "d")
    c.call("HSET", "h", *[x for i in range(600) for x in (f"f{i}", "v")])
    assert c.call("OBJECT", "ENCODING", "h") == b"$9\r\nhashtable\r\n"
    assert c.call("HTTL", "h", "FIELDS", "2", "d", "f1") == ints(100, -1)


@pytest.mark.redis_version("7.4")
@both_protocols
def test_field_ttls_survive_copy_rename_and_move(hfe: Conn, resplite_clock: ClockControl) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2")
    c.call("HPEXPIRE", "h", "500", "FIELDS", "1", "a")
    c.call("COPY", "h", "copy")
    c.call("RENAME", "h", "renamed")
    c.call("MOVE", "copy", "1")
    assert c.call("HPTTL", "renamed", "FIELDS", "2", "a", "b") == ints(500, -1)
    resplite_clock.advance(501)
    assert c.call("HGETALL", "renamed") == (
        b"%1\r\n$1\r\nb\r\n$1\r\n2\r\n" if c.resp == 3 else b"*2\r\n$1\r\nb\r\n$1\r\n2\r\n"
    )
    c.call("SELECT", "1")
    assert c.call("HKEYS", "copy") == b"*1\r\n$1\r\nb\r\n"
    c.call("SELECT", "0")


@pytest.mark.redis_version("7.4")
@both_protocols
def test_reads_never_show_an_expired_field_even_without_active_expiry(
    hfe: Conn, resplite_clock: ClockControl
) -> None:
    c = hfe
    c.call("CONFIG", "SET", "active-expire-enabled", "no")
    try:
        c.call("HSET", "h", "a", "1", "b", "2", "c", "3")
        c.call("HPEXPIRE", "h", "100", "FIELDS", "2", "a", "b")
        resplite_clock.advance(101)
        assert c.call("HLEN", "h") == b":1\r\n"
        assert c.call("HSCAN", "h", "0") == b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"
        assert c.call("HGET", "h", "a") == (b"_\r\n" if c.resp == 3 else b"$-1\r\n")
        assert c.call("HEXISTS", "h", "b") == b":0\r\n"
        c.call("HPEXPIRE", "h", "100", "FIELDS", "1", "c")
        resplite_clock.advance(101)
        assert c.call("HRANDFIELD", "h") == (b"_\r\n" if c.resp == 3 else b"$-1\r\n")
        assert c.call("EXISTS", "h") == b":0\r\n"
    finally:
        c.call("CONFIG", "SET", "active-expire-enabled", "yes")


@pytest.mark.redis_version("7.4")
@both_protocols
def test_hash_field_expiry_errors(hfe: Conn) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1")
    c.call("SET", "s", "x")
    wrongtype = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    assert c.call("HEXPIRE", "s", "x", "FIELDS", "1", "a") == wrongtype
    assert c.call("HTTL", "s", "FIELDS", "1", "a") == wrongtype
    assert c.call("HPERSIST", "s", "BOGUS", "1", "a") == wrongtype
    not_int = b"-ERR value is not an integer or out of range\r\n"
    assert c.call("HEXPIRE", "h", "x", "FIELDS", "1", "a") == not_int
    assert c.call("HEXPIRE", "h", "-1", "FIELDS", "1", "a") == (
        b"-ERR invalid expire time, must be >= 0\r\n"
    )
    assert c.call("HEXPIRE", "h", "70368744177664", "FIELDS", "1", "a") == (
        b"-ERR invalid expire time in 'hexpire' command\r\n"
    )
    assert c.call("HPEXPIREAT", "h", "70368744177664", "FIELDS", "1", "a") == (
        b"-ERR invalid expire time in 'hpexpireat' command\r\n"
    )
    assert c.call("HPEXPIRE", "h", "70368744177663", "FIELDS", "1", "a") == (
        b"-ERR invalid expire time in 'hpexpire' command\r\n"
    )
    assert c.call("HTTL", "h", "FIELDS", "0", "a") == NUMFIELDS_POSITIVE
    assert c.call("HTTL", "h", "FIELD", "1", "a") == FIELDS_MISSING
    assert c.call("HPERSIST", "h", "FIELDS", "-1", "a") == NUMFIELDS_POSITIVE
    assert c.call("HPEXPIRETIME", "h", "FIELDS", "3", "a") == NUMFIELDS_MISMATCH
    assert c.call("HTTL", "h", "FIELDS", "1") == (
        b"-ERR wrong number of arguments for 'httl' command\r\n"
    )
    assert c.call("HTTL", "h", "FIELDS", "1", "a") == ints(-1)


@pytest.mark.redis_version("8.0")
@both_protocols
def test_hgetdel(hfe: Conn) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c.call("HGETDEL", "h", "FIELDS", "3", "a", "x", "a") == bulks(c.resp, b"1", None, None)
    assert c.call("HKEYS", "h") == b"*2\r\n$1\r\nb\r\n$1\r\nc\r\n"
    assert c.call("HGETDEL", "h", "FIELDS", "2", "b", "c") == bulks(c.resp, b"2", b"3")
    assert c.call("EXISTS", "h") == b":0\r\n"
    assert c.call("HGETDEL", "nokey", "FIELDS", "1", "a") == bulks(c.resp, None)
    assert c.call("HGETDEL", "nokey", "FIELDS", "0", "a") == NUMFIELDS_POSITIVE
    assert c.call("HGETDEL", "nokey", "FIELDS", "2", "a") == NUMFIELDS_MISMATCH
    assert c.call("HGETDEL", "nokey", "FIELD", "1", "a") == FIELDS_MISSING
    c.call("SET", "s", "x")
    assert c.call("HGETDEL", "s", "FIELDS", "1", "a").startswith(b"-WRONGTYPE")


@pytest.mark.redis_version("8.0")
@both_protocols
def test_hgetex(hfe: Conn, resplite_clock: ClockControl) -> None:
    c = hfe
    c.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c.call("HGETEX", "h", "FIELDS", "2", "a", "x") == bulks(c.resp, b"1", None)
    assert c.call("OBJECT", "ENCODING", "h") == b"$8\r\nlistpack\r\n"
    assert c.call("HGETEX", "h", "EX", "10", "FIELDS", "2", "a", "x") == bulks(c.resp, b"1", None)
    assert c.call("OBJECT", "ENCODING", "h") == b"$10\r\nlistpackex\r\n"
    assert c.call("HGETEX", "h", "px", "2000", "FIELDS", "1", "b") == bulks(c.resp, b"2")
    assert c.call("HGETEX", "h", "EXAT", str(T0 // 1000 + 30), "FIELDS", "1", "c") == (
        bulks(c.resp, b"3")
    )
    assert c.call("HPTTL", "h", "FIELDS", "3", "a", "b", "c") == ints(10_000, 2_000, 30_000)
    assert c.call("HGETEX", "h", "PERSIST", "FIELDS", "1", "a") == bulks(c.resp, b"1")
    assert c.call("HPTTL", "h", "FIELDS", "1", "a") == ints(-1)
    assert c.call("HGETEX", "h", "PXAT", str(T0), "FIELDS", "1", "a") == bulks(c.resp, b"1")
    assert c.call("HEXISTS", "h", "a") == b":0\r\n"
    resplite_clock.advance(2_001)
    assert c.call("HGETEX", "h", "FIELDS", "2", "b", "c") == bulks(c.resp, None, b"3")
    assert c.call("HGETEX", "nokey", "EX", "1", "FIELDS", "1", "a") == bulks(c.resp, None)
    assert c.call("HGETEX", "h", "EX", "-1", "FIELDS", "1", "c") == (
        b"-ERR invalid expire time, must be >= 0\r\n"
    )
    assert c.call("HGETEX", "h", "EX", "x", "FIELDS", "1", "c") == (
        b"-ERR value is not an integer or out of range\r\n"
    )
    assert c.call("HGETEX", "h", "EXAT", "70368744177664", "FIELDS", "1", "c") == (
        b"-ERR invalid expire time in 'hgetex' command\r\n"
    )
    assert c.call("HGETEX", "h", "EX", "0", "FIELDS", "1", "c") == bulks(c.resp, b"3")
    assert c.call("EXISTS", "h") == b":0\r\n"


@pytest.mark.redis_version("8.0")
@both_protocols
def test_hsetex(hfe: Conn) -> None:
    c = hfe
    assert c.call("HSETEX", "h", "FIELDS", "2", "a", "1", "b", "2") == b":1\r\n"
    assert c.call("OBJECT", "ENCODING", "h") == b"$8\r\nlistpack\r\n"
    assert c.call("HSETEX", "h", "EX", "10", "FIELDS", "1", "a", "10") == b":1\r\n"
    assert c.call("OBJECT", "ENCODING", "h") == b"$10\r\nlistpackex\r\n"
    assert c.call("HTTL", "h", "FIELDS", "2", "a", "b") == ints(10, -1)
    assert c.call("HSETEX", "h", "KEEPTTL", "FIELDS", "1", "a", "11") == b":1\r\n"
    assert c.call("HTTL", "h", "FIELDS", "1", "a") == ints(10)
    assert c.call("HSETEX", "h", "FIELDS", "1", "a", "12") == b":1\r\n"
    assert c.call("HTTL", "h", "FIELDS", "1", "a") == ints(-1)
    assert c.call("HSETEX", "h", "FNX", "FIELDS", "2", "a", "x", "c", "y") == b":0\r\n"
    assert c.call("HSETEX", "h", "FXX", "FIELDS", "2", "a", "x", "c", "y") == b":0\r\n"
    assert c.call("HSETEX", "h", "FXX", "PX", "5000", "FIELDS", "2", "a", "x", "b", "y") == (
        b":1\r\n"
    )
    assert c.call("HPTTL", "h", "FIELDS", "2", "a", "b") == ints(5000, 5000)
    assert c.call("HSETEX", "h", "FNX", "EXAT", str(T0 // 1000 + 9), "FIELDS", "1", "c", "z") == (
        b":1\r\n"
    )
    assert c.call("HEXPIRETIME", "h", "FIELDS", "1", "c") == ints(T0 // 1000 + 9)
    assert c.call("HSETEX", "nokey", "FXX", "FIELDS", "1", "a", "1") == b":0\r\n"
    assert c.call("EXISTS", "nokey") == b":0\r\n"
    assert c.call("HSETEX", "h", "PXAT", str(T0), "FIELDS", "1", "a", "gone") == b":1\r\n"
    assert c.call("HEXISTS", "h", "a") == b":0\r\n"
    assert c.call("HSETEX", "n", "EX", "0", "FIELDS", "1", "a", "1") == b":1\r\n"
    assert c.call("EXISTS", "n") == b":0\r\n"
    errors = {
        ("HSETEX", "h", "EX", "10", "PX", "10", "FIELDS", "1", "a", "1"):
            b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n",
        ("HSETEX", "h", "KEEPTTL", "EX", "10", "FIELDS", "1", "a", "1"):
            b"-ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified\r\n",
        ("HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"):
            b"-ERR Only one of FXX or FNX arguments can be specified\r\n",
        ("HSETEX", "h", "BOGUS", "FIELDS", "1", "a", "1"): b"-ERR unknown argument: BOGUS\r\n",
        ("HSETEX", "h", "FIELDS", "0", "a", "1"): b"-ERR invalid number of fields\r\n",
        ("HSETEX", "h", "FIELDS", "x", "a", "1"): b"-ERR invalid number of fields\r\n",
        ("HSETEX", "h", "EX", "-1", "FIELDS", "1", "a", "1"):
            b"-ERR invalid expire time, must be >= 0\r\n",
        ("HSETEX", "h", "PX", "x", "FIELDS", "1", "a", "1"):
            b"-ERR value is not an integer or out of range\r\n",
        ("HSETEX", "s", "EX", "10", "FIELDS", "1", "a", "1"):
            b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    }
    c.call("SET", "s", "x")
    for cmd, expected in errors.items():
        assert c.call(*cmd) == expected, cmd
    assert c.call("HSETEX", "w", "FIELDS", "1", "f", "v" * 100) == b":1\r\n"
    assert c.call("OBJECT", "ENCODING", "w") == b"$9\r\nhashtable\r\n"


@pytest.mark.redis_version("7.4")
@both_protocols
def test_watch_sees_field_expiry_changes(
    hfe: Conn, resplite_instance: ServerHandle, resplite_clock: ClockControl
) -> None:
    c = hfe
    other = RawClient(resplite_instance.host, resplite_instance.port)
    try:
        c.call("HSET", "h", "a", "1", "b", "2")
        for change, aborts in [
            (("HEXPIRE", "h", "100", "FIELDS", "1", "a"), True),
            (("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"), False),
            (("HTTL", "h", "FIELDS", "1", "a"), False),
            (("HPERSIST", "h", "FIELDS", "1", "b"), False),
            (("HPERSIST", "h", "FIELDS", "1", "a"), True),
            (("HPEXPIRE", "h", "10", "FIELDS", "1", "a"), True),
        ]:
            c.call("WATCH", "h")
            other.call(*change)
            c.call("MULTI")
            c.call("PING")
            reply = c.call("EXEC")
            assert (reply in (b"*-1\r\n", b"_\r\n")) == aborts, change
        # A field expiring is a change too.
        c.call("WATCH", "h")
        resplite_clock.advance(11)
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") in (b"*-1\r\n", b"_\r\n")
    finally:
        other.close()


def test_hexpire_family_flags_are_the_reference_s(pair: Pair) -> None:
    """HEXPIRE, HPEXPIRE, HEXPIREAT and HPEXPIREAT: write and fast, no longer denyoom (7.4 had
    it; Redis 8.6.3's COMMAND INFO, from which the specs are generated)."""
    for name in ("hexpire", "hpexpire", "hexpireat", "hpexpireat"):
        info = to_python(parse(pair.check("COMMAND", "INFO", name)))[0]
        assert info[2] == ["write", "fast"], name


# -- Redis 8.6.3: options on either side of FIELDS, byte for byte -------------------------------


@pytest.mark.parametrize("args", [
    # the HEXPIRE family: a condition before or after the block, never two different ones
    ("HEXPIRE", "h", "10", "FIELDS", "1", "a", "NX"),
    ("HEXPIRE", "h", "10", "NX", "FIELDS", "1", "a", "NX"),
    ("HPEXPIRE", "h", "5000", "FIELDS", "1", "a", "xx"),
    ("HEXPIRE", "h", "60", "NX", "XX", "FIELDS", "1", "a"),
    ("HPEXPIRE", "h", "5000", "GT", "LT", "FIELDS", "1", "a"),
    ("HEXPIRE", "h", "60", "FIELDS", "1", "a", "NX", "XX"),
    ("HEXPIRE", "h", "60", "FIELDS", "1", "a", "BOGUS"),
    ("HEXPIRE", "h", "60", "BOGUS", "FIELDS", "1", "a"),
    ("HEXPIRE", "h", "60", "2", "a", "b"),
    ("HEXPIRE", "h", "60", "NX"),
    ("HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1"),
    ("HEXPIRE", "h", "10", "FIELDS", "1"),
    ("HEXPIRE", "h", "10", "FIELDS", "1", "a", "FIELDS", "1", "b"),
    ("HEXPIRE", "h", "10", "FIELDS", "0", "a"),
    ("HEXPIRE", "h", "10", "FIELDS", "-1", "a"),
    ("HEXPIRE", "h", "10", "FIELDS", "x", "a"),
    ("HEXPIRE", "h", "10", "FIELDS", "2", "a"),
    ("HEXPIRE", "h", "10", "FIELDS", "1", "a", "b"),
    ("HEXPIRE", "h", "10", "FIELDS", "3", "EX", "FIELDS", "NX"),
    ("HEXPIRE", "h", "FIELDS", "60", "1", "a"),
    ("HPEXPIRE", "h", "FIELDS", "1", "a", "XX"),
    ("HEXPIREAT", "h", "0", "FIELDS", "1", "a", "GT"),
    ("HEXPIRE", "s", "x", "FIELDS", "1", "a", "NX", "XX"),
    # HGETEX
    ("HGETEX", "h", "FIELDS", "2", "a", "b", "EX", "60"),
    ("HGETEX", "h", "FIELDS", "1", "a", "PERSIST"),
    ("HGETEX", "h", "FIELDS", "2", "a"),
    ("HGETEX", "h", "FIELDS", "1", "a", "b", "c"),
    ("HGETEX", "h", "FIELDS", "0", "a", "EX", "60"),
    ("HGETEX", "h", "FIELDS", "1", "a", "FIELDS", "1", "b"),
    ("HGETEX", "h", "FIELDS"),
    ("HGETEX", "h", "EX", "60"),
    ("HGETEX", "h", "EX", "60", "PX", "10", "FIELDS", "1", "a"),
    ("HGETEX", "h", "PERSIST", "EX", "60", "FIELDS", "1", "a"),
    ("HGETEX", "h", "PERSIST", "PERSIST", "FIELDS", "1", "a"),
    ("HGETEX", "h", "KEEPTTL", "FIELDS", "1", "a"),
    ("HGETEX", "h", "FNX", "FIELDS", "1", "a"),
    ("HGETEX", "h", "FIELDS", "1", "a", "EX"),
    ("HGETEX", "h", "BOGUS", "FIELDS", "1", "a"),
    ("HGETEX", "h", "PERSIST", "1", "a"),
    ("HGETEX", "s", "BOGUS"),
    ("HGETEX", "nokey", "FIELDS", "1", "a", "EX", "60"),
    # HSETEX
    ("HSETEX", "n", "FIELDS", "2", "a", "1", "b", "2", "EX", "60"),
    ("HSETEX", "h", "FXX", "FIELDS", "1", "a", "2", "KEEPTTL"),
    ("HSETEX", "n2", "FIELDS", "3", "EX", "1", "PX", "2", "FIELDS", "3", "EX", "60"),
    ("HSETEX", "h", "FIELDS", "2", "a", "1"),
    ("HSETEX", "h", "FIELDS", "1", "a", "1", "b", "2"),
    ("HSETEX", "h", "FIELDS", "3", "a", "1", "b", "2"),
    ("HSETEX", "h", "FIELDS", "1", "a", "1", "b"),
    ("HSETEX", "h", "FIELDS", "0", "a", "1", "EX", "60"),
    ("HSETEX", "h", "FIELDS", "1", "a", "1", "FIELDS", "1", "b", "2"),
    ("HSETEX", "h", "EX", "60", "2", "a", "1", "b", "2"),
    ("HSETEX", "h", "EX", "60"),
    ("HSETEX", "h", "FIELDS"),
    ("HSETEX", "h", "PERSIST", "FIELDS", "1", "a", "1"),
    ("HSETEX", "h", "FIELDS", "1", "a", "1", "KEEPTTL", "EX", "5"),
    ("HSETEX", "h", "FIELDS", "1", "a", "1", "FNX", "FXX"),
    ("HSETEX", "h", "FIELDS", "1", "a", "1", "PX"),
    ("HSETEX", "s", "FIELDS", "1", "a", "1", "BOGUS"),
], ids=lambda c: " ".join(c))
def test_options_on_either_side_of_fields(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("HSET", "h", "a", "1", "b", "2", "c", "3")
    pair.check("SET", "s", "x")
    pair.check(*args)
    for key in ("h", "n", "n2"):
        pair.check("HGETALL", key)
        pair.check("HPERSIST", key, "FIELDS", "3", "a", "b", "EX")


def test_hsetex_counts_a_change_per_field(pair: Pair) -> None:
    def changes(conn: RawClient, *args: str) -> int:
        def dirty() -> int:
            text = conn.call("INFO", "persistence").decode()
            return int(text.split("rdb_changes_since_last_save:")[1].split("\r\n")[0])

        before = dirty()
        conn.call(*args)
        return dirty() - before

    for args in (("HSETEX", "h", "FIELDS", "3", "a", "1", "b", "2", "a", "3"),
                 ("HSETEX", "h", "EX", "100", "FIELDS", "2", "a", "1", "c", "2"),
                 ("HSETEX", "h", "FNX", "FIELDS", "1", "a", "1"),
                 ("HGETEX", "h", "FIELDS", "3", "a", "c", "x", "PX", "100000"),
                 # (times clear of the 100 s above: the two servers' clocks need not agree
                 # on the millisecond between the commands)
                 ("HEXPIRE", "h", "50", "FIELDS", "3", "a", "x", "c", "GT"),
                 ("HEXPIRE", "h", "50", "FIELDS", "3", "a", "x", "c", "LT")):
        assert changes(pair.ours, *args) == changes(pair.ref, *args), args


def test_a_listpackex_keeps_redis_s_field_order(pair: Pair) -> None:
    """Fields with a TTL first, in TTL order (a field given a TTL goes before the first
    with the same or a later one), a field whose TTL goes away moves to the end: HGETALL
    and DUMP (absolute times, so the payloads are alike) show Redis's order."""
    far = "4102444800000"  # 2100-01-01
    steps: list[tuple[str, ...]] = [
        ("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"),
        ("HPEXPIREAT", "h", far, "FIELDS", "1", "c"),
        ("HPEXPIREAT", "h", str(int(far) - 5), "FIELDS", "1", "d"),
        ("HPEXPIREAT", "h", far, "FIELDS", "2", "a", "e"),  # same time as c: before it
        ("HPEXPIREAT", "h", far, "FIELDS", "1", "c"),  # set again: before a and e
        ("HPERSIST", "h", "FIELDS", "1", "d"),  # to the end
        ("HSET", "h", "a", "x", "f", "6"),  # a's TTL goes: to the end, then f
        ("HSETEX", "h", "KEEPTTL", "FIELDS", "1", "e", "y"),  # stays
        ("HINCRBY", "h", "c", "1"),  # keeps its TTL and its place
        ("HGETEX", "h", "PXAT", str(int(far) - 1), "FIELDS", "2", "f", "b"),
        ("HSETEX", "h", "PXAT", far, "FIELDS", "2", "g", "7", "a", "8"),
        ("HGETEX", "h", "PERSIST", "FIELDS", "1", "c"),
    ]
    for step in steps:
        pair.check(*step)
        pair.check("HGETALL", "h")
        pair.check("HPEXPIRETIME", "h", "FIELDS", "7", *"abcdefg")
    pair.check("OBJECT", "ENCODING", "h")
