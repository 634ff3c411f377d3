"""Splitting an id range of a stream into partitions of about equal entry counts.

Redis cannot count the entries between two ids, nor skip to the n-th entry of a range, so exact
count-based split points would cost a full read on the driver. Splitting the id range evenly is
cheap but badly skewed on bursty streams: an id is a time stamp, and a stream that received a
million entries in one busy minute and a thousand over the previous day would put almost
everything into one partition.

The planner samples instead. It places ``points`` probes evenly across the id range and reads a
short run of consecutive entries at each (all probes go out in one pipeline). Between two probe
points the entry count is then either known exactly (the run starting at the first point reached
the second) or estimated from the density of the run: entries per millisecond, where a run
packed into a single millisecond is measured by that millisecond's highest sequence number (for
server-generated ids, the count of entries in it). Split points are placed where the cumulative
estimate crosses equal shares, at exact ids where the count is exact and interpolated elsewhere.

Invariants: the returned partitions are contiguous, in id order, non-overlapping, and together
cover exactly the requested range, whatever the estimate's quality; only the balance depends on
the sample. The planner is a pure function of the probe replies (see :func:`plan_splits`), so it
is tested without a server.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from resplite.spark.ids import StreamId

RUN_LENGTH = 64
POINTS_PER_PARTITION = 16


@dataclass(frozen=True, slots=True)
class Probe:
    """What one probe saw: up to RUN_LENGTH consecutive ids from ``at``, and, when they all sat in
    one millisecond, that millisecond's highest sequence number (None if not asked)."""

    at: StreamId
    run: Sequence[StreamId]
    top_seq: int | None = None


def probe_points(first: StreamId, last: StreamId, count: int) -> list[StreamId]:
    """``count`` points from ``first`` to ``last`` inclusive, evenly spaced.

    Points are spread over milliseconds when the range spans more than one, else over sequence
    numbers (streams written with explicit ids often keep the millisecond part constant).
    """
    count = max(2, count)
    if last.ms > first.ms:
        span = last.ms - first.ms
        points = [StreamId(first.ms + span * i // (count - 1), 0) for i in range(count)]
        points[0] = first
    else:
        span = last.seq - first.seq
        points = [StreamId(first.ms, first.seq + span * i // (count - 1)) for i in range(count)]
    points[-1] = last
    unique = sorted(set(points))
    return unique


def plan_splits(
    probes: Sequence[Probe], last: StreamId, parts: int
) -> tuple[list[StreamId], float]:
    """Split ids (each starts a partition after the first) and the estimated total count.

    ``probes`` are in point order, the first at the range's first entry; ``last`` is the range's
    last entry.
    """
    if parts <= 1 or not probes:
        return [], float(sum(len(p.run) for p in probes))
    segments: list[_Segment] = []
    for index, probe in enumerate(probes):
        upper = probes[index + 1].at if index + 1 < len(probes) else last.next()
        segments.append(_segment(probe, upper))
    cumulative = [0.0]
    for segment in segments:
        cumulative.append(cumulative[-1] + segment.count)
    total = cumulative[-1]
    splits: list[StreamId] = []
    for k in range(1, parts):
        target = total * k / parts
        index = min(bisect.bisect_right(cumulative, target) - 1, len(segments) - 1)
        candidate = segments[index].locate(target - cumulative[index])
        if candidate <= probes[0].at or (splits and candidate <= splits[-1]) or candidate > last:
            continue
        splits.append(candidate)
    return splits, total


@dataclass(frozen=True, slots=True)
class _Segment:
    """Entries in [start, end): ``exact`` ids when the run covered it, else a density guess."""

    start: StreamId
    end: StreamId
    count: float
    exact: Sequence[StreamId] | None
    per_unit: float  # entries per millisecond (or per sequence number within one millisecond)

    def locate(self, offset: float) -> StreamId:
        """The id about ``offset`` entries after ``start``."""
        if self.exact is not None:
            position = min(int(offset), len(self.exact) - 1)
            return self.exact[max(position, 0)]
        step = int(offset / self.per_unit) if self.per_unit > 0 else 0
        if self.end.ms > self.start.ms:
            return max(self.start, StreamId(min(self.start.ms + step, self.end.ms), 0))
        return StreamId(self.start.ms, min(self.start.seq + step, max(self.end.seq - 1, 0)))


def _segment(probe: Probe, upper: StreamId) -> _Segment:
    inside = [i for i in probe.run if i < upper]
    if len(inside) < len(probe.run) or len(probe.run) < RUN_LENGTH:
        # The run stopped before reaching ``upper`` or crossed it: every entry is known.
        return _Segment(probe.at, upper, float(len(inside)), inside, 0.0)
    # Estimate from where the entries actually begin: a probe may land in a quiet gap.
    run = probe.run
    start = run[0]
    if upper.ms > start.ms:
        width = upper.ms - start.ms
        span = run[-1].ms - start.ms
        if span > 0:
            per_ms = (len(run) - 1) / span
        else:
            per_ms = float(max(len(run), (probe.top_seq or 0) + 1))
        return _Segment(start, upper, max(per_ms * width, len(run)), None, per_ms)
    width = max(upper.seq - start.seq, 1)
    span = max(run[-1].seq - start.seq, 1)
    per_seq = (len(run) - 1) / span
    return _Segment(start, upper, max(per_seq * width, len(run)), None, per_seq)


def plan_ranges(
    first: StreamId,
    last: StreamId,
    parts: int,
    probe: Callable[[Sequence[StreamId]], list[Sequence[StreamId]]],
    top_seq: Callable[[Sequence[int]], dict[int, int]],
) -> tuple[list[StreamId], float]:
    """Probe the server through the two callables and return split ids and estimated total.

    ``probe(points)`` returns, per point, up to RUN_LENGTH ids from that point on; ``top_seq(ms
    list)`` returns the highest sequence number in each given millisecond.
    """
    points = probe_points(first, last, parts * POINTS_PER_PARTITION)
    runs = probe(points)
    dense = sorted(
        {run[0].ms for run in runs if len(run) >= RUN_LENGTH and run[0].ms == run[-1].ms}
    )
    tops = top_seq(dense) if dense else {}
    probes = [
        Probe(at, run, tops.get(run[0].ms) if run else None)
        for at, run in zip(points, runs, strict=True)
    ]
    return plan_splits(probes, last, parts)
