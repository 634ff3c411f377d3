"""Client eviction (``maxmemory-clients``, Redis 7.0), each scenario run on Redis and on
resplite alike.

Each server is started for the scenario (eviction may close any client of the server, so
the shared servers of the other tests stay out of it). How many bytes a client holds is
each server's own figure (Redis counts its allocations, resplite its buffers), so the
scenarios use clients far over or far under the limit and assert what Redis promises:
the largest evictable clients are closed until all clients together are under the limit,
CLIENT NO-EVICT protects a client, each eviction is counted in INFO ``evicted_clients``,
and a percentage of a zero ``maxmemory`` turns client eviction off.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator

import pytest
from support.raw import RawClient
from support.servers import ServerProcess, running

LIMIT = 256 * 1024
# An unfinished request far over the limit: the header of a 2 MB argument and 1 MB of it.
HEADER = b"*2\r\n$4\r\nECHO\r\n$2097152\r\n"
CHUNK = b"x" * (1 << 20)


@pytest.fixture(params=["redis", "resplite"])
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    with running(request.param) as srv:
        yield srv


def info(conn: RawClient, field: str) -> int:
    found = re.search(rb"\r\n" + field.encode() + rb":(\d+)", conn.call("INFO", "everything"))
    assert found is not None, field
    return int(found[1])


def connect(server: ServerProcess, name: str) -> RawClient:
    conn = RawClient(server.host, server.port, timeout=10)
    assert conn.call("CLIENT", "SETNAME", name) == b"+OK\r\n"
    return conn


def wait_closed(conn: RawClient, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if conn.is_closed(timeout=0.2):
            return True
    return False


def send_until_closed(conn: RawClient, data: bytes) -> None:
    """Send ``data``; the server may close the connection before it has all of it (the
    eviction under test), so a reset or a broken pipe ends the sending quietly."""
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        conn.send_raw(data)


def names(conn: RawClient) -> set[str]:
    listing = conn.call("CLIENT", "LIST").decode()
    return set(re.findall(r" name=(\S*)", listing))


def test_the_largest_client_is_evicted_and_counted(server: ServerProcess) -> None:
    control = connect(server, "control")
    control.call("CLIENT", "NO-EVICT", "on")
    before = info(control, "evicted_clients")
    small = connect(server, "small")
    hog = connect(server, "hog")
    assert control.call("CONFIG", "SET", "maxmemory-clients", LIMIT) == b"+OK\r\n"
    send_until_closed(hog, HEADER + CHUNK)
    # The hog's unfinished request is over the limit on its own: it goes, the rest stay.
    assert wait_closed(hog)
    assert info(control, "evicted_clients") == before + 1
    assert small.call("PING") == b"+PONG\r\n"
    assert names(control) == {"control", "small"}
    for conn in (control, small, hog):
        conn.close()


def test_no_evict_protects_a_client_and_the_others_go(server: ServerProcess) -> None:
    control = connect(server, "control")
    control.call("CLIENT", "NO-EVICT", "on")
    before = info(control, "evicted_clients")
    hog = connect(server, "hog")
    assert hog.call("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
    bystander = connect(server, "bystander")
    assert control.call("CONFIG", "SET", "maxmemory-clients", LIMIT) == b"+OK\r\n"
    hog.send_raw(HEADER + CHUNK)
    # Still over the limit with the hog protected: every evictable client is closed.
    assert wait_closed(bystander)
    assert info(control, "evicted_clients") == before + 1
    hog.send_raw(CHUNK + b"\r\n")
    assert hog.read_reply() == b"$2097152\r\n" + CHUNK + CHUNK + b"\r\n"
    assert names(control) == {"control", "hog"}
    for conn in (control, hog, bystander):
        conn.close()


def test_under_the_limit_nobody_is_evicted(server: ServerProcess) -> None:
    control = connect(server, "control")
    before = info(control, "evicted_clients")
    others = [connect(server, f"c{i}") for i in range(5)]
    assert control.call("CONFIG", "SET", "maxmemory-clients", "64mb") == b"+OK\r\n"
    others[0].send_raw(HEADER + CHUNK)
    time.sleep(0.3)
    assert info(control, "evicted_clients") == before
    others[0].send_raw(CHUNK + b"\r\n")
    assert others[0].read_reply().startswith(b"$2097152\r\n")
    assert len(names(control)) == 6
    for conn in (control, *others):
        conn.close()


def test_a_percentage_of_no_maxmemory_turns_client_eviction_off(
        server: ServerProcess) -> None:
    control = connect(server, "control")
    before = info(control, "evicted_clients")
    assert control.call("CONFIG", "SET", "maxmemory-clients", "1%") == b"+OK\r\n"
    assert control.call("CONFIG", "GET", "maxmemory-clients") == \
        b"*2\r\n$17\r\nmaxmemory-clients\r\n$2\r\n1%\r\n"
    hog = connect(server, "hog")
    hog.send_raw(HEADER + CHUNK)
    time.sleep(0.3)
    assert info(control, "evicted_clients") == before
    # With maxmemory set, 1 % of it (never less than 128 KB) applies at once.
    assert control.call("CONFIG", "SET", "maxmemory", "20mb") == b"+OK\r\n"
    assert wait_closed(hog)
    assert info(control, "evicted_clients") == before + 1
    control.call("CONFIG", "SET", "maxmemory", "0")
    for conn in (control, hog):
        conn.close()


def test_a_subscriber_that_does_not_read_is_evicted(server: ServerProcess) -> None:
    control = connect(server, "control")
    control.call("CLIENT", "NO-EVICT", "on")
    before = info(control, "evicted_clients")
    subscriber = connect(server, "subscriber")
    # Never read from: once the kernel's buffers are full the messages pile up in the server.
    assert subscriber.call("SUBSCRIBE", "news").startswith(b"*3\r\n")
    assert control.call("CONFIG", "SET", "maxmemory-clients", "4mb") == b"+OK\r\n"
    message = b"m" * (256 * 1024)
    deadline = time.monotonic() + 20
    while info(control, "evicted_clients") == before and time.monotonic() < deadline:
        # Under the pubsub class's hard output limit (32 MB): only client eviction acts.
        control.call("PUBLISH", "news", message)
    assert info(control, "evicted_clients") == before + 1
    # (Closed with the messages the kernel still holds for it: they drain slowly.)
    assert names(control) == {"control"}
    for conn in (control, subscriber):
        conn.close()
