"""The set value type, in Redis's three encodings: intset, listpack and hashtable.

A :class:`Set` holds distinct byte strings in one of three representations, and OBJECT
ENCODING names the one in use, as Redis 7.2 and later would for the same history of writes:

* ``intset``: every member is an integer (Redis's ``string2ll`` rules: no sign but ``-``,
  no leading zeros, 64-bit), kept sorted in an :class:`array.array` whose item width is the
  narrowest of 16, 32 or 64 bits that holds every value ever added: adding a wider value
  upgrades the whole array, removing never narrows it (Redis's intset). Members read in
  ascending numeric order; membership and insertion cost O(log n) + O(n) for the move.
* ``listpack``: a small set in insertion order, a ``dict`` whose keys are the members
  (removing and adding again moves a member to the end, as a listpack does). Membership
  O(1); Redis pays O(n) here, which only makes us faster.
* ``hashtable``: a Python ``set``; order is whatever the table gives, as with Redis's dict.

Conversions happen exactly where Redis's ``t_set.c`` makes them (its ``setTypeCreate``,
``setTypeMaybeConvert``, ``setTypeAddAux``, ``maybeConvertToIntset``): the commands pass
the directives in a :class:`Limits` and the store decides. In short:

* a new set is an intset when its first member is an integer and the command brings at
  most ``set-max-intset-entries`` members, else a listpack when it brings at most
  ``set-max-listpack-entries``, else a hashtable;
* an intset that outgrows ``set-max-intset-entries`` (capped at 2**30) becomes a hashtable;
  one given a non-integer becomes a listpack when it has fewer than
  ``set-max-listpack-entries`` members and neither the new member nor its widest integer
  is longer than ``set-max-listpack-value`` bytes, else a hashtable;
* a listpack becomes a hashtable when an add would exceed either listpack limit, and at
  once when one command brings more members than ``set-max-listpack-entries`` (7.2+);
* nothing converts back, except that the results of set algebra and SPOP's rebuilding are
  new sets built by the same rules (and a SINTERSTORE result of integers becomes an
  intset when it fits).

Random picks from a hashtable go through a *sampler*: a list of the members built by the
first pick that needs it, plus the set of members removed since (its dead entries). A pick
draws list positions until it hits a live one (at most half the list is dead, so two draws
are expected), which makes one pick O(1) and uniform; SPOP removes its pick from the list
by swapping in the last entry. Adds append to the list, or revive a dead entry; the list
is rebuilt from the set when dead entries reach half of it.

Scanning follows :mod:`resplite.store.hash`: an intset or listpack answers whole with cursor
0; a hashtable walks a :class:`~resplite.store.scanindex.ScanIndex`, built by the first
SSCAN that needs it, so a cursor stays valid whatever is written between calls.

Size: ``strbytes`` is the sum of the members' lengths while they are byte strings (a
listpack or a hashtable; 0 for an intset, whose array is its size), kept by every method
that adds or removes members, so :meth:`Set.memory_usage` costs O(1) (see
:mod:`resplite.store.sizes`).

Invariants: a set stored in the keyspace is never empty (commands delete the key with its
last member); exactly one of ``ints``, ``lp``, ``ht`` is not None, and it names the encoding;
every member of an intset is an integer; ``sampler`` and ``scan_index`` are None unless
the set is a hashtable; ``strbytes`` is the sum of ``len(m)`` over ``lp`` or ``ht``.
"""

from __future__ import annotations

import random
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Final, NamedTuple

from resplite.store.listpack_size import integer_value
from resplite.store.scanindex import ScanIndex
from resplite.store.sizes import BYTES_HEADER, DICT_ENTRY, POINTER, SET_ENTRY

INTSET: Final = 0
LISTPACK: Final = 1
HASHTABLE: Final = 2
ENCODINGS: Final = ("intset", "listpack", "hashtable")

# What an empty set costs (the object and its table), and what each member adds beyond its
# bytes in a listpack (a dict) or a hashtable (a set).
_BASE: Final = 140
_HT_BASE: Final = 290
_LP_MEMBER: Final = DICT_ENTRY + BYTES_HEADER
_HT_MEMBER: Final = SET_ENTRY + BYTES_HEADER

# Redis caps an intset at 2**30 members whatever set-max-intset-entries says.
INTSET_HARD_LIMIT: Final = 1 << 30

