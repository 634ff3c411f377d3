"""The sorted set value type: members (byte strings) ordered by score (a double), then member.

Layout. ``keys`` maps each member to its *order key* (O(1) ZSCORE, membership tests), and
``order`` holds the same key objects, one per member. A key is a byte string that sorts as
Redis sorts entries: eight bytes of the score made order-preserving (:func:`order_key`: the
IEEE-754 bits with the sign bit flipped, or every bit flipped for a negative score, so that
``memcmp`` order is numeric order), then the member. Comparing two keys is one ``memcmp``
then a length comparison, which is Redis's order exactly: by score, then by member compared
byte-wise, shorter first on a common prefix. A key is one flat object that the cyclic
garbage collector never scans and a comparison never leaves (a ``(score, member)`` tuple
costs the same memory, is tracked by the collector, and compares through three objects). The
score is read back from the key's eight bytes (:func:`key_score`), so a member costs its
dict entry, its own bytes, its key and a list slot, and no ``float`` object: ``keys`` and
``order`` share each key. ``order`` takes one of two shapes, mirroring Redis's two
encodings, so that OBJECT ENCODING answers what Redis would and a small sorted set stays
small:

* ``listpack``: a plain Python list (:class:`SmallOrder`) kept sorted with :mod:`bisect`.
  Insertion and deletion move the tail of the list (O(n), n at most
  ``zset-max-listpack-entries``, 128 by default), searches are O(log n).
* ``skiplist``: a :class:`sortedcontainers.SortedList`. Insertion, deletion, rank (ZRANK),
  seek by score (ZRANGEBYSCORE, ZCOUNT) and access by position (ZRANGE) are all O(log n).

Both shapes answer the same calls (``add``, ``remove``, ``bisect_left``/``bisect_right``,
indexing and slicing, ``del`` of a slice); everything below is written once against that
common surface, and hands out entries as ``(score, member)`` pairs. Scores ``-0.0`` and
``0.0`` compare equal (as in Redis), so both get the key of ``0.0`` and such entries are
ordered by member; a stored score is never NaN. A listpack cannot hold ``-0.0`` (Redis writes
an integral score into a listpack as an integer), so there it is stored as ``0.0``, while a
skiplist keeps the sign, as Redis's does: the members whose score is ``-0.0`` are listed in
``negzero`` (None while there is none), which is all a key cannot tell. ``scores`` is a
read-only view (:class:`Scores`) of member to score over ``keys``.

Encoding follows Redis's rules, decided by the commands (the store does not read the
configuration): a sorted set becomes a skiplist when it would hold more entries than
``zset-max-listpack-entries`` or a member longer than ``zset-max-listpack-value`` bytes
(:meth:`ZSet.convert`); only a freshly computed result (ZUNIONSTORE and friends) is turned
back into a listpack (:meth:`ZSet.compact`), as Redis does.

Lexicographic ranges assume, as Redis documents, that every member has the same score. On
a listpack the search is Redis's own linear one, so even mixed scores give Redis's answer;
on a skiplist the search is binary (Redis's answer there depends on its skiplist's random
levels when scores differ, so no order is promised).

Scanning: a listpack is answered whole with cursor 0, as in Redis; a skiplist is walked in
hash order through a :class:`~resplite.store.scanindex.ScanIndex`, as hashes are.

Size: ``strbytes`` is the sum of the members' lengths, kept by every method that adds or
removes members, so :meth:`ZSet.memory_usage` costs O(1) (see :mod:`resplite.store.sizes`).

Invariants: ``len(keys) == len(order)``; ``keys[m]`` is the object in ``order`` whose
bytes are ``order_key(s, m)`` for the score ``s`` of ``m``, and nothing else is in
``order``; ``negzero`` holds exactly the members whose score is ``-0.0``, is None or
non-empty, and is None on a listpack; no score is NaN; a sorted set stored in the keyspace is
never empty (commands delete the key when its last member goes); ``strbytes`` is the sum of
``len(m)`` over ``keys``.
"""

from __future__ import annotations

import bisect
import math
import random
import struct
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any, Final

from mypy_extensions import mypyc_attr
from sortedcontainers import SortedList

from resplite.store.scanindex import ScanIndex
from resplite.store.sizes import BYTES_HEADER, DICT_ENTRY, POINTER

Entry = tuple[float, bytes]
# A lexicographic range item: (-1 for "-", 1 for "+", 0 for a value; value; exclusive).
LexBound = tuple[int, bytes, bool]

