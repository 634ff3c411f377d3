"""Consumer groups, consumers and the pending entries lists (PELs) of a stream.

A :class:`ConsumerGroup` holds its last delivered id, its read counter (``entries_read``,
-1 when unknown), its consumers and its PEL. The PEL maps each delivered but not yet
acknowledged entry id to one :class:`PendingEntry` (delivery time, delivery count, owning
consumer): ``pel`` is that map, ``pel_ids`` the same ids in order. The record exists once;
the owning consumer's own PEL lists the same ids, so both views always agree. Both PELs are
ordered by id, so a range query seeks to its start in O(log p) and walks only what it
returns, as XPENDING, XAUTOCLAIM and history reads need.

An entry released by XNACK (Redis 8.8) has no owner and a delivery time of 0; such entries
form the *NACKed portion* of the PEL (``nacked``), kept in the order they were released:
claims (XREADGROUP CLAIM, XCLAIM, XAUTOCLAIM) take them first, before any entry that is
merely idle, and taking one gives it an owner again.

A second index, by delivery time, serves XREADGROUP's CLAIM option (most idle first). It is
built the first time CLAIM is used on a group and maintained from then on, so groups that
never use CLAIM do not pay for it on every delivery and acknowledgement. It holds the owned
entries only; :meth:`by_idle` puts the NACKed ones in front.

Every group of a stream shares the stream's reference counts (``refs``: entry id -> how many
groups have it pending), so "is this entry still pending somewhere" is one dict lookup
instead of a walk over the groups (XDELEX / XACKDEL / XTRIM / XADD with ACKED or DELREF).

All PEL changes go through the methods here, which keep the structures consistent. Times
are Unix milliseconds passed in by the caller: the store never reads a clock.

Invariants: ``pel_ids`` holds exactly the keys of ``pel``; an entry is in ``nacked`` iff
its ``consumer`` is None; otherwise ``id in group.pel`` iff ``id in
group.pel[id].consumer.pel``; when the time index exists it holds exactly one key per owned
PEL entry, ``delivery_time << 128 | id``; ``refs[id]`` is the number of the stream's groups
whose PEL holds ``id`` (absent when none).
"""

from __future__ import annotations

from collections.abc import Iterator

from sortedcontainers import SortedList

from resplite.store.sorted_ids import SortedIds

INVALID_ENTRIES_READ = -1
# XNACK FATAL's delivery count: Redis's LLONG_MAX.
MAX_DELIVERY_COUNT = (1 << 63) - 1
_ID_MASK = (1 << 128) - 1  # the id part of a time-index key


class PendingEntry:
    """One delivered, unacknowledged entry (Redis's NACK). ``consumer`` None: released."""

    __slots__ = ("consumer", "delivery_count", "delivery_time")

    def __init__(
        self, consumer: Consumer | None, delivery_time: int, delivery_count: int = 1
    ) -> None:
        self.consumer = consumer
        self.delivery_time = delivery_time
        self.delivery_count = delivery_count

    def count_delivery(self) -> None:
        """One more delivery; the count stops at XNACK FATAL's, the largest a reply holds."""
        if self.delivery_count < MAX_DELIVERY_COUNT:
            self.delivery_count += 1


class Consumer:
    __slots__ = ("active_time", "name", "pel", "seen_time")

    def __init__(self, name: bytes, now: int) -> None:
        self.name = name
        self.seen_time = now  # last attempted interaction (read or claim)
        self.active_time = -1  # last successful delivery or claim; -1 never
        self.pel = SortedIds()


