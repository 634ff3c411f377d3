"""The array value type (Redis 8.8): a sparse map from indexes 0 .. 2**64 - 2 to strings.

Layout, as Redis's ``sparsearray.c`` keeps it (ARINFO reports it, so it is mirrored, not
only the contents): the index space is cut into slices of :data:`SLICE_SIZE` (4096)
positions; slice ``i`` covers ``i * 4096 .. i * 4096 + 4095``. A slice holding elements is
either

* **sparse**: its offsets in ascending order and their values, with a capacity that starts
  at 4 and doubles up to :data:`SPARSE_KMAX` (10); one more element makes it dense;
* **dense**: a window of ``winsize`` positions (a power of two, 8 to 4096) starting at
  ``offset``, holes as ``None``; the window doubles to the right or grows to the next power
  of two to the left as writes fall outside it, never past the slice's end. A dense slice
  left with at most :data:`SPARSE_KMIN` (5) elements and a window of 32 or more becomes
  sparse again (Redis's demotion rule: only when it saves memory).

Slices are found through a directory. While every slice id is below 2048 it is *flat*: a
table of ``dir_alloc`` entries, a power of two that grows to fit the highest slice id and
shrinks (by halves) when the highest slice goes; the first slice id of 2048 or more turns it,
for good, into a *super-directory* of blocks of 2048 slice ids, each present while it holds a
slice, in a table whose capacity starts at 4 and doubles. Here the slices live in a dict by
id with a sorted list of the ids; the directory's shape is kept as those counters.

Values are ``bytes`` and come back exactly as written (Redis's tagged encodings, integers,
floats and short strings, always decode to the bytes they were made from); the RDB form
derives its element tags from the bytes (:mod:`resplite.formats.rdb_arrays`).

The insert cursor (ARINSERT, ARRING, ARSEEK, ARNEXT): ``insert_idx`` is the last index
written by ARINSERT / ARRING, or :data:`NO_INSERT` before any (or after ARSEEK 0); the next
insert goes to ``insert_idx + 1``. :data:`MAX_INDEX` as the cursor is the exhausted state.

Invariants: ``count`` is the number of elements and equals the sum of the slices' counts; no
slice in ``slices`` is empty once a method returns; ``ids`` is ``sorted(slices)``; a sparse
slice's offsets are strictly ascending, its ``count`` at most ``cap`` at most ``SPARSE_KMAX``;
a dense slice's window lies inside its slice and ``max_off`` is its highest occupied offset;
``strbytes`` is the sum of the values' lengths. ``len`` (ARLEN) and ``count`` (ARCOUNT) are
O(1); a get or a set is O(1) plus a binary search among at most 10 offsets (a new slice id
costs an insertion into ``ids``); range reads cost O(slices touched + elements visited),
whatever the span of indexes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from typing import Final

from resplite.store.sizes import BYTES_HEADER, DICT_ENTRY, POINTER

SLICE_SIZE: Final = 4096
SLICE_BITS: Final = 12
SLICE_MASK: Final = SLICE_SIZE - 1
SPARSE_KMAX: Final = 10
SPARSE_KMIN: Final = 5
SUPER_BLOCK_SLOTS: Final = 2048
MIN_WINDOW: Final = 8
MAX_INDEX: Final = (1 << 64) - 2  # the highest index a value can have
NO_INSERT: Final = (1 << 64) - 1  # insert_idx before any insert

# Redis's allocation sizes, for its demotion rule: a slice header, and a sparse slice of
# SPARSE_KMIN entries (offsets, padding to a pointer, values).
_SLICE_HEADER: Final = 32
_SPARSE_KMIN_BYTES: Final = (
    _SLICE_HEADER + 2 * SPARSE_KMIN + (-2 * SPARSE_KMIN) % 8 + 8 * SPARSE_KMIN)
# What an empty array costs, what each slice adds (object, dict entry, id), each element.
_BASE: Final = 200
_SLICE_COST: Final = 120 + DICT_ENTRY + POINTER
_ELEMENT: Final = BYTES_HEADER + POINTER


def _next_pow2(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def _fit(offset: int, win: int) -> tuple[int, int]:
    """A dense window of ``win`` slots from ``offset`` kept inside its slice: a window of the
    whole slice starts at 0, and one that would run past the slice's end is moved back."""
    if win >= SLICE_SIZE:
        return 0, SLICE_SIZE
    if offset + win > SLICE_SIZE:
        return SLICE_SIZE - win, win
    return offset, win