_INF = math.inf
# Up to this offset, a range walk skips entries one by one rather than seek by position.
_WALK_OFFSET = 64
# What an empty sorted set costs in each shape, and what each member adds beyond twice its
# bytes (the member, and its order key: a bytes object of the 8-byte score and the member):
# two string headers, the key's score bytes, the dict entry and the list slot.
_BASE = 180
_SKIPLIST_BASE = 420
_MEMBER = 2 * BYTES_HEADER + 8 + DICT_ENTRY + POINTER

_pack_double = struct.Struct(">d").pack
_unpack_double = struct.Struct(">d").unpack
_unpack_u64 = struct.Struct(">Q").unpack
_unpack_u64_from = struct.Struct(">Q").unpack_from
_pack_u64 = struct.Struct(">Q").pack
_SIGN = 1 << 63
_ALL = (1 << 64) - 1


def score_prefix(score: float) -> bytes:
    """Eight bytes whose ``memcmp`` order is the numeric order of scores (both zeros alike)."""
    bits: int = _unpack_u64(_pack_double(score if score else 0.0))[0]
    return _pack_u64(bits ^ (_ALL if bits & _SIGN else _SIGN))


def order_key(score: float, member: bytes) -> bytes:
    """The key of an entry in ``order``: Redis's order as byte order."""
    bits: int = _unpack_u64(_pack_double(score if score else 0.0))[0]
    return _pack_u64(bits ^ (_ALL if bits & _SIGN else _SIGN)) + member


def key_score(key: bytes) -> float:
    """The score an order key holds (``0.0`` for either zero): :func:`order_key` undone."""
    bits: int = _unpack_u64_from(key)[0]
    score: float = _unpack_double(_pack_u64(bits ^ (_SIGN if bits & _SIGN else _ALL)))[0]
    return score


@mypyc_attr(native_class=False)
class SmallOrder(list[bytes]):
    """The listpack shape: a sorted list with the calls of :class:`SortedList` that ZSet uses."""

    __slots__ = ()

    def add(self, key: bytes) -> None:
        bisect.insort(self, key)

    def remove(self, key: bytes) -> None:
        del self[bisect.bisect_left(self, key)]

    def bisect_left(self, key: bytes) -> int:
        return bisect.bisect_left(self, key)

    def bisect_right(self, key: bytes) -> int:
        return bisect.bisect_right(self, key)


def _lex_cmp(member: bytes, bound: LexBound) -> int:
    """Redis's ``sdscmplex`` of a member against a range item."""
    kind = bound[0]
    if kind:
        return -kind  # "-" is below every member, "+" above
    value = bound[1]
    return (member > value) - (member < value)


def _gte_min(member: bytes, lo: LexBound) -> bool:
    c = _lex_cmp(member, lo)
    return c > 0 if lo[2] else c >= 0


def _lte_max(member: bytes, hi: LexBound) -> bool:
    c = _lex_cmp(member, hi)
    return c < 0 if hi[2] else c <= 0


def lex_range_empty(lo: LexBound, hi: LexBound) -> bool:
    """Whether ``lo`` > ``hi`` (or equal with an exclusive end): no string lies between."""
    # "-" or "+" on either side: the kinds (-1, 0, 1) alone decide, by their sign.
    c = lo[0] - hi[0] if lo[0] or hi[0] else (lo[1] > hi[1]) - (lo[1] < hi[1])
    return c > 0 or (c == 0 and (lo[2] or hi[2]))


class Scores:
    """A read-only view of a sorted set's members and their scores, as a ``dict`` of member
    to score would answer them (lookups O(1), iteration in member insertion order)."""

    __slots__ = ("zset",)

    def __init__(self, zset: ZSet) -> None:
        self.zset = zset

    def get(self, member: bytes) -> float | None:
        return self.zset.score(member)

    def __getitem__(self, member: bytes) -> float:
        score = self.zset.score(member)
        if score is None:
            raise KeyError(member)
        return score

    def __len__(self) -> int:
        return len(self.zset.keys)

    def __bool__(self) -> bool:
        return bool(self.zset.keys)

    def __contains__(self, member: bytes) -> bool:
        return member in self.zset.keys

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.zset.keys)

    def items(self) -> Iterator[tuple[bytes, float]]:
        score_of = self.zset.score_of
        return ((member, score_of(member, key)) for member, key in self.zset.keys.items())

    def values(self) -> Iterator[float]:
        return (score for _, score in self.items())


