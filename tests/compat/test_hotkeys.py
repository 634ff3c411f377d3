"""HOTKEYS (Redis 8.6, ``resplite/commands/hotkeys.py``): resplite alone, since the 7.0
reference has no such command. Facts from Redis's documentation (fields, their order, the
reply shapes in RESP2 and RESP3, which subcommand fails when) and redis-py's tests against
Redis 8.6; the error texts are resplite's.

The ``xs`` fixture: a flushed resplite under RESP2 then RESP3, its clock frozen, so that
DURATION runs out exactly when the test advances the clock."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import pytest
import redis
from redis.commands.core import HotkeysMetricsTypes
from support.newer import Conn
from support.servers import ServerProcess

from resplite.engine.hotkeys import request_size

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl

pytestmark = pytest.mark.redis_version("8.6")


@pytest.fixture(autouse=True)
def _no_session_left(xs: Conn) -> Any:
    xs.call("HOTKEYS", "STOP")
    xs.call("HOTKEYS", "RESET")
    yield
    xs.call("HOTKEYS", "STOP")
    xs.call("HOTKEYS", "RESET")


def _report(xs: Conn) -> dict[str, Any]:
    reply = xs.v("HOTKEYS", "GET")
    assert isinstance(reply, list) and len(reply) == 1
    entry = reply[0]
    if isinstance(entry, dict):  # RESP3: a map
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in entry.items()}
    return {entry[i].decode() if isinstance(entry[i], bytes) else entry[i]: entry[i + 1]
            for i in range(0, len(entry), 2)}


def test_a_session_reports_its_keys_and_totals(xs: Conn) -> None:
    assert xs.call("HOTKEYS", "GET") in (b"$-1\r\n", b"_\r\n")  # no session yet
    assert xs.call("HOTKEYS", "START", "METRICS", "2", "CPU", "NET", "COUNT", "2") == \
        b"+OK\r\n"
    for _ in range(3):
        xs.call("SET", "hot", "v")
        xs.call("GET", "hot")
    xs.call("SET", "warm", "v")
    xs.call("MSET", "a", "1", "b", "2")
    report = _report(xs)
    assert list(report) == [
        "tracking-active", "sample-ratio", "selected-slots", "all-commands-all-slots-us",
        "net-bytes-all-commands-all-slots", "collection-start-time-unix-ms",
        "collection-duration-ms", "total-cpu-time-user-ms", "total-cpu-time-sys-ms",
        "total-net-bytes", "by-cpu-time-us", "by-net-bytes",
    ]
    assert report["tracking-active"] == 1 and report["sample-ratio"] == 1
    assert report["selected-slots"] == [[0, 16383]]
    # NET: each command's request bytes go to every key it names; the top 2 only.
    hot = 3 * (request_size([b"SET", b"hot", b"v"]) + request_size([b"GET", b"hot"]))
    mset = request_size([b"MSET", b"a", b"1", b"b", b"2"])
    assert report["by-net-bytes"] == ["hot", hot, "a", mset]
    cpu = report["by-cpu-time-us"]
    assert len(cpu) == 4 and all(isinstance(v, int) for v in cpu[1::2])
    assert report["net-bytes-all-commands-all-slots"] >= hot + mset
    assert report["collection-duration-ms"] == 0  # the clock is frozen
    assert xs.call("HOTKEYS", "STOP") == b"+OK\r\n"
    stopped = _report(xs)
    assert stopped["tracking-active"] == 0
    xs.call("SET", "hot", "v")  # not counted any more
    assert _report(xs)["by-net-bytes"] == stopped["by-net-bytes"]
    assert xs.call("HOTKEYS", "RESET") == b"+OK\r\n"
    assert xs.call("HOTKEYS", "GET") in (b"$-1\r\n", b"_\r\n")


def test_metrics_choose_the_fields(xs: Conn) -> None:
    xs.call("HOTKEYS", "START", "METRICS", "1", "NET")
    xs.call("SET", "k", "v")
    report = _report(xs)
    assert "by-net-bytes" in report and "total-net-bytes" in report
    assert "by-cpu-time-us" not in report and "total-cpu-time-user-ms" not in report
    xs.call("HOTKEYS", "STOP")
    xs.call("HOTKEYS", "START", "METRICS", "1", "cpu", "SAMPLE", "5")
    report = _report(xs)
    assert "by-cpu-time-us" in report and "by-net-bytes" not in report
    assert report["sample-ratio"] == 5


def test_duration_stops_the_session(xs: Conn, resplite_clock: ClockControl) -> None:
    xs.call("HOTKEYS", "START", "METRICS", "1", "NET", "DURATION", "10")
    xs.call("SET", "before", "v")
    resplite_clock.advance(10_000)
    xs.call("SET", "after", "v")
    report = _report(xs)
    assert report["tracking-active"] == 0
    assert report["collection-duration-ms"] == 10_000
    assert report["by-net-bytes"][0::2] == ["before"]
    assert xs.call("HOTKEYS", "STOP") == b"-ERR hotkeys tracking is not active\r\n"


def test_errors(xs: Conn) -> None:
    metrics = (b"-ERR METRICS must name 1 or 2 distinct metrics, CPU and/or NET, after their "
               b"count\r\n")
    assert xs.call("HOTKEYS", "STOP") == b"-ERR hotkeys tracking is not active\r\n"
    assert xs.call("HOTKEYS", "START") == b"-ERR syntax error\r\n"
    assert xs.call("HOTKEYS", "START", "COUNT", "1", "METRICS") == b"-ERR syntax error\r\n"
    for bad in (("0",), ("3", "CPU", "NET", "CPU"), ("2", "CPU", "CPU"), ("1", "MEM"),
                ("2", "CPU")):
        assert xs.call("HOTKEYS", "START", "METRICS", *bad) == metrics, bad
    base = ("HOTKEYS", "START", "METRICS", "1", "CPU")
    assert xs.call(*base, "COUNT", "0") == b"-ERR COUNT must be between 1 and 64\r\n"
    assert xs.call(*base, "COUNT", "65") == b"-ERR COUNT must be between 1 and 64\r\n"
    assert xs.call(*base, "SAMPLE", "0") == b"-ERR SAMPLE must be a positive integer\r\n"
    assert xs.call(*base, "DURATION", "-1") == \
        b"-ERR DURATION must be a non-negative integer\r\n"
    assert xs.call(*base, "SLOTS", "1", "0") == b"-ERR SLOTS is only allowed in cluster mode\r\n"
    assert xs.call(*base, "COUNT", "1", "COUNT", "2") == b"-ERR syntax error\r\n"
    assert xs.call(*base, "FOO", "1") == b"-ERR syntax error\r\n"
    assert xs.call(*base) == b"+OK\r\n"
    assert xs.call(*base) == b"-ERR hotkeys tracking is already in progress\r\n"
    assert xs.call("HOTKEYS", "RESET") == \
        b"-ERR hotkeys tracking is active: stop it before RESET\r\n"
    assert xs.call("EVAL", "return redis.call('hotkeys', 'get')", "0").startswith(
        b"-ERR This Redis command is not allowed from script")


def test_hotkeys_with_redis_py(resplite_srv: ServerProcess) -> None:
    """redis-py's hotkeys_* methods, as its own tests against Redis 8.6 use them."""
    r = redis.Redis(host=resplite_srv.host, port=resplite_srv.port)
    try:
        with contextlib.suppress(redis.ResponseError):
            r.hotkeys_stop()  # no session running: an error
        r.hotkeys_reset()
        assert r.hotkeys_start(count=10, metrics=[HotkeysMetricsTypes.CPU,
                                                  HotkeysMetricsTypes.NET],
                               sample_ratio=1) == b"OK"
        for i in range(5):
            r.set(f"key{i}", f"value{i}")
            r.get(f"key{i}")
        ongoing = r.hotkeys_get()
        assert isinstance(ongoing, list) and ongoing[0][b"tracking-active"] == 1
        assert r.hotkeys_stop() == b"OK"
        stopped = r.hotkeys_get()
        assert stopped[0][b"tracking-active"] == 0
        for field in (b"tracking-active", b"sample-ratio", b"selected-slots",
                      b"net-bytes-all-commands-all-slots", b"collection-start-time-unix-ms",
                      b"collection-duration-ms", b"total-cpu-time-user-ms",
                      b"total-cpu-time-sys-ms", b"total-net-bytes", b"by-cpu-time-us",
                      b"by-net-bytes"):
            assert field in stopped[0], field
        with pytest.raises(redis.ResponseError):
            r.hotkeys_start(count=10, metrics=[HotkeysMetricsTypes.CPU], slots=[0, 100])
        assert r.hotkeys_reset() == b"OK"
    finally:
        r.close()