class Slice:
    """One slice: dense (``items`` from ``offset``) or sparse (``offsets`` and ``values``)."""

    __slots__ = ("cap", "count", "dense", "items", "max_off", "offset", "offsets", "values")

    def __init__(self) -> None:
        self.dense = False
        self.count = 0
        self.cap = min(SPARSE_KMAX, 4)
        self.offsets: list[int] = []
        self.values: list[bytes] = []
        self.offset = 0
        self.items: list[bytes | None] = []
        self.max_off = 0

    @staticmethod
    def new_dense(rel: int) -> Slice:
        s = Slice()
        s.dense = True
        s.cap = 0
        offset = rel
        if offset + MIN_WINDOW > SLICE_SIZE:
            offset = SLICE_SIZE - MIN_WINDOW
        s.offset = offset
        s.items = [None] * MIN_WINDOW
        return s

    def copy(self) -> Slice:
        s = Slice()
        s.dense = self.dense
        s.count = self.count
        s.cap = self.cap
        s.offsets = self.offsets.copy()
        s.values = self.values.copy()
        s.offset = self.offset
        s.items = self.items.copy()
        s.max_off = self.max_off
        return s

    def get(self, rel: int) -> bytes | None:
        if self.dense:
            pos = rel - self.offset
            if 0 <= pos < len(self.items):
                return self.items[pos]
            return None
        offsets = self.offsets
        pos = bisect_left(offsets, rel)
        if pos < len(offsets) and offsets[pos] == rel:
            return self.values[pos]
        return None

    def highest(self) -> int:
        return self.max_off if self.dense else self.offsets[-1]

    # -- dense windows --------------------------------------------------------------------

    def _grow_to(self, rel: int) -> None:
        """Widen a dense window to take ``rel`` (Redis's right and left growth rules)."""
        offset = self.offset
        win = len(self.items)
        if rel >= offset + win:
            new_win = win
            while rel >= offset + new_win and new_win < SLICE_SIZE:
                new_win <<= 1
            new_offset, new_win = _fit(offset, new_win)
        elif rel < offset:
            end = offset + win
            new_win = max(MIN_WINDOW, _next_pow2(end - rel))
            new_offset, new_win = _fit(max(0, end - new_win), new_win)
        else:
            return
        shift = offset - new_offset
        items: list[bytes | None] = [None] * new_win
        items[shift:shift + win] = self.items
        self.items = items
        self.offset = new_offset

    def promote(self) -> None:
        """Become dense, the window fitted around the present offsets."""
        offsets, values = self.offsets, self.values
        self.dense = True
        self.cap = 0
        if not offsets:
            self.offset = 0
            self.items = [None] * MIN_WINDOW
            self.max_off = 0
        else:
            lo, hi = offsets[0], offsets[-1]
            offset, win = _fit(lo, max(MIN_WINDOW, _next_pow2(hi - lo + 1)))
            items: list[bytes | None] = [None] * win
            for i in range(len(offsets)):
                items[offsets[i] - offset] = values[i]
            self.offset = offset
            self.items = items
            self.max_off = hi
        self.offsets = []
        self.values = []

    def maybe_demote(self) -> None:
        """Become sparse when Redis would: few elements left in a window of 32 or more."""
        if not self.dense or self.count > SPARSE_KMIN or len(self.items) == MIN_WINDOW:
            return
        win = len(self.items)
        if win < 4 * SPARSE_KMIN or _SLICE_HEADER + 8 * win < _SPARSE_KMIN_BYTES * 5 // 4:
            return
        base = self.offset
        offsets: list[int] = []
        values: list[bytes] = []
        for pos, value in enumerate(self.items):
            if value is not None:
                offsets.append(base + pos)
                values.append(value)
        self.dense = False
        self.cap = SPARSE_KMIN
        self.offsets = offsets
        self.values = values
        self.items = []
        self.offset = 0
        self.max_off = 0

    def _refresh_max(self) -> None:
        items = self.items
        for pos in range(len(items) - 1, -1, -1):
            if items[pos] is not None:
                self.max_off = self.offset + pos
                return
        self.max_off = self.offset

    # -- writes (the caller keeps the array's count and strbytes) -------------------------

    def set(self, rel: int, value: bytes) -> bytes | None:
        """Store ``value`` at ``rel``; the value replaced (None: a new element)."""
        if self.dense:
            pos = rel - self.offset
            if not 0 <= pos < len(self.items):
                self._grow_to(rel)
                pos = rel - self.offset
            old = self.items[pos]
            self.items[pos] = value
            if old is None:
                self.count += 1
                if rel > self.max_off:
                    self.max_off = rel
            return old
        offsets = self.offsets
        pos = bisect_left(offsets, rel)
        if pos < len(offsets) and offsets[pos] == rel:
            old = self.values[pos]
            self.values[pos] = value
            return old
        if self.count >= SPARSE_KMAX:
            self.promote()
            return self.set(rel, value)
        if self.count >= self.cap:
            self.cap = min(self.cap * 2, SPARSE_KMAX)
        offsets.insert(pos, rel)
        self.values.insert(pos, value)
        self.count += 1
        return None

    def delete(self, rel: int) -> bytes | None:
        """Remove the element at ``rel``; the value removed, or None."""
        if self.dense:
            pos = rel - self.offset
            if not 0 <= pos < len(self.items):
                return None
            old = self.items[pos]
            if old is None:
                return None
            self.items[pos] = None
            self.count -= 1
            if self.count and rel >= self.max_off:
                self._refresh_max()
            if self.count:
                self.maybe_demote()
            return old
        offsets = self.offsets
        pos = bisect_left(offsets, rel)
        if pos < len(offsets) and offsets[pos] == rel:
            del offsets[pos]
            self.count -= 1
            return self.values.pop(pos)
        return None

    def delete_range(self, lo: int, hi: int) -> tuple[int, int]:
        """Remove the elements at offsets ``lo .. hi``: (how many, their bytes). A dense
        slice that keeps elements is then considered for demotion, as in Redis, even when
        nothing in it was removed."""
        removed = 0
        nbytes = 0
        if self.dense:
            base = self.offset
            items = self.items
            first = max(lo, base) - base
            last = min(hi, base + len(items) - 1) - base
            if first <= last:
                for pos in range(first, last + 1):
                    value = items[pos]
                    if value is not None:
                        items[pos] = None
                        removed += 1
                        nbytes += len(value)
                self.count -= removed
                if self.count and self.max_off >= base + first:
                    self._refresh_max()
            if self.count:
                self.maybe_demote()
            return removed, nbytes
        offsets = self.offsets
        first = bisect_left(offsets, lo)
        last = bisect_right(offsets, hi)
        if first < last:
            for value in self.values[first:last]:
                nbytes += len(value)
            removed = last - first
            del offsets[first:last]
            del self.values[first:last]
            self.count -= removed
        return removed, nbytes

    def walk(self, lo: int, hi: int, reverse: bool) -> Iterator[tuple[int, bytes]]:
        """The elements at offsets ``lo .. hi``, ascending (or descending)."""
        if self.dense:
            base = self.offset
            items = self.items
            first = max(lo, base) - base
            last = min(hi, base + len(items) - 1) - base
            if first > last:
                return
            span = range(last, first - 1, -1) if reverse else range(first, last + 1)
            for pos in span:
                value = items[pos]
                if value is not None:
                    yield base + pos, value
            return
        offsets, values = self.offsets, self.values
        first = bisect_left(offsets, lo)
        last = bisect_right(offsets, hi)
        span = range(last - 1, first - 1, -1) if reverse else range(first, last)
        for pos in span:
            yield offsets[pos], values[pos]