class ZSet:
    """A Redis sorted set."""

    __slots__ = ("keys", "negzero", "order", "scan_index", "strbytes")

    type_name: Final = "zset"  # TYPE

    def __init__(self, entries: Iterable[Entry] = (), skiplist: bool = False) -> None:
        self.keys: dict[bytes, bytes] = {}
        self.negzero: set[bytes] | None = None
        self.order: Any = SortedList() if skiplist else SmallOrder()
        self.scan_index: ScanIndex | None = None
        self.strbytes = 0
        for score, member in entries:
            self.add(member, score)

    @classmethod
    def from_entries(cls, entries: Iterable[Entry], skiplist: bool) -> ZSet:
        """A sorted set of distinct members in one step (O(n log n)): a loader's path. The
        scores are stored as given (a listpack caller passes ``0.0`` for ``-0``)."""
        zs = cls(skiplist=skiplist)
        keys = zs.keys
        negzero: set[bytes] = set()
        for score, member in entries:
            keys[member] = order_key(score, member)
            if score == 0.0 and math.copysign(1.0, score) < 0:
                negzero.add(member)
        if negzero and skiplist:
            zs.negzero = negzero
        zs.strbytes = sum(map(len, keys))
        ordered = sorted(keys.values())
        zs.order = SortedList(ordered) if skiplist else SmallOrder(ordered)
        return zs

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        return f"<ZSet {self.encoding} members={len(self.keys)}>"

    @property
    def scores(self) -> Scores:
        """Member to score, read-only (see :class:`Scores`)."""
        return Scores(self)

    # -- encoding -------------------------------------------------------------------------

    @property
    def listpack(self) -> bool:
        return type(self.order) is SmallOrder

    @property
    def encoding(self) -> str:
        """OBJECT ENCODING's answer."""
        return "listpack" if type(self.order) is SmallOrder else "skiplist"

    def convert(self) -> None:
        """Become a skiplist (O(n): the keys are already in order)."""
        if type(self.order) is SmallOrder:
            self.order = SortedList(self.order)

    def compact(self) -> None:
        """Become a listpack again (only for a result Redis would store as one)."""
        if type(self.order) is not SmallOrder:
            self.order = SmallOrder(self.order)
            # A listpack writes an integral score as an integer: -0 becomes 0 (the keys
            # stay: both zeros have the same one).
            self.negzero = None
            self.scan_index = None

    def fits(self, max_entries: int, max_value: int) -> bool:
        """Whether Redis would keep these members in a listpack (ZUNIONSTORE's test)."""
        return len(self.keys) <= max_entries and all(
            len(member) <= max_value for member in self.keys
        )

    # -- members --------------------------------------------------------------------------

    def score_of(self, member: bytes, key: bytes) -> float:
        """The score of ``member``, whose order key is ``key``."""
        score = key_score(key)
        if score == 0.0:
            negzero = self.negzero
            if negzero is not None and member in negzero:
                return -0.0
        return score

    def score(self, member: bytes) -> float | None:
        key = self.keys.get(member)
        return None if key is None else self.score_of(member, key)

    def _note_zero(self, member: bytes, score: float) -> None:
        """Keep ``negzero`` for a member just given ``score`` (zero) on a skiplist."""
        if math.copysign(1.0, score) < 0:
            if self.negzero is None:
                self.negzero = set()
            self.negzero.add(member)
        else:
            self._forget_zero(member)

    def _forget_zero(self, member: bytes) -> None:
        negzero = self.negzero
        if negzero is not None:
            negzero.discard(member)
            if not negzero:
                self.negzero = None

    def add(self, member: bytes, score: float) -> bool:
        """Store ``member`` with ``score``; returns whether it is new (the score may change).

        The general path; :meth:`insert` and :meth:`update` are its two halves for callers
        that already know whether the member is there (ZADD), and agree with it."""
        old = self.score(member)
        if old is None:
            self.insert(member, score)
            return True
        self.update(member, old, score)
        return False

    def insert(self, member: bytes, score: float) -> None:
        """Store a member that is not there yet (the caller has checked)."""
        if score == 0.0:
            if type(self.order) is SmallOrder:
                score = 0.0  # a listpack writes an integral score as an integer: -0 becomes 0
            else:
                self._note_zero(member, score)
        keys = self.keys
        key = order_key(score, member)
        keys[member] = key
        self.order.add(key)
        self.strbytes += len(member)
        index = self.scan_index
        if index is not None:
            index.pending.append(member)
            if len(index.pending) > len(keys) + 1024:
                self.scan_index = None  # cheaper to rebuild at the next ZSCAN

    def update(self, member: bytes, old: float, score: float) -> None:
        """Give a member that is there with score ``old`` the score ``score`` (an equal
        score changes nothing, not even the sign of a zero, as in Redis)."""
        if old == score:
            return
        if self.negzero is not None:
            self._forget_zero(member)
        if score == 0.0:
            if type(self.order) is SmallOrder:
                score = 0.0
            else:
                self._note_zero(member, score)
        order = self.order
        keys = self.keys
        order.remove(keys[member])
        key = order_key(score, member)
        order.add(key)
        keys[member] = key

    def remove(self, member: bytes) -> bool:
        """Remove ``member``; returns whether it was there. The scan index drops it lazily."""
        key = self.keys.pop(member, None)
        if key is None:
            return False
        self.order.remove(key)
        self.strbytes -= len(member)
        if self.negzero is not None:
            self._forget_zero(member)
        return True

    def rank(self, member: bytes, reverse: bool = False) -> int | None:
        """0-based position of ``member`` (from the highest score when ``reverse``)."""
        key = self.keys.get(member)
        if key is None:
            return None
        rank: int = self.order.bisect_left(key)
        return len(self.keys) - 1 - rank if reverse else rank

    def _entries(self, keys: Iterable[bytes]) -> list[Entry]:
        """(score, member) pairs of order keys."""
        out = []
        if self.negzero is None:
            for key in keys:
                out.append((key_score(key), key[8:]))
            return out
        score_of = self.score_of
        for key in keys:
            member = key[8:]
            out.append((score_of(member, key), member))
        return out

    # -- positions ------------------------------------------------------------------------

    def entries(self, start: int, stop: int, reverse: bool = False) -> list[Entry]:
        """Entries at positions [start, stop) counted from the low end, or from the high end
        when ``reverse`` (then listed from the highest score down)."""
        order = self.order
        if not reverse:
            return self._entries(order[start:stop])
        n = len(order)
        return self._entries(order[n - stop : n - start][::-1])

    def iter_from(self, position: int, reverse: bool = False) -> Iterator[Entry]:
        """Entries from ``position`` towards the high end (or the low end when ``reverse``)."""
        order = self.order
        if type(order) is SmallOrder:
            if reverse:
                keys = iter(order[position::-1]) if position >= 0 else iter(())
            else:
                keys = iter(order[position:])
        elif reverse:
            if position < 0:
                return iter(())
            keys = order.islice(0, position + 1, reverse=True)
        else:
            keys = order.islice(position)
        score_of = self.score_of
        return ((score_of(key[8:], key), key[8:]) for key in keys)

    def delete_positions(self, start: int, stop: int) -> int:
        """Remove the entries at positions [start, stop); returns how many went."""
        order = self.order
        gone = order[start:stop]
        if not gone:
            return 0
        keys = self.keys
        size = 0
        for key in gone:
            member = key[8:]
            del keys[member]
            size += len(member)
            if self.negzero is not None:
                self._forget_zero(member)
        self.strbytes -= size
        del order[start:stop]
        return len(gone)

    def pop(self, count: int, highest: bool) -> list[Entry]:
        """Remove and return up to ``count`` entries from one end, in popping order."""
        order = self.order
        n = len(order)
        count = min(count, n)
        if highest:
            gone = self._entries(order[n - count :][::-1])
            del order[n - count :]
        else:
            gone = self._entries(order[:count])
            del order[:count]
        keys = self.keys
        size = 0
        for _, member in gone:
            del keys[member]
            size += len(member)
            if self.negzero is not None:
                self._forget_zero(member)
        self.strbytes -= size
        return gone

    # -- score ranges ---------------------------------------------------------------------

    def score_span(self, lo: float, lo_ex: bool, hi: float, hi_ex: bool) -> tuple[int, int]:
        """Positions [start, stop) of the entries whose score lies in the range (start may
        equal stop). O(log n)."""
        order = self.order
        n = len(order)
        # A score's eight bytes alone sort before every entry with that score.
        if lo_ex:
            start = n if lo == _INF else order.bisect_left(score_prefix(math.nextafter(lo, _INF)))
        else:
            start = order.bisect_left(score_prefix(lo))
        if hi_ex:
            stop = order.bisect_left(score_prefix(hi))
        else:
            stop = n if hi == _INF else order.bisect_left(
                score_prefix(math.nextafter(hi, _INF)))
        return start, max(start, stop)

    def score_range(self, lo: float, lo_ex: bool, hi: float, hi_ex: bool, offset: int = 0,
                    limit: int = -1, reverse: bool = False) -> list[Entry]:
        """The entries of a score range, from the low end (from the high end when
        ``reverse``), skipping ``offset`` of them and taking at most ``limit`` (all when
        negative): ZRANGEBYSCORE's walk (see :meth:`score_range_keys`)."""
        return self._entries(self.score_range_keys(lo, lo_ex, hi, hi_ex, offset, limit, reverse))

    def score_range_members(self, lo: float, lo_ex: bool, hi: float, hi_ex: bool,
                            offset: int = 0, limit: int = -1,
                            reverse: bool = False) -> list[bytes]:
        """The members alone of :meth:`score_range` (no score to look up)."""
        keys = self.score_range_keys(lo, lo_ex, hi, hi_ex, offset, limit, reverse)
        return [key[8:] for key in keys]

    def score_range_keys(self, lo: float, lo_ex: bool, hi: float, hi_ex: bool, offset: int = 0,
                         limit: int = -1, reverse: bool = False) -> list[bytes]:
        """The order keys of a score range, as :meth:`score_range` describes.

        The fast path of :meth:`score_span` plus positions (a test holds them equal): on a
        skiplist with a small offset, one bounded iteration from the seek points, which
        needs no positional index; otherwise positions.
        """
        order = self.order
        if not order or not limit or offset < 0:
            return []
        if type(order) is SmallOrder or offset >= _WALK_OFFSET:
            start, stop = self.score_span(lo, lo_ex, hi, hi_ex)
            n = len(order)
            if reverse:
                start, stop = n - stop, n - start
            start += offset
            if limit >= 0:
                stop = min(stop, start + limit)
            if start >= stop:
                return []
            if not reverse:
                return list(order[start:stop])
            return list(order[n - stop : n - start][::-1])
        if lo_ex:
            if lo == _INF:
                return []
            lo = math.nextafter(lo, _INF)
        # The upper end as an exclusive bound (None: no bound at all).
        top = hi if hi_ex else (None if hi == _INF else math.nextafter(hi, _INF))
        walk = order.irange(score_prefix(lo), None if top is None else score_prefix(top),
                            (True, False), reverse)
        return list(islice(walk, offset, None if limit < 0 else offset + limit))

    # -- lexicographic ranges -------------------------------------------------------------

    def lex_first(self, lo: LexBound, hi: LexBound, reverse: bool = False) -> int | None:
        """Where a lexicographic range starts: the first entry in it (the last one when
        ``reverse``), or None. Later entries are checked one by one against the far end,
        as Redis walks them, with :func:`lex_in_max` / :func:`lex_in_min`."""
        n = len(self.order)
        if not n or lex_range_empty(lo, hi):
            return None
        member_at = self._member_at
        if not _gte_min(member_at(n - 1), lo) or not _lte_max(member_at(0), hi):
            return None
        if type(self.order) is SmallOrder:
            # Redis's listpack walk, exact even when scores differ.
            members = [key[8:] for key in self.order]
            if reverse:
                for i in range(n - 1, -1, -1):
                    if _lte_max(members[i], hi):
                        return i if _gte_min(members[i], lo) else None
                return None
            for i, member in enumerate(members):
                if _gte_min(member, lo):
                    return i if _lte_max(member, hi) else None
            return None
        if reverse:
            i = self._lex_upper(hi) - 1
            return i if i >= 0 and _gte_min(member_at(i), lo) else None
        i = self._lex_lower(lo)
        return i if i < n and _lte_max(member_at(i), hi) else None

    def lex_span(self, lo: LexBound, hi: LexBound) -> tuple[int, int]:
        """Positions [start, stop) of a lexicographic range: from its first entry, the run
        of entries within its upper end (ZLEXCOUNT, ZREMRANGEBYLEX)."""
        start = self.lex_first(lo, hi)
        if start is None:
            return 0, 0
        order = self.order
        if type(order) is SmallOrder:
            stop = start
            n = len(order)
            while stop < n and _lte_max(order[stop][8:], hi):
                stop += 1
            return start, stop
        return start, max(start, self._lex_upper(hi))

    def _member_at(self, position: int) -> bytes:
        member: bytes = self.order[position][8:]
        return member

    def _lex_lower(self, lo: LexBound) -> int:
        """The first position whose member is within the lower end ``lo`` (skiplist)."""
        order = self.order
        prefix = self._single_score()
        if prefix is not None:
            kind, value, exclusive = lo
            if kind:
                return 0 if kind < 0 else len(order)
            probe = prefix + value
            return order.bisect_right(probe) if exclusive else order.bisect_left(probe)
        return self._search(lambda m: _gte_min(m, lo))

    def _lex_upper(self, hi: LexBound) -> int:
        """The first position whose member is past the upper end ``hi`` (skiplist)."""
        order = self.order
        prefix = self._single_score()
        if prefix is not None:
            kind, value, exclusive = hi
            if kind:
                return 0 if kind < 0 else len(order)
            probe = prefix + value
            return order.bisect_left(probe) if exclusive else order.bisect_right(probe)
        return self._search(lambda m: not _lte_max(m, hi))

    def _single_score(self) -> bytes | None:
        """The score every member has (as its eight key bytes), if they all have the same
        one (the lexicographic commands' documented use), else None."""
        order = self.order
        first: bytes = order[0][:8]
        return first if first == order[-1][:8] else None

    def _search(self, past: Any) -> int:
        """The first position whose member satisfies ``past``, by binary search over
        positions (meaningful when members are in order; O(log² n) on a skiplist)."""
        order = self.order
        lo, hi = 0, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            if past(order[mid][8:]):
                hi = mid
            else:
                lo = mid + 1
        return lo

    # -- whole-value operations -----------------------------------------------------------

    def copy(self) -> ZSet:
        """An independent copy (COPY), in the same encoding and order."""
        twin = ZSet()
        twin.keys = dict(self.keys)
        twin.negzero = None if self.negzero is None else set(self.negzero)
        twin.strbytes = self.strbytes
        order = self.order
        twin.order = SmallOrder(order) if type(order) is SmallOrder else SortedList(order)
        return twin

    def memory_usage(self) -> int:
        """An estimate of the bytes the sorted set occupies, in O(1) (MEMORY USAGE,
        used_memory)."""
        base = _BASE if type(self.order) is SmallOrder else _SKIPLIST_BASE
        return base + _MEMBER * len(self.keys) + 2 * self.strbytes

    # -- iteration ------------------------------------------------------------------------

    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One ZSCAN step: the next cursor and the members it covers.

        A listpack answers every member (in order) and cursor 0, as Redis does; a skiplist
        about ``count`` members from ``cursor`` on in hash order.
        """
        if type(self.order) is SmallOrder:
            return 0, [key[8:] for key in self.order]
        index = self.scan_index
        if index is None:
            index = self.scan_index = ScanIndex(self.keys)
        return index.scan(self.keys, cursor, count)

    def random_entry(self, rng: random.Random | None = None) -> Entry:
        """One entry drawn uniformly (the sorted set must not be empty)."""
        key: bytes = self.order[(rng or random).randrange(len(self.keys))]
        member = key[8:]
        return self.score_of(member, key), member

    def random_entries(self, count: int, rng: random.Random | None = None) -> list[Entry]:
        """``count`` entries drawn with repetition, in draw order (a negative count)."""
        order = self.order
        n = len(order)
        randrange = (rng or random).randrange
        return self._entries([order[randrange(n)] for _ in range(count)])

    def distinct_entries(self, count: int, rng: random.Random | None = None) -> list[Entry]:
        """``count`` different entries (``count`` below the size of the sorted set).

        A listpack answers them in its own order, as Redis 7.2+ samples a listpack front to
        back; a skiplist in random order.
        """
        order = self.order
        picks = (rng or random).sample(range(len(order)), count)
        if type(order) is SmallOrder:
            picks.sort()
        return self._entries([order[i] for i in picks])


def lex_in_max(member: bytes, hi: LexBound) -> bool:
    """Whether ``member`` is within the upper end of a lexicographic range."""
    return _lte_max(member, hi)


def lex_in_min(member: bytes, lo: LexBound) -> bool:
    """Whether ``member`` is within the lower end of a lexicographic range."""
    return _gte_min(member, lo)
