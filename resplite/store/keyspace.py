"""The keyspace: numbered databases of keys with optional expiry, free of I/O and of RESP.

Values are plain objects: ``bytes`` (or a marker subclass from
:mod:`resplite.store.string_value`) for strings, :class:`~resplite.store.stream.Stream` for
streams. Expiry times are absolute Unix milliseconds taken from an injected clock, so tests
and the time-control command can move time without sleeping.

Invariants:

* a key in ``expires`` is always in ``data``; a key in ``access`` is always in ``data`` and
  every key of ``data`` is in ``access``;
* a key lives while ``now <= when`` and is expired from ``when + 1`` on, as Redis's
  ``keyIsExpired`` rules (so PTTL can answer 0 while the value is still there); an expired
  key is never returned by a lookup: lookups delete it first (lazy expiry, as Redis's
  ``expireIfNeeded``), and the active cycle (:meth:`Database.expire_keys`, driven by
  the engine's expire cycle) frees the ones nobody reads, by the same rule. Redis 8's
  active cycle also takes a key at ``now == when``; here that millisecond can last as
  long as a test keeps the clock frozen, so every path keeps the key through it and what
  a command sees never depends on whether a cycle happened to run;
* keys are created only through :meth:`Database.set`, :meth:`Database.add` and
  :meth:`Database.put`, never by writing ``data`` directly: that is how SCAN's index
  (:mod:`resplite.store.scanindex`) and the access times learn about new keys;
* every change that a WATCH or a blocked client must notice goes through
  :meth:`Database.signal_modified`, which calls the hook the server installs. Commands call it
  themselves, after the change, as Redis's ``signalModifiedKey`` is called.

The timer index: every expiry time set is also filed in ``timers``, a dict from the
millisecond to the key set to expire then (the key itself, or a list of the keys when
several share it), and the millisecond in ``timer_heap``, a min-heap of the distinct
times. The active cycle takes the earliest time from the heap and deletes its keys in turn,
so finding a due key costs O(1) amortised (a heap of a million ``(time, key)`` tuples cost
several microseconds per pop in cache misses; a million keys set in the same second share
a thousand times). Entries are hints, never removed on PERSIST, a later EXPIRE or a delete:
one whose key is gone or whose expiry changed since (``expires`` is the truth) is skipped
when reached. ``timer_entries`` counts the entries filed and not yet reached, and the cron
rebuilds the index from ``expires`` when stale entries outnumber live ones two to one
(:meth:`Database.tidy_timers`).

Hash field expiry (Redis 7.4): a hash whose fields have TTLs is tracked in a second min-heap
of ``(time, key)``, its earliest field expiry, filled by :meth:`Database.track_fields` (the
hash commands call it after setting a TTL; :meth:`Database.put` calls it for a hash moved by
RENAME, MOVE or COPY). Entries are hints: the active cycle asks the hash found under the key
(if it still is a hash) to drop its due fields, deletes the key when that empties it, and
tracks it again at its next expiry. ``expired_fields`` counts the fields so removed.

Three more hooks serve keyspace notifications, each ``None`` (and free) unless the server
wants the event: ``on_expired`` runs as an expired key is deleted (before ``on_modified``),
``on_new`` as a key is added that was not there (Redis's ``dbAdd``), ``on_miss`` when a read
lookup (:meth:`Database.read`) finds nothing; ``on_fields_expired`` when hash fields expire
(before the key is signalled; the key is already gone if they were its last). While
``on_expired`` or ``on_new`` is set,
writes take the bookkeeping path (:meth:`Database._note_write`), where a key past its time is
first deleted as expired, then created anew, as Redis's write lookup does.

Access tracking (OBJECT IDLETIME / FREQ) follows Redis's 24-bit per-object field: under an
LRU or non-LFU policy it holds the LRU clock (Unix seconds, 24 bits) of the last access; under
an LFU policy it holds the minute of the last decrement (16 bits) and a logarithmic access
counter (8 bits). Switching policy reinterprets the field, as Redis does. The clock the hot
path stores is a cached attribute refreshed by :meth:`Keyspace.tick` (the server cron and
every clock jump), so a lookup costs one dict store and no clock read.

Memory accounting: ``used`` is a running total of the bytes the database holds, kept by
every method that adds, replaces or removes a key or an expiry (writes, deletes, expiry,
flush), so the server's ``used_memory`` is current after every command at no cost per read.
The databases that ever held a key sign up with the keyspace's :class:`Meter`, whose
:meth:`Meter.used` adds up their totals (one database in the usual deployment). A key costs
:data:`KEY_COST` plus its length plus its value's size (:func:`value_size`), and
:data:`EXPIRE_COST` more with an expiry time. An immutable string's size follows from its
length; a container (hash, set, sorted set, stream, mutable string) reports its own in
O(1) through ``memory_usage()`` and may change in place, so what it was last charged is
kept in ``charged``: :meth:`Database.signal_modified` (which every command calls after a
change) notes a changed container in ``unsettled`` and :meth:`Database.settle`, which runs
whenever the total is read (:meth:`Meter.used`: before every command under ``maxmemory``,
and for every report), charges the difference, so a burst of writes to one stream is
measured once; :meth:`Database.recharge` charges one key at once, without a signal.

Eviction sampling (:meth:`Database.sample_keys`, and :meth:`Database.sample_access`, which
reads each key's idle time, LFU counter or expiry with it): keys with an expiry are drawn from
``volatile_sampler``, a list of the keys with an expiry built the first time a
``volatile-*`` eviction needs it and appended to by :meth:`Database.set_expire` while it
exists; any key from ``sampler``, a list of the keys built the first time an ``allkeys-*``
eviction needs it and appended to as keys are created (a write then takes the bookkeeping
path). Keys deleted (or persisted) since are dropped from either lazily, when drawn, and a
list is rebuilt when stale entries outnumber live keys.

Invariants (accounting), once settled (``unsettled`` empty): ``used`` equals the sum, over
the keys, of ``KEY_COST + len(key) +`` the value's charge (its :func:`value_size`, or
``charged[key]`` for a container, which equals its ``memory_usage()``) ``+ EXPIRE_COST`` if
the key is in ``expires``; a container changed since it was charged has its key in
``unsettled``; ``charged`` has exactly the keys whose values are not immutable
strings (so a key is in ``charged`` exactly when its value may change in place); a
database whose ``used`` is not 0 is in its meter's list.

Key-size histograms (INFO keysizes, :mod:`resplite.store.keysizes`) are kept in the same
places: ``sizes`` counts each string, list, set, sorted set and hash in its type's row at
its length's bin, a container at its length when it was last charged, and ``slots`` holds,
for each container counted, the index of the bin it is counted in; once settled, both equal
what a walk of ``data`` computes.
"""