class SparseArray:
    """A Redis array (see the module's docstring for the layout and its invariants)."""

    __slots__ = ("blocks", "count", "dir_alloc", "ids", "insert_idx", "sdir_cap", "slices",
                 "strbytes", "superdir")

    type_name: Final = "array"  # TYPE
    encoding: Final = "sliced-array"  # OBJECT ENCODING

    def __init__(self) -> None:
        self.slices: dict[int, Slice] = {}
        self.ids: list[int] = []
        self.count = 0
        self.strbytes = 0
        self.insert_idx = NO_INSERT
        # The directory's shape (ARINFO): flat with dir_alloc entries, or a super-directory
        # whose blocks (block id -> slices in it) sit in a table of sdir_cap entries.
        self.superdir = False
        self.dir_alloc = 0
        self.blocks: dict[int, int] = {}
        self.sdir_cap = 0

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"<SparseArray count={self.count} len={self.length()}>"

    def copy(self) -> SparseArray:
        """An independent copy, its layout included (COPY, as Redis's arDup)."""
        other = SparseArray()
        other.slices = {sid: s.copy() for sid, s in self.slices.items()}
        other.ids = self.ids.copy()
        other.count = self.count
        other.strbytes = self.strbytes
        other.insert_idx = self.insert_idx
        other.superdir = self.superdir
        other.dir_alloc = self.dir_alloc
        other.blocks = dict(self.blocks)
        other.sdir_cap = self.sdir_cap
        return other

    def memory_usage(self) -> int:
        """An estimate of the bytes held, in O(1) (see :mod:`resplite.store.sizes`)."""
        return _BASE + len(self.slices) * _SLICE_COST + self.count * _ELEMENT + self.strbytes

    # -- sizes ----------------------------------------------------------------------------

    def length(self) -> int:
        """ARLEN: the highest index holding a value, plus one (0 when empty)."""
        if not self.count:
            return 0
        sid = self.ids[-1]
        return (sid << SLICE_BITS) + self.slices[sid].highest() + 1

    def directory_size(self) -> int:
        return self.sdir_cap if self.superdir else self.dir_alloc

    def super_dir_entries(self) -> int:
        return len(self.blocks) if self.superdir else 0

    def slice_stats(self) -> tuple[int, int, int, int, int]:
        """ARINFO FULL's figures: dense slices, sparse slices, the dense windows' total
        size, the dense slices' elements, the sparse slices' total capacity."""
        dense = sparse = windows = filled = caps = 0
        for s in self.slices.values():
            if s.dense:
                dense += 1
                windows += len(s.items)
                filled += s.count
            else:
                sparse += 1
                caps += s.cap
        return dense, sparse, windows, filled, caps

    # -- the directory --------------------------------------------------------------------

    def _grow_dir(self, sid: int) -> None:
        if not self.superdir and sid >= SUPER_BLOCK_SLOTS:
            self.superdir = True
            self.sdir_cap = 4
            self.blocks = {0: len(self.slices)} if self.dir_alloc else {}
            self.dir_alloc = 0
        if self.superdir:
            return
        if sid >= self.dir_alloc:
            alloc = self.dir_alloc or 1
            while alloc <= sid:
                alloc <<= 1
            self.dir_alloc = alloc

    def _attach(self, sid: int, s: Slice) -> None:
        self.slices[sid] = s
        insort(self.ids, sid)
        if self.superdir:
            block = sid // SUPER_BLOCK_SLOTS
            held = self.blocks.get(block)
            if held is None:
                if len(self.blocks) >= self.sdir_cap:
                    self.sdir_cap *= 2
                self.blocks[block] = 1
            else:
                self.blocks[block] = held + 1

    def _detach(self, sid: int) -> None:
        del self.slices[sid]
        ids = self.ids
        del ids[bisect_left(ids, sid)]
        if self.superdir:
            block = sid // SUPER_BLOCK_SLOTS
            held = self.blocks[block] - 1
            if held:
                self.blocks[block] = held
            else:
                del self.blocks[block]

    def _shrink_dir(self) -> None:
        if not self.count:
            # Emptied: commands delete the key now; a reused array starts afresh.
            self.superdir = False
            self.dir_alloc = 0
            self.blocks = {}
            self.sdir_cap = 0
            return
        if self.superdir:
            return
        highest = self.ids[-1]
        if highest >= self.dir_alloc * 9 // 10:
            return
        alloc = 1
        while alloc <= highest:
            alloc <<= 1
        if alloc < self.dir_alloc:
            self.dir_alloc = alloc

    # -- elements -------------------------------------------------------------------------

    def get(self, index: int) -> bytes | None:
        s = self.slices.get(index >> SLICE_BITS)
        if s is None:
            return None
        return s.get(index & SLICE_MASK)

    def set(self, index: int, value: bytes) -> bool:
        """Store ``value`` at ``index`` (at most :data:`MAX_INDEX`); True if it was empty."""
        sid = index >> SLICE_BITS
        s = self.slices.get(sid)
        if s is None:
            self._grow_dir(sid)
            s = Slice()
            self._attach(sid, s)
        old = s.set(index & SLICE_MASK, value)
        if old is None:
            self.count += 1
            self.strbytes += len(value)
            return True
        self.strbytes += len(value) - len(old)
        return False

    def set_run(self, start: int, values: list[bytes]) -> int:
        """ARSET / ARINSERT: ``values`` at ``start``, ``start + 1``...; how many were empty.
        A run of more than one value first makes dense the slices it would fill past
        :data:`SPARSE_KMAX`, as Redis does before a bulk write."""
        if len(values) > 1:
            self._prepare_run(start, start + len(values) - 1)
        before = self.count
        index = start
        for value in values:
            self.set(index, value)
            index += 1
        return self.count - before

    def _prepare_run(self, lo: int, hi: int) -> None:
        first, last = lo >> SLICE_BITS, hi >> SLICE_BITS
        self._grow_dir(last)
        for sid in range(first, last + 1):
            start = lo & SLICE_MASK if sid == first else 0
            end = hi & SLICE_MASK if sid == last else SLICE_MASK
            size = end - start + 1
            s = self.slices.get(sid)
            if s is None:
                if size > SPARSE_KMAX:
                    self._attach(sid, Slice.new_dense(start))
                continue
            if s.dense:
                continue
            if size > SPARSE_KMAX:
                s.promote()
                continue
            present = sum(1 for off in s.offsets if start <= off <= end)
            if s.count + size - present > SPARSE_KMAX:
                s.promote()

    def delete(self, index: int) -> bool:
        """Remove the element at ``index``; True if there was one."""
        sid = index >> SLICE_BITS
        s = self.slices.get(sid)
        if s is None:
            return False
        old = s.delete(index & SLICE_MASK)
        if old is None:
            return False
        self.count -= 1
        self.strbytes -= len(old)
        if not s.count:
            self._detach(sid)
            self._shrink_dir()
        return True

    def delete_range(self, lo: int, hi: int) -> int:
        """Remove every element at ``lo .. hi`` (lo <= hi); how many. The cost follows the
        slices touched, not the span."""
        if not self.count or lo > hi:
            return 0
        first, last = lo >> SLICE_BITS, hi >> SLICE_BITS
        ids = self.ids
        touched = ids[bisect_left(ids, first):bisect_right(ids, last)]
        removed = 0
        for sid in touched:
            s = self.slices[sid]
            start = lo & SLICE_MASK if sid == first else 0
            end = hi & SLICE_MASK if sid == last else SLICE_MASK
            if start == 0 and end == SLICE_MASK:
                n = s.count
                nbytes = sum(len(v) for v in (s.items if s.dense else s.values) if v is not None)
            else:
                n, nbytes = s.delete_range(start, end)
            removed += n
            self.count -= n
            self.strbytes -= nbytes
            if (start == 0 and end == SLICE_MASK) or not s.count:
                self._detach(sid)
        self._shrink_dir()
        return removed

    # -- the insert cursor (ARINSERT, ARRING, ARSEEK, ARNEXT, ARLASTITEMS) --------------

    def next_insert(self) -> int | None:
        """ARNEXT: the index the next ARINSERT writes, None once the cursor is exhausted."""
        if self.insert_idx == NO_INSERT:
            return 0
        if self.insert_idx == MAX_INDEX:
            return None
        return self.insert_idx + 1

    def seek(self, index: int) -> None:
        """ARSEEK: the next insert goes to ``index`` (0 .. 2**64 - 1; 0 forgets the cursor,
        2**64 - 1 leaves it exhausted)."""
        self.insert_idx = NO_INSERT if index == 0 else index - 1

    def insert(self, values: list[bytes]) -> int | None:
        """ARINSERT: ``values`` at the cursor and on; the last index written, or None (and
        nothing written) when the run would pass :data:`MAX_INDEX`."""
        if self.insert_idx == NO_INSERT:
            start = 0
        elif self.insert_idx >= MAX_INDEX:
            return None
        else:
            start = self.insert_idx + 1
        last = start + len(values) - 1
        if last > MAX_INDEX:
            return None
        self.set_run(start, values)
        self.insert_idx = last
        return last

    def ring_insert(self, size: int, values: list[bytes]) -> int:
        """ARRING: ``values`` written one by one at the cursor's next index modulo
        ``size``; the last index written. When ``size`` is below the array's length, or
        above it after the ring has wrapped (and no ARSEEK 0 since), the array is first
        rebuilt as Redis does: the newest run of elements back from the cursor (at most
        ``size``, or the old length when growing, stopping at the first hole), oldest first
        from index 0, the cursor on the newest."""
        span = self.length()
        keep = 0
        if span:
            if size < span:
                keep = size
            elif size > span and self.insert_idx != NO_INSERT and self.insert_idx + 1 < span:
                keep = span
        if keep:
            self._rebuild_ring(span, keep)
        cursor = 0
        for value in values:
            cursor = 0 if self.insert_idx == NO_INSERT else self.insert_idx + 1
            if cursor >= size:
                cursor %= size
            self.set(cursor, value)
            self.insert_idx = cursor
        return cursor

    def _rebuild_ring(self, span: int, keep: int) -> None:
        anchor = span - 1 if self.insert_idx == NO_INSERT else self.insert_idx % span
        kept: list[bytes] = []
        index = anchor
        while len(kept) < keep:
            value = self.get(index)
            if value is None:
                break
            kept.append(value)
            index = span - 1 if index == 0 else index - 1
        kept.reverse()
        fresh = SparseArray()
        for i, value in enumerate(kept):
            fresh.set(i, value)
        if kept:
            fresh.insert_idx = len(kept) - 1
        self.slices = fresh.slices
        self.ids = fresh.ids
        self.count = fresh.count
        self.strbytes = fresh.strbytes
        self.insert_idx = fresh.insert_idx
        self.superdir = fresh.superdir
        self.dir_alloc = fresh.dir_alloc
        self.blocks = fresh.blocks
        self.sdir_cap = fresh.sdir_cap

    def last_positions(self, count: int) -> list[bytes | None]:
        """ARLASTITEMS: the ``count`` positions (at most the length) back from the cursor,
        or from the last element when there is no cursor or it is past the end, wrapping
        from index 0 to the end; newest first."""
        span = self.length()
        count = min(count, span)
        if not count:
            return []
        idx = self.insert_idx
        anchor = span - 1 if idx == NO_INSERT or idx >= span else idx
        # Two runs: anchor down to 0, then from the end down (wrapping).
        low = max(0, anchor - count + 1)
        out = self.get_range(low, anchor)
        out.reverse()
        rest = count - len(out)
        if rest:
            tail = self.get_range(span - rest, span - 1)
            tail.reverse()
            out += tail
        return out

    # -- reading ranges -------------------------------------------------------------------

    def scan(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """The elements at indexes between ``start`` and ``end`` (both included), from
        ``start`` towards ``end``: ascending, or descending when ``start > end``."""
        reverse = start > end
        lo, hi = (end, start) if reverse else (start, end)
        first, last = lo >> SLICE_BITS, hi >> SLICE_BITS
        ids = self.ids
        chosen = ids[bisect_left(ids, first):bisect_right(ids, last)]
        if reverse:
            chosen.reverse()
        slices = self.slices
        for sid in chosen:
            base = sid << SLICE_BITS
            s_lo = lo & SLICE_MASK if sid == first else 0
            s_hi = hi & SLICE_MASK if sid == last else SLICE_MASK
            for off, value in slices[sid].walk(s_lo, s_hi, reverse):
                yield base + off, value

    def get_range(self, lo: int, hi: int) -> list[bytes | None]:
        """Every position ``lo .. hi`` (lo <= hi), holes as None, in O(span + elements)."""
        out: list[bytes | None] = [None] * (hi - lo + 1)
        for index, value in self.scan(lo, hi):
            out[index - lo] = value
        return out

    def items(self) -> Iterator[tuple[int, bytes]]:
        """Every element, by ascending index."""
        slices = self.slices
        for sid in self.ids:
            base = sid << SLICE_BITS
            for off, value in slices[sid].walk(0, SLICE_MASK, False):
                yield base + off, value

    def check(self) -> None:
        """Assert the invariants (tests)."""
        assert self.ids == sorted(self.slices)
        total = 0
        nbytes = 0
        for sid, s in self.slices.items():
            assert s.count > 0, sid
            if s.dense:
                present = [(i, v) for i, v in enumerate(s.items) if v is not None]
                assert len(present) == s.count
                assert s.offset >= 0 and s.offset + len(s.items) <= SLICE_SIZE
                assert s.max_off == s.offset + present[-1][0]
                nbytes += sum(len(v) for _, v in present)
            else:
                assert s.offsets == sorted(set(s.offsets))
                assert len(s.offsets) == len(s.values) == s.count <= s.cap <= SPARSE_KMAX
                nbytes += sum(len(v) for v in s.values)
            total += s.count
        assert total == self.count
        assert nbytes == self.strbytes
        if self.superdir:
            blocks: dict[int, int] = {}
            for sid in self.slices:
                blocks[sid // SUPER_BLOCK_SLOTS] = blocks.get(sid // SUPER_BLOCK_SLOTS, 0) + 1
            assert blocks == self.blocks
            assert len(self.blocks) <= self.sdir_cap
        elif self.ids:
            assert self.ids[-1] < self.dir_alloc
