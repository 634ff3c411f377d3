"""The bucket layout of Redis's per-command latency histograms, and what it reports.

Redis keeps one HDR histogram per command over 1 ns .. 1 s with two significant figures
(``LATENCY HISTOGRAM``, INFO ``latencystats``). With those parameters the layout is fixed:

* 256 sub-buckets per bucket, of which the upper 128 are new in each bucket after the first;
* bucket ``b`` holds the values whose bit length is ``b + 8`` (bucket 0 also holds 0..255),
  each sub-bucket ``2**b`` wide, so a value is known to within 1/128 (under 1 %);
* 24 half-buckets of 128 counts: 3072 counters, enough for values up to ``2**30 - 1``.

A value ``v`` is counted at :func:`index_of` ``(v)``; every value sharing that counter is
"equivalent", from :func:`value_at_index` up to :func:`highest_equivalent`. Percentiles are
answered with the highest equivalent value of the counter where the cumulative count
reaches the rank (the lowest one for the 0th percentile), and LATENCY HISTOGRAM's buckets
are the cumulative counts read at the powers of two from 1024 ns, reported as their highest
equivalent value in whole microseconds (1, 2, 4, 8, 16, 33, 66, 132, ...), a bucket being
shown only when its cumulative count grew since the previous power of two.

Everything here works on sparse counts: an ascending list of ``(index, count)`` pairs with
positive counts. Costs are linear in the number of pairs (at most 3072).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

LOWEST: Final = 1  # ns
HIGHEST: Final = 1_000_000_000  # ns: longer durations are counted as 1 s
_SUB_BITS: Final = 8  # 256 sub-buckets: two significant figures (2 * 10**2 <= 2**8)
_HALF_BITS: Final = _SUB_BITS - 1
_MASK: Final = (1 << _SUB_BITS) - 1
COUNTS_LEN: Final = 3072  # (buckets to reach HIGHEST + 1) * 128
# The powers of two LATENCY HISTOGRAM reports at start here (1024 ns ~ 1 us).
FIRST_REPORT_LEVEL: Final = 1024

SparseCounts = Sequence[tuple[int, int]]


def index_of(value: int) -> int:
    """The counter a non-negative value is counted at."""
    bucket = (value | _MASK).bit_length() - _SUB_BITS
    return (bucket << _HALF_BITS) + (value >> bucket)


def value_at_index(index: int) -> int:
    """The lowest value counted at ``index``."""
    bucket = (index >> _HALF_BITS) - 1
    sub = (index & ((1 << _HALF_BITS) - 1)) + (1 << _HALF_BITS)
    if bucket < 0:
        sub -= 1 << _HALF_BITS
        bucket = 0
    return sub << bucket


def lowest_equivalent(value: int) -> int:
    bucket = (value | _MASK).bit_length() - _SUB_BITS
    return (value >> bucket) << bucket


def highest_equivalent(value: int) -> int:
    """The highest value counted together with ``value``."""
    bucket = (value | _MASK).bit_length() - _SUB_BITS
    return ((value >> bucket) << bucket) + (1 << bucket) - 1


def clamp(value: int) -> int:
    """A duration in ns as Redis records it: at least 1 ns, at most 1 s."""
    return LOWEST if value < LOWEST else HIGHEST if value > HIGHEST else value


def total(counts: SparseCounts) -> int:
    return sum(count for _, count in counts)


def value_at_percentile(counts: SparseCounts, percentile: float) -> int:
    """The value at ``percentile`` (0..100) of the recorded values, as Redis reports it:
    the rank is ``percentile/100 * total`` rounded half up (at least 1), the answer the
    highest value equivalent to the counter that reaches it (the lowest for 0)."""
    requested = percentile if percentile < 100.0 else 100.0
    rank = int(requested / 100 * total(counts) + 0.5)
    if rank < 1:
        rank = 1
    value = 0
    seen = 0
    for index, count in counts:
        seen += count
        if seen >= rank:
            value = value_at_index(index)
            break
    if percentile == 0.0:
        return lowest_equivalent(value)
    return highest_equivalent(value)


def power_of_two_buckets(counts: SparseCounts) -> list[tuple[int, int]]:
    """LATENCY HISTOGRAM's ``histogram_usec``: ``(microseconds, cumulative count)`` pairs.

    The counts are read at each power of two from 1024 ns (the counter holding it included)
    until every recorded value has been seen; a power of two beyond the last counter reads
    the last counter. A pair is shown when the cumulative count grew since the previous
    power of two.
    """
    grand_total = total(counts)
    rows: list[tuple[int, int]] = []
    level = FIRST_REPORT_LEVEL
    seen = previous = 0
    pos = 0
    n = len(counts)
    while seen < grand_total:
        level_index = index_of(level)
        if level_index >= COUNTS_LEN:
            level_index = COUNTS_LEN - 1
            top = highest_equivalent(value_at_index(level_index))
        else:
            top = highest_equivalent(level)
        while pos < n and counts[pos][0] <= level_index:
            seen += counts[pos][1]
            pos += 1
        if seen > previous:
            rows.append((top // 1000, seen))
        previous = seen
        level *= 2
    return rows
