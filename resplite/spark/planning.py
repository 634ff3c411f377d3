"""Splitting an id range of a stream into partitions of about equal entry counts.

Redis can neither count the entries between two ids nor skip to the n-th entry of a range, so exact
count-based split points would cost a full read on the driver. Splitting the id range evenly is
cheap but badly skewed on bursty streams: an id is a time stamp, and a stream that received a
million entries in one busy minute and a thousand over the rest of the day would put almost
everything into one partition.

The planner samples instead. A *probe* at an id reads a short run of consecutive entries from there
(XRANGE ... COUNT 64); all probes of a round go out in one pipeline. Between two probe points the
entry count is then either known exactly (the run from the first point reached the second, or the
stream ended) or lies in a *gap* after the run, estimated from the entry density (entries per
millisecond) at both ends. A gap whose two ends disagree about the density hides a change of rate,
such as the start or end of a burst: it is probed again in the middle, round after round, which
finds the edges of a burst by bisection. The widest gaps are probed as well, until the estimate
agrees with the total when it is known (the whole stream is read, so XLEN counts it), or until the
probe budget is spent when it is not. A run packed into one millisecond is measured by that
millisecond's highest sequence number, which for server-made ids is its entry count less one.
Streams whose ids all share one millisecond (explicit ids) are sampled along the sequence number
instead.

Invariants: split ids are strictly increasing and lie in ``(first, last]``, so the partitions built
from them are contiguous, ordered, non-overlapping and cover exactly the requested range whatever
the estimate's quality; only the balance depends on the sample. The planner is a pure function of
the probe replies, so it is tested without a server.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from resplite.spark.ids import StreamId

RUN_LENGTH = 64
POINTS_PER_PARTITION = 16
MAX_ROUNDS = 24
#: Two densities further apart than this factor mark a change of rate worth a closer look.
RATE_CHANGE = 2.0

Prober = Callable[[Sequence[StreamId]], list[Sequence[StreamId]]]
TopSeq = Callable[[Sequence[int]], dict[int, int]]


@dataclass(frozen=True, slots=True)
class _Segment:
    """Entries from ``start`` up to the next probe point ``end`` (exclusive).

    ``known`` are the ids read there; when ``exact``, they are all of them; otherwise a gap of
    ``gap_count`` (estimated) entries follows them, spread evenly up to ``end``.
    """

    start: StreamId
    end: StreamId
    known: Sequence[StreamId]
    exact: bool
    gap_count: float = 0.0

    @property
    def count(self) -> float:
        return len(self.known) + self.gap_count


class _Planner:
    def __init__(
        self, first: StreamId, last: StreamId, parts: int, probe: Prober, top_seq: TopSeq
    ) -> None:
        self.first, self.last, self.parts = first, last, parts
        self._probe, self._top_seq = probe, top_seq
        self.by_ms = last.ms > first.ms
        self.runs: dict[StreamId, Sequence[StreamId]] = {}
        self.tops: dict[int, int] = {}
        self.probes = 0

    # Positions: milliseconds, or sequence numbers when the whole range is one millisecond.
    def pos(self, i: StreamId) -> int:
        return i.ms if self.by_ms else i.seq

    def at(self, position: int) -> StreamId:
        return StreamId(position, 0) if self.by_ms else StreamId(self.first.ms, position)

    def sample(self, points: Sequence[StreamId]) -> None:
        points = [p for p in dict.fromkeys(points) if p not in self.runs]
        if not points:
            return
        self.probes += len(points)
        runs = self._probe(points)
        self.runs.update(zip(points, runs, strict=True))
        dense = sorted(
            {r[0].ms for r in runs if len(r) >= RUN_LENGTH and r[0].ms == r[-1].ms} - set(self.tops)
        )
        if dense and self.by_ms:
            self.tops.update(self._top_seq(dense))

    def density(self, run: Sequence[StreamId]) -> float | None:
        """Entries per position unit around ``run``, or None if it says nothing."""
        if len(run) < 2:
            return None
        span = self.pos(run[-1]) - self.pos(run[0])
        if span > 0:
            return (len(run) - 1) / span
        if self.by_ms:
            return float(max(len(run), self.tops.get(run[0].ms, 0) + 1))
        return None

    def segments(self) -> list[_Segment]:
        points = sorted(self.runs)
        result: list[_Segment] = []
        for index, point in enumerate(points):
            end = points[index + 1] if index + 1 < len(points) else self.last.next()
            run = self.runs[point]
            inside = [i for i in run if i < end]
            if len(inside) < len(run) or len(run) < RUN_LENGTH:
                result.append(_Segment(point, end, inside, True))
                continue
            left = self.density(run)
            right = self.density(self.runs[end]) if end in self.runs else None
            rates = [r for r in (left, right) if r is not None] or [0.0]
            width = max(self.pos(end) - self.pos(run[-1]) - 1, 0)
            result.append(_Segment(point, end, run, False, width * sum(rates) / len(rates)))
        return result

    def refinements(self, segments: Sequence[_Segment], total: int | None) -> list[StreamId]:
        """Points worth probing next: middles of gaps that hide a change of rate."""
        wanted: list[StreamId] = []
        gaps = [s for s in segments if not s.exact and self._middle(s) is not None]
        for seg in gaps:
            left = self.density(seg.known)
            right = self.density(self.runs.get(seg.end, ()))
            if left is None or right is None or _ratio(left, right) > RATE_CHANGE:
                wanted.append(self._middle(seg))  # type: ignore[arg-type]
        if gaps:
            # Without a known total a burst between two quiet probes cannot be told from
            # quiet; only a finer sample finds it, so the widest gaps are always refined.
            estimate = sum(s.count for s in segments)
            if total is None or not 0.8 * total <= estimate <= 1.25 * total:
                if total is None or estimate < total:
                    widest = sorted(gaps, key=lambda s: self.pos(s.end) - self.pos(s.known[-1]))
                else:
                    widest = sorted(gaps, key=lambda s: s.gap_count)
                wanted += [self._middle(s) for s in widest[-4 * self.parts :]]  # type: ignore[misc]
        return wanted

    def _middle(self, seg: _Segment) -> StreamId | None:
        lo, hi = self.pos(seg.known[-1]), self.pos(seg.end)
        if hi - lo < 2:
            return None
        return self.at((lo + hi) // 2)

    def splits(self, segments: Sequence[_Segment], total: int | None) -> list[StreamId]:
        counts = [s.count for s in segments]
        if total is not None:
            # Spread the difference to the known total over the gaps, the only unknowns.
            known = sum(len(s.known) for s in segments)
            gap_sum = sum(s.gap_count for s in segments)
            if gap_sum > 0 and total > known:
                scale = (total - known) / gap_sum
                counts = [len(s.known) + s.gap_count * scale for s in segments]
        cumulative = [0.0]
        for count in counts:
            cumulative.append(cumulative[-1] + count)
        result: list[StreamId] = []
        for k in range(1, self.parts):
            target = cumulative[-1] * k / self.parts
            index = min(bisect.bisect_right(cumulative, target) - 1, len(segments) - 1)
            candidate = self._locate(segments[index], target - cumulative[index], counts[index])
            if self.first < candidate <= self.last and (not result or candidate > result[-1]):
                result.append(candidate)
        return result

    def _locate(self, seg: _Segment, offset: float, count: float) -> StreamId:
        """The id about ``offset`` entries into ``seg`` (which holds about ``count``)."""
        if offset < len(seg.known) or seg.exact:
            return seg.known[max(0, min(int(offset), len(seg.known) - 1))] if seg.known else seg.end
        gap = count - len(seg.known)
        lo, hi = self.pos(seg.known[-1]), self.pos(seg.end)
        fraction = (offset - len(seg.known)) / gap if gap > 0 else 0.0
        return self.at(min(hi - 1, lo + 1 + int((hi - lo - 1) * fraction)))


def _ratio(a: float, b: float) -> float:
    low, high = sorted((a, b))
    return float("inf") if low <= 0 else high / low


def plan_ranges(
    first: StreamId,
    last: StreamId,
    parts: int,
    probe: Prober,
    top_seq: TopSeq,
    total: int | None = None,
) -> tuple[list[StreamId], float]:
    """Split ids (each starts a partition after the first) and the estimated entry count.

    ``probe(points)`` returns, per point, up to RUN_LENGTH ids from that point to ``last``;
    ``top_seq(ms_values)`` the highest sequence number in each given millisecond; ``total`` is
    the exact entry count of the range when known.
    """
    planner = _Planner(first, last, parts, probe, top_seq)
    if parts <= 1 or first == last:
        return [], float(total if total is not None else 1)
    lo, hi = planner.pos(first), planner.pos(last)
    count = max(2, parts * POINTS_PER_PARTITION)
    initial = [planner.at(lo + (hi - lo) * i // (count - 1)) for i in range(count)]
    initial[0] = first
    planner.sample([p for p in initial if first <= p <= last])
    budget = parts * POINTS_PER_PARTITION * 4 + 64
    for _ in range(MAX_ROUNDS):
        wanted = planner.refinements(planner.segments(), total)
        wanted = [p for p in dict.fromkeys(wanted) if p not in planner.runs]
        if not wanted or planner.probes >= budget:
            break
        planner.sample(wanted[: budget - planner.probes])
    segments = planner.segments()
    estimate = sum(s.count for s in segments)
    return planner.splits(segments, total), float(total if total is not None else estimate)
