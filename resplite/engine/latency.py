"""The latency monitor (LATENCY LATEST/HISTORY/GRAPH/DOCTOR/RESET) and the per-command
latency histograms (LATENCY HISTOGRAM, INFO latencystats).

The monitor
-----------
With ``latency-monitor-threshold`` N > 0 (milliseconds), every monitored operation that
takes at least N ms adds a sample to its event's time series; 0 turns the monitor off. The
events resplite has, under Redis's names: ``command`` and ``fast-command`` (a command's
own run, by its ``fast`` flag), ``expire-cycle`` (one active-expiry pass of the cron),
``eviction-cycle`` and ``eviction-del`` (an eviction run under ``maxmemory``, and each
key it deletes), ``aof-write`` with ``aof-write-alone`` / ``aof-write-active-child`` (a
write of the append-only buffer, with or without a rewrite or save child running),
``aof-fsync-always``, ``aof-rename`` (installing a rewritten base) and ``fork``.

A series keeps the latest 160 samples, at most one per second of the server clock (a
second's sample keeps the highest latency seen in it), and the highest latency since the
series was created or reset. Series are created on their first sample, in that order.

The histograms
--------------
Each command's statistics (:class:`resplite.engine.state.CommandStats`) carry a
:class:`CommandHistogram` of its durations as Redis records them: microseconds turned into
nanoseconds, clamped to 1 ns .. 1 s, counted in the layout of :mod:`resplite.algorithms.hdr`.
Recording is the dispatcher's per-request cost, so it is kept to one list increment: the
durations under :data:`DIRECT_US` microseconds (nearly every command) are counted per
microsecond in ``direct``, which the dispatcher indexes with the duration itself (an
``IndexError`` sends a longer one, through ``CommandStats.record_long``, to
:meth:`CommandHistogram.record_us`, which counts it at its HDR counter). The exact HDR
counts are rebuilt from both when the histogram is read.
While ``latency-tracking`` is off the dispatcher counts into another list of the command's
statistics, so switching tracking costs nothing per request; the counts kept stay visible
to LATENCY HISTOGRAM, as in Redis. The two lists together are the command's call count
(INFO commandstats ``calls``), which is therefore not counted separately.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from resplite.algorithms import hdr, sparkline

if TYPE_CHECKING:
    from resplite.engine.clock import Clock
    from resplite.engine.config import Config

SERIES_LEN = 160
GRAPH_COLUMNS = 80
GRAPH_ROWS = 4
# Durations (in whole microseconds) counted directly; longer ones take the general path.
DIRECT_US = 256
_OFF = 1 << 63  # a trigger no duration reaches

# The HDR counter of each directly counted duration (0 us is recorded as 1 ns).
_DIRECT_INDEX = [hdr.index_of(hdr.clamp(us * 1000)) for us in range(DIRECT_US)]


class CommandHistogram:
    """One command's recorded durations (see the module docstring for the two parts)."""

    __slots__ = ("direct", "long")

    def __init__(self) -> None:
        self.direct = [0] * DIRECT_US
        self.long: dict[int, int] = {}  # HDR counter -> count, durations >= DIRECT_US us

    def record_us(self, us: int) -> None:
        if us < DIRECT_US:
            self.direct[us] += 1
            return
        index = hdr.index_of(hdr.clamp(us * 1000))
        self.long[index] = self.long.get(index, 0) + 1

    def counts(self) -> list[tuple[int, int]]:
        """The HDR counts, as ascending ``(counter, count)`` pairs."""
        merged: dict[int, int] = dict(self.long)
        for us, count in enumerate(self.direct):
            if count:
                index = _DIRECT_INDEX[us]
                merged[index] = merged.get(index, 0) + count
        return sorted(merged.items())

    def calls(self) -> int:
        return sum(self.direct) + sum(self.long.values())

    def cdf(self) -> dict[bytes, Any]:
        """LATENCY HISTOGRAM's entry for the command."""
        counts = self.counts()
        return {
            b"calls": hdr.total(counts),
            b"histogram_usec": dict(hdr.power_of_two_buckets(counts)),
        }

    def percentiles_usec(self, percentiles: Iterable[float]) -> str:
        """INFO latencystats' value: ``p50=1.003,p99=...`` (microseconds, 3 decimals)."""
        counts = self.counts()
        return ",".join(
            f"p{_percentile_name(p)}={hdr.value_at_percentile(counts, p) / 1000.0:.3f}"
            for p in percentiles
        )