# Item widths of an intset, narrowest first: array type code, smallest and largest value.
_WIDTHS: Final = (("h", -(1 << 15), (1 << 15) - 1), ("i", -(1 << 31), (1 << 31) - 1),
                  ("q", -(1 << 63), (1 << 63) - 1))
_ITEM_BYTES: Final = {"h": 2, "i": 4, "q": 8}

# Redis's thresholds for its SPOP and SRANDMEMBER strategies (t_set.c).
SPOP_MOVE_STRATEGY_MUL: Final = 5
SRANDMEMBER_SUB_STRATEGY_MUL: Final = 3


class Limits(NamedTuple):
    """The three set directives, as the commands read them from the configuration."""

    intset_entries: int  # set-max-intset-entries
    listpack_entries: int  # set-max-listpack-entries
    listpack_value: int  # set-max-listpack-value


def _width_for(low: int, high: int) -> str:
    for code, lo, hi in _WIDTHS:
        if lo <= low and high <= hi:
            return code
    raise OverflowError("not a 64-bit integer")


# Draws made without a caller's generator (tests pass their own, seeded).
_RNG: Final = random.Random()


class _Sampler:
    """Uniform O(1) picks from a hashtable (see the module docstring)."""

    __slots__ = ("dead", "items")

    def __init__(self, members: Iterable[bytes]) -> None:
        self.items: list[bytes] = list(members)
        self.dead: set[bytes] = set()


