"""Key-size histograms (Redis 8's INFO ``Keysizes``): how many keys of each type have a
length in each power-of-two range.

A database keeps one flat list of counts, :data:`ROWS` rows of :data:`BINS` bins: the row
of a value's type (strings by their length in bytes, lists, sets, sorted sets and hashes by
their number of elements) plus the bin of its length, ``len.bit_length()``: bin 0 holds the
empty ones, bin ``i`` the lengths from ``2**(i-1)`` to ``2**i - 1``, as Redis's bins (whose
labels are the ranges' lower ends: ``0``, ``1``, ``2``, ``4``, ... ``512``, ``1K``, ...).
Streams and other types have no row. :class:`~resplite.store.keyspace.Database` keeps the
counts exact as it keeps its memory figure: in the same places, and for containers changed
in place at the same moment (when it settles them).
"""

from __future__ import annotations

from typing import Any, Final

from resplite.store.hash import Hash
from resplite.store.list import List
from resplite.store.set import Set
from resplite.store.string_value import MutableString
from resplite.store.zset import ZSet

BINS: Final = 64
STRINGS: Final = 0
#: A container type's row, as the offset of its first bin (strings: row 0).
ROW_OF: Final[dict[type, int]] = {
    MutableString: STRINGS, List: BINS, Set: 2 * BINS, ZSet: 3 * BINS, Hash: 4 * BINS,
}
ROWS: Final = 5
#: INFO's field name of each row, in Redis's order.
FIELDS: Final = ("distrib_strings_sizes", "distrib_lists_items", "distrib_sets_items",
                 "distrib_zsets_items", "distrib_hashes_items")
_UNITS: Final = ("", "K", "M", "G", "T", "P", "E")


def empty() -> list[int]:
    """A histogram with no key in it."""
    return [0] * (ROWS * BINS)


def slot_of(value: Any) -> int:
    """Where ``value`` is counted: its row plus its length's bin; -1 for a type without a
    row (streams)."""
    row = ROW_OF.get(value.__class__)
    if row is None:
        return -1
    return row + len(value).bit_length()


def label(bin_index: int) -> str:
    """The lower end of a bin's range, as Redis prints it (``0``, ``1``, ``512``, ``1K``)."""
    if bin_index == 0:
        return "0"
    exponent = bin_index - 1
    return f"{1 << (exponent % 10)}{_UNITS[exponent // 10]}"


def lines(db_index: int, sizes: list[int]) -> list[tuple[str, str]]:
    """INFO's lines for one database: a line per type that has a key, its non-empty bins
    in order."""
    out: list[tuple[str, str]] = []
    for row, field in enumerate(FIELDS):
        counts = sizes[row * BINS : (row + 1) * BINS]
        bins = [f"{label(i)}={n}" for i, n in enumerate(counts) if n]
        if bins:
            out.append((f"db{db_index}_{field}", ",".join(bins)))
    return out
