"""A stream's idempotent-producer state (Redis 8.6's IDMP): which ids producers already added.

``XADD key IDMP pid iid * ...`` adds an entry only if the producer ``pid`` has not added one
under the idempotent id ``iid`` recently; otherwise it answers the earlier entry's id.
``IDMPAUTO pid`` derives the iid from the entry's content exactly as Redis 8.6 does
(:func:`content_iid`), so that iids restored from a Redis payload or file still match the
messages they stand for. ``XIDMPRECORD`` records an iid for an entry already in the stream
(:meth:`IdmpState.recorded` then :meth:`IdmpState.record`).

An iid is forgotten when either bound is passed, as Redis's documentation states:

* *duration*: an iid whose entry id's millisecond part is at or before ``now - duration``
  (seconds, converted to ms) is gone. Entry ids only grow, so the iids, kept in the order
  they were added, expire from the front; :meth:`IdmpState.expire` drops them. Redis does
  the same from its event loop before every command, so callers expire before they look.
* *maxsize*: each producer keeps at most ``maxsize`` iids; adding one more evicts that
  producer's oldest.

A producer with no iid left is forgotten too (``pids-tracked`` counts the others). The
counters ``iids_added`` and ``iids_duplicates`` are lifetime figures: :meth:`reset`
(XCFGSET with a different setting) clears the iids and producers but keeps them.

Costs: lookup, add, eviction O(1); expiry O(1) per iid dropped.

Invariants: ``order`` holds exactly the ``(pid, iid)`` pairs of every producer's map, in
the order they were added (so in entry-id order); ``len(producers[pid]) <= maxsize``; no
producer's map is empty; ``tracked == len(order)``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

import xxhash

DEFAULT_DURATION: Final = 100  # seconds (stream-idmp-duration)
DEFAULT_MAXSIZE: Final = 100  # iids per producer (stream-idmp-maxsize)
DURATION_RANGE: Final = (1, 86_400)
MAXSIZE_RANGE: Final = (1, 10_000)


_MASK64: Final = (1 << 64) - 1


def _rotl1(x: int) -> int:
    return ((x << 1) | (x >> 63)) & _MASK64


def content_iid(argv: list[bytes], start: int) -> bytes:
    """IDMPAUTO's iid for the field/value pairs ``argv[start:]``, Redis 8.6's
    ``createIdempotencyHash``: each pair's XXH3-128 of the field, the field's length (a
    64-bit little-endian integer, so that ``ab``+``c`` and ``a``+``bc`` differ) and the
    value; the pairs' halves summed and XORed (so the pairs' order does not matter), and the
    two combined crosswise with a one-bit rotation. The iid is the result's 16 bytes as
    Redis keeps them: the low half, then the high half, each little-endian."""
    sum_lo = sum_hi = xor_lo = xor_hi = 0
    for i in range(start, len(argv) - 1, 2):
        field = argv[i]
        digest = xxhash.xxh3_128_intdigest(field + len(field).to_bytes(8, "little")
                                           + argv[i + 1])
        lo, hi = digest & _MASK64, digest >> 64
        sum_lo += lo
        sum_hi += hi
        xor_lo ^= lo
        xor_hi ^= hi
    low = (sum_lo & _MASK64) ^ _rotl1(xor_hi)
    high = (sum_hi & _MASK64) ^ _rotl1(xor_lo)
    return low.to_bytes(8, "little") + high.to_bytes(8, "little")


class IdmpState:
    __slots__ = ("duration", "iids_added", "iids_duplicates", "maxsize", "order", "producers")

    def __init__(self, duration: int = DEFAULT_DURATION, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self.duration = duration
        self.maxsize = maxsize
        self.producers: dict[bytes, OrderedDict[bytes, int]] = {}
        self.order: OrderedDict[tuple[bytes, bytes], int] = OrderedDict()
        self.iids_added = 0
        self.iids_duplicates = 0

    @property
    def tracked(self) -> int:
        """iids-tracked: iids remembered across all producers."""
        return len(self.order)

    def expire(self, now_ms: int) -> None:
        """Forget the iids whose entry is ``duration`` seconds old or older."""
        order = self.order
        if not order:
            return
        threshold = now_ms - self.duration * 1000
        while order:
            key, sid = next(iter(order.items()))
            if sid >> 64 > threshold:
                break
            del order[key]
            self._forget(key[0], key[1])

    def lookup(self, pid: bytes, iid: bytes) -> int | None:
        """The entry id ``pid`` added under ``iid``, counting the duplicate; None if new."""
        known = self.producers.get(pid)
        if known is not None:
            sid = known.get(iid)
            if sid is not None:
                self.iids_duplicates += 1
                return sid
        return None

    def recorded(self, pid: bytes, iid: bytes) -> int | None:
        """The entry id ``pid`` recorded under ``iid``, None if none (not a duplicate:
        nothing is counted)."""
        known = self.producers.get(pid)
        return None if known is None else known.get(iid)

    def record(self, pid: bytes, iid: bytes, sid: int) -> None:
        """Remember that ``pid`` added entry ``sid`` under ``iid`` (not already known)."""
        known = self.producers.get(pid)
        if known is None:
            known = self.producers[pid] = OrderedDict()
        elif len(known) >= self.maxsize:
            oldest, _ = known.popitem(last=False)
            del self.order[(pid, oldest)]
        known[iid] = sid
        self.order[(pid, iid)] = sid
        self.iids_added += 1

    def reset(self, duration: int, maxsize: int) -> None:
        """New settings (XCFGSET): every producer's iids are forgotten, counters kept."""
        self.duration = duration
        self.maxsize = maxsize
        self.producers.clear()
        self.order.clear()

    def memory_usage(self) -> int:
        """An estimate of the bytes held, in O(1): each remembered iid sits in two ordered
        dicts (its producer's and the global order) with a key tuple and an id."""
        return 400 + 320 * len(self.order) + 200 * len(self.producers)

    def _forget(self, pid: bytes, iid: bytes) -> None:
        known = self.producers[pid]
        del known[iid]
        if not known:
            del self.producers[pid]

    def copy(self) -> IdmpState:
        twin = IdmpState(self.duration, self.maxsize)
        twin.producers = {pid: OrderedDict(known) for pid, known in self.producers.items()}
        twin.order = OrderedDict(self.order)
        twin.iids_added = self.iids_added
        twin.iids_duplicates = self.iids_duplicates
        return twin
