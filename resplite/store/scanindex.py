"""A hash-ordered index of one database's keys, so that SCAN costs O(COUNT), not O(n).

Why an index: a Python dict exposes neither its buckets nor a position that survives
insertions and deletions, so Redis's reverse-binary walk over the hash table cannot be done on
the dict itself, and walking the dict from the start at every call would cost O(n).

Theory of operation:

* Every key has a fixed place in one total order: its *position*, the 64 bits of its unsigned
  hash (Python's ``hash`` of ``bytes``, stable for the life of the process and cached on the
  key object) in reverse order. The index is a sorted list of keys by position
  (:class:`SortedKeyList`, O(log n) insertion and seek).
* Positions are cut into buckets as Redis's table is: a database of n keys has ``2**bits``
  buckets (:func:`table_bits`, at least 4, the power of two Redis's dict would have), and a
  key's bucket is the top ``bits`` bits of its position, which are its hash's low bits
  reversed: Redis's own bucket, in the order of Redis's reverse-binary cursor.
* A cursor is the first position not visited yet, bits reversed back, so it is what Redis's
  cursor would be: below the table size (a few units for a small database, never 2**63 or
  more: clients that keep cursors as signed 64-bit integers work), ``0`` both starting and
  ending an iteration. A call seeks to the cursor's position, takes COUNT keys, then every
  further key of the last key's bucket (a bucket is never split between two calls, so a
  call may answer more than COUNT keys, as Redis's does), and answers the start of the next
  bucket, or ``0`` past the last one.
* Guarantee: a key present during the whole iteration sits at one fixed position; positions
  only grow from call to call (whatever the table size at each call, the next bucket starts
  after every position taken); so the call whose range covers that position returns it,
  provided the index holds every live key at that moment. Keys added or removed during the
  iteration may or may not be seen, and nothing is returned twice unless it was deleted and
  added again, as with Redis.
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

_OFFSET = 1 << 63  # signed hash -> unsigned
_BITS = 64
# Each byte with its bits in reverse order: reversing 64 bits is then one bytes.translate.
_REVERSED = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def reverse_bits(value: int) -> int:
    """``value``'s 64 bits in reverse order (its own inverse)."""
    return int.from_bytes(value.to_bytes(8, "little").translate(_REVERSED), "big")


def position_of(key: bytes) -> int:
    """The place of ``key`` in the scan order."""
    return int.from_bytes((hash(key) + _OFFSET).to_bytes(8, "little").translate(_REVERSED),
                          "big")


def table_bits(size: int) -> int:
    """log2 of the bucket count Redis's dict has for ``size`` entries (at least 4 buckets)."""
    return max(2, (size - 1).bit_length())


class ScanIndex:
    """The keys of one database in hash order, plus keys created since the last merge."""

    __slots__ = ("entries", "last_used_ms", "pending")

    def __init__(self, keys: Iterable[bytes], now_ms: int = 0) -> None:
        self.entries: SortedKeyList = SortedKeyList(keys, key=position_of)
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
        """Keys from ``cursor`` on: ``count`` of them and the rest of the last one's bucket,
        and the next cursor.

        Keys no longer in ``data`` are dropped from the index and not returned.
        """
        self.merge(data)
        entries = self.entries
        if len(entries) > 2 * len(data) + 1024:
            # Mostly dead entries: a fresh build is cheaper than skipping them call after call.
            entries = self.entries = SortedKeyList(data, key=position_of)
        shift = _BITS - table_bits(len(data))
        start = entries.bisect_key_left(reverse_bits(cursor))
        found: list[bytes] = []
        dead: list[bytes] = []
        taken = 0
        bucket = -1
        exhausted = True
        for key in entries.islice(start):
            here = position_of(key) >> shift
            if taken >= count and here != bucket:
                exhausted = False
                break
            taken += 1
            bucket = here
            if key in data:
                found.append(key)
            else:
                dead.append(key)
        for key in dead:
            entries.discard(key)
        if exhausted or taken == 0:
            return 0, found
        # Not past the last bucket: the loop stopped at a key of a later one.
        return reverse_bits((bucket + 1) << shift), found

    def sample(self, position: int) -> bytes:
        """The key at ``position`` in hash order (for RANDOMKEY on large databases)."""
        return self.entries[position]  # type: ignore[no-any-return]