class Set:
    """A Redis set."""

    __slots__ = ("ht", "ints", "lp", "sampler", "scan_index", "strbytes")

    type_name: Final = "set"  # TYPE

    def __init__(self, kind: int = LISTPACK) -> None:
        self.ints: array[int] | None = array("h") if kind == INTSET else None
        self.lp: dict[bytes, None] | None = {} if kind == LISTPACK else None
        self.ht: set[bytes] | None = set() if kind == HASHTABLE else None
        self.sampler: _Sampler | None = None
        self.scan_index: ScanIndex | None = None
        self.strbytes = 0

    @classmethod
    def create(cls, first: bytes, size_hint: int, limits: Limits) -> Set:
        """An empty set in the encoding Redis picks for a new key (``setTypeCreate``):
        ``first`` is the first member about to be added, ``size_hint`` how many the command
        brings."""
        if size_hint <= limits.intset_entries and integer_value(first) is not None:
            return cls(INTSET)
        if size_hint <= limits.listpack_entries:
            return cls(LISTPACK)
        return cls(HASHTABLE)

    @classmethod
    def from_members(cls, members: Iterable[bytes], limits: Limits, kind: int = INTSET) -> Set:
        """A set that starts empty in ``kind`` and receives ``members`` one by one."""
        s = cls(kind)
        s.add_all(members, limits)
        return s

    @property
    def kind(self) -> int:
        """INTSET, LISTPACK or HASHTABLE."""
        if self.ht is not None:
            return HASHTABLE
        return LISTPACK if self.lp is not None else INTSET

    @property
    def encoding(self) -> str:
        """OBJECT ENCODING's answer."""
        return ENCODINGS[self.kind]

    @property
    def intset_width(self) -> int:
        """Bytes per member of an intset (2, 4 or 8); 0 for the other encodings."""
        return _ITEM_BYTES[self.ints.typecode] if self.ints is not None else 0

    def __len__(self) -> int:
        if self.ht is not None:
            return len(self.ht)
        if self.lp is not None:
            return len(self.lp)
        return len(self.ints) if self.ints is not None else 0

    def __repr__(self) -> str:
        return f"<Set {self.encoding} members={len(self)}>"

    def __iter__(self) -> Iterator[bytes]:
        """The members in the set's own order (ascending for an intset, insertion order for
        a listpack, table order for a hashtable)."""
        if self.ht is not None:
            return iter(self.ht)
        if self.lp is not None:
            return iter(self.lp)
        return (b"%d" % v for v in self.ints or ())

    def members(self) -> list[bytes]:
        """A snapshot of the members in the set's order."""
        if self.ht is not None:
            return list(self.ht)
        if self.lp is not None:
            return list(self.lp)
        return [b"%d" % v for v in self.ints or ()]

    # -- membership -----------------------------------------------------------------------

    def __contains__(self, member: object) -> bool:
        if self.ht is not None:
            return member in self.ht
        if self.lp is not None:
            return member in self.lp
        ints = self.ints
        if ints is None or not isinstance(member, bytes):
            return False
        value = integer_value(member)
        if value is None:
            return False
        i = bisect_left(ints, value)
        return i < len(ints) and ints[i] == value

    # -- adding ---------------------------------------------------------------------------

    def add(self, member: bytes, limits: Limits) -> bool:
        """Add ``member``; returns whether it is new. Converts as Redis's ``setTypeAddAux``."""
        ht = self.ht
        if ht is not None:
            if member in ht:
                return False
            ht.add(member)
            self.strbytes += len(member)
            if self.sampler is not None or self.scan_index is not None:
                self._note_added(member)
            return True
        lp = self.lp
        if lp is not None:
            if member in lp:
                return False
            if len(lp) < limits.listpack_entries and len(member) <= limits.listpack_value:
                lp[member] = None
            else:
                self._to_hashtable().add(member)
            self.strbytes += len(member)
            return True
        value = integer_value(member)
        if value is not None:
            return self._intset_add(value, limits)
        # A string into an intset: a listpack if everything would fit one, else a hashtable.
        ints = self.ints or array("h")
        widest = max(len(b"%d" % ints[0]), len(b"%d" % ints[-1])) if ints else 0
        if (len(ints) < limits.listpack_entries and len(member) <= limits.listpack_value
                and widest <= limits.listpack_value):
            self._to_listpack()[member] = None
        else:
            self._to_hashtable().add(member)
        self.strbytes += len(member)
        return True

    def add_all(self, members: Iterable[bytes], limits: Limits) -> int:
        """Add each of ``members`` in turn; returns how many were new.

        The same as calling :meth:`add` for each, except that once the set is a hashtable
        (with no sampler or scan index to keep up) the rest go in with one C-level update.
        """
        added = 0
        it = iter(members)
        add = self.add
        for member in it:
            if add(member, limits):
                added += 1
            ht = self.ht
            if ht is not None and self.sampler is None and self.scan_index is None:
                new = set(it)
                new.difference_update(ht)
                ht |= new
                self.strbytes += sum(map(len, new))
                return added + len(new)
        return added

    def _intset_add(self, value: int, limits: Limits) -> bool:
        ints = self.ints
        if ints is None:
            raise TypeError("not an intset")
        i = bisect_left(ints, value)
        if i < len(ints) and ints[i] == value:
            return False
        try:
            ints.insert(i, value)
        except OverflowError:
            # Wider than the array's items: upgrade them all. The new value is the smallest
            # or the largest, so ``i`` is still its place.
            low = min(value, ints[0]) if ints else value
            high = max(value, ints[-1]) if ints else value
            ints = self.ints = array(_width_for(low, high), ints)
            ints.insert(i, value)
        if len(ints) > min(limits.intset_entries, INTSET_HARD_LIMIT):
            self._to_hashtable()
        return True

    def _note_added(self, member: bytes) -> None:
        """Keep a hashtable's sampler and scan index complete after ``member`` was added."""
        sampler = self.sampler
        if sampler is not None:
            if member in sampler.dead:
                sampler.dead.discard(member)  # its entry is still in the list
            else:
                sampler.items.append(member)
        index = self.scan_index
        if index is not None:
            index.pending.append(member)
            if len(index.pending) > len(self) + 1024:
                self.scan_index = None  # cheaper to rebuild at the next SSCAN

    # -- removing -------------------------------------------------------------------------

    def remove(self, member: bytes) -> bool:
        """Remove ``member``; returns whether it was there. Never converts."""
        ht = self.ht
        if ht is not None:
            if member not in ht:
                return False
            ht.remove(member)
            self.strbytes -= len(member)
            if self.sampler is not None:
                self.sampler.dead.add(member)
            return True
        lp = self.lp
        if lp is not None:
            if member not in lp:
                return False
            del lp[member]
            self.strbytes -= len(member)
            return True
        ints = self.ints
        value = integer_value(member)
        if ints is None or value is None:
            return False
        i = bisect_left(ints, value)
        if i < len(ints) and ints[i] == value:
            del ints[i]
            return True
        return False

    # -- conversions ----------------------------------------------------------------------

    def convert(self, kind: int) -> None:
        """Change representation, keeping the members (and the order where one is kept)."""
        if kind == self.kind:
            return
        if kind == HASHTABLE:
            self._to_hashtable()
        elif kind == LISTPACK:
            self._to_listpack()
        else:
            self._to_intset()

    def _to_hashtable(self) -> set[bytes]:
        ht = self.ht = set(self)
        if self.ints is not None:
            self.strbytes = sum(map(len, ht))  # the integers become strings
        self.ints = None
        self.lp = None
        return ht

    def _to_listpack(self) -> dict[bytes, None]:
        lp = self.lp = dict.fromkeys(self)
        if self.ints is not None:
            self.strbytes = sum(map(len, lp))
        self.ints = None
        self.ht = None
        self.sampler = None
        self.scan_index = None
        return lp

    def _to_intset(self) -> None:
        values = sorted(int(m) for m in self)
        code = _width_for(values[0], values[-1]) if values else "h"
        self.ints = array(code, values)
        self.lp = None
        self.ht = None
        self.sampler = None
        self.scan_index = None
        self.strbytes = 0

    def maybe_convert(self, size_hint: int, limits: Limits) -> None:
        """Become a hashtable before a command that brings ``size_hint`` members, too many
        for the current encoding (Redis 7.2's ``setTypeMaybeConvert``)."""
        if ((self.lp is not None and size_hint > limits.listpack_entries)
                or (self.ints is not None and size_hint > limits.intset_entries)):
            self._to_hashtable()

    def maybe_to_intset(self, limits: Limits) -> None:
        """Become an intset when there are few enough members; the caller knows they are
        all integers (Redis's ``maybeConvertToIntset``)."""
        if self.ints is None and len(self) <= min(limits.intset_entries, INTSET_HARD_LIMIT):
            self._to_intset()

    def become(self, other: Set) -> None:
        """Take over ``other``'s members and encoding (SPOP rebuilding a set in place)."""
        self.ints, self.lp, self.ht = other.ints, other.lp, other.ht
        self.strbytes = other.strbytes
        self.sampler = None
        self.scan_index = None

    # -- whole-value operations -----------------------------------------------------------

    def copy(self) -> Set:
        """An independent copy (COPY), in the same encoding, order and intset width."""
        twin = Set(self.kind)
        if self.ht is not None:
            twin.ht = set(self.ht)
        elif self.lp is not None:
            twin.lp = dict(self.lp)
        elif self.ints is not None:
            twin.ints = array(self.ints.typecode, self.ints)
        twin.strbytes = self.strbytes
        return twin

    def recount(self) -> None:
        """Recompute ``strbytes`` after a loader filled ``lp`` or ``ht`` directly (RDB)."""
        members = self.ht if self.ht is not None else self.lp
        self.strbytes = sum(map(len, members)) if members is not None else 0

    def memory_usage(self) -> int:
        """An estimate of the bytes the set occupies, in O(1) (MEMORY USAGE, used_memory)."""
        ht = self.ht
        if ht is not None:
            sampler = self.sampler
            return (_HT_BASE + _HT_MEMBER * len(ht) + self.strbytes
                    + (POINTER * len(sampler.items) if sampler is not None else 0))
        lp = self.lp
        if lp is not None:
            return _BASE + _LP_MEMBER * len(lp) + self.strbytes
        ints = self.ints
        return _BASE + (ints.itemsize * len(ints) if ints is not None else 0)

    # -- random picks ---------------------------------------------------------------------

    def _pick(self, ht: set[bytes], rng: random.Random) -> tuple[list[bytes], int]:
        """A uniformly drawn live position in the hashtable's sampler."""
        sampler = self.sampler
        if sampler is None or len(sampler.dead) * 2 > len(sampler.items):
            sampler = self.sampler = _Sampler(ht)
        items, dead = sampler.items, sampler.dead
        n = len(items)
        while True:
            i = rng.randrange(n)
            if not dead or items[i] not in dead:
                return items, i

    def random_member(self, rng: random.Random = _RNG) -> bytes:
        """One member drawn uniformly (the set must not be empty)."""
        if self.ht is not None:
            items, i = self._pick(self.ht, rng)
            return items[i]
        if self.lp is not None:
            return next(islice(self.lp, rng.randrange(len(self.lp)), None))
        ints = self.ints or array("h")
        return b"%d" % ints[rng.randrange(len(ints))]

    def random_members(self, count: int, rng: random.Random = _RNG) -> list[bytes]:
        """``count`` members drawn with repetition, in draw order (a negative count)."""
        if self.ht is not None and count * 4 < len(self.ht):
            return [self.random_member(rng) for _ in range(count)]
        if self.ints is not None:
            return [b"%d" % v for v in rng.choices(self.ints, k=count)]
        return rng.choices(self.members(), k=count)

    def distinct_members(self, count: int, rng: random.Random = _RNG) -> list[bytes]:
        """``count`` different members, 1 < ``count`` < the size (SRANDMEMBER's cases 2.5,
        3 and 4): a listpack answers them in its own order, as Redis samples it front to
        back; the other encodings in no particular order."""
        n = len(self)
        if self.lp is not None:
            items = list(self.lp)
            return [items[i] for i in sorted(rng.sample(range(n), count))]
        if self.ints is not None:
            ints = self.ints
            return [b"%d" % ints[i] for i in rng.sample(range(n), count)]
        if count * SRANDMEMBER_SUB_STRATEGY_MUL > n:
            return rng.sample(self.members(), count)
        chosen: dict[bytes, None] = {}
        while len(chosen) < count:
            chosen[self.random_member(rng)] = None
        return list(chosen)

    def pop_random(self, rng: random.Random = _RNG) -> bytes:
        """Remove and return one member drawn uniformly (the set must not be empty)."""
        ht = self.ht
        if ht is not None:
            items, i = self._pick(ht, rng)
            member = items[i]
            items[i] = items[-1]
            items.pop()
            ht.remove(member)
            self.strbytes -= len(member)
            return member
        lp = self.lp
        if lp is not None:
            member = next(islice(lp, rng.randrange(len(lp)), None))
            del lp[member]
            self.strbytes -= len(member)
            return member
        ints = self.ints or array("h")
        return b"%d" % ints.pop(rng.randrange(len(ints)))

    def pop_many(self, count: int, limits: Limits, rng: random.Random = _RNG) -> list[bytes]:
        """Remove ``count`` members drawn without repetition, 0 < ``count`` < the size, with
        Redis's two strategies (its SPOP cases 2 and 3); returns them in reply order.

        Few members: they are drawn one by one (a listpack answers in its own order, the
        others in draw order). Most of the set: the members to *keep* are drawn into a new
        set, built by the usual rules from an empty intset (for an intset) or listpack,
        which replaces this one; the popped members answer in this set's order.
        """
        n = len(self)
        remaining = n - count
        lp = self.lp
        if remaining * SPOP_MOVE_STRATEGY_MUL > count:
            if lp is not None:
                items = list(lp)
                popped = [items[i] for i in sorted(rng.sample(range(n), count))]
                for member in popped:
                    del lp[member]
                self.strbytes -= sum(map(len, popped))
                return popped
            return [self.pop_random(rng) for _ in range(count)]
        if self.ht is not None:
            kept = [self.pop_random(rng) for _ in range(remaining)]
            survivors = Set.from_members(kept, limits, LISTPACK)
            popped = self.members()
        else:
            items = self.members()
            if lp is not None:
                keep = sorted(rng.sample(range(n), remaining))
            else:
                keep = rng.sample(range(n), remaining)
            kept = [items[i] for i in keep]
            survivors = Set.from_members(kept, limits, LISTPACK if lp is not None else INTSET)
            kept_set = set(kept)
            popped = [m for m in items if m not in kept_set]
        self.become(survivors)
        return popped

    # -- iteration ------------------------------------------------------------------------

    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One SSCAN step: the next cursor and the members it covers.

        An intset or listpack answers every member and cursor 0 whatever the cursor and
        count, as Redis does; a hashtable about ``count`` members from ``cursor`` on.
        """
        ht = self.ht
        if ht is None:
            return 0, self.members()
        index = self.scan_index
        if index is None:
            index = self.scan_index = ScanIndex(ht)
        return index.scan(ht, cursor, count)


# -- set algebra ----------------------------------------------------------------------------
#
# The functions take the sets named by a command in argument order, None for a missing key,
# and follow Redis's algorithms, whose choices show in the order and the encoding of results.


def _present(sets: list[Set | None]) -> list[Set] | None:
    """The sets, or None when a key is missing (an empty set empties an intersection)."""
    found = [s for s in sets if s is not None]
    return found if len(found) == len(sets) else None


def _smallest_first(sets: list[Set]) -> tuple[Set, list[Set]]:
    """The smallest set and the others, without repeats of the same key (Redis sorts by
    size with the C library's merge sort, which is stable, as Python's sort is)."""
    ordered = sorted(sets, key=len)
    first = ordered[0]
    return first, [s for s in ordered[1:] if s is not first]


def intersection(sets: list[Set | None]) -> list[bytes]:
    """The members common to every set, in the order of the smallest one (SINTER).

    Cost: O(N * M), N the size of the smallest set, M the number of sets.
    """
    present = _present(sets)
    if present is None:
        return []
    first, others = _smallest_first(present)
    if not others:
        return first.members()
    tables = [s.ht for s in others if s.ht is not None]
    if first.ht is not None and len(tables) == len(others):
        # No order to keep: the C-level intersection does the same work.
        return list(first.ht.intersection(*tables))
    return [m for m in first if all(m in s for s in others)]


def intersection_size(sets: list[Set | None], limit: int = 0) -> int:
    """How many members the intersection has; counting stops at ``limit`` unless it is 0
    (SINTERCARD)."""
    present = _present(sets)
    if present is None:
        return 0
    first, others = _smallest_first(present)
    count = 0
    for m in first:
        if all(m in s for s in others):
            count += 1
            if count == limit:
                break
    return count


def intersection_set(sets: list[Set | None], limits: Limits) -> Set:
    """The intersection as a new set, in the encoding SINTERSTORE gives it: built from an
    intset when the smallest set is one, else from a listpack, then made an intset when
    every member is an integer and there are few enough."""
    present = _present(sets)
    if present is None:
        return Set(INTSET)
    first, _ = _smallest_first(present)
    members = intersection(sets)
    result = Set.from_members(members, limits, INTSET if first.ints is not None else LISTPACK)
    if result.ints is None and members and all(integer_value(m) is not None for m in members):
        result.maybe_to_intset(limits)
    return result


def union(sets: list[Set | None], limits: Limits) -> Set:
    """Every member of every set, added in argument order to a set that starts as an
    intset (SUNION, SUNIONSTORE, and SPOP of a whole set). Cost: O(total size)."""
    result = Set(INTSET)
    for s in sets:
        if s is not None:
            result.add_all(s, limits)
    return result


def union_size(sets: list[Set | None], limit: int = 0) -> int:
    """How many distinct members the sets hold together; counting stops at ``limit`` unless
    it is 0 (SUNIONCARD). Cost: O(total size) and a set of the members seen so far."""
    seen: set[bytes] = set()
    for s in sets:
        if s is None:
            continue
        for m in s:
            if m not in seen:
                seen.add(m)
                if len(seen) == limit:
                    return limit
    return len(seen)


def difference_size(sets: list[Set | None], limit: int = 0) -> int:
    """How many members of the first set are in none of the others; counting stops at
    ``limit`` unless it is 0 (SDIFFCARD). Cost: O(N*M) for N members of the first set and M
    other sets, without building the difference."""
    first = sets[0]
    if first is None or any(s is first for s in sets[1:]):
        return 0
    others = sorted((s for s in sets[1:] if s is not None), key=len, reverse=True)
    count = 0
    for m in first:
        if not any(m in s for s in others):
            count += 1
            if count == limit:
                break
    return count


def difference(sets: list[Set | None], limits: Limits) -> Set:
    """The members of the first set that are in none of the others (SDIFF, SDIFFSTORE).

    Redis picks one of two algorithms by estimated work, and the choice shows in the
    result's encoding: the first adds only the surviving members of the first set (O(N*M));
    the second adds the whole first set, then removes every member of the others (O(total
    size)), so its result may have converted on the way.
    """
    result = Set(INTSET)
    first = sets[0]
    if first is None or any(s is first for s in sets[1:]):
        return result
    others = [s for s in sets[1:] if s is not None]
    size = len(first)
    algo_one = size * (len(others) + 1) // 2
    algo_two = size + sum(len(s) for s in others)
    if algo_one <= algo_two:
        others.sort(key=len, reverse=True)  # likelier to find a common member early
        result.add_all((m for m in first if not any(m in s for s in others)), limits)
        return result
    result.add_all(first, limits)
    for s in others:
        ht = result.ht
        if ht is not None:
            ht.difference_update(s.ht if s.ht is not None else s)
        else:
            for m in s:
                result.remove(m)
        if not len(result):
            break
    if result.ht is not None:
        result.strbytes = sum(map(len, result.ht))
    return result
