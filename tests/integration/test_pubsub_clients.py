"""The push half of Redis through real clients: redis-py's PubSub (sync, asyncio,
run_in_thread, pattern handlers) under RESP2 and RESP3, keyspace notifications driven by the
test clock, redis-py's client-side cache (RESP3 tracking), MONITOR through redis-cli, and a
subscriber too slow to read that is dropped at its output buffer limit while everyone else
carries on.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import threading
import time
from typing import Any

import pytest
import redis
import redis.asyncio
from redis.cache import CacheConfig
from support import procs
from support.raw import RawClient
from support.servers import ServerProcess, start_resplite

import resplite


def _client(srv: ServerProcess, protocol: int, **kw: Any) -> redis.Redis:
    return redis.Redis(host=srv.host, port=srv.port, protocol=protocol, **kw)


def _wait_message(pubsub: redis.client.PubSub) -> dict:
    for _ in range(100):
        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
        if message is not None:
            return message
    raise AssertionError("no message arrived")


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_pubsub_sync(server: ServerProcess, protocol: int) -> None:
    r = _client(server, protocol)
    p = r.pubsub()
    p.subscribe("news")
    p.psubscribe("n*")
    assert p.get_message(timeout=1)["type"] == "subscribe"
    assert p.get_message(timeout=1)["type"] == "psubscribe"
    assert r.publish("news", "hello") == 2
    first, second = _wait_message(p), _wait_message(p)
    assert (first["type"], first["channel"], first["data"]) == ("message", b"news", b"hello")
    assert (second["type"], second["pattern"], second["channel"]) == ("pmessage", b"n*", b"news")
    assert r.pubsub_numsub("news") == [(b"news", 1)]
    assert r.pubsub_numpat() == 1
    assert r.pubsub_channels() == [b"news"]
    p.unsubscribe()
    p.punsubscribe()
    p.close()
    r.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_pattern_handlers_and_run_in_thread(server: ServerProcess, protocol: int) -> None:
    r = _client(server, protocol)
    got: list[tuple[bytes, bytes]] = []
    done = threading.Event()

    def on_message(message: dict) -> None:
        got.append((message["channel"], message["data"]))
        if len(got) == 3:
            done.set()

    p = r.pubsub(ignore_subscribe_messages=True)
    p.psubscribe(**{"job:*": on_message})
    p.subscribe(**{"plain": on_message})
    worker = p.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        for _ in range(100):
            if r.pubsub_numsub("plain") == [(b"plain", 1)] and r.pubsub_numpat() == 1:
                break
            threading.Event().wait(0.01)
        r.publish("job:1", "a")
        r.publish("job:2", "b")
        r.publish("plain", "c")
        assert done.wait(5)
        assert got == [(b"job:1", b"a"), (b"job:2", b"b"), (b"plain", b"c")]
    finally:
        worker.stop()
        worker.join(5)
        p.close()
        r.close()


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_pubsub_asyncio(server: ServerProcess, protocol: int) -> None:
    async def main() -> None:
        r = redis.asyncio.Redis(host=server.host, port=server.port, protocol=protocol)
        p = r.pubsub()
        await p.subscribe("a")
        await p.psubscribe("b*")
        assert (await p.get_message(timeout=1))["type"] == "subscribe"
        assert (await p.get_message(timeout=1))["type"] == "psubscribe"
        assert await r.publish("a", "1") == 1
        assert await r.publish("bee", "2") == 1
        seen: list[tuple[str, bytes]] = []
        while len(seen) < 2:
            message = await p.get_message(ignore_subscribe_messages=True, timeout=1)
            if message is not None:
                seen.append((message["type"], message["data"]))
        assert seen == [("message", b"1"), ("pmessage", b"2")]
        await p.aclose()
        await r.aclose()

    asyncio.run(main())


def test_sharded_pubsub_with_redis_py(server: ServerProcess) -> None:
    r = _client(server, 3)
    p = r.pubsub()
    p.ssubscribe("orders")
    assert p.get_sharded_message(timeout=1)["type"] == "ssubscribe"
    assert r.spublish("orders", "o1") == 1
    message = None
    for _ in range(50):
        message = p.get_sharded_message(ignore_subscribe_messages=True, timeout=0.1)
        if message is not None:
            break
    assert message is not None and message["data"] == b"o1"
    p.close()
    r.close()


# -- keyspace notifications driven by the clock --------------------------------------------------


def test_expired_event_on_clock_advance() -> None:
    """A key with a TTL expires the moment the test advances the clock, and the listener
    gets the ``expired`` event at once: no sleeping, no polling the key."""
    with resplite.serve() as srv:
        r = redis.Redis.from_url(srv.url)
        r.config_set("notify-keyspace-events", "Ex")
        p = r.pubsub()
        p.subscribe("__keyevent@0__:expired")
        assert p.get_message(timeout=1)["type"] == "subscribe"
        r.set("session:42", "x", px=60_000)
        assert p.get_message(timeout=0.05) is None  # nothing yet
        srv.clock.advance(60_000)
        message = p.get_message(timeout=5)
        assert message is not None
        assert (message["channel"], message["data"]) == (b"__keyevent@0__:expired", b"session:42")
        assert r.exists("session:42") == 0
        p.close()
        r.close()


def test_keyspace_events_on_clock_advance_in_order() -> None:
    with resplite.serve() as srv:
        r = redis.Redis.from_url(srv.url)
        r.config_set("notify-keyspace-events", "KA")
        p = r.pubsub(ignore_subscribe_messages=True)
        p.psubscribe("__keyspace@0__:*")
        p.get_message(timeout=1)
        r.set("a", "1", px=1_000)
        r.hset("h", "f", "v")
        r.pexpire("h", 2_000)
        srv.clock.advance(5_000)
        events: list[tuple[bytes, bytes]] = []
        while len(events) < 5:
            message = p.get_message(timeout=5)
            assert message is not None
            events.append((message["channel"], message["data"]))
        assert events == [
            (b"__keyspace@0__:a", b"set"), (b"__keyspace@0__:a", b"expire"),
            (b"__keyspace@0__:h", b"hset"), (b"__keyspace@0__:h", b"expire"),
            (b"__keyspace@0__:a", b"expired"),
        ]
        message = p.get_message(timeout=5)
        assert message is not None and message["data"] == b"expired"
        assert message["channel"] == b"__keyspace@0__:h"
        p.close()
        r.close()


# -- client-side caching -------------------------------------------------------------------------


def test_redis_py_client_side_cache(server: ServerProcess) -> None:
    cached = _client(server, 3, cache_config=CacheConfig())
    writer = _client(server, 3)
    try:
        writer.set("profile", "v1")
        assert cached.get("profile") == b"v1"
        cache = cached.get_cache()
        assert cache is not None and cache.size == 1
        assert cached.get("profile") == b"v1"  # served from the cache
        writer.set("profile", "v2")
        # The invalidation push arrives on the cached connection; the next read sees it.
        for _ in range(200):
            if cached.get("profile") == b"v2":
                break
            time.sleep(0.01)  # the push is read on the cached client's next call
        assert cached.get("profile") == b"v2"
        writer.flushdb()
        for _ in range(100):
            if cached.get("profile") is None:
                break
        assert cached.get("profile") is None
    finally:
        cached.close()
        writer.close()


def test_tracking_invalidation_on_expiry_via_clock() -> None:
    with resplite.serve() as srv:
        conn = RawClient(srv.host, srv.port)
        conn.call("HELLO", "3")
        assert conn.call("CLIENT", "TRACKING", "ON") == b"+OK\r\n"
        conn.call("SET", "k", "v", "PX", "1000")
        assert conn.call("GET", "k") == b"$1\r\nv\r\n"
        srv.clock.advance(1_000)
        assert conn.read_reply() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
        conn.close()


# -- MONITOR -------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed")
def test_redis_cli_monitor_shows_commands(server: ServerProcess) -> None:
    cli = subprocess.Popen(["redis-cli", "-h", server.host, "-p", str(server.port), "monitor"],
                           stdout=subprocess.PIPE, text=True)
    try:
        assert cli.stdout is not None
        assert cli.stdout.readline().strip() == "OK"
        r = _client(server, 2)
        r.set("greeting", "hello world")
        r.get("greeting")
        r.execute_command("ECHO", 'q"uote\n')
        lines: list[str] = []
        while not lines or '"ECHO"' not in lines[-1]:
            line = cli.stdout.readline().strip()
            if "SETINFO" not in line:  # redis-py's handshake
                lines.append(line)
        assert lines[0].endswith('"SET" "greeting" "hello world"'), lines
        assert lines[1].endswith('"GET" "greeting"'), lines
        assert lines[2].endswith('"ECHO" "q\\"uote\\n"'), lines
        assert " [0 127.0.0.1:" in lines[0]
        r.close()
    finally:
        procs.stop(cli, 5)


def test_monitor_redacts_auth_and_hello(server: ServerProcess) -> None:
    mon = RawClient(server.host, server.port)
    assert mon.call("MONITOR") == b"+OK\r\n"
    other = RawClient(server.host, server.port)
    other.call("AUTH", "default", "pw")
    other.call("HELLO", "2", "AUTH", "default", "pw", "SETNAME", "me")
    other.call("PING")
    lines = [mon.read_reply() for _ in range(3)]
    assert lines[0].endswith(b'] "AUTH" "(redacted)" "(redacted)"\r\n'), lines
    assert lines[1].endswith(
        b'] "HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "me"\r\n'), lines
    assert lines[2].endswith(b'] "PING"\r\n'), lines
    assert mon.call("GET", "k") == b"-ERR Replica can't interact with the keyspace\r\n"
    other.close()
    mon.close()


# -- a subscriber that does not read --------------------------------------------------------------


def test_slow_subscriber_is_dropped_at_its_output_limit() -> None:
    srv = start_resplite("--client-output-buffer-limit", "pubsub 256kb 128kb 60")
    try:
        slow = socket.create_connection((srv.host, srv.port))
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nfeed\r\n")
        reader = RawClient(srv.host, srv.port)
        reader.call("SUBSCRIBE", "feed")
        publisher = RawClient(srv.host, srv.port)
        payload = b"x" * 16_384
        assert publisher.call("PUBLISH", "feed", payload) == b":2\r\n"
        assert reader.read_reply().endswith(payload + b"\r\n")
        for _ in range(10_000):
            receivers = publisher.call("PUBLISH", "feed", payload)
            # The reading subscriber keeps up and gets every message.
            assert reader.read_reply().endswith(payload + b"\r\n")
            if receivers == b":1\r\n":
                break  # the slow one is gone
        else:
            raise AssertionError("the slow subscriber was never dropped")
        assert publisher.call("PUBSUB", "NUMSUB", "feed") == b"*2\r\n$4\r\nfeed\r\n:1\r\n"
        assert publisher.call("PUBLISH", "feed", "after") == b":1\r\n"
        assert reader.read_reply().endswith(b"$5\r\nafter\r\n")
        assert publisher.call("PING") == b"+PONG\r\n"
        slow.close()
        reader.close()
        publisher.close()
    finally:
        srv.stop()
