"""A hash-ordered index of one database's keys, so that SCAN costs O(COUNT), not O(n).

Why an index: a Python dict exposes neither its buckets nor a position that survives
insertions and deletions, so Redis's reverse-binary walk over the hash table cannot be done on
the dict itself, and walking the dict from the start at every call would cost O(n).

Theory of operation:

* Every key has a fixed place in one total order: its 64-bit hash (Python's ``hash`` of
  ``bytes``, stable for the life of the process and cached on the key object), shifted to be
  unsigned. The index is a sorted list of keys in that order (:class:`SortedKeyList`, O(log n)
  insertion and seek).
* A cursor is the lowest unsigned hash not visited yet; ``0`` both starts and ends an
  iteration, as in Redis. A call seeks to the cursor, takes COUNT keys, then also every
  further key that shares the last key's hash (so a hash is never split between two calls),
  and answers the hash after the last one taken, or ``0`` at the end of the order.
* Guarantee: a key present during the whole iteration sits at one fixed hash; the cursor only
  grows; so the call whose range covers that hash returns it, provided the index holds every
  live key at that moment. Keys added or removed during the iteration may or may not be seen,
  and nothing is returned twice unless it was deleted and added again, as with Redis.
* Keeping the index complete is cheap: the database appends each newly created key to
  :attr:`ScanIndex.pending` (one list append, and only while an index exists); the next call
  merges the pending keys in O(p log n). Deleted keys are not tracked at all: a call skips
  and drops entries whose key is gone, and the whole index is rebuilt when dead entries
  outnumber live keys.
* The index exists only while someone scans: it is built by the first SCAN (O(n log n), once)
  and dropped by the database when it sat unused for a while or when pending keys pile up
  beyond the size of the database. A later call simply rebuilds it from the live keys, which
  cannot lose a key that was present throughout, so cursors stay valid across a rebuild.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from sortedcontainers import SortedKeyList

_OFFSET = 1 << 63  # signed hash -> unsigned cursor space
_END = 1 << 64


def cursor_of(key: bytes) -> int:
    """The unsigned position of ``key`` in the scan order."""
    return hash(key) + _OFFSET


class ScanIndex:
    """The keys of one database in hash order, plus keys created since the last merge."""

    __slots__ = ("entries", "last_used_ms", "pending")

    def __init__(self, keys: Iterable[bytes], now_ms: int = 0) -> None:
        self.entries: SortedKeyList = SortedKeyList(keys, key=hash)
        self.pending: list[bytes] = []
        self.last_used_ms = now_ms

    def __len__(self) -> int:
        return len(self.entries)

    def merge(self, data: Collection[bytes]) -> None:
        """Bring the index up to date with the keys created since the last call."""
        pending = self.pending
        if not pending:
            return
        self.pending = []
        entries = self.entries
        for key in pending:
            if key in data and key not in entries:
                entries.add(key)

    def scan(self, data: Collection[bytes], cursor: int, count: int) -> tuple[int, list[bytes]]:
        """Keys from position ``cursor`` on: about ``count`` of them, and the next cursor.

        Keys no longer in ``data`` are dropped from the index and not returned.
        """
        self.merge(data)
        entries = self.entries
        if len(entries) > 2 * len(data) + 1024:
            # Mostly dead entries: a fresh build is cheaper than skipping them call after call.
            entries = self.entries = SortedKeyList(data, key=hash)
        start = entries.bisect_key_left(cursor - _OFFSET)
        found: list[bytes] = []
        dead: list[bytes] = []
        taken = 0
        last_hash = 0
        exhausted = True
        for key in entries.islice(start):
            h = hash(key)
            if taken >= count and h != last_hash:
                exhausted = False
                break
            taken += 1
            last_hash = h
            if key in data:
                found.append(key)
            else:
                dead.append(key)
        for key in dead:
            entries.discard(key)
        if exhausted or taken == 0:
            return 0, found
        nxt = last_hash + _OFFSET + 1
        return (nxt if nxt < _END else 0), found

    def sample(self, position: int) -> bytes:
        """The key at ``position`` in hash order (for RANDOMKEY on large databases)."""
        return self.entries[position]  # type: ignore[no-any-return]
