"""Consumer groups, consumers and the pending entries lists (PELs) of a stream.

A :class:`ConsumerGroup` holds its last delivered id, its read counter (``entries_read``,
-1 when unknown), its consumers and its PEL. The PEL maps each delivered but not yet
acknowledged entry id to one :class:`PendingEntry` (delivery time, delivery count, owning
consumer): ``pel`` is that map, ``pel_ids`` the same ids in order. The record exists once;
the owning consumer's own PEL lists the same ids, so both views always agree. Both PELs are
ordered by id, so a range query seeks to its start in O(log p) and walks only what it
returns, as XPENDING, XAUTOCLAIM and history reads need.

A second index, by delivery time, serves XREADGROUP's CLAIM option (most idle first). It is
built the first time CLAIM is used on a group and maintained from then on, so groups that
never use CLAIM do not pay for it on every delivery and acknowledgement.

All PEL changes go through the methods here, which keep the three structures consistent.
Times are Unix milliseconds passed in by the caller: the store never reads a clock.

Invariants: ``pel_ids`` holds exactly the keys of ``pel``; ``id in group.pel`` iff
``id in group.pel[id].consumer.pel``; when the time index exists it holds exactly one key
per PEL entry, ``delivery_time << 128 | id``.
"""

from __future__ import annotations

from collections.abc import Iterator

from sortedcontainers import SortedList

from resplite.store.sorted_ids import SortedIds

INVALID_ENTRIES_READ = -1
_ID_MASK = (1 << 128) - 1  # the id part of a time-index key


class PendingEntry:
    """One delivered, unacknowledged entry (Redis's NACK)."""

    __slots__ = ("consumer", "delivery_count", "delivery_time")

    def __init__(self, consumer: Consumer, delivery_time: int, delivery_count: int = 1) -> None:
        self.consumer = consumer
        self.delivery_time = delivery_time
        self.delivery_count = delivery_count


class Consumer:
    __slots__ = ("active_time", "name", "pel", "seen_time")

    def __init__(self, name: bytes, now: int) -> None:
        self.name = name
        self.seen_time = now  # last attempted interaction (read or claim)
        self.active_time = -1  # last successful delivery or claim; -1 never
        self.pel = SortedIds()


class ConsumerGroup:
    __slots__ = ("_by_time", "consumers", "entries_read", "last_id", "name", "pel", "pel_ids")

    def __init__(self, name: bytes, last_id: int, entries_read: int) -> None:
        self.name = name
        self.last_id = last_id
        self.entries_read = entries_read
        self.pel: dict[int, PendingEntry] = {}
        self.pel_ids = SortedIds()
        self.consumers: dict[bytes, Consumer] = {}
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
            if by_time is not None:
                by_time.remove((nack.delivery_time << 128) | sid)
        del self.consumers[consumer.name]
        return pending

    def sorted_consumers(self) -> list[Consumer]:
        """Consumers in name order, as Redis lists them."""
        return [self.consumers[name] for name in sorted(self.consumers)]

    # -- pending entries ----------------------------------------------------------------------

    def deliver(self, sid: int, consumer: Consumer, now: int) -> PendingEntry:
        """Record a delivery of ``sid`` to ``consumer``, as XREADGROUP ``>`` does.

        An entry already pending (the group's last id was moved back) is handed to
        ``consumer`` with its delivery count reset to 1.
        """
        pel = self.pel
        nack = pel.get(sid)
        by_time = self._by_time
        if nack is None:
            nack = PendingEntry(consumer, now)
            pel[sid] = nack
            self.pel_ids.add(sid)
            consumer.pel.add(sid)
        else:
            if by_time is not None:
                by_time.remove((nack.delivery_time << 128) | sid)
            nack.consumer.pel.remove(sid)
            nack.consumer = consumer
            nack.delivery_time = now
            nack.delivery_count = 1
            consumer.pel.add(sid)
        if by_time is not None:
            by_time.add((now << 128) | sid)
        return nack

    def ack(self, sid: int) -> bool:
        """Forget a pending entry; returns whether it was pending."""
        nack = self.pel.pop(sid, None)
        if nack is None:
            return False
        self.pel_ids.remove(sid)
        nack.consumer.pel.remove(sid)
        if self._by_time is not None:
            self._by_time.remove((nack.delivery_time << 128) | sid)
        return True

    def retime(self, sid: int, nack: PendingEntry, when: int) -> None:
        """Set a pending entry's delivery time."""
        if self._by_time is not None and when != nack.delivery_time:
            self._by_time.remove((nack.delivery_time << 128) | sid)
            self._by_time.add((when << 128) | sid)
        nack.delivery_time = when

    def transfer(self, sid: int, nack: PendingEntry, consumer: Consumer) -> None:
        """Make ``consumer`` the owner of a pending entry."""
        if nack.consumer is not consumer:
            nack.consumer.pel.remove(sid)
            consumer.pel.add(sid)
            nack.consumer = consumer

    def force_pending(self, sid: int, now: int) -> PendingEntry:
        """A new pending entry without an owner yet (XCLAIM FORCE); the caller transfers it."""
        nack = PendingEntry(None, now)  # type: ignore[arg-type]
        self.pel[sid] = nack
        self.pel_ids.add(sid)
        if self._by_time is not None:
            self._by_time.add((now << 128) | sid)
        return nack

    def adopt(self, sid: int, nack: PendingEntry, consumer: Consumer) -> None:
        """Give an ownerless pending entry (see :meth:`force_pending`) to ``consumer``."""
        nack.consumer = consumer
        consumer.pel.add(sid)

    def by_time(self) -> SortedList:
        """The PEL ordered by delivery time, then id (built on first use)."""
        if self._by_time is None:
            self._by_time = SortedList(
                (nack.delivery_time << 128) | sid for sid, nack in self.pel.items()
            )
        return self._by_time

    def by_idle(self) -> Iterator[tuple[int, int]]:
        """``(delivery time, id)`` of every pending entry, the most idle (oldest delivery)
        first, ties by id: CLAIM's order. Do not change the PEL while iterating."""
        for key in self.by_time():
            yield key >> 128, key & _ID_MASK

    # -- copying ------------------------------------------------------------------------------

    def copy(self) -> ConsumerGroup:
        group = ConsumerGroup(self.name, self.last_id, self.entries_read)
        for name, consumer in self.consumers.items():
            twin = Consumer(name, consumer.seen_time)
            twin.active_time = consumer.active_time
            group.consumers[name] = twin
        pel = group.pel
        for sid in self.pel_ids:
            nack = self.pel[sid]
            owner = group.consumers[nack.consumer.name]
            pel[sid] = PendingEntry(owner, nack.delivery_time, nack.delivery_count)
        group.pel_ids = SortedIds(self.pel_ids)
        for name, consumer in self.consumers.items():
            group.consumers[name].pel = SortedIds(consumer.pel)
        return group