from __future__ import annotations

import heapq
import random
import sys
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any, Protocol

from resplite.store import keysizes
from resplite.store.hash import Hash
from resplite.store.scanindex import ScanIndex
from resplite.store.sizes import (
    BYTES_HEADER,
    DICT_ENTRY,
    FLAT_STRINGS,
    INT_OBJECT,
    POINTER,
    TUPLE2,
)


class Clock(Protocol):
    def time_ms(self) -> int: ...


# Called with (db index, key) after a key changed, was deleted or expired.
ModifiedHook = Callable[[int, bytes], None]
# Takes a value leaving the keyspace; what it returns is ignored.
ReleaseHook = Callable[[Any], object]

LRU_CLOCK_MAX = (1 << 24) - 1
LFU_INIT_VAL = 5
# What Database.sample_access reports of each key drawn.
SAMPLE_IDLE = 0
SAMPLE_FREQUENCY = 1
SAMPLE_EXPIRY = 2
# An index nobody scanned for this long is dropped (a later SCAN rebuilds it).
SCAN_INDEX_IDLE_MS = 60_000
# Databases up to this size are compacted in one cron tick when their table is sparse.
COMPACT_MAX_KEYS = 100_000
_FRESH_SIZES: dict[int, int] = {}


def _fresh_dict_size(n: int) -> int:
    """sys.getsizeof of a dict built with ``n`` keys (cached by power of two)."""
    bucket = max(8, 1 << n.bit_length())
    size = _FRESH_SIZES.get(bucket)
    if size is None:
        size = _FRESH_SIZES[bucket] = sys.getsizeof(dict.fromkeys(range(bucket)))
    return size


# What a key costs beyond its value: its entries in ``data`` and ``access``, and its string.
KEY_COST = 2 * DICT_ENTRY + BYTES_HEADER
# What an expiry time adds: its entry in ``expires`` with the time's int, and its entry in
# the timer index (a reference in a time's list, or a time of its own: a dict entry shared
# by the keys of that millisecond and a heap slot; counted as a tuple's worth on average).
EXPIRE_COST = DICT_ENTRY + INT_OBJECT + TUPLE2 + POINTER
# Values whose charge cannot change in place (and None: a key that is gone).
_NOT_CHARGED = FLAT_STRINGS | {type(None)}


def value_size(value: Any) -> int:
    """What a stored value costs, in O(1) (see :mod:`resplite.store.sizes`)."""
    if type(value) in FLAT_STRINGS:
        return BYTES_HEADER + len(value)
    return int(value.memory_usage())


# What a new key holding a plain string costs beyond the lengths of key and value.
_FLAT_KEY_COST = KEY_COST + BYTES_HEADER
_FLAT_EXPIRING_COST = _FLAT_KEY_COST + EXPIRE_COST


class Meter:
    """Adds up the ``used`` of the databases that have held a key: the data set part of
    the server's ``used_memory`` (a database signs up with its first key, so the sum visits
    only databases in use)."""

    __slots__ = ("dbs",)

    def __init__(self) -> None:
        self.dbs: list[Database] = []

    def used(self) -> int:
        """The bytes the databases hold, their changed containers measured first."""
        total = 0
        for db in self.dbs:
            if db.unsettled:
                db.settle()
            total += db.used
        return total


def _no_hook(db: int, key: bytes) -> None:
    return None


