"""Partition planning by sampling, against in-memory streams of known shape (no server)."""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence

import pytest

from resplite.spark.ids import StreamId
from resplite.spark.planning import RUN_LENGTH, plan_ranges


def _auto_ids(timestamps_ms: Sequence[int]) -> list[StreamId]:
    """Ids as XADD * would make them for entries arriving at these times."""
    ids: list[StreamId] = []
    for ms in sorted(timestamps_ms):
        seq = ids[-1].seq + 1 if ids and ids[-1].ms == ms else 0
        ids.append(StreamId(ms, seq))
    return ids


def _plan(
    ids: list[StreamId], parts: int, *, total_known: bool = True
) -> tuple[list[int], float, int]:
    """Partition sizes, the planner's estimate, and the number of probes it sent."""
    probes = 0

    def probe(points: Sequence[StreamId]) -> list[Sequence[StreamId]]:
        nonlocal probes
        probes += len(points)
        return [ids[bisect.bisect_left(ids, p) :][:RUN_LENGTH] for p in points]

    def top_seq(ms_values: Sequence[int]) -> dict[int, int]:
        return {ms: max(i.seq for i in ids if i.ms == ms) for ms in ms_values}

    total = len(ids) if total_known else None
    splits, estimate = plan_ranges(ids[0], ids[-1], parts, probe, top_seq, total)
    assert splits == sorted(set(splits)), "split ids must be strictly increasing"
    assert all(ids[0] < s <= ids[-1] for s in splits)
    edges = [0, *(bisect.bisect_left(ids, s) for s in splits), len(ids)]
    sizes = [b - a for a, b in itertools.pairwise(edges)]
    assert sum(sizes) == len(ids)
    return sizes, estimate, probes


def _even_id_range_sizes(ids: list[StreamId], parts: int) -> list[int]:
    lo, hi = ids[0].ms, ids[-1].ms + 1
    bounds = [lo + (hi - lo) * k // parts for k in range(parts + 1)]
    return [
        bisect.bisect_left(ids, StreamId(b, 0)) - bisect.bisect_left(ids, StreamId(a, 0))
        for a, b in itertools.pairwise(bounds)
    ]


@pytest.mark.parametrize("total_known", [True, False])
def test_bursty_stream_is_split_by_count_not_by_time(total_known: bool) -> None:
    # A quiet day (one entry a minute), then a burst of 60 000 entries in one minute at about
    # 1 000 per second, then quiet again: an even split of the id range is hopeless here.
    day = 86_400_000
    quiet = [i * 60_000 for i in range(1_440)]
    burst = [day // 2 + 7_777 + i for i in range(60_000)]
    ids = _auto_ids(quiet + burst)
    naive = _even_id_range_sizes(ids, 4)
    assert max(naive) > 0.9 * len(ids)
    sizes, estimate, probes = _plan(ids, 4, total_known=total_known)
    assert max(sizes) <= 1.5 * len(ids) / 4, sizes
    assert probes <= 4 * 16 * 4 + 64
    assert 0.5 * len(ids) < estimate < 2 * len(ids)


@pytest.mark.parametrize("total_known", [True, False])
def test_very_dense_milliseconds_use_the_sequence_numbers(total_known: bool) -> None:
    # 200 entries per millisecond for 500 ms, then one per millisecond for 50 000 ms.
    ids = _auto_ids([ms for ms in range(500) for _ in range(200)] + list(range(500, 50_500)))
    sizes, _, _ = _plan(ids, 3, total_known=total_known)
    assert max(sizes) <= 1.5 * len(ids) / 3, sizes


def test_explicit_ids_in_one_millisecond_split_on_sequence() -> None:
    ids = [StreamId(1, seq) for seq in range(1, 50_001)]
    sizes, _, _ = _plan(ids, 5)
    assert len(sizes) == 5 and max(sizes) <= 1.2 * 10_000, sizes


def test_small_stream_is_planned_exactly() -> None:
    ids = _auto_ids([3, 3, 9, 10, 50, 51, 52, 400, 401, 9_000])
    sizes, estimate, _ = _plan(ids, 2)
    assert sizes == [5, 5] and estimate == 10


@pytest.mark.parametrize("parts", [1, 2, 7])
def test_steady_stream_is_balanced(parts: int) -> None:
    ids = _auto_ids([i * 3 for i in range(30_000)])
    sizes, _, _ = _plan(ids, parts)
    assert len(sizes) == parts
    assert max(sizes) - min(sizes) <= 0.05 * len(ids)


def test_more_partitions_than_entries_gives_fewer_partitions() -> None:
    ids = _auto_ids([1, 2, 3])
    sizes, _, _ = _plan(ids, 8)
    assert sum(sizes) == 3 and all(s > 0 for s in sizes[1:])


@pytest.mark.parametrize("total_known", [True, False])
def test_random_bursts_over_background_traffic(total_known: bool) -> None:
    rng = random.Random(1)
    stamps = [rng.randrange(10**8) for _ in range(5_000)]
    for _ in range(5):
        start, size, slowness = (
            rng.randrange(10**8),
            rng.randrange(1_000, 50_000),
            rng.choice([1, 5, 50]),
        )
        stamps += [start + i // slowness for i in range(size)]
    ids = _auto_ids(stamps)
    sizes, _, _ = _plan(ids, 8, total_known=total_known)
    assert max(sizes) <= 1.5 * len(ids) / 8, sizes
