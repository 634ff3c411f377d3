"""Faults on demand over the wire (RESPLITE.FAULT) and through the test kit: each action seen
from a raw connection, the gate, LIST and CLEAR, a redis-py client retrying through injected
errors and dropped connections, and a consumer-group reader recovering its pending entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, ReadOnlyError
from redis.retry import Retry
from support.raw import RawClient

import resplite
from resplite.testing.embedded import ServerHandle

LOADING = "-LOADING Redis is loading the dataset in memory"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    with resplite.serve() as handle:
        yield handle


@pytest.fixture
def conn(server: ServerHandle) -> Iterator[RawClient]:
    server.reset()
    client = RawClient(server.host, server.port)
    yield client
    client.close()
    server.faults.clear()


def test_the_command_is_off_unless_enabled() -> None:
    with resplite.serve(enable_fault_command="no") as handle:
        conn = RawClient(handle.host, handle.port)
        try:
            assert conn.call("RESPLITE.FAULT", "LIST").startswith(
                b"-ERR RESPLITE.FAULT is disabled on this server")
            assert conn.call("RESPLITE.FAULT", "HELP").startswith(b"*")
        finally:
            conn.close()


def test_an_error_fault_answers_for_the_command_and_runs_nothing(conn: RawClient) -> None:
    assert conn.call("RESPLITE.FAULT", "ERROR", "set", LOADING, "TIMES", "2") == b":1\r\n"
    expected = b"-LOADING Redis is loading the dataset in memory\r\n"
    assert conn.call("SET", "k", "v") == expected
    assert conn.call("SET", "k", "v") == expected
    assert conn.call("GET", "k") in (b"$-1\r\n", b"_\r\n")  # neither SET ran
    assert conn.call("SET", "k", "v") == b"+OK\r\n"  # the two calls are used up
    assert conn.call("RESPLITE.FAULT", "LIST") == b"*0\r\n"
    # Counted in Redis's error statistics like any error reply.
    assert b"errorstat_LOADING:count=2" in conn.call("INFO", "errorstats")


def test_a_fault_can_target_one_client_by_name(server: ServerHandle, conn: RawClient) -> None:
    other = RawClient(server.host, server.port)
    try:
        other.call("CLIENT", "SETNAME", "worker-7")
        server.faults.error("GET", "-READONLY You can't write against a read only replica.",
                            client="worker-*")
        assert other.call("GET", "k").startswith(b"-READONLY ")
        assert conn.call("GET", "k") in (b"$-1\r\n", b"_\r\n")
    finally:
        other.close()


def test_close_before_and_after(server: ServerHandle, conn: RawClient) -> None:
    server.faults.close("SET", times=1)
    conn.send("SET", "before", "1")
    assert conn.is_closed(timeout=5)
    server.faults.close("SET", after=True, times=1)
    again = RawClient(server.host, server.port)
    try:
        again.send("SET", "after", "1")
        assert again.is_closed(timeout=5)
    finally:
        again.close()
    assert server.execute("EXISTS", "before") == 0  # never ran
    assert server.execute("EXISTS", "after") == 1  # ran, then the connection was closed


def test_a_dropped_reply_leaves_the_connection_open(server: ServerHandle, conn: RawClient) -> None:
    server.faults.drop("INCR", times=1)
    conn.send("INCR", "n")  # runs, answers nothing
    assert conn.call("PING") == b"+PONG\r\n"
    assert conn.call("GET", "n") == b"$1\r\n1\r\n"


def test_a_delay_holds_the_reply_and_what_follows_on_the_server_clock(
    server: ServerHandle, conn: RawClient
) -> None:
    server.clock.freeze()
    server.faults.delay("GET", 5_000, times=1)
    conn.call("SET", "k", "v")
    conn.send("GET", "k")
    conn.send("PING")
    assert not conn.is_closed(timeout=0.2)  # nothing has arrived yet
    assert conn.buf == b""
    server.clock.advance(5_000)
    assert conn.read_reply() == b"$1\r\nv\r\n"
    assert conn.read_reply() == b"+PONG\r\n"


def test_list_and_clear(server: ServerHandle, conn: RawClient) -> None:
    first = server.faults.error("x*", "-BUSY Redis is busy", times=3)
    second = server.faults.drop("xgroup|create", client="c1")
    listed = server.faults.list()
    assert [f["id"] for f in listed] == [first, second]
    assert listed[0]["action"] == b"error" and listed[0]["remaining"] == 3
    assert listed[1]["client"] == b"c1" and listed[1]["remaining"] is None
    assert conn.call("RESPLITE.FAULT", "CLEAR", str(first)) == b":1\r\n"
    assert server.faults.clear() == 1
    assert conn.call("RESPLITE.FAULT", "ERROR", "get", "bad\r\nline").startswith(b"-ERR ")
    assert conn.call("RESPLITE.FAULT", "DROP", "get", "TIMES", "0").startswith(b"-ERR ")


def test_redis_py_retries_through_loading_errors_and_closed_connections(
    server: ServerHandle,
) -> None:
    client = redis.Redis.from_url(
        server.url, retry=Retry(NoBackoff(), 3),
        retry_on_error=[BusyLoadingError, ConnectionError],
    )
    try:
        client.set("k", "v")
        server.faults.error("GET", LOADING, times=2)
        assert client.get("k") == b"v"  # two LOADING replies, then the real one
        server.faults.close("GET", times=1)
        assert client.get("k") == b"v"  # reconnected and sent again
        server.faults.error("GET", LOADING, times=5)
        with pytest.raises(BusyLoadingError):
            client.get("k")  # more failures than retries: the error reaches the caller
        server.faults.clear()
        server.faults.error("SET", "-READONLY You can't write against a read only replica.")
        with pytest.raises(ReadOnlyError):
            client.set("k", "w")
    finally:
        client.close()


def _entries(reply: Any) -> list[tuple[bytes, Any]]:
    """XREADGROUP's entries for one stream, whichever protocol the client speaks."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return list(next(iter(reply.values()))[0])
    return list(reply[0][1])


def test_a_consumer_group_reader_recovers_through_faults(server: ServerHandle) -> None:
    """A reader that re-reads its own pending entries after any failure processes every
    entry exactly once although XREADGROUP fails twice and one delivery is lost with the
    connection (its entries wait in the reader's pending list)."""
    server.reset()
    producer = server.client()
    reader = redis.Redis.from_url(server.url, client_name="reader-1")
    try:
        ids = [producer.xadd("jobs", {"n": str(i)}) for i in range(25)]
        producer.xgroup_create("jobs", "workers", id="0")
        server.faults.error("XREADGROUP", LOADING, client="reader-*", times=2)
        server.faults.close("XREADGROUP", after=True, client="reader-*", times=1)
        done: list[bytes] = []
        failures = 0
        cursor = "0"  # first its own pending history, then new entries
        for _ in range(100):
            if len(done) == len(ids):
                break
            try:
                entries = _entries(reader.xreadgroup("workers", "c1", {"jobs": cursor},
                                                     count=10))
            except (BusyLoadingError, ConnectionError):
                failures += 1
                cursor = "0"  # what was delivered but not acknowledged comes back first
                continue
            if cursor == "0" and not entries:
                cursor = ">"
                continue
            for entry_id, _fields in entries:
                done.append(entry_id)
                reader.xack("jobs", "workers", entry_id)
        assert failures == 3
        assert done == ids  # each once, in order
        assert producer.xpending("jobs", "workers")["pending"] == 0
        assert server.faults.list() == []
    finally:
        producer.close()
        reader.close()
