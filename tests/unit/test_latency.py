"""The latency histograms and the latency monitor, without a socket.

The HDR layout and what it reports are checked against brute-force computations over the
raw durations (hypothesis, bounded) and against a literal, counter-by-counter walk of the
reporting loop Redis runs; the figures the reference Redis 7.0 printed for known durations
are pinned. The dispatcher's fast and general paths must record the same way, with
``latency-tracking`` on and off, and CONFIG RESETSTAT must forget the histograms.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.algorithms import hdr, sparkline
from resplite.commands import command_table
from resplite.commands import latency as latency_commands
from resplite.commands.latency import doctor_report
from resplite.engine.client import Client
from resplite.engine.config import Config
from resplite.engine.info import fields, render
from resplite.engine.latency import SERIES_LEN, CommandHistogram
from resplite.engine.state import ServerState
from resplite.protocol.replies import OK, ErrorReply, Verbatim

# -- the HDR layout ---------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=hdr.HIGHEST))
def test_a_value_lies_within_its_counter_to_two_significant_figures(value: int) -> None:
    index = hdr.index_of(value)
    assert 0 <= index < hdr.COUNTS_LEN
    low, high = hdr.value_at_index(index), hdr.highest_equivalent(value)
    assert low == hdr.lowest_equivalent(value) <= value <= high
    assert (high - low + 1) * 128 <= max(low, 128)
    if value:
        assert hdr.index_of(value - 1) <= index


def test_the_reference_printed_these_figures() -> None:
    # Redis 7.0: a 5 us GET is p50=5.023, p0=4.992, histogram bucket 8; DEBUG SLEEP of
    # 10 ms and 20 ms land in the buckets 16908 and 33816.
    assert hdr.highest_equivalent(5000) == 5023
    assert hdr.lowest_equivalent(5000) == 4992
    assert hdr.highest_equivalent(7000) == 7007
    assert hdr.highest_equivalent(2000) == 2007
    h = CommandHistogram()
    h.record_us(5)
    assert h.percentiles_usec([0.0, 12.5, 50.0, 99.9, 100.0]) == (
        "p0=4.992,p12.5=5.023,p50=5.023,p99.9=5.023,p100=5.023")
    assert h.cdf() == {b"calls": 1, b"histogram_usec": {8: 1}}
    slow = CommandHistogram()
    slow.record_us(10_012)
    slow.record_us(20_015)
    assert slow.cdf() == {b"calls": 2, b"histogram_usec": {16908: 1, 33816: 2}}


def _brute_percentile(values_ns: list[int], p: float) -> int:
    ordered = sorted(values_ns)
    rank = max(1, int(min(p, 100.0) / 100 * len(ordered) + 0.5))
    at = ordered[rank - 1]
    return hdr.lowest_equivalent(at) if p == 0.0 else hdr.highest_equivalent(at)


def _literal_log_walk(values_ns: list[int]) -> list[tuple[int, int]]:
    """Redis's reporting loop, counter by counter over the dense array of counts."""
    counts = [0] * hdr.COUNTS_LEN
    for v in values_ns:
        counts[hdr.index_of(v)] += 1
    total = len(values_ns)
    rows: list[tuple[int, int]] = []
    index, cumulative, value, top = -1, 0, 0, 0
    level = 1024
    previous = 0
    while cumulative < total:
        while value < hdr.lowest_equivalent(level):
            index += 1
            if index >= hdr.COUNTS_LEN:
                break
            cumulative += counts[index]
            value = hdr.value_at_index(index)
            top = hdr.highest_equivalent(value)
        if cumulative > previous:
            rows.append((top // 1000, cumulative))
        previous = cumulative
        level *= 2
        if index >= hdr.COUNTS_LEN:
            break
    return rows


durations_us = st.lists(
    st.one_of(st.integers(0, 300), st.integers(0, 2_000_000)), min_size=1, max_size=60)
percentiles = st.lists(
    st.one_of(st.sampled_from([0.0, 50.0, 99.0, 99.9, 100.0]), st.floats(0.0, 100.0)),
    min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(durations_us, percentiles)
def test_percentiles_agree_with_a_brute_force_count(us: list[int], ps: list[float]) -> None:
    h = CommandHistogram()
    for d in us:
        h.record_us(d)
    values_ns = [hdr.clamp(d * 1000) for d in us]
    expected = ",".join(
        f"p{f'{p:f}'.rstrip('0').rstrip('.')}={_brute_percentile(values_ns, p) / 1000.0:.3f}"
        for p in ps)
    assert h.percentiles_usec(ps) == expected
    assert h.calls() == len(us)


@settings(max_examples=150, deadline=None)
@given(durations_us)
def test_histogram_buckets_agree_with_the_literal_walk(us: list[int]) -> None:
    h = CommandHistogram()
    for d in us:
        h.record_us(d)
    rows = _literal_log_walk([hdr.clamp(d * 1000) for d in us])
    assert h.cdf() == {b"calls": len(us), b"histogram_usec": dict(rows)}
    assert rows[-1][1] == len(us)


def test_a_duration_past_one_second_is_reported_at_the_last_bucket() -> None:
    h = CommandHistogram()
    h.record_us(5_000_000)
    assert h.cdf() == {b"calls": 1, b"histogram_usec": {1073741: 1}}


# -- sparklines -----------------------------------------------------------------------------


def test_sparkline_of_one_sample() -> None:
    assert sparkline.render([(20.0, "0s")]) == " \n \n \n_\n \n0\ns\n"


def test_sparkline_scales_between_min_and_max() -> None:
    text = sparkline.render([(20.0, "3s"), (5.0, "2s"), (50.0, "0s")])
    assert text.split("\n")[:4] == ["  #", "  |", "o |", "|_|"]
    assert text.split("\n")[4:7] == ["   ", "320", "sss"]


def test_sparkline_wraps_past_the_columns() -> None:
    # Steps int(int(v * 3) / 4) for 0..4, the last clipped to 2; no labels, no margin.
    text = sparkline.render([(float(i), "") for i in range(5)], columns=3, rows=1)
    assert text == "__o\n\n##\n"


# -- the dispatcher, the monitor and the report -------------------------------------------


@pytest.fixture
def state() -> ServerState:
    s = ServerState(Config(), table=command_table())
    s.clock.freeze()
    return s


def _run(state: ServerState, *argv: bytes) -> object:
    return state.dispatcher.execute(Client(state, 1, None), list(argv))


def _histogram(state: ServerState, *names: bytes) -> dict[bytes, object]:
    reply = _run(state, b"LATENCY", b"HISTOGRAM", *names)
    assert isinstance(reply, dict)
    return reply


def test_both_dispatch_paths_record_histograms(state: ServerState) -> None:
    assert _run(state, b"SET", b"k", b"v") is OK  # fast path
    assert _run(state, b"sEt", b"k", b"v") is OK  # general path
    assert _run(state, b"CONFIG", b"GET", b"hz") == {b"hz": b"10"}  # container
    hist = _histogram(state, b"set", b"config")
    assert set(hist) == {b"set", b"config|get"}
    assert hist[b"set"][b"calls"] == 2  # type: ignore[index]
    info = fields(render(state, ["latencystats", "commandstats"]))
    assert info["cmdstat_set"].startswith("calls=2,")
    assert info["latency_percentiles_usec_set"].startswith("p50=")


def test_a_long_call_is_recorded_past_the_direct_counts(state: ServerState) -> None:
    state.config.set("enable-debug-command", "yes", at_startup=True)
    assert _run(state, b"DEBUG", b"SLEEP", b"0.001") is OK
    hist = _histogram(state, b"debug")[b"debug"]
    assert hist[b"calls"] == 1  # type: ignore[index]
    (bucket,) = hist[b"histogram_usec"]  # type: ignore[index]
    assert bucket >= 1000
    assert fields(render(state, ["commandstats"]))["cmdstat_debug"].startswith("calls=1,")


def test_tracking_off_keeps_the_histograms_and_counts_calls(state: ServerState) -> None:
    _run(state, b"GET", b"k")
    assert _run(state, b"CONFIG", b"SET", b"latency-tracking", b"no") is OK
    _run(state, b"GET", b"k")
    _run(state, b"GET", b"k")
    assert _histogram(state, b"get")[b"get"][b"calls"] == 1  # type: ignore[index]
    assert fields(render(state, ["commandstats"]))["cmdstat_get"].startswith("calls=3,")
    assert render(state, ["latencystats"]) == b"# Latencystats\r\n"
    assert _run(state, b"CONFIG", b"SET", b"latency-tracking", b"yes") is OK
    _run(state, b"GET", b"k")
    assert _histogram(state, b"get")[b"get"][b"calls"] == 2  # type: ignore[index]
    assert fields(render(state, ["commandstats"]))["cmdstat_get"].startswith("calls=4,")


def test_resetstat_forgets_the_histograms(state: ServerState) -> None:
    _run(state, b"GET", b"k")
    assert _run(state, b"CONFIG", b"RESETSTAT") is OK
    assert set(_histogram(state)) == {b"config|resetstat"}


def test_series_keep_one_sample_per_second_and_160_at_most(state: ServerState) -> None:
    monitor = state.latency
    monitor.add("expire-cycle", 5)
    monitor.add("expire-cycle", 3)
    monitor.add("expire-cycle", 9)
    assert len(monitor.history("expire-cycle")) == 1
    assert monitor.history("expire-cycle")[0][1] == 9
    for _ in range(SERIES_LEN + 5):
        state.clock.advance(1000)
        monitor.add("expire-cycle", 1)
    history = monitor.history("expire-cycle")
    assert len(history) == SERIES_LEN
    assert history == sorted(history)
    now = state.clock.time_ms() // 1000
    assert monitor.latest() == [[b"expire-cycle", now, 1, 9]]
    assert _run(state, b"LATENCY", b"RESET", b"EXPIRE-CYCLE", b"expire-cycle") == 1
    assert monitor.latest() == []


def test_threshold_decides_what_is_sampled(state: ServerState) -> None:
    monitor = state.latency
    monitor.sample_ns("command", 50_000_000)
    assert monitor.latest() == []  # monitor off
    state.config.set("latency-monitor-threshold", "10")
    monitor.sample_ns("command", 9_999_999)
    assert monitor.latest() == []
    monitor.sample_ns("command", 10_000_000)
    assert monitor.history("command")[0][1] == 10


def test_graph_and_errors(state: ServerState) -> None:
    reply = _run(state, b"LATENCY", b"GRAPH", b"command")
    assert reply == ErrorReply("ERR No samples available for event 'command'")
    state.config.set("latency-monitor-threshold", "1")
    state.latency.add("command", 20)
    graph = _run(state, b"LATENCY", b"GRAPH", b"command")
    assert isinstance(graph, Verbatim)
    assert graph.text == (b"command - high 20 ms, low 20 ms (all time high 20 ms)\n"
                          + b"-" * 80 + b"\n \n \n \n_\n \n0\ns\n")
    # Exact names for HISTORY and GRAPH; any case for RESET.
    assert _run(state, b"LATENCY", b"HISTORY", b"COMMAND") == []


def test_doctor_report_structure(state: ServerState, monkeypatch: pytest.MonkeyPatch) -> None:
    # The huge-pages advice depends on the machine (Redis gives it whenever the process
    # has transparent huge pages): left out here.
    monkeypatch.setattr(latency_commands, "anon_huge_pages", lambda: 0)
    assert "latency-monitor-threshold" in doctor_report(state)
    state.config.set("latency-monitor-threshold", "5")
    assert doctor_report(state).startswith("No latency spike")
    state.latency.add("command", 30)
    state.clock.advance(2000)
    state.latency.add("command", 10)
    state.latency.add("expire-cycle", 7)
    report = doctor_report(state)
    lines = report.splitlines()
    assert lines[2] == ("1. command: 2 latency spikes (average 20ms, mean deviation 10ms, "
                        "period 1.00 sec). Worst all time event 30ms.")
    assert lines[3] == ("2. expire-cycle: 1 latency spikes (average 7ms, mean deviation 0ms, "
                        "period 1.00 sec). Worst all time event 7ms.")
    assert "slowlog-log-slower-than 5000" in report  # 10 ms slow log > 5 ms threshold
    assert "'CONFIG SET hz 100'" in report


def test_eviction_samples_the_cycle_and_each_deletion(
        state: ServerState, monkeypatch: pytest.MonkeyPatch) -> None:
    from resplite.engine import evict

    for i in range(20):
        assert _run(state, b"SET", b"k%d" % i, b"x" * 1000) is OK
    state.config.set("latency-monitor-threshold", "1")
    state.config.set("maxmemory-policy", "allkeys-random")
    state.config.set("maxmemory", str(state.used_memory() - 5000))
    # The evictor's clock moves 2 ms per reading: every deletion and the run reach 1 ms.
    ticks = iter(range(0, 10**12, 2_000_000))
    monkeypatch.setattr(evict, "_now_ns", lambda: next(ticks))
    state.evictor.perform()
    events = {name: latest for name, _, latest, _ in state.latency.latest()}
    assert events[b"eviction-del"] == 2
    assert events[b"eviction-cycle"] >= 4


@pytest.mark.parametrize(("slowlog_us", "monitor_ms", "logged", "sampled"), [
    ("10000", "1", False, True),   # the monitor's threshold is the lower one
    ("0", "0", True, False),       # the slow log alone
    ("1000", "1", True, True),
    ("-1", "5", False, False),     # both above the call's 2 ms
])
def test_one_comparison_serves_the_slow_log_and_the_monitor(
        state: ServerState, slowlog_us: str, monitor_ms: str, logged: bool,
        sampled: bool) -> None:
    state.config.set("slowlog-log-slower-than", slowlog_us)
    state.config.set("latency-monitor-threshold", monitor_ms)
    ticks = iter(range(0, 10**12, 2_000_000))  # every call lasts 2 ms
    state.dispatcher.now_ns = lambda: next(ticks)
    _run(state, b"GET", b"k")  # fast path, a fast command
    _run(state, b"Set", b"k", b"v")  # general path, not fast
    assert len(state.slowlog.entries) == (2 if logged else 0)
    events = [name for name, *_ in state.latency.latest()]
    assert events == ([b"fast-command", b"command"] if sampled else [])
