"""LATENCY and INFO latencystats (``resplite/commands/latency.py``) against a real Redis 7.0.

Deterministic replies (HELP's shape, errors, an empty monitor, RESET counts) are compared
byte for byte under RESP2 and RESP3. Replies that carry times and durations are compared
with the numbers blanked: the latency monitor after a DEBUG SLEEP both servers sample, the
histograms (same commands, same call counts, buckets from Redis's series of powers of two,
cumulative), INFO latencystats (same field names, Redis's number format). DOCTOR's advice
is resplite's own wording: only the event lines, whose format is Redis's, are compared.

Tests that change configuration restore it, because the servers are shared by the session.
"""

from __future__ import annotations

import re

import pytest
import redis
from support import normalize
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair
from support.resptree import Node, dump, parse, to_python

from resplite.algorithms import sparkline

# histogram_usec keys Redis can report: the highest value equivalent to each power of two
# from 1024 ns, in microseconds (1, 2, 4, 8, 16, 33, 66, 132, ...), and the last counter's.
_BUCKETS = {((1 << k) + (1 << (k - 7)) - 1) // 1000 for k in range(10, 30)} | {1073741}


def _numbers_blanked(data: bytes) -> bytes:
    """A reply with every integer (and every digit run inside strings) replaced."""
    return dump(_blank(parse(data)))


def _blank(node: Node) -> Node:
    kind, payload = node
    if kind == b":":
        return kind, b"0"
    if kind in (b"$", b"=", b"+") and payload is not None:
        return kind, re.sub(rb"\d+", b"N", payload)
    if kind in (b"*", b"~") and payload is not None:
        return kind, [_blank(x) for x in payload]
    if kind == b"%":
        return kind, [(_blank(k), _blank(v)) for k, v in payload]
    return node


def _map_items(node: Node) -> list[tuple[Node, Node]]:
    kind, payload = node
    if kind == b"%":
        return list(payload)
    assert kind == b"*", node
    return list(zip(payload[::2], payload[1::2], strict=True))


def _histograms(pair: Pair, data: bytes) -> dict[str, tuple[int, list[tuple[int, int]]]]:
    """LATENCY HISTOGRAM's reply checked for its types, as command -> (calls, buckets)."""
    node = parse(data)
    assert node[0] == (b"%" if pair.resp == 3 else b"*")
    out = {}
    for name, entry in _map_items(node):
        assert name[0] == b"$" and entry[0] == node[0]
        fields = {k[1]: v for k, v in _map_items(entry)}
        assert list(fields) == [b"calls", b"histogram_usec"]
        assert fields[b"calls"][0] == b":" and fields[b"histogram_usec"][0] == node[0]
        buckets = []
        for usec, count in _map_items(fields[b"histogram_usec"]):
            assert usec[0] == b":" and count[0] == b":"
            buckets.append((int(usec[1]), int(count[1])))
        out[name[1].decode()] = (int(fields[b"calls"][1]), buckets)
    return out


def _check_buckets(calls: int, buckets: list[tuple[int, int]]) -> None:
    assert buckets, "a command with calls has at least one bucket"
    assert all(usec in _BUCKETS for usec, _ in buckets), buckets
    assert [u for u, _ in buckets] == sorted({u for u, _ in buckets})
    counts = [c for _, c in buckets]
    assert counts == sorted(counts) and counts[-1] == calls and counts[0] > 0


def test_help_has_the_shape_of_redis(pair: Pair) -> None:
    ref, ours = pair.both("LATENCY", "HELP")
    assert_same_shape(ref, ours, ours_has=implemented("LATENCY"))


def test_an_empty_monitor(pair: Pair) -> None:
    pair.both("LATENCY", "RESET")
    pair.check_all([
        ("LATENCY", "LATEST"),
        ("LATENCY", "HISTORY", "command"),
        ("LATENCY", "HISTORY", "no-such-event"),
        ("LATENCY", "GRAPH", "command"),
        ("LATENCY", "GRAPH", "odd name\twith tab"),
        ("LATENCY", "RESET"),
        ("LATENCY", "RESET", "command", "fast-command", "x"),
    ])


def test_argument_errors(pair: Pair) -> None:
    pair.check_all([
        ("LATENCY",),
        ("LATENCY", "foo"),
        ("LATENCY", "HISTORY"),
        ("LATENCY", "HISTORY", "a", "b"),
        ("LATENCY", "GRAPH"),
        ("LATENCY", "graph", "a", "b"),
        ("LATENCY", "LATEST", "x"),
        ("LATENCY", "DOCTOR", "x"),
        ("LATENCY", "HELP", "x"),
    ])


def test_doctor_with_the_monitor_off(pair: Pair) -> None:
    pair.both("LATENCY", "RESET")
    ref, ours = pair.both("LATENCY", "DOCTOR")
    assert ref[:1] == ours[:1] == (b"=" if pair.resp == 3 else b"$")
    assert b"latency-monitor-threshold" in normalize.verbatim_text(ours)


def test_a_slow_command_is_sampled(pair: Pair) -> None:
    with pair.configured(latency_monitor_threshold="15"):
        pair.both("LATENCY", "RESET")
        pair.both("DEBUG", "SLEEP", "0.02")
        ref, ours = pair.both("LATENCY", "LATEST")
        assert _numbers_blanked(ours) == _numbers_blanked(ref)
        (event,) = to_python(parse(ours))
        assert event[0] == "command" and event[2] >= 20 and event[3] >= 20
        ref, ours = pair.both("LATENCY", "HISTORY", "command")
        assert _numbers_blanked(ours) == _numbers_blanked(ref)
        assert len(to_python(parse(ours))) == 1
        pair.check("LATENCY", "HISTORY", "COMMAND")  # exact names: nothing
        ref, ours = pair.both("LATENCY", "GRAPH", "command")
        assert _numbers_blanked(ours) == _numbers_blanked(ref)
        ref, ours = pair.both("LATENCY", "DOCTOR")
        assert ref[:1] == ours[:1]
        ref_line = normalize.verbatim_text(ref).split(b"\n")[2]
        our_line = normalize.verbatim_text(ours).split(b"\n")[2]
        assert re.sub(rb"\d+", b"N", our_line) == re.sub(rb"\d+", b"N", ref_line)
        assert our_line.startswith(b"1. command: 1 latency spikes (average ")
        pair.check("LATENCY", "RESET", "Command", "COMMAND", "fast-command")
        pair.check("LATENCY", "LATEST")


def test_graph_draws_redis_s_sparkline(pair: Pair) -> None:
    """Redis's GRAPH rows for samples in three different seconds equal our renderer's
    drawing of its HISTORY (the labels depend on the second GRAPH runs in)."""
    if pair.resp == 3:
        pytest.skip("the drawing does not depend on the protocol")
    ref = pair.ref
    ref.call("CONFIG", "SET", "latency-monitor-threshold", "15")
    try:
        ref.call("LATENCY", "RESET")
        for seconds in ("0.02", "1.0", "1.05"):
            ref.call("DEBUG", "SLEEP", seconds)
        history = to_python(parse(ref.call("LATENCY", "HISTORY", "command")))
        graph = normalize.verbatim_text(ref.call("LATENCY", "GRAPH", "command")).decode()
    finally:
        ref.call("CONFIG", "SET", "latency-monitor-threshold", "0")
        ref.call("LATENCY", "RESET")
    assert len(history) == 3
    ours = sparkline.render([(float(ms), "") for _, ms in history])
    assert graph.split("\n")[2:6] == ours.split("\n")[:4]


def test_histograms_after_resetstat(pair: Pair) -> None:
    pair.check("CONFIG", "RESETSTAT")
    for _ in range(3):
        pair.check("SET", "k", "v")
    pair.check("GET", "k")
    pair.check("GET")  # refused: no histogram entry
    pair.check("CONFIG", "GET", "hz")
    ref, ours = pair.both("LATENCY", "HISTOGRAM", "set", "GET", "config", "nosuch", "xgroup")
    ref_h, our_h = _histograms(pair, ref), _histograms(pair, ours)
    assert sorted(our_h) == sorted(ref_h) == ["config|get", "config|resetstat", "get", "set"]
    for name, (calls, buckets) in our_h.items():
        assert calls == ref_h[name][0]
        _check_buckets(calls, buckets)
        _check_buckets(*ref_h[name])
    ref, ours = pair.both("LATENCY", "HISTOGRAM")
    ref_h, our_h = _histograms(pair, ref), _histograms(pair, ours)
    assert sorted(our_h) == sorted(ref_h)
    assert {n: c for n, (c, _) in our_h.items()} == {n: c for n, (c, _) in ref_h.items()}
    pair.check("LATENCY", "HISTOGRAM", "nosuch")
    pair.check("CONFIG", "RESETSTAT")
    ref, ours = pair.both("LATENCY", "HISTOGRAM")
    assert list(_histograms(pair, ours)) == list(_histograms(pair, ref)) == ["config|resetstat"]


def test_tracking_off_keeps_histograms(pair: Pair) -> None:
    pair.check("CONFIG", "RESETSTAT")
    pair.check("GET", "k")
    with pair.configured(latency_tracking="no"):
        pair.check("GET", "k")
        ref, ours = pair.both("LATENCY", "HISTOGRAM", "get")
        assert _histograms(pair, ours)["get"][0] == _histograms(pair, ref)["get"][0] == 1
        ref_info, our_info = pair.info("latencystats")
        assert our_info == ref_info == {"Latencystats": []}


_PERCENTILES = r"(p[\d.]+=\d+\.\d{3}(,|$))*"


@pytest.mark.parametrize("setting", ["50 99 99.9", "0 12.5 100", "99.99", ""])
def test_info_latencystats(pair: Pair, setting: str) -> None:
    with pair.configured(latency_tracking_info_percentiles=setting):
        pair.check("CONFIG", "RESETSTAT")
        pair.check("SET", "k", "v")
        pair.check("GET", "k")
        pair.check("HSET", "h", "f", "v")
        ref_info, our_info = pair.info("latencystats")
        assert list(our_info) == list(ref_info) == ["Latencystats"]
        ref_fields = dict(ref_info["Latencystats"])
        our_fields = dict(our_info["Latencystats"])
        assert sorted(our_fields) == sorted(ref_fields)
        assert "latency_percentiles_usec_config|resetstat" in our_fields
        for name, value in our_fields.items():
            assert re.fullmatch(_PERCENTILES, value), value
            assert re.sub(r"=[\d.]+", "=", value) == re.sub(r"=[\d.]+", "=", ref_fields[name])


def test_info_places_latencystats_as_redis_does(pair: Pair) -> None:
    ref_info, our_info = pair.info()
    assert "Latencystats" not in our_info and "Latencystats" not in ref_info
    for section in ("all", "everything"):
        ref_info, our_info = pair.info(section)
        ref_order, our_order = list(ref_info), list(our_info)
        position = our_order.index("Latencystats")
        assert our_order[position - 1: position + 2] == ["Errorstats", "Latencystats", "Cluster"]
        position = ref_order.index("Latencystats")
        assert ref_order[position - 1: position + 2] == ["Errorstats", "Latencystats", "Cluster"]


def test_redis_py_latency_methods(pair: Pair) -> None:
    if pair.resp == 3:
        pytest.skip("redis-py picks its own protocol")
    clients = [redis.Redis(*conn.sock.getpeername()[:2]) for conn in (pair.ref, pair.ours)]
    try:
        for client in clients:
            client.config_set("latency-monitor-threshold", 15)
            client.latency_reset()
            client.execute_command("DEBUG", "SLEEP", "0.02")
        results = [(c.latency_latest(), c.latency_history("command"), c.latency_reset("command"))
                   for c in clients]
        for latest, history, reset in results:
            assert [e[0] for e in latest] == [b"command"]
            assert len(history) == 1 and history[0][1] >= 20
            assert reset == 1
    finally:
        for client in clients:
            client.config_set("latency-monitor-threshold", 0)
            client.latency_reset()
            client.close()
