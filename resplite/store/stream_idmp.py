"""A stream's idempotent-producer state (Redis 8.6's IDMP): which ids producers already added.

``XADD key IDMP pid iid * ...`` adds an entry only if the producer ``pid`` has not added one
under the idempotent id ``iid`` recently; otherwise it answers the earlier entry's id.
``IDMPAUTO pid`` derives the iid from the entry's content: a 16-byte digest of each field
and value written one after the other, the pairs' digests combined with XOR, so the order of
the pairs does not matter (and, as in Redis, a pair given twice cancels itself out).

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
from hashlib import blake2b
from typing import Final

DEFAULT_DURATION: Final = 100  # seconds (stream-idmp-duration)
DEFAULT_MAXSIZE: Final = 100  # iids per producer (stream-idmp-maxsize)
DURATION_RANGE: Final = (1, 86_400)
MAXSIZE_RANGE: Final = (1, 10_000)


def content_iid(argv: list[bytes], start: int) -> bytes:
    """IDMPAUTO's iid for the field/value pairs ``argv[start:]`` (order-independent)."""
    acc = 0
    for i in range(start, len(argv) - 1, 2):
        acc ^= int.from_bytes(blake2b(argv[i] + argv[i + 1], digest_size=16).digest(), "little")
    return acc.to_bytes(16, "little")


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