class Database:
    """One numbered database: a dict of keys, their expiry times and their access fields."""

    __slots__ = (
        "_field_heap",
        "_slow_writes",
        "access",
        "charged",
        "clock",
        "data",
        "detached",
        "expire_paused",
        "expired_fields",
        "expired_fields_active",
        "expired_keys",
        "expired_keys_active",
        "expires",
        "hits",
        "index",
        "lfu",
        "lfu_decay_time",
        "lfu_log_factor",
        "lrm",
        "lru_clock",
        "lru_stamp",
        "meter",
        "metered",
        "misses",
        "on_expired",
        "on_fields_expired",
        "on_miss",
        "on_modified",
        "on_new",
        "release_expired",
        "release_replaced",
        "sampler",
        "scan_index",
        "sizes",
        "slots",
        "timer_entries",
        "timer_heap",
        "timers",
        "unix_s",
        "unsettled",
        "used",
        "volatile_sampler",
    )

    def __init__(self, index: int, clock: Clock, on_modified: ModifiedHook = _no_hook,
                 meter: Meter | None = None) -> None:
        self.index = index
        self.clock = clock
        self.data: dict[bytes, Any] = {}
        # What the last flush(detach=True) took out, for the caller to free.
        self.detached: tuple[dict[bytes, Any], dict[bytes, int], dict[bytes, int]] | None = None
        # Memory accounting (see the module docstring).
        self.used = 0
        self.meter = meter if meter is not None else Meter()
        self.metered = False  # signed up with the meter (see _sign_up)
        self.charged: dict[bytes, int] = {}
        # Key-size histograms (INFO keysizes, see resplite.store.keysizes), kept with the
        # memory figure; ``slots`` has where each counted container is counted.
        self.sizes = keysizes.empty()
        self.slots: dict[bytes, int] = {}
        # Keys of containers changed since they were charged (a dict as an ordered set:
        # storing a key costs less than a set's add call on the write path).
        self.unsettled: dict[bytes, None] = {}
        # Keys to draw eviction samples from, while an allkeys-* eviction uses them.
        self.sampler: list[bytes] | None = None
        # Keys with an expiry to draw eviction samples from, while a volatile-* policy uses it.
        self.volatile_sampler: list[bytes] | None = None
        self.expires: dict[bytes, int] = {}
        self.access: dict[bytes, int] = {}
        self.on_modified = on_modified
        self.on_expired: ModifiedHook | None = None
        self.on_new: ModifiedHook | None = None
        self.on_miss: ModifiedHook | None = None
        self.on_fields_expired: ModifiedHook | None = None
        # Where values leave to instead of being dropped here: an expired key's value, and
        # one a command removes or overwrites as a side effect (not DEL's: see delete), when
        # the lazyfree-lazy-expire / lazyfree-lazy-server-del settings ask for it.
        self.release_expired: ReleaseHook | None = None
        self.release_replaced: ReleaseHook | None = None
        self.expired_keys = 0
        self.expired_keys_active = 0  # of those, the ones the active cycle deleted
        # While CLIENT PAUSE holds writes, a key past its time reads as missing but stays
        # (Redis deletes nothing then: expiries are writes); the pause's end lets them go.
        self.expire_paused = False
        # Read lookups that found a live value or none (INFO keyspace_hits / _misses).
        self.hits = 0
        self.misses = 0
        # The timer index (see the module docstring).
        self.timers: dict[int, bytes | list[bytes]] = {}
        self.timer_heap: list[int] = []
        self.timer_entries = 0
        self._field_heap: list[tuple[int, bytes]] = []
        self.expired_fields = 0
        self.expired_fields_active = 0  # of those, the ones the active cycle deleted
        self.scan_index: ScanIndex | None = None
        self.lfu = False
        # An ``*-lrm`` policy (least recently modified): reads leave the access field alone,
        # and every modification (signal_modified) stamps it.
        self.lrm = False
        self.lfu_log_factor = 10
        self.lfu_decay_time = 1
        self._slow_writes = False
        self.unix_s = 0
        self.lru_clock = 0
        self.lru_stamp: Any = 0
        self.tick()

    def __len__(self) -> int:
        return len(self.data)

    # -- lookups ------------------------------------------------------------------------

    def _expire_if_needed(self, key: bytes) -> bool:
        when = self.expires.get(key)
        if when is not None and when < self.clock.time_ms():
            if not self.expire_paused:
                self._delete_expired(key)
            return True
        return False

    def _delete_expired(self, key: bytes) -> None:
        value = self.data.pop(key)
        self.access.pop(key, None)
        self._forget(key, value)
        if self.release_expired is not None:
            self.release_expired(value)
        self.expired_keys += 1
        on_expired = self.on_expired
        if on_expired is not None:
            on_expired(self.index, key)
        self.on_modified(self.index, key)

    def get(self, key: bytes) -> Any:
        """The live value of ``key``, or None; counts as an access (LRU/LFU)."""
        if self.expires and self._expire_if_needed(key):
            return None
        value = self.data.get(key)
        if value is not None:
            if self.lfu:
                self._lfu_touch(key)
            elif not self.lrm:
                self.access[key] = self.lru_stamp
        return value

    def read(self, key: bytes, touch: bool = True) -> Any:
        """The live value of ``key`` for a command that reads it, or None: Redis's
        lookupKeyRead, counted in ``hits`` or ``misses``; an access unless ``touch`` is off."""
        value = None if self.expires and self._expire_if_needed(key) else self.data.get(key)
        if value is None:
            self.misses += 1
            if self.on_miss is not None:
                self.on_miss(self.index, key)
            return None
        self.hits += 1
        if touch:
            if self.lfu:
                self._lfu_touch(key)
            elif not self.lrm:
                self.access[key] = self.lru_stamp
        return value

    def count_reads(self, keys: list[bytes], times: int, touch: bool = True) -> None:
        """Count ``times`` read lookups (:meth:`read`) of each of ``keys``, which the caller
        has just found live: the hits, and the accesses they make unless ``touch`` is off.
        A blocked read that would find nothing new makes them without reading again."""
        self.hits += times * len(keys)
        if not touch or self.lrm:
            return
        if self.lfu:
            for key in keys:
                for _ in range(times):
                    self._lfu_touch(key)
            return
        access = self.access
        stamp = self.lru_stamp
        for key in keys:
            access[key] = stamp

    def peek(self, key: bytes) -> Any:
        """The live value of ``key``, or None, without counting as an access."""
        if self.expires and self._expire_if_needed(key):
            return None
        return self.data.get(key)

    def contains(self, key: bytes) -> bool:
        if self.expires and self._expire_if_needed(key):
            return False
        return key in self.data

    def present(self, keys: Iterable[bytes]) -> Iterator[bytes]:
        """The keys among ``keys`` that ``data`` holds, in order, expired ones included:
        the only ones a write lookup (:meth:`delete`, :meth:`contains`) can act on, found
        by a C-level filter, so a command naming millions of absent keys pays nothing per
        absent key in Python."""
        return filter(self.data.__contains__, keys)

    def get_expire(self, key: bytes) -> int | None:
        """Absolute expiry in Unix ms of a live key, or None when it has none."""
        if self._expire_if_needed(key):
            return None
        return self.expires.get(key)

    def is_expired(self, key: bytes) -> bool:
        """Whether ``key`` exists but is logically expired, without deleting it."""
        when = self.expires.get(key)
        return when is not None and when < self.clock.time_ms()

    # -- changes ------------------------------------------------------------------------

    def set(
        self, key: bytes, value: Any, *, keep_ttl: bool = False, looked_up: bool = False
    ) -> None:
        """Store ``value`` under ``key``; the old expiry is cleared unless ``keep_ttl``.

        ``looked_up`` says the caller already read the key with :meth:`get` for this
        command, so the write does not count as a second access (it matters under LFU).
        """
        data = self.data
        if self._slow_writes:
            on_new = self.on_new
            if self.expires and (on_new is not None or self.on_expired is not None):
                # As Redis's write lookup: a key past its time is deleted (and reported
                # expired) before the write, which then creates it anew.
                self._expire_if_needed(key)
            old = data.get(key)
            self._note_write(key, looked_up, old is None)
            data[key] = value
            delta = self._replaced(key, old, value)
            if not keep_ttl and self.expires and self.expires.pop(key, None) is not None:
                delta -= EXPIRE_COST
            self.used += delta
            if on_new is not None and old is None:
                on_new(self.index, key)
            return
        old = data.get(key)
        self.access[key] = self.lru_stamp
        data[key] = value
        # The accounting (see the module docstring), SET's plain strings spelled out.
        if type(value) is bytes and type(old) is bytes:
            delta = len(value) - len(old)
            if delta:
                self._resized_string(len(old), len(value))
        else:
            delta = self._replaced(key, old, value)
        if not keep_ttl and self.expires and self.expires.pop(key, None) is not None:
            delta -= EXPIRE_COST
        self.used += delta

    def set_signalled(self, key: bytes, value: bytes) -> None:
        """Plain SET's hot path: :meth:`set` (the expiry cleared) then
        :meth:`signal_modified`, in one call. A string replacing a string needs no
        re-measuring: only the signal is left to give."""
        if self._slow_writes:
            self.set(key, value)
            self.signal_modified(key)
            return
        data = self.data
        old = data.get(key)
        self.access[key] = self.lru_stamp
        data[key] = value
        if type(value) is bytes and type(old) is bytes:
            delta = len(value) - len(old)
            if delta:
                self._resized_string(len(old), len(value))
        else:
            delta = self._replaced(key, old, value)
        if self.expires and self.expires.pop(key, None) is not None:
            delta -= EXPIRE_COST
        self.used += delta
        on_modified = self.on_modified
        on_modified(self.index, key)

    def add(self, key: bytes, value: Any) -> None:
        """Store a new key that the caller knows is absent (no expiry to clear)."""
        if self._slow_writes:
            self._note_write(key, False, True)
        else:
            self.access[key] = self.lru_stamp
        self.data[key] = value
        if type(value) is bytes and self.metered:
            # _replaced's new flat string, inline: the key SET creates and a load adds.
            self.used += _FLAT_KEY_COST + len(key) + len(value)
            self.sizes[len(value).bit_length()] += 1
        else:
            self.used += self._replaced(key, None, value)
        on_new = self.on_new
        if on_new is not None:
            on_new(self.index, key)

    def add_strings(self, keys: list[bytes], values: list[bytes]) -> bool:
        """:meth:`add` of each ``keys[i]`` holding ``values[i]`` (plain ``bytes``), at once
        (a snapshot's load): the dicts take them in one update each. False, storing
        nothing, where that would not be the same as adding them one by one: a key already
        there or given twice, or writes that need their bookkeeping key by key (a scan
        index, an eviction sampler, LFU, a hook on new keys)."""
        if self._slow_writes:
            return False
        data = self.data
        batch = dict(zip(keys, values, strict=True))
        if len(batch) != len(keys) or not data.keys().isdisjoint(batch):
            return False
        data.update(batch)
        self.access.update(dict.fromkeys(keys, self.lru_stamp))
        sizes = self.sizes
        for n in map(len, values):
            sizes[n.bit_length()] += 1
        if not self.metered:
            self._sign_up()
        self.used += _FLAT_KEY_COST * len(keys) + sum(map(len, keys)) + sum(map(len, values))
        return True

    def _note_write(self, key: bytes, looked_up: bool, new: bool) -> None:
        """Bookkeeping of a write while a scan index or an eviction sampler exists, or under
        an LFU policy; ``new`` says the key is absent."""
        if not new:
            if not self.lfu:
                self.access[key] = self.lru_stamp
            elif not looked_up:
                # The write's own lookup counts as an access; the counter survives the
                # overwrite, as Redis keeps the old object's LFU field.
                self._lfu_touch(key)
            return
        self.access[key] = self._fresh_access()
        index = self.scan_index
        if index is not None:
            index.pending.append(key)
            if len(index.pending) > len(self.data) + 1024:
                self.drop_scan_index()
        sampler = self.sampler
        if sampler is not None:
            if len(sampler) > 2 * len(self.data) + 1024:
                # Mostly keys deleted since: start again from the live ones.
                sampler[:] = self.data
            sampler.append(key)

    # -- memory accounting ----------------------------------------------------------------

    def _replaced(self, key: bytes, old: Any, value: Any) -> int:
        """The change in ``used`` when ``value`` replaces ``old`` (None: a new key)."""
        if old is None:
            if not self.metered:
                self._sign_up()
            if type(value) is bytes:
                self.sizes[len(value).bit_length()] += 1
                return _FLAT_KEY_COST + len(key) + len(value)
            return KEY_COST + len(key) + self._charge(key, value)
        before = self._discharge(key, old)  # first: it drops the old record
        if self.release_replaced is not None and type(old) not in FLAT_STRINGS:
            self.release_replaced(old)
        return self._charge(key, value) - before

    def _sign_up(self) -> None:
        self.metered = True
        self.meter.dbs.append(self)

    def _charge(self, key: bytes, value: Any) -> int:
        """The cost of ``value`` being stored under ``key``; a container's is recorded.
        The key is counted in its type's key-size histogram."""
        if type(value) in FLAT_STRINGS:
            self.sizes[len(value).bit_length()] += 1
            return BYTES_HEADER + len(value)
        size: int = value.memory_usage()
        self.charged[key] = size
        slot = keysizes.slot_of(value)
        if slot >= 0:
            self.slots[key] = slot
            self.sizes[slot] += 1
        return size

    def _discharge(self, key: bytes, value: Any) -> int:
        """What ``value``, leaving ``key``, was charged; a container's record is dropped,
        and the key leaves the key-size histogram."""
        if type(value) in FLAT_STRINGS:
            self.sizes[len(value).bit_length()] -= 1
            return BYTES_HEADER + len(value)
        slot = self.slots.pop(key, -1)
        if slot >= 0:
            self.sizes[slot] -= 1
        return self.charged.pop(key, 0)

    def _resized_string(self, before: int, after: int) -> None:
        """A plain string's length changed from ``before`` to ``after`` bytes."""
        old_bin = before.bit_length()
        new_bin = after.bit_length()
        if old_bin != new_bin:
            sizes = self.sizes
            sizes[old_bin] -= 1
            sizes[new_bin] += 1

    def _recount(self, key: bytes, value: Any) -> None:
        """Move a container changed in place to its length's bin."""
        slot = self.slots.get(key, -1)
        if slot >= 0:
            now = (slot & ~(keysizes.BINS - 1)) + len(value).bit_length()
            if now != slot:
                self.slots[key] = now
                sizes = self.sizes
                sizes[slot] -= 1
                sizes[now] += 1

    def _forget(self, key: bytes, value: Any) -> None:
        """Account for ``key`` and ``value`` (just taken out of ``data``) and drop its
        expiry time."""
        delta = KEY_COST + len(key) + self._discharge(key, value)
        if self.expires and self.expires.pop(key, None) is not None:
            delta += EXPIRE_COST
        self.used -= delta

    def recharge(self, key: bytes) -> None:
        """Charge the change in size of the container at ``key`` (a no-op for a string or
        a missing key). :meth:`signal_modified` calls it; a command that changes a value
        without signalling calls it itself."""
        value: Any = self.data.get(key)
        if type(value) in _NOT_CHARGED:
            return
        size: int = value.memory_usage()
        charged = self.charged
        delta = size - charged.get(key, 0)
        if delta:
            charged[key] = size
            self.used += delta
        self._recount(key, value)

    def note_change(self, key: bytes) -> None:
        """A change of the value at ``key`` that Redis does not signal (a consumer group's
        delivery, acknowledgement or position): it still counts as a modification for an
        ``*-lrm`` policy's clock, as Redis's keyModified without a signal."""
        if self.lrm and key in self.data:
            self.access[key] = self.lru_stamp

    def settle(self) -> None:
        """Charge what the containers changed since the last call grew or shrank by."""
        data = self.data
        charged = self.charged
        used = self.used
        for key in self.unsettled:
            before = charged.get(key)
            if before is not None:  # still a container (not deleted or overwritten since)
                value = data[key]
                size: int = value.memory_usage()
                charged[key] = size
                used += size - before
                self._recount(key, value)
        self.used = used
        self.unsettled.clear()

    def delete(self, key: bytes) -> bool:
        """Delete a live key as a side effect of a command (an emptied collection, a
        RENAME or COPY target); returns whether it existed. Does not signal. DEL and UNLINK
        use :meth:`pop`, which leaves freeing the value to the caller."""
        if self.expires and self._expire_if_needed(key):
            return False
        value = self.data.pop(key, None)
        if value is None:
            return False
        self.access.pop(key, None)
        self._forget(key, value)
        if self.release_replaced is not None:
            self.release_replaced(value)
        return True

    def pop(self, key: bytes) -> Any:
        """Delete a live key and return its value (None when absent). Does not signal."""
        if self.expires and self._expire_if_needed(key):
            return None
        value = self.data.pop(key, None)
        if value is not None:
            self.access.pop(key, None)
            self._forget(key, value)
        return value

    def take(self, key: bytes) -> tuple[Any, int | None, int | None] | None:
        """Remove a live key for RENAME / MOVE: (value, expiry, access field), or None."""
        if self.expires and self._expire_if_needed(key):
            return None
        value = self.data.pop(key, None)
        if value is None:
            return None
        when = self.expires.get(key) if self.expires else None
        access = self.access.pop(key, None)
        self._forget(key, value)
        return value, when, access

    def put(self, key: bytes, value: Any, when_ms: int | None, access: int | None) -> None:
        """Store an absent key with its expiry and, when moved, its access field."""
        self.add(key, value)
        if access is not None:
            self.access[key] = access
        if when_ms is not None:
            self.set_expire(key, when_ms)
        if type(value) is Hash:
            self.track_fields(key, value)

    def set_expire(self, key: bytes, when_ms: int) -> None:
        expires = self.expires
        if key not in expires:
            self.used += EXPIRE_COST
            if self.volatile_sampler is not None:
                self.volatile_sampler.append(key)
        expires[key] = when_ms
        timers = self.timers
        size = len(timers)
        filed = timers.setdefault(when_ms, key)
        if len(timers) != size:
            heapq.heappush(self.timer_heap, when_ms)  # a time of its own
        elif type(filed) is list:
            filed.append(key)  # type: ignore[union-attr]
        else:
            timers[when_ms] = [filed, key]  # type: ignore[list-item]
        self.timer_entries += 1

    def persist(self, key: bytes) -> bool:
        if self.expires.pop(key, None) is None:
            return False
        self.used -= EXPIRE_COST
        return True

    def signal_modified(self, key: bytes) -> None:
        """Tell the server ``key`` changed (WATCH, blocked clients, caches); a container
        changed in place is noted for :meth:`settle`."""
        charged = self.charged
        if charged and key in charged:
            # A container (only they are in ``charged``): measured when the total is read.
            self.unsettled[key] = None
        if self.lrm and key in self.data:
            self.access[key] = self.lru_stamp
        # A stored callable is loaded, then called: ``self.on_modified(...)`` would take
        # CPython's unspecialised method lookup on every write.
        on_modified = self.on_modified
        on_modified(self.index, key)

    def compact(self, limit: int = COMPACT_MAX_KEYS) -> bool:
        """Give back the table space of a database that shrank: Python's dicts never shrink
        on deletion, so one that held a million keys keeps a million slots after they are
        gone. Like Redis's active rehashing (which resizes a dict that became sparse), the
        cron copies ``data``, ``expires`` and ``access`` when the table is over four times
        larger than a fresh one and holds at most ``limit`` keys (a copy is O(n), done in
        one go). Order, values and the timer index are unchanged. Returns whether it copied."""
        data = self.data
        n = len(data)
        if n > limit or sys.getsizeof(data) <= 4 * _fresh_dict_size(n):
            return False
        self.data = dict(data)
        self.expires = dict(self.expires)
        self.access = dict(self.access)
        return True

    def flush(self, detach: bool = False) -> list[bytes]:
        """Empty the database; returns the keys that were in it so they can be signalled.

        With ``detach`` the old dicts are replaced by new ones instead of cleared, so the
        caller may free the old contents later (lazy free) through :attr:`detached`."""
        keys = list(self.data)
        if detach:
            self.detached = (self.data, self.expires, self.access)
            self.data, self.expires, self.access = {}, {}, {}
        else:
            self.data.clear()
            self.expires.clear()
            self.access.clear()
        self.timers = {}
        self.timer_heap = []
        self.timer_entries = 0
        self._field_heap.clear()
        self.charged.clear()
        self.unsettled.clear()
        self.sizes = keysizes.empty()
        self.slots.clear()
        self.used = 0
        if self.sampler is not None:
            self.sampler = []
        if self.volatile_sampler is not None:
            self.volatile_sampler = []
        self.drop_scan_index()
        return keys

    # -- access tracking (OBJECT IDLETIME / FREQ) ---------------------------------------

    def tick(self) -> None:
        """Refresh the cached clocks that lookups stamp on keys."""
        self.unix_s = self.clock.time_ms() // 1000
        self.lru_clock = self.unix_s & LRU_CLOCK_MAX
        # The same value as one int object that every key stamped until the next tick
        # shares: a compiled build keeps ``lru_clock`` as a machine integer, and storing it
        # would box a new int object for each key (32 bytes a key).
        self.lru_stamp = self.lru_clock

    def _fresh_access(self) -> Any:
        if self.lfu:
            return (((self.unix_s // 60) & 0xFFFF) << 8) | LFU_INIT_VAL
        return self.lru_stamp

    def touch(self, key: bytes) -> None:
        """Count an access to an existing key (TOUCH, and lookups of writes)."""
        if key in self.data:
            if self.lfu:
                self._lfu_touch(key)
            elif not self.lrm:
                self.access[key] = self.lru_stamp

    def restore_access(self, key: bytes, idle_s: int | None, freq: int | None) -> None:
        """Set a key's access field from a snapshot or RESTORE (Redis's objectSetLRUOrLFU):
        under LFU the counter ``freq``, otherwise an access ``idle_s`` seconds ago."""
        if self.lfu:
            if freq is not None:
                self.access[key] = (((self.unix_s // 60) & 0xFFFF) << 8) | (freq & 255)
        elif idle_s is not None:
            lru = self.lru_clock - idle_s
            if lru < 0:
                lru = (self.lru_clock + LRU_CLOCK_MAX // 2) % LRU_CLOCK_MAX
            self.access[key] = lru

    def idle_ms(self, key: bytes) -> int:
        """Milliseconds since the last access, at the LRU clock's one-second resolution."""
        lru = self.access.get(key, self.lru_clock)
        clock = self.lru_clock
        if clock >= lru:
            return (clock - lru) * 1000
        return (clock + (LRU_CLOCK_MAX - lru)) * 1000

    def frequency(self, key: bytes) -> int:
        """The LFU counter of ``key`` after the decay due since its last decrement."""
        return self._lfu_decayed(self.access.get(key, LFU_INIT_VAL))

    def _lfu_decayed(self, field: int) -> int:
        ldt = field >> 8
        counter = field & 255
        now = (self.unix_s // 60) & 0xFFFF
        elapsed = now - ldt if now >= ldt else 65535 - ldt + now
        periods = elapsed // self.lfu_decay_time if self.lfu_decay_time else 0
        if periods:
            counter = 0 if periods > counter else counter - periods
        return counter

    def _lfu_touch(self, key: bytes) -> None:
        counter = self._lfu_decayed(self.access.get(key, LFU_INIT_VAL))
        if counter < 255:
            base = counter - LFU_INIT_VAL
            if base < 0:
                base = 0
            if random.random() < 1.0 / (base * self.lfu_log_factor + 1):
                counter += 1
        self.access[key] = (((self.unix_s // 60) & 0xFFFF) << 8) | counter

    def _update_slow_writes(self) -> None:
        self._slow_writes = (
            self.lfu
            or self.scan_index is not None
            or self.sampler is not None
            or self.on_new is not None
            or self.on_expired is not None
        )

    # -- iteration and expiry -------------------------------------------------------------

    def live_keys(self) -> Iterator[bytes]:
        """Keys that have not expired (expired ones are left for the expiry cycle)."""
        if not self.expires:
            yield from list(self.data)
            return
        now = self.clock.time_ms()
        expires = self.expires
        for key in list(self.data):
            when = expires.get(key)
            if when is None or when >= now:
                yield key

    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One SCAN step over the hash-ordered index (see :mod:`resplite.store.scanindex`).

        Returned keys were present at the call; expired ones are still included, for the
        caller to filter as Redis does.
        """
        index = self.scan_index
        now = self.clock.time_ms()
        if index is None:
            index = self.scan_index = ScanIndex(self.data, now)
            self._update_slow_writes()
        index.last_used_ms = now
        return index.scan(self.data, cursor, count)

    def drop_scan_index(self) -> None:
        self.scan_index = None
        self._update_slow_writes()

    def random_key(self) -> bytes | None:
        """A uniformly chosen live key, or None; expired keys drawn on the way are deleted.
        While expiry is paused they stay, and are drawn over: when every key has a TTL (so
        all may be past it) the hundredth draw is answered whatever it is, as Redis does,
        instead of drawing for ever."""
        data = self.data
        tries = 100
        while data:
            index = self.scan_index
            if index is not None:
                index.merge(data)
            if index is not None and len(index):
                key = index.sample(random.randrange(len(index)))
                if key not in data:
                    index.entries.discard(key)
                    continue
            else:
                # Skipping entries of a dict runs in C; cheap next to building an index.
                key = next(islice(data, random.randrange(len(data)), None))
            if not (self.expires and self._expire_if_needed(key)):
                return key
            if self.expire_paused and len(self.expires) == len(data):
                tries -= 1
                if not tries:
                    return key
        return None

    # -- eviction sampling ----------------------------------------------------------------

    def sample_keys(self, count: int, volatile: bool,
                    rng: random.Random | None = None) -> list[bytes]:
        """About ``count`` keys drawn at random (Redis's ``dictGetSomeKeys``; a key may come
        twice): any key, or with ``volatile`` only keys with an expiry time. Every key when
        there are no more than ``count``. Expired keys may be drawn (eviction deletes them
        like any other). O(count) expected (see the module docstring)."""
        # random() scaled, not randrange(): a C call rather than a few Python-level ones;
        # its bias (one part in 2**53 per table size) is far below sampling's own.
        draw = (rng or random).random
        out: list[bytes] = []
        if volatile:
            live: dict[bytes, Any] = self.expires
            if len(live) <= count:
                return list(live)
            sampler = self.volatile_sampler
            if sampler is None or len(sampler) > 2 * len(live) + 1024:
                sampler = self.volatile_sampler = list(live)
        else:
            live = self.data
            if len(live) <= count:
                return list(live)
            sampler = self.sampler
            if sampler is None:
                sampler = self.sampler = list(live)
                self._update_slow_writes()
        # Each draw either finds a live key or removes a stale entry for good, so this ends
        # and costs O(count) amortised.
        while sampler:
            i = int(draw() * len(sampler))
            key = sampler[i]
            if key not in live:
                # Deleted since it was listed: swap the last entry into its place.
                sampler[i] = sampler[-1]
                sampler.pop()
                continue
            out.append(key)
            if len(out) == count:
                break
        return out

    def sample_access(self, count: int, volatile: bool, field: int,
                      rng: random.Random | None = None) -> tuple[list[bytes], list[int]]:
        """:meth:`sample_keys` with each key's eviction figure, in one pass: its idle
        milliseconds (``field`` :data:`SAMPLE_IDLE`), its decayed LFU counter
        (:data:`SAMPLE_FREQUENCY`) or its expiry time (:data:`SAMPLE_EXPIRY`, with
        ``volatile`` only). The lookup that tells a listed key is still there also reads
        its figure (``access`` holds exactly the keys of ``data``), so a draw costs one
        dict lookup where sampling then scoring cost two; that lookup, a random access into
        a large table, is most of eviction's cost. Same draws, same O(count) expected."""
        draw = (rng or random).random
        keys: list[bytes] = []
        figures: list[int] = []
        access = self.access
        expires = self.expires
        # Where liveness is read: the keys with an expiry, or every key's access field.
        live: dict[bytes, int] = expires if volatile else access
        figure_of: dict[bytes, int] = expires if field == SAMPLE_EXPIRY else access
        if volatile:
            sampler = self.volatile_sampler
            if sampler is None or len(sampler) > 2 * len(expires) + 1024:
                sampler = self.volatile_sampler = list(expires)
        else:
            sampler = self.sampler
            if sampler is None:
                sampler = self.sampler = list(self.data)
                self._update_slow_writes()
        if len(live) <= count:
            keys = list(live)
            figures = [figure_of[key] for key in keys]
        else:
            # Each draw either finds a live key or removes a stale entry for good, so this
            # ends and costs O(count) amortised.
            while sampler:
                i = int(draw() * len(sampler))
                key = sampler[i]
                value = live.get(key)
                if value is None:
                    # Deleted since it was listed: swap the last entry into its place.
                    sampler[i] = sampler[-1]
                    sampler.pop()
                    continue
                keys.append(key)
                figures.append(value if live is figure_of else figure_of[key])
                if len(keys) == count:
                    break
        if field == SAMPLE_IDLE:
            clock = self.lru_clock
            wrap = clock + LRU_CLOCK_MAX
            return keys, [((clock if clock >= lru else wrap) - lru) * 1000 for lru in figures]
        if field == SAMPLE_FREQUENCY:
            decayed = self._lfu_decayed
            return keys, [decayed(f) for f in figures]
        return keys, figures

    # -- hash field expiry ----------------------------------------------------------------

    @property
    def has_timers(self) -> bool:
        """Whether anything may expire: a key with a TTL or a tracked hash field."""
        return bool(self.expires or self._field_heap)

    @property
    def has_field_timers(self) -> bool:
        """Whether a hash with fields that have a TTL is tracked."""
        return bool(self._field_heap)

    def track_fields(self, key: bytes, value: Hash) -> None:
        """Have the active cycle visit ``key`` when the first of its fields is due."""
        when = value.next_expiry()
        if when is not None:
            heapq.heappush(self._field_heap, (when, key))

    def expire_fields(self, key: bytes, value: Hash, keep_empty: bool = False) -> list[bytes]:
        """Lazy field expiry at a lookup of the hash at ``key``: drop the fields that are
        past their time (deleting the key if none is left, unless ``keep_empty``: the caller
        is about to fill it or delete it) and signal when any went."""
        gone = value.expire_due(self.clock.time_ms())
        if gone:
            self.expired_fields += len(gone)
            if not value.fields and not keep_empty:
                self.delete(key)
            if self.on_fields_expired is not None:
                self.on_fields_expired(self.index, key)
            self.signal_modified(key)
        return gone

    def hashes_with_ttls(self) -> int:
        """How many hashes have fields with a TTL (INFO keyspace's ``subexpiry``)."""
        seen = {key for _, key in self._field_heap}
        data = self.data
        return sum(
            1 for key in seen
            if type(v := data.get(key)) is Hash and v.next_expiry() is not None
        )

    def _active_expire_fields(self, budget: int) -> int:
        heap = self._field_heap
        now = self.clock.time_ms()
        done = 0
        while heap and heap[0][0] < now and done < budget:
            _, key = heapq.heappop(heap)
            value = self.data.get(key)
            if type(value) is not Hash or self.is_expired(key):
                continue
            gone = value.expire_due(now)
            if gone:
                done += len(gone)
                self.expired_fields += len(gone)
                self.expired_fields_active += len(gone)
                if not value.fields:
                    self.delete(key)
                if self.on_fields_expired is not None:
                    self.on_fields_expired(self.index, key)
                self.signal_modified(key)
            if value.fields:
                self.track_fields(key, value)
        if len(heap) > 4 * len(self.data) + 64:
            self._rebuild_field_heap()
        return done

    def _rebuild_field_heap(self) -> None:
        heap: list[tuple[int, bytes]] = []
        for key, value in self.data.items():
            if type(value) is Hash:
                when = value.next_expiry()
                if when is not None:
                    heap.append((when, key))
        heapq.heapify(heap)
        self._field_heap = heap

    def expire_fields_due(self, budget: int) -> int:
        """Drop up to about ``budget`` hash fields whose time has passed (deleting a hash
        they leave empty); returns how many went. The active cycle's part for hash fields."""
        return self._active_expire_fields(budget) if self._field_heap else 0

    def keys_due(self, now: int) -> bool:
        """Whether the timer index has an entry due at ``now`` (maybe a stale one)."""
        heap = self.timer_heap
        return bool(heap) and heap[0] < now

    def expire_keys(self, limit: int, now: int) -> tuple[int, int]:
        """Reach up to ``limit`` entries of the timer index due at ``now`` (time before
        ``now``), earliest first, and delete the keys still due; returns (entries reached,
        keys deleted). Fewer than ``limit`` reached means none is left due. Keys due later
        are never touched, however large ``limit`` is."""
        heap = self.timer_heap
        timers = self.timers
        expires = self.expires
        # Without notification or lazy-free hooks an expiry is spelled out here: this runs
        # once per key when a million keys expire together.
        plain = self.release_expired is None and self.on_expired is None
        data_pop = self.data.pop
        access_pop = self.access.pop
        on_modified = self.on_modified
        index = self.index
        reached = expired = freed = 0
        while heap and reached < limit:
            when = heap[0]
            if when >= now:
                break
            filed = timers[when]
            keys: list[bytes] = filed if type(filed) is list else [filed]  # type: ignore[assignment,list-item]
            while keys and reached < limit:
                key = keys.pop()
                reached += 1
                if expires.get(key) != when:
                    continue  # stale: the key went, or its time changed, since it was filed
                expired += 1
                if not plain:
                    self._delete_expired(key)
                    continue
                value = data_pop(key)
                access_pop(key, None)
                del expires[key]
                if type(value) is bytes:
                    freed += _FLAT_EXPIRING_COST + len(key) + len(value)
                    self.sizes[len(value).bit_length()] -= 1
                else:
                    freed += KEY_COST + EXPIRE_COST + len(key) + self._discharge(key, value)
                on_modified(index, key)
            if keys:
                timers[when] = keys  # the limit: the rest waits for the next call
                break
            del timers[when]
            heapq.heappop(heap)
        self.timer_entries -= reached
        self.expired_keys_active += expired
        if plain:
            self.used -= freed
            self.expired_keys += expired
        return reached, expired

    def due_share(self, count: int, now: int, rng: random.Random | None = None
                  ) -> tuple[int, int]:
        """Sample the timer index for how much of it is due at ``now`` (Redis's estimate of
        the keys logically expired but not yet reclaimed, ``expired_stale_perc``): draws
        ``count`` of its times at random and returns (entries under them, entries under
        the due ones); the ratio estimates the share of entries that are due."""
        heap = self.timer_heap
        if not heap:
            return 0, 0
        draw = (rng or random).randrange
        timers = self.timers
        sampled = due = 0
        for _ in range(count):
            when = heap[draw(len(heap))]
            filed = timers[when]
            n = len(filed) if type(filed) is list else 1
            sampled += n
            if when < now:
                due += n
        return sampled, due

    def active_expire(self, budget: int = 200) -> int:
        """Delete up to ``budget`` keys whose time has passed, after up to ``budget`` hash
        fields whose time has passed; returns how many keys and fields went (the whole
        job, for a clock jump; the server's cycle paces itself through
        :meth:`expire_keys` and :meth:`expire_fields_due`)."""
        deleted = self.expire_fields_due(budget)
        if not self.timer_heap:
            return deleted
        now = self.clock.time_ms()
        while deleted < budget and self.keys_due(now):
            deleted += self.expire_keys(budget - deleted, now)[1]
        return deleted

    def tidy_timers(self) -> None:
        """Rebuild the timer index when stale entries outnumber live ones two to one
        (mostly times changed since they were filed, a TTL refreshed over and over): O(n)
        once per n stale entries. The cron calls it."""
        if self.timer_entries > 2 * len(self.expires) + 1024:
            self.rebuild_timers()

    def rebuild_timers(self) -> None:
        """File every expiry time of ``expires`` afresh, dropping the stale entries."""
        timers: dict[int, bytes | list[bytes]] = {}
        for key, when in self.expires.items():
            filed = timers.get(when)
            if filed is None:
                timers[when] = key
            elif type(filed) is list:
                filed.append(key)  # type: ignore[union-attr]
            else:
                timers[when] = [filed, key]  # type: ignore[list-item]
        heap = list(timers)
        heapq.heapify(heap)
        self.timers = timers
        self.timer_heap = heap
        self.timer_entries = len(self.expires)


class Keyspace:
    """All databases of one server."""

    __slots__ = ("clock", "dbs", "meter")

    def __init__(self, count: int, clock: Clock, on_modified: ModifiedHook = _no_hook) -> None:
        self.clock = clock
        # The memory all databases hold together (see the module docstring).
        self.meter = Meter()
        self.dbs = [Database(i, clock, on_modified, self.meter) for i in range(count)]

    def __getitem__(self, index: int) -> Database:
        return self.dbs[index]

    def __len__(self) -> int:
        return len(self.dbs)

    def set_hooks(
        self,
        *,
        on_expired: ModifiedHook | None,
        on_new: ModifiedHook | None,
        on_miss: ModifiedHook | None,
        on_fields_expired: ModifiedHook | None = None,
    ) -> None:
        """Install (or remove, with None) the notification hooks on every database."""
        for db in self.dbs:
            db.on_expired = on_expired
            db.on_new = on_new
            db.on_miss = on_miss
            db.on_fields_expired = on_fields_expired
            db._update_slow_writes()

    def set_release(self, *, expired: ReleaseHook | None,
                    replaced: ReleaseHook | None) -> None:
        """Install (or remove, with None) where expired and implicitly deleted values go
        (see :class:`Database`)."""
        for db in self.dbs:
            db.release_expired = expired
            db.release_replaced = replaced

    def tick(self) -> None:
        """Refresh every database's cached access clock (server cron and clock jumps)."""
        for db in self.dbs:
            db.tick()

    def cron(self, rehash: bool = False) -> None:
        """Periodic housekeeping: access clocks, scan indexes nobody uses any more, and with
        ``rehash`` (activerehashing) the tables of databases that shrank (see
        :meth:`Database.compact`), except while keys of theirs are due to expire: a copy
        costs the size of the old table, so one made while a mass expiry empties it would
        be paid again and again; the table left once the keys are gone is copied at once."""
        now = self.clock.time_ms()
        for db in self.dbs:
            db.tick()
            index = db.scan_index
            if index is not None and now - index.last_used_ms > SCAN_INDEX_IDLE_MS:
                db.drop_scan_index()
            if rehash and not db.keys_due(now):
                db.compact()
            db.tidy_timers()

    def configure_access(self, policy: str, log_factor: int = 10, decay_time: int = 1) -> None:
        """Follow ``maxmemory-policy``: LFU counters under an ``*-lfu`` policy, else the LRU
        clock, stamped by every access, or under an ``*-lrm`` policy by modifications only."""
        lfu = policy.endswith("-lfu")
        lrm = policy.endswith("-lrm")
        allkeys = policy.startswith("allkeys-")
        for db in self.dbs:
            db.lfu = lfu
            db.lrm = lrm
            db.lfu_log_factor = log_factor
            db.lfu_decay_time = decay_time
            if not allkeys:
                db.sampler = None
            db._update_slow_writes()

    def swap(self, a: int, b: int) -> None:
        """Swap the contents of two databases (SWAPDB); clients keep their db index."""
        da, db = self.dbs[a], self.dbs[b]
        da.data, db.data = db.data, da.data
        da.expires, db.expires = db.expires, da.expires
        da.access, db.access = db.access, da.access
        da.timers, db.timers = db.timers, da.timers
        da.timer_heap, db.timer_heap = db.timer_heap, da.timer_heap
        da.timer_entries, db.timer_entries = db.timer_entries, da.timer_entries
        da._field_heap, db._field_heap = db._field_heap, da._field_heap
        da.scan_index, db.scan_index = db.scan_index, da.scan_index
        # The meter's total is the same; each database takes the other's share.
        da.used, db.used = db.used, da.used
        for d in (da, db):
            if d.used and not d.metered:
                d._sign_up()
        da.charged, db.charged = db.charged, da.charged
        da.sizes, db.sizes = db.sizes, da.sizes
        da.slots, db.slots = db.slots, da.slots
        da.unsettled, db.unsettled = db.unsettled, da.unsettled
        da.sampler, db.sampler = db.sampler, da.sampler
        da.volatile_sampler, db.volatile_sampler = db.volatile_sampler, da.volatile_sampler
        da._update_slow_writes()
        db._update_slow_writes()