def _percentile_name(p: float) -> str:
    """A percentile as Redis names it: ``%f`` with trailing zeros (and dot) removed."""
    text = f"{p:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


class Sample(NamedTuple):
    time_s: int
    latency_ms: int


class Series:
    """One event's latest samples (oldest first) and its all-time high."""

    __slots__ = ("max", "samples")

    def __init__(self) -> None:
        self.samples: deque[Sample] = deque(maxlen=SERIES_LEN)
        self.max = 0

    def add(self, now_s: int, latency_ms: int) -> None:
        if latency_ms > self.max:
            self.max = latency_ms
        samples = self.samples
        if samples and samples[-1].time_s == now_s:
            if latency_ms > samples[-1].latency_ms:
                samples[-1] = Sample(now_s, latency_ms)
            return
        samples.append(Sample(now_s, latency_ms))


class EventStats(NamedTuple):
    samples: int
    avg: int
    mad: int
    period_s: int


def _ago(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


class LatencyMonitor:
    """The events' time series and the threshold that feeds them (one per server)."""

    __slots__ = ("clock", "events", "threshold_ms", "trigger_ns")

    def __init__(self, config: Config, clock: Clock) -> None:
        self.clock = clock
        self.events: dict[str, Series] = {}
        self.threshold_ms = 0
        self.trigger_ns = _OFF
        self._set_threshold("latency-monitor-threshold", config["latency-monitor-threshold"])
        config.on_change("latency-monitor-threshold", self._set_threshold)

    def _set_threshold(self, name: str, value: Any) -> None:
        self.threshold_ms = int(value)
        # A duration reaches the threshold when its whole milliseconds do.
        self.trigger_ns = self.threshold_ms * 1_000_000 if self.threshold_ms > 0 else _OFF

    @property
    def enabled(self) -> bool:
        return self.threshold_ms > 0

    def sample_ns(self, event: str, elapsed_ns: int) -> None:
        """Record ``event`` if ``elapsed_ns`` reaches the threshold."""
        if elapsed_ns >= self.trigger_ns:
            self.add(event, elapsed_ns // 1_000_000)

    def add(self, event: str, latency_ms: int) -> None:
        series = self.events.get(event)
        if series is None:
            series = self.events[event] = Series()
        series.add(self.clock.time_ms() // 1000, latency_ms)

    def reset(self, names: list[str] | None = None) -> int:
        """Drop the named series (all of them without names; names match in any case);
        returns how many were dropped."""
        if names is None:
            count = len(self.events)
            self.events.clear()
            return count
        count = 0
        for name in names:
            wanted = name.lower()
            for event in [e for e in self.events if e.lower() == wanted]:
                del self.events[event]
                count += 1
        return count

    def latest(self) -> list[list[Any]]:
        """LATENCY LATEST: per event, its name, last sample's time and latency, and max."""
        return [[name.encode(), series.samples[-1].time_s, series.samples[-1].latency_ms,
                 series.max] for name, series in self.events.items()]

    def history(self, event: str) -> list[list[int]]:
        series = self.events.get(event)
        if series is None:
            return []
        return [[s.time_s, s.latency_ms] for s in series.samples]

    def graph(self, event: str) -> str | None:
        """LATENCY GRAPH's text, or None when the event has no series."""
        series = self.events.get(event)
        if series is None:
            return None
        now = self.clock.time_ms() // 1000
        samples = [(float(s.latency_ms), _ago(now - s.time_s)) for s in series.samples]
        values = [s.latency_ms for s in series.samples]
        head = (f"{event} - high {max(values)} ms, low {min(values)} ms "
                f"(all time high {series.max} ms)\n")
        return head + "-" * GRAPH_COLUMNS + "\n" + sparkline.render(
            samples, GRAPH_COLUMNS, GRAPH_ROWS, fill=True)

    def stats(self, event: str) -> EventStats:
        """Sample count, average, mean absolute deviation (ms) and covered period (s)."""
        samples = self.events[event].samples
        n = len(samples)
        if not n:
            return EventStats(0, 0, 0, 0)
        avg = sum(s.latency_ms for s in samples) // n
        mad = sum(abs(avg - s.latency_ms) for s in samples) // n
        period = self.clock.time_ms() // 1000 - min(s.time_s for s in samples)
        return EventStats(n, avg, mad, period if period > 0 else 1)
