"""The keyspace: numbered databases of keys with optional expiry, free of I/O and of RESP.

Values are plain objects: ``bytes`` for strings, :class:`~resplite.store.stream.Stream` for
streams. Expiry times are absolute Unix milliseconds taken from an injected clock, so tests
and the time-control command can move time without sleeping.

Invariants:

* a key in ``expires`` is always in ``data``;
* a key whose expiry time has passed is never returned by a lookup: lookups delete it first
  (lazy expiry, as Redis's ``expireIfNeeded``), and :meth:`Database.active_expire` frees the
  ones nobody reads;
* every change that a WATCH or a blocked client must notice goes through
  :meth:`Database.signal_modified`, which calls the hook the server installs. Commands call it
  themselves, after the change, as Redis's ``signalModifiedKey`` is called.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterator
from typing import Any, Protocol


class Clock(Protocol):
    def time_ms(self) -> int: ...


# Called with (db index, key) after a key changed, was deleted or expired.
ModifiedHook = Callable[[int, bytes], None]


def _no_hook(db: int, key: bytes) -> None:
    return None


class Database:
    """One numbered database: a dict of keys and a dict of their expiry times."""

    __slots__ = ("_expiry_heap", "clock", "data", "expired_keys", "expires", "index", "on_modified")

    def __init__(self, index: int, clock: Clock, on_modified: ModifiedHook = _no_hook) -> None:
        self.index = index
        self.clock = clock
        self.data: dict[bytes, Any] = {}
        self.expires: dict[bytes, int] = {}
        self.on_modified = on_modified
        self.expired_keys = 0
        self._expiry_heap: list[tuple[int, bytes]] = []

    def __len__(self) -> int:
        return len(self.data)

    # -- lookups ------------------------------------------------------------------------

    def _expire_if_needed(self, key: bytes) -> bool:
        when = self.expires.get(key)
        if when is not None and when <= self.clock.time_ms():
            self._delete_expired(key)
            return True
        return False

    def _delete_expired(self, key: bytes) -> None:
        del self.data[key]
        del self.expires[key]
        self.expired_keys += 1
        self.on_modified(self.index, key)

    def get(self, key: bytes) -> Any:
        """The live value of ``key``, or None."""
        if self.expires and self._expire_if_needed(key):
            return None
        return self.data.get(key)

    def contains(self, key: bytes) -> bool:
        if self.expires and self._expire_if_needed(key):
            return False
        return key in self.data

    def get_expire(self, key: bytes) -> int | None:
        """Absolute expiry in Unix ms of a live key, or None when it has none."""
        if self._expire_if_needed(key):
            return None
        return self.expires.get(key)

    def is_expired(self, key: bytes) -> bool:
        """Whether ``key`` exists but is logically expired, without deleting it."""
        when = self.expires.get(key)
        return when is not None and when <= self.clock.time_ms()

    # -- changes ------------------------------------------------------------------------

    def set(self, key: bytes, value: Any, *, keep_ttl: bool = False) -> None:
        """Store ``value`` under ``key``; the old expiry is cleared unless ``keep_ttl``."""
        self.data[key] = value
        if not keep_ttl and self.expires:
            self.expires.pop(key, None)

    def add(self, key: bytes, value: Any) -> None:
        """Store a new key that the caller knows is absent (no expiry to clear)."""
        self.data[key] = value

    def delete(self, key: bytes) -> bool:
        """Delete a live key; returns whether it existed. Does not signal."""
        if self.expires and self._expire_if_needed(key):
            return False
        if key in self.data:
            del self.data[key]
            if self.expires:
                self.expires.pop(key, None)
            return True
        return False

    def set_expire(self, key: bytes, when_ms: int) -> None:
        self.expires[key] = when_ms
        heapq.heappush(self._expiry_heap, (when_ms, key))

    def persist(self, key: bytes) -> bool:
        return self.expires.pop(key, None) is not None

    def signal_modified(self, key: bytes) -> None:
        self.on_modified(self.index, key)

    def flush(self) -> list[bytes]:
        """Empty the database; returns the keys that were in it so they can be signalled."""
        keys = list(self.data)
        self.data.clear()
        self.expires.clear()
        self._expiry_heap.clear()
        return keys

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
            if when is None or when > now:
                yield key

    def random_key(self) -> bytes | None:
        # Sampling a few times mirrors Redis, which retries when it draws an expired key.
        for _ in range(100):
            if not self.data:
                return None
            key = random.choice(list(self.data)) if len(self.data) < 64 else self._sample()
            if not self._expire_if_needed(key):
                return key
        return None

    def _sample(self) -> bytes:
        it = iter(self.data)
        skip = random.randrange(min(len(self.data), 64))
        for _ in range(skip):
            next(it)
        return next(it)

    def active_expire(self, budget: int = 200) -> int:
        """Delete up to ``budget`` keys whose time has passed; returns how many were deleted.

        A min-heap of (time, key) finds the due keys in O(log n) each. Entries made stale by
        a later EXPIRE, PERSIST or delete are skipped when popped (the dict is the truth),
        and the heap is rebuilt when stale entries outnumber live ones.
        """
        heap = self._expiry_heap
        if not heap:
            return 0
        now = self.clock.time_ms()
        expires = self.expires
        deleted = 0
        while heap and heap[0][0] <= now and deleted < budget:
            when, key = heapq.heappop(heap)
            if expires.get(key) == when:
                self._delete_expired(key)
                deleted += 1
        if len(heap) > 2 * len(expires) + 64:
            self._expiry_heap = [(w, k) for k, w in expires.items()]
            heapq.heapify(self._expiry_heap)
        return deleted


class Keyspace:
    """All databases of one server."""

    __slots__ = ("dbs",)

    def __init__(self, count: int, clock: Clock, on_modified: ModifiedHook = _no_hook) -> None:
        self.dbs = [Database(i, clock, on_modified) for i in range(count)]

    def __getitem__(self, index: int) -> Database:
        return self.dbs[index]

    def __len__(self) -> int:
        return len(self.dbs)

    def swap(self, a: int, b: int) -> None:
        """Swap the contents of two databases (SWAPDB); clients keep their db index."""
        da, db = self.dbs[a], self.dbs[b]
        da.data, db.data = db.data, da.data
        da.expires, db.expires = db.expires, da.expires
        da._expiry_heap, db._expiry_heap = db._expiry_heap, da._expiry_heap