class ConsumerGroup:
    __slots__ = (
        "_by_time", "consumers", "entries_read", "last_id", "nacked", "name", "pel", "pel_ids",
        "refs",
    )

    def __init__(
        self, name: bytes, last_id: int, entries_read: int, refs: dict[int, int] | None = None
    ) -> None:
        self.name = name
        self.last_id = last_id
        self.entries_read = entries_read
        self.pel: dict[int, PendingEntry] = {}
        self.pel_ids = SortedIds()
        self.consumers: dict[bytes, Consumer] = {}
        self.nacked: dict[int, None] = {}  # released entries, in release order
        self.refs: dict[int, int] = {} if refs is None else refs
        self._by_time: SortedList | None = None

    # -- consumers ----------------------------------------------------------------------------

    def consumer(self, name: bytes) -> Consumer | None:
        return self.consumers.get(name)

    def create_consumer(self, name: bytes, now: int) -> Consumer | None:
        """A new consumer, or None if one with that name exists."""
        if name in self.consumers:
            return None
        consumer = self.consumers[name] = Consumer(name, now)
        return consumer

    def get_or_create_consumer(self, name: bytes, now: int) -> Consumer:
        consumer = self.consumers.get(name)
        if consumer is None:
            consumer = self.consumers[name] = Consumer(name, now)
        return consumer

    def delete_consumer(self, consumer: Consumer) -> int:
        """Remove the consumer and its pending entries; returns how many it had."""
        pending = len(consumer.pel)
        pel = self.pel
        pel_ids = self.pel_ids
        by_time = self._by_time
        for sid in consumer.pel:
            nack = pel.pop(sid)
            pel_ids.remove(sid)
            self._unref(sid)
            if by_time is not None:
                by_time.remove((nack.delivery_time << 128) | sid)
        del self.consumers[consumer.name]
        return pending

    def sorted_consumers(self) -> list[Consumer]:
        """Consumers in name order, as Redis lists them."""
        return [self.consumers[name] for name in sorted(self.consumers)]

    # -- pending entries ----------------------------------------------------------------------

    def _unref(self, sid: int) -> None:
        refs = self.refs
        n = refs[sid]
        if n == 1:
            del refs[sid]
        else:
            refs[sid] = n - 1

    def _new_pending(self, sid: int, nack: PendingEntry) -> None:
        self.pel[sid] = nack
        self.pel_ids.add(sid)
        refs = self.refs
        refs[sid] = refs.get(sid, 0) + 1

    def _detach(self, sid: int, nack: PendingEntry) -> None:
        """Take a pending entry away from its owner (or out of the NACKed portion)."""
        owner = nack.consumer
        if owner is None:
            del self.nacked[sid]
        else:
            owner.pel.remove(sid)
            if self._by_time is not None:
                self._by_time.remove((nack.delivery_time << 128) | sid)

    def deliver(self, sid: int, consumer: Consumer, now: int) -> PendingEntry:
        """Record a delivery of ``sid`` to ``consumer``, as XREADGROUP ``>`` does.

        An entry already pending (the group's last id was moved back) is handed to
        ``consumer`` with its delivery count reset to 1.
        """
        nack = self.pel.get(sid)
        if nack is None:
            nack = PendingEntry(consumer, now)
            self._new_pending(sid, nack)
        else:
            self._detach(sid, nack)
            nack.consumer = consumer
            nack.delivery_time = now
            nack.delivery_count = 1
        consumer.pel.add(sid)
        if self._by_time is not None:
            self._by_time.add((now << 128) | sid)
        return nack

    def deliver_above(self, sids: list[int], consumer: Consumer, now: int) -> None:
        """:meth:`deliver` of each of ``sids`` (increasing, each above every id pending in
        the group), in bulk: XREADGROUP ``>`` of many new entries."""
        if not sids:
            return
        pel = self.pel
        refs = self.refs
        for sid in sids:
            pel[sid] = PendingEntry(consumer, now)
            refs[sid] = refs.get(sid, 0) + 1
        self.pel_ids.extend_above(sids)
        consumer.pel.extend_above(sids)
        if self._by_time is not None:
            self._by_time.update([(now << 128) | sid for sid in sids])

    def ack(self, sid: int) -> bool:
        """Forget a pending entry; returns whether it was pending."""
        nack = self.pel.pop(sid, None)
        if nack is None:
            return False
        self.pel_ids.remove(sid)
        self._detach(sid, nack)
        self._unref(sid)
        return True

    def retime(self, sid: int, nack: PendingEntry, when: int) -> None:
        """Set an owned pending entry's delivery time."""
        if self._by_time is not None and when != nack.delivery_time:
            self._by_time.remove((nack.delivery_time << 128) | sid)
            self._by_time.add((when << 128) | sid)
        nack.delivery_time = when

    def transfer(self, sid: int, nack: PendingEntry, consumer: Consumer) -> None:
        """Make ``consumer`` the owner of a pending entry (a released one included)."""
        owner = nack.consumer
        if owner is consumer:
            return
        if owner is None:
            del self.nacked[sid]
            if self._by_time is not None:
                self._by_time.add((nack.delivery_time << 128) | sid)
        else:
            owner.pel.remove(sid)
        consumer.pel.add(sid)
        nack.consumer = consumer

    def force_pending(self, sid: int, consumer: Consumer, now: int) -> PendingEntry:
        """A new pending entry of ``consumer`` (XCLAIM FORCE) delivered once at ``now``;
        the caller then sets its time and count as the claim does."""
        nack = PendingEntry(consumer, now)
        self._new_pending(sid, nack)
        consumer.pel.add(sid)
        if self._by_time is not None:
            self._by_time.add((now << 128) | sid)
        return nack

    def release(self, sid: int, nack: PendingEntry, delivery_count: int) -> None:
        """XNACK: the entry loses its owner, gets delivery time 0 and ``delivery_count``,
        and goes to the end of the NACKed portion."""
        self._detach(sid, nack)
        nack.consumer = None
        nack.delivery_time = 0
        nack.delivery_count = delivery_count
        self.nacked[sid] = None

    def force_release(self, sid: int, delivery_count: int) -> None:
        """XNACK FORCE for an id not pending: a new released entry."""
        self._new_pending(sid, PendingEntry(None, 0, delivery_count))
        self.nacked[sid] = None

    def drop_all(self) -> None:
        """Give up every pending entry's reference (the group is being destroyed)."""
        for sid in self.pel:
            self._unref(sid)

    def by_time(self) -> SortedList:
        """The owned PEL ordered by delivery time, then id (built on first use)."""
        if self._by_time is None:
            self._by_time = SortedList(
                (nack.delivery_time << 128) | sid for sid, nack in self.pel.items()
                if nack.consumer is not None
            )
        return self._by_time

    def by_idle(self) -> Iterator[tuple[int, int]]:
        """``(delivery time, id)`` of every pending entry in CLAIM's order: the NACKed
        portion first (in release order, delivery time 0), then the most idle (oldest
        delivery) first, ties by id. Do not change the PEL while iterating."""
        for sid in self.nacked:
            yield 0, sid
        for key in self.by_time():
            yield key >> 128, key & _ID_MASK

    # -- copying ------------------------------------------------------------------------------

    def copy(self, refs: dict[int, int] | None = None) -> ConsumerGroup:
        """A deep copy whose references count in ``refs`` (the copied stream's; a new
        count of its own when None)."""
        if refs is None:
            refs = {}
        group = ConsumerGroup(self.name, self.last_id, self.entries_read, refs)
        for name, consumer in self.consumers.items():
            twin = Consumer(name, consumer.seen_time)
            twin.active_time = consumer.active_time
            group.consumers[name] = twin
        pel = group.pel
        for sid in self.pel_ids:
            nack = self.pel[sid]
            owner = None if nack.consumer is None else group.consumers[nack.consumer.name]
            pel[sid] = PendingEntry(owner, nack.delivery_time, nack.delivery_count)
            refs[sid] = refs.get(sid, 0) + 1
        group.pel_ids = SortedIds(self.pel_ids)
        group.nacked = dict(self.nacked)
        for name, consumer in self.consumers.items():
            group.consumers[name].pel = SortedIds(consumer.pel)
        return group
