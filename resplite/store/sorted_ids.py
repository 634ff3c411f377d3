"""A sorted set of stream ids for the pending entries lists, lean on the paths PELs take.

Ids are kept in a list of sorted blocks (``lists``) with each block's largest id in
``maxes``, as in a B+ tree of height two: finding an id is a bisect over ``maxes`` and one
inside a block, O(log n); adding or removing one moves at most a block's worth of slots.
Deliveries add ids above every pending one and acknowledgements mostly take the oldest,
so both common cases touch only the last or first block, and are written out inline.

Only what the consumer groups use is offered: add, remove, ordered iteration, ``irange``,
``islice``, the first and last id, length.

Invariants: every block is sorted and non-empty; the blocks are in order and do not
overlap; ``maxes[k] == lists[k][-1]``; ``size`` is the number of ids; no id appears twice
(the callers never add an id already present).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from itertools import chain, islice

# A block is split in two when it passes twice this size. Not Final, which compiled code
# would fold in: tests make it tiny.
_LOAD = 500


class SortedIds:
    __slots__ = ("lists", "maxes", "size")

    def __init__(self, ids: Iterable[int] = ()) -> None:
        values = sorted(ids)
        self.lists = [values[k : k + _LOAD] for k in range(0, len(values), _LOAD)]
        self.maxes = [block[-1] for block in self.lists]
        self.size = len(values)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(self.lists)

    def __getitem__(self, index: int) -> int:
        """The first (``0``) or last (``-1``) id."""
        if not self.size:
            raise IndexError("empty")
        if index == 0:
            return self.lists[0][0]
        if index == -1:
            return self.lists[-1][-1]
        raise IndexError("only the first and last ids are addressable")

    def __repr__(self) -> str:
        return f"SortedIds({list(self)!r})"

    def add(self, sid: int) -> None:
        maxes = self.maxes
        if not maxes:
            self.lists.append([sid])
            maxes.append(sid)
            self.size = 1
            return
        if sid > maxes[-1]:
            pos = len(maxes) - 1
            block = self.lists[pos]
            block.append(sid)
            maxes[pos] = sid
        else:
            pos = bisect_left(maxes, sid)
            block = self.lists[pos]
            insort(block, sid)
        self.size += 1
        if len(block) > 2 * _LOAD:
            tail = block[_LOAD:]
            del block[_LOAD:]
            maxes[pos] = block[-1]
            self.lists.insert(pos + 1, tail)
            maxes.insert(pos + 1, tail[-1])

    def extend_above(self, ids: list[int]) -> None:
        """Add ``ids``, which are in increasing order and each larger than every id held
        (a delivery of new entries): the last block filled up, then whole blocks."""
        if not ids:
            return
        lists = self.lists
        maxes = self.maxes
        k = 0
        if lists and len(lists[-1]) < _LOAD:
            k = _LOAD - len(lists[-1])
            lists[-1].extend(ids[:k])
            maxes[-1] = lists[-1][-1]
        for start in range(k, len(ids), _LOAD):
            block = ids[start : start + _LOAD]
            lists.append(block)
            maxes.append(block[-1])
        self.size += len(ids)

    def remove(self, sid: int) -> None:
        """Remove ``sid``; ValueError if it is absent."""
        maxes = self.maxes
        pos = bisect_left(maxes, sid)
        if pos == len(maxes):
            raise ValueError(sid)
        block = self.lists[pos]
        i = 0 if block[0] == sid else bisect_left(block, sid)
        if block[i] != sid:
            raise ValueError(sid)
        del block[i]
        self.size -= 1
        if not block:
            del self.lists[pos]
            del maxes[pos]
        elif i == len(block):
            maxes[pos] = block[-1]

    def irange(self, minimum: int | None = None, maximum: int | None = None) -> Iterator[int]:
        """Ids from ``minimum`` to ``maximum`` inclusive (None: unbounded), in order."""
        lists = self.lists
        if minimum is None:
            pos = i = 0
        else:
            pos = bisect_left(self.maxes, minimum)
            if pos == len(lists):
                return
            i = bisect_left(lists[pos], minimum)
        while pos < len(lists):
            block = lists[pos]
            if maximum is not None and block[-1] > maximum:
                yield from islice(block, i, bisect_right(block, maximum))
                return
            yield from islice(block, i, None)
            pos += 1
            i = 0

    def islice(self, start: int = 0, stop: int | None = None) -> Iterator[int]:
        return islice(iter(self), start, stop)
