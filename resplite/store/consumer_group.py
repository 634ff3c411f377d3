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
from typing import TYPE_CHECKING

from sortedcontainers import SortedList

from resplite.store.sorted_ids import SortedIds
from resplite.store.stream_ids import U64

if TYPE_CHECKING:
    from resplite.store.stream import Stream

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

    def seen(self, now: int) -> None:
        """Record an attempted interaction at ``now``: a read or claim that names the
        consumer, whether or not it gets anything."""
        self.seen_time = now


def bounded_entries_read(entries_read: int, entries_added: int) -> int:
    """A read counter given to a group (XGROUP CREATE or SETID ENTRIESREAD): a group cannot
    have read more entries than the stream ever had, so a larger count is cut to
    ``entries_added``; -1 (unknown) stays unknown."""
    if entries_read != INVALID_ENTRIES_READ and entries_read > entries_added:
        return entries_added
    return entries_read


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

    def seen_consumer(self, name: bytes, now: int) -> Consumer | None:
        """The consumer ``name``, seen at ``now`` (:meth:`Consumer.seen`: a read or claim
        names it), or None when there is none."""
        consumer = self.consumers.get(name)
        if consumer is not None:
            consumer.seen_time = now
        return consumer

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
        """Record a delivery of ``sid`` to ``consumer`` at ``now``, as XREADGROUP ``>``
        does: the consumer was active at ``now``.

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
        consumer.active_time = now
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
        consumer.active_time = now
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

    # -- claims and positions -------------------------------------------------------------------

    def claim(
        self, stream: Stream, ids: list[int], consumer: Consumer, now: int, when: int,
        min_idle: int, retrycount: int, force: bool, justid: bool, last_id: int,
    ) -> list[tuple[int, list[bytes] | None]]:
        """XCLAIM of ``ids`` (in the order given, repeats included) for ``consumer``.

        The group's last-delivered id is first raised to ``last_id`` when above it (LASTID;
        the read counter is left as it is, as Redis does). Then, per id: one whose entry is
        gone from ``stream`` loses its pending record; one not pending is made pending
        when ``force`` (and claimed whatever ``min_idle``); a pending one idle less than
        ``min_idle`` ms (a released one never is) is left alone; any other becomes
        ``consumer``'s with delivery time ``when`` (``now`` when negative or in the
        future: a client's clock skew) and delivery count ``retrycount`` when not
        negative, else one more unless ``justid``. A claim makes ``consumer`` active at
        ``now``.

        Returns each id changed, in order, with its entry's fields when claimed, None when
        its record was dropped. O(k log p) for k ids.
        """
        if last_id > self.last_id:
            self.last_id = last_id
        if when < 0 or when > now:
            when = now
        pel = self.pel
        changed: list[tuple[int, list[bytes] | None]] = []
        for sid in ids:
            nack = pel.get(sid)
            fields = stream.get(sid)
            if fields is None:
                if nack is not None:
                    self.ack(sid)
                    changed.append((sid, None))
                continue
            forced = force and nack is None
            if forced:
                nack = self.force_pending(sid, consumer, now)
            if nack is None:
                continue
            # An entry FORCE just made pending has no idle time to test: Redis claims it
            # whatever the minimum (its new record has no owner yet at that check).
            if (not forced and nack.consumer is not None and min_idle
                    and now - nack.delivery_time < min_idle):
                continue
            self.transfer(sid, nack, consumer)
            self.retime(sid, nack, when)
            if retrycount >= 0:
                nack.delivery_count = retrycount
            elif not justid:
                nack.count_delivery()
            consumer.active_time = now
            changed.append((sid, fields))
        return changed

    def autoclaim(
        self, stream: Stream, start: int, count: int, min_idle: int, consumer: Consumer,
        now: int, justid: bool,
    ) -> tuple[list[int], list[list[bytes]], list[int], int]:
        """XAUTOCLAIM: walk the PEL from ``start`` and claim for ``consumer`` up to
        ``count`` entries pending at least ``min_idle`` ms (released ones always qualify),
        looking at no more than ``count * 10`` records, as Redis does.

        A claimed entry gets delivery time ``now`` and, unless ``justid``, one more
        delivery; ``consumer`` becomes active at ``now``. A record whose entry is gone
        from ``stream`` is dropped (after the walk) and counts towards ``count``.

        Returns the ids claimed, their fields (empty unless claimed without ``justid``),
        the ids dropped, and the cursor: the next pending id, 0 when the walk reached the
        end of the PEL. O(log p + count * 10).
        """
        pel = self.pel
        attempts = count * 10
        claimed: list[int] = []
        entries: list[list[bytes]] = []
        deleted: list[int] = []
        it = iter(self.pel_ids.irange(minimum=start))
        exhausted = False
        while attempts:
            attempts -= 1
            if not count:
                break
            sid = next(it, None)
            if sid is None:
                exhausted = True
                break
            nack = pel[sid]
            fields = None if justid else stream.get(sid)
            if not (stream.exists(sid) if justid else fields is not None):
                deleted.append(sid)  # dropped after the walk, so the iterator stays valid
                count -= 1
                continue
            if min_idle and now - nack.delivery_time < min_idle:
                continue
            self.transfer(sid, nack, consumer)
            self.retime(sid, nack, now)
            claimed.append(sid)
            if fields is not None:
                nack.count_delivery()
                entries.append(fields)
            count -= 1
            consumer.active_time = now
        cursor = 0
        if not exhausted:
            nxt = next(it, None)
            if nxt is not None:
                cursor = nxt
        for sid in deleted:
            self.ack(sid)
        return claimed, entries, deleted, cursor

    def claimable(self, min_idle: int, count: int, now: int) -> list[int]:
        """XREADGROUP CLAIM's candidates: the ids pending at least ``min_idle`` ms at
        ``now``, in :meth:`by_idle` order (released entries first), at most ``count`` (0:
        all). Changes nothing."""
        eligible: list[int] = []
        for delivered, sid in self.by_idle():
            if (now - delivered) & U64 < min_idle:
                break
            eligible.append(sid)
            if count and len(eligible) >= count:
                break
        return eligible

    def redeliver(self, sids: list[int], consumer: Consumer, now: int) -> None:
        """XREADGROUP CLAIM of pending ``sids``: each becomes ``consumer``'s, delivered
        again at ``now`` (one more delivery); ``consumer`` is active at ``now`` when any
        is. O(k log p)."""
        pel = self.pel
        for sid in sids:
            nack = pel[sid]
            self.transfer(sid, nack, consumer)
            self.retime(sid, nack, now)
            nack.count_delivery()
        if sids:
            consumer.active_time = now

    def redeliver_own(self, sids: list[int], now: int) -> None:
        """A consumer's read of its own pending ``sids`` (XREADGROUP with a history id):
        each is delivered again at ``now`` (one more delivery), its owner unchanged and not
        made active, as in Redis. O(k log p) with the time index, else O(k)."""
        pel = self.pel
        for sid in sids:
            nack = pel[sid]
            self.retime(sid, nack, now)
            nack.count_delivery()

    def set_position(self, last_id: int, entries_read: int, entries_added: int) -> None:
        """XGROUP SETID: the group's last-delivered id becomes ``last_id`` (backwards too:
        the entries after it are delivered again) and its read counter ``entries_read``,
        cut to ``entries_added`` (:func:`bounded_entries_read`). The PEL is untouched."""
        self.last_id = last_id
        self.entries_read = bounded_entries_read(entries_read, entries_added)

    def bound_entries_read(self, entries_added: int) -> None:
        """Cut the read counter to ``entries_added`` (the stream's count was lowered)."""
        self.entries_read = bounded_entries_read(self.entries_read, entries_added)

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
