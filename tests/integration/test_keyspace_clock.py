"""Expiry and idle time over the wire with the server's clock under control: exact TTLs,
keys that expire the millisecond after the clock reaches their time (a key lives while
now <= its time, as in Redis), and OBJECT IDLETIME / FREQ that follow the clock and the kinds
of access that count. Never sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.raw import RawClient

import resplite
from resplite.testing.embedded import ServerHandle

T0 = 1_900_000_000_000  # a frozen "now"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    with resplite.serve() as handle:
        yield handle


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def conn(request: pytest.FixtureRequest, server: ServerHandle) -> Iterator[RawClient]:
    server.reset()
    client = RawClient("127.0.0.1", server.port)
    if request.param == 3:
        client.call("HELLO", "3")
    client.call("FLUSHALL")
    client.call("RESPLITE.CLOCK", "FREEZE")
    client.call("RESPLITE.CLOCK", "SET", T0)
    yield client
    client.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    client.close()


def integer(n: int) -> bytes:
    return b":%d\r\n" % n


def advance(conn: RawClient, ms: int) -> None:
    conn.call("RESPLITE.CLOCK", "ADVANCE", ms)


def test_ttls_are_exact_and_keys_expire_once_the_clock_passes_their_time(conn: RawClient) -> None:
    conn.call("SET", "k", "v", "PX", "1500")
    assert conn.call("PTTL", "k") == integer(1500)
    assert conn.call("PEXPIRETIME", "k") == integer(T0 + 1500)
    advance(conn, 1000)
    assert conn.call("PTTL", "k") == integer(500)
    assert conn.call("TTL", "k") == integer(1)  # rounded to the nearest second
    advance(conn, 500)
    assert conn.call("GET", "k") == b"$1\r\nv\r\n"
    assert conn.call("PTTL", "k") == integer(0)
    assert conn.call("TTL", "k") == integer(0)
    advance(conn, 1)
    assert conn.call("DBSIZE") == integer(0)  # the jump itself expired it, nobody read it
    assert conn.call("GET", "k") in (b"$-1\r\n", b"_\r\n")


def test_expire_family_against_the_frozen_now(conn: RawClient) -> None:
    conn.call("SET", "k", "v")
    assert conn.call("EXPIRE", "k", "10") == integer(1)
    assert conn.call("EXPIRETIME", "k") == integer(T0 // 1000 + 10)
    assert conn.call("PEXPIRE", "k", "2500", "LT") == integer(1)
    assert conn.call("PEXPIRE", "k", "3000", "LT") == integer(0)
    assert conn.call("PEXPIREAT", "k", T0, "XX") == integer(1)  # now counts as the past
    assert conn.call("EXISTS", "k") == integer(0)
    conn.call("SET", "g", "v")
    assert conn.call("GETEX", "g", "PXAT", T0 + 100) == b"$1\r\nv\r\n"
    advance(conn, 100)
    assert conn.call("PTTL", "g") == integer(0)
    assert conn.call("EXISTS", "g") == integer(1)
    advance(conn, 1)
    assert conn.call("EXISTS", "g") == integer(0)


def test_expired_keys_are_hidden_from_keys_scan_and_randomkey(conn: RawClient) -> None:
    conn.call("CONFIG", "SET", "active-expire-enabled", "no")
    try:
        conn.call("SET", "live", "v")
        for i in range(20):
            conn.call("SET", f"old{i}", "v", "PX", "10")
        advance(conn, 11)
        assert conn.call("DBSIZE") == integer(21)  # still stored: only lookups remove them
        assert conn.call("KEYS", "*") == b"*1\r\n$4\r\nlive\r\n"
        assert conn.call("SCAN", "0", "COUNT", "100") == b"*2\r\n$1\r\n0\r\n*1\r\n$4\r\nlive\r\n"
        assert conn.call("DBSIZE") == integer(1)  # SCAN deleted what it met
        assert conn.call("RANDOMKEY") == b"$4\r\nlive\r\n"
    finally:
        conn.call("CONFIG", "SET", "active-expire-enabled", "yes")


def test_idle_time_follows_the_clock_and_real_accesses(conn: RawClient) -> None:
    conn.call("SET", "k", "v")
    advance(conn, 5000)
    assert conn.call("OBJECT", "IDLETIME", "k") == integer(5)
    for command in (("TYPE", "k"), ("EXISTS", "k"), ("TTL", "k"), ("OBJECT", "ENCODING", "k")):
        conn.call(*command)
    assert conn.call("OBJECT", "IDLETIME", "k") == integer(5)
    conn.call("GET", "k")
    assert conn.call("OBJECT", "IDLETIME", "k") == integer(0)
    advance(conn, 7000)
    conn.call("RENAME", "k", "j")
    assert conn.call("OBJECT", "IDLETIME", "j") == integer(0)  # RENAME looks the key up
    advance(conn, 3000)
    conn.call("CLIENT", "NO-TOUCH", "ON")
    conn.call("GET", "j")
    conn.call("STRLEN", "j")
    assert conn.call("OBJECT", "IDLETIME", "j") == integer(3)
    conn.call("TOUCH", "j")  # TOUCH always counts
    assert conn.call("OBJECT", "IDLETIME", "j") == integer(0)
    conn.call("CLIENT", "NO-TOUCH", "OFF")


def test_lfu_frequency_decays_by_the_minute(conn: RawClient) -> None:
    conn.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
    conn.call("SET", "k", "v")
    assert conn.call("OBJECT", "FREQ", "k") == integer(5)
    conn.call("GET", "k")
    assert conn.call("OBJECT", "FREQ", "k") == integer(6)
    advance(conn, 4 * 60_000)
    assert conn.call("OBJECT", "FREQ", "k") == integer(2)
    assert conn.call("OBJECT", "IDLETIME", "k").startswith(b"-ERR An LFU maxmemory policy is")
