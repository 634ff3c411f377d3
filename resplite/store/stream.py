"""The stream value type: packed entry nodes, tombstone bookkeeping and consumer groups.

Theory of operation
-------------------
Entries live in :class:`~resplite.store.stream_node.StreamNode` objects kept in id order in
``nodes``, with their master ids in the parallel list ``keys``. Finding an id is a bisect
over ``keys`` (which node) and a bisect inside the node (which entry): O(log n). XADD appends
to the last node or opens a new one, exactly when Redis would (``stream-node-max-entries``
counting tombstones too, and ``stream-node-max-bytes`` against the listpack size the node
would have), so nodes hold the same entries as Redis's listpacks, and approximate trimming,
which only ever drops whole nodes, removes exactly what Redis removes. Appending is O(1)
amortised: a node seals its buffers into exact-size storage once the next one opens.

Deletion (XDEL, exact trimming) leaves a tombstone in its node; a node whose last live entry
is deleted by XDEL disappears. The stream remembers what Redis remembers about its history:
``last_id`` (last generated id), ``entries_added`` (entries ever added), ``max_deleted_id``
(largest id ever deleted, 0 if none) and ``first_id`` (first live id, 0 when empty). These
drive the consumer groups' read counters and lag (:meth:`group_lag`), which follow the
newest Redis's rules, including when the lag cannot be known (``None``).

Consumer groups (:mod:`resplite.store.consumer_group`) are kept by name in ``groups``. They
share ``refs`` (entry id -> number of groups that have it pending), which the PEL methods
keep, so the reference policies of Redis 8.2 (ACKED, DELREF) ask "is this entry still
pending in some group, or not yet delivered to one" in O(1) per entry: a dict lookup, and
one comparison with the smallest last-delivered id, computed once per command.

The idempotent-producer state of Redis 8.6 (:mod:`resplite.store.stream_idmp`) is ``idmp``,
created on first use (IDMP, IDMPAUTO or XCFGSET); until then the stream reports the
configured defaults.

The store knows nothing of clients or clocks: times are passed in; errors are the small
exceptions below, or ``None`` results, that the command layer words as Redis does. Its one
contact with RESP is :meth:`StreamNode.entry_resp` (and its loop,
:meth:`StreamNode.resp_from`), which writes an entry's reply bytes straight from the packed
data, because building Python lists per entry is what reads cost. A long range is produced
in pieces by a :class:`RangePieces` reader (:class:`ReverseRangePieces` newest first;
registered in ``readers``, a weak set), which :meth:`delete` and :meth:`trim` settle before
they change an entry: a range being sent is always the range as it was when it was asked
for. A large XREADGROUP read does its group changes at once (:meth:`deliver_new`) and sends
its entries through such a reader.

Size: ``nbytes`` is the sum of :meth:`~StreamNode.memory` over every node but the last
(the one XADD appends to), kept as nodes are sealed and removed (a tombstone frees nothing,
as in Redis's listpacks); :meth:`Stream.memory_usage` adds the last node's figure, so it
costs O(number of groups), not O(entries), and XADD's hot path does no accounting.

Snapshots (SAVE, DUMP) and loads may keep a sealed node's compressed form in
``node.packed`` (:meth:`keep_packed`), so that writing an unchanged node again is a copy:
compressing is by far the largest part of a snapshot's cost in Python. ``packed_bytes`` is
what those forms hold, part of :meth:`memory_usage`. Only compressed forms are kept, each
smaller than the node's listpack (for a node that does not compress, the empty marker saves
the attempt), so the cache is bounded by what Redis's own listpacks would take; any change
to a node drops its form, and the last node, which XADD appends to, never has one.

Invariants: ``nbytes`` is the sum of ``node.memory()`` over ``nodes[:-1]``;
``packed_bytes`` is the sum of :func:`packed_size` of the nodes' ``packed`` forms, and
``nodes[-1].packed`` is None; ``length`` is
the number of live entries in all nodes; ids in ``nodes`` are
strictly increasing and all ``<= last_id``; ``first_id`` is the smallest live id (0 if
none); ``max_deleted_id <= last_id``; ``refs`` counts exactly the PEL entries of the
groups in ``groups``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from enum import IntEnum
from typing import Final
from weakref import WeakSet

from mypy_extensions import mypyc_attr

from resplite.store.consumer_group import INVALID_ENTRIES_READ, Consumer, ConsumerGroup
from resplite.store.radix_shape import radix_node_count
from resplite.store.sizes import BYTES_HEADER, INT_OBJECT
from resplite.store.stream_idmp import IdmpState
from resplite.store.stream_ids import MAX_ID, U64
from resplite.store.stream_node import DELETED, LISTPACK_MAX_SIZE, StreamNode

Entry = tuple[int, list[bytes]]
_LLONG_MAX: Final = (1 << 63) - 1


class ElementsTooLarge(Exception):
    """The entry's fields and values add up to more than a listpack may hold."""


class RefPolicy(IntEnum):
    """What deleting or trimming does about consumer groups' references (Redis 8.2)."""

    KEEPREF = 1  # delete; pending entries that point at it stay
    DELREF = 2  # delete and drop every group's pending entry for it
    ACKED = 3  # delete only what every group has read and acknowledged


class TrimStrategy(IntEnum):
    MAXLEN = 1
    MINID = 2


class SetIdRefused(IntEnum):
    """Why :meth:`Stream.set_last_id` changed nothing (XSETID words each as Redis does)."""

    MAX_DELETED_ABOVE = 1  # the new largest deleted id is above the new last id
    BELOW_MAX_DELETED = 2  # the new last id is below an id already deleted
    BELOW_TOP = 3  # the new last id is below the last live entry
    ENTRIES_ADDED_SMALL = 4  # fewer entries ever added than the stream holds


class Stream:
    """A Redis stream."""

    __slots__ = (
        "entries_added",
        "first_id",
        "groups",
        "idmp",
        "keys",
        "last_id",
        "length",
        "max_deleted_id",
        "nbytes",
        "nodes",
        "packed_bytes",
        "readers",
        "refs",
    )

    type_name: Final = "stream"  # TYPE
    encoding: Final = "stream"  # OBJECT ENCODING

    def __init__(self) -> None:
        self.nodes: list[StreamNode] = []
        self.keys: list[int] = []
        self.length = 0
        self.last_id = 0
        self.first_id = 0
        self.max_deleted_id = 0
        self.entries_added = 0
        self.groups: dict[bytes, ConsumerGroup] = {}
        self.refs: dict[int, int] = {}
        self.idmp: IdmpState | None = None
        self.nbytes = 0
        self.packed_bytes = 0
        # Range readers still producing (see RangePieces); made on the first one.
        self.readers: WeakSet[PiecesReader] | None = None

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<Stream length={self.length} nodes={len(self.nodes)} groups={len(self.groups)}>"

    # -- ids ----------------------------------------------------------------------------------

    def next_auto_id(self, now_ms: int) -> int | None:
        """The id ``*`` stands for at ``now_ms``; None if no id is left after ``last_id``."""
        last = self.last_id
        if now_ms > last >> 64:
            return now_ms << 64
        return last + 1 if last != MAX_ID else None

    def next_seq_id(self, ms: int) -> int | None:
        """The id ``<ms>-*`` stands for; None if that millisecond's sequence is exhausted."""
        last = self.last_id
        if last >> 64 == ms:
            return None if last & U64 == U64 else last + 1
        return ms << 64

    # -- adding -------------------------------------------------------------------------------

    def append(
        self, sid: int, argv: list[bytes], start: int, max_entries: int, max_bytes: int
    ) -> None:
        """Add the entry ``sid`` with field/value pairs ``argv[start:]``.

        The caller has checked that ``sid > last_id`` and that there is at least one pair.
        Raises :class:`ElementsTooLarge` (changing nothing) past a listpack's size limit.
        """
        if len(argv) - start != 2 and sum(map(len, argv[start:])) > LISTPACK_MAX_SIZE:
            raise ElementsTooLarge
        nodes = self.nodes
        if not nodes or not nodes[-1].push(sid, argv, start, max_entries, max_bytes):
            if nodes:
                last = nodes[-1]
                last.seal()
                self.nbytes += last.memory()  # no longer the open node
            node = StreamNode(sid, tuple(argv[start::2]))
            nodes.append(node)
            self.keys.append(sid)
            node.append(sid, argv, start, True)
        self.length += 1
        if self.entries_added < _LLONG_MAX:  # Redis's signed counter, kept from wrapping
            self.entries_added += 1
        self.last_id = sid
        if self.length == 1:
            self.first_id = sid

    def add_auto(
        self, now_ms: int, argv: list[bytes], start: int, max_entries: int, max_bytes: int
    ) -> int | None:
        """Add an entry under the id ``*`` stands for at ``now_ms`` (XADD's common form) and
        return that id; None, changing nothing, when no id is left after ``last_id``.

        The same as :meth:`next_auto_id` then :meth:`append`, in one call for XADD's hot path.
        Raises :class:`ElementsTooLarge` as :meth:`append` does.
        """
        last = self.last_id
        if now_ms > last >> 64:
            sid = now_ms << 64
        elif last != MAX_ID:
            sid = last + 1
        else:
            return None
        self.append(sid, argv, start, max_entries, max_bytes)
        return sid

    # -- reading ------------------------------------------------------------------------------

    def _locate(self, sid: int) -> tuple[int, int]:
        """(node index, entry index) of the first entry with id >= ``sid``, tombstones included."""
        ni = bisect_right(self.keys, sid) - 1
        if ni < 0:
            return 0, 0
        node = self.nodes[ni]
        i = node.lower_bound(sid)
        if i >= len(node):
            return ni + 1, 0
        return ni, i

    def iter_forward(self, start: int, end: int = MAX_ID) -> Iterator[tuple[StreamNode, int, int]]:
        """Live entries with ``start <= id <= end`` in id order, as (node, index, id)."""
        nodes = self.nodes
        ni, i = self._locate(start)
        while ni < len(nodes):
            node = nodes[ni]
            flags = node.flags
            ms = node.ms
            seq = node.seq
            base = node.master_ms
            n = len(flags)
            while i < n:
                if not flags[i] & DELETED:
                    sid = ((base + ms[i]) << 64) | seq[i]
                    if sid > end:
                        return
                    yield node, i, sid
                i += 1
            ni += 1
            i = 0

    def iter_backward(self, end: int, start: int = 0) -> Iterator[tuple[StreamNode, int, int]]:
        """Live entries with ``start <= id <= end`` in reverse id order, as (node, index, id)."""
        nodes = self.nodes
        ni = bisect_right(self.keys, end) - 1
        if ni < 0:
            return
        i = nodes[ni].upper_bound(end) - 1
        while ni >= 0:
            node = nodes[ni]
            flags = node.flags
            ms = node.ms
            seq = node.seq
            base = node.master_ms
            while i >= 0:
                if not flags[i] & DELETED:
                    sid = ((base + ms[i]) << 64) | seq[i]
                    if sid < start:
                        return
                    yield node, i, sid
                i -= 1
            ni -= 1
            if ni >= 0:
                i = len(nodes[ni]) - 1

    def resp_forward(self, start: int, end: int, count: int, out: list[bytes]) -> int:
        """Append the wire form of the live entries with ``start <= id <= end`` in id
        order, at most ``count`` (0: all), node by node (:meth:`StreamNode.resp_from`);
        returns how many. The same bytes as :meth:`iter_forward` with
        :meth:`StreamNode.entry_resp` for each entry."""
        nodes = self.nodes
        ni, i = self._locate(start)
        taken = 0
        while ni < len(nodes):
            n, stop = nodes[ni].resp_from(i, end, count - taken if count else 0, out)
            taken += n
            if stop:
                break
            ni += 1
            i = 0
        return taken

    def range_pieces(self, start: int, end: int, count: int = 0) -> tuple[int, RangePieces]:
        """What :meth:`resp_forward` appends, as (how many entries, their wire form in
        pieces made as they are asked for): for a range too large to build at once. The
        pieces are the range as it is now whenever they are taken (see
        :class:`RangePieces`); counting costs O(nodes), not O(entries)."""
        nodes = self.nodes
        ni, i = self._locate(start)
        if nodes:
            end = min(end, nodes[-1].last_id())  # later entries lie past it
        total = 0
        stop = ni  # the nodes in range are nodes[ni:stop]
        for k in range(ni, len(nodes)):
            node = nodes[k]
            first = i if k == ni else 0
            if node.id_at(first) > end:
                break
            stop = k + 1
            if first == 0 and node.last_id() <= end:
                total += node.count
            else:
                total += node.live_between(first, node.upper_bound(end))
            if count and total >= count:
                total = count
                break
        reader = RangePieces(nodes[ni:stop], i, end, total)
        if total:
            readers = self.readers
            if readers is None:
                readers = self.readers = WeakSet()
            readers.add(reader)
        return total, reader

    def range_pieces_rev(self, end: int, start: int,
                         count: int = 0) -> tuple[int, RangePieces]:
        """:meth:`range_pieces` in reverse id order (XREVRANGE's large replies): the live
        entries with ``start <= id <= end``, newest first, at most ``count`` (0: all).
        Entries added later lie past the reader's first position, so only XDEL and
        trimming need settling, as for a forward reader. Counting costs O(nodes)."""
        nodes = self.nodes
        ni = bisect_right(self.keys, end) - 1
        total = 0
        i = 0
        stop = ni + 1  # the nodes in range are nodes[stop:ni + 1]
        if ni >= 0:
            # A node's master id is its first entry's id, so some entry is <= end here.
            i = nodes[ni].upper_bound(end) - 1
            for k in range(ni, -1, -1):
                node = nodes[k]
                last = i if k == ni else len(node) - 1
                if node.id_at(last) < start:
                    break
                stop = k
                if last == len(node) - 1 and node.id_at(0) >= start:
                    total += node.count
                else:
                    total += node.live_between(node.lower_bound(start), last + 1)
                if count and total >= count:
                    total = count
                    break
        reader = ReverseRangePieces(nodes[stop : ni + 1][::-1] if total else [], i, start,
                                    total)
        if total:
            readers = self.readers
            if readers is None:
                readers = self.readers = WeakSet()
            readers.add(reader)
        return total, reader

    def entries_pieces(self, sids: list[int], resp: int) -> EntryPieces:
        """The wire form of the entries ``sids`` as an array's elements, in that order,
        each ``[id, [field, value ...]]``, or ``[id, nil]`` for an id not in the stream (a
        consumer's own pending entries, read from history), made piece by piece as they
        are asked for; the same snapshot guarantee as :class:`RangePieces`. The entries
        are found now, O(len(sids) log n); nothing is encoded yet."""
        keys = self.keys
        nodes = self.nodes
        located: list[tuple[StreamNode | None, int, int]] = []
        append = located.append
        for sid in sids:
            ni = bisect_right(keys, sid) - 1
            if ni >= 0:
                node = nodes[ni]
                i = node.find(sid)
                if i >= 0:
                    append((node, i, sid))
                    continue
            append((None, -1, sid))
        reader = EntryPieces(located, resp)
        if located:
            readers = self.readers
            if readers is None:
                readers = self.readers = WeakSet()
            readers.add(reader)
        return reader

    def settle_readers(self) -> None:
        """Before an entry is deleted or a node dropped: every range reader still producing
        encodes the rest of its range now, so what it sends is the range as it was."""
        readers = self.readers
        if readers:
            for reader in list(readers):
                reader.settle()
            readers.clear()

    def range(self, start: int, end: int, count: int = 0, rev: bool = False) -> list[Entry]:
        """Live entries between ``start`` and ``end`` inclusive; at most ``count`` if non-zero."""
        out: list[Entry] = []
        if start > end:
            return out
        it = self.iter_backward(end, start) if rev else self.iter_forward(start, end)
        for node, i, sid in it:
            out.append((sid, node.fields_at(i)))
            if len(out) == count:
                break
        return out

    def get(self, sid: int) -> list[bytes] | None:
        """The field/value pairs of the live entry ``sid``, or None."""
        ni = bisect_right(self.keys, sid) - 1
        if ni < 0:
            return None
        node = self.nodes[ni]
        i = node.find(sid)
        return None if i < 0 else node.fields_at(i)

    def exists(self, sid: int) -> bool:
        ni = bisect_right(self.keys, sid) - 1
        return ni >= 0 and self.nodes[ni].find(sid) >= 0

    def first_entry(self) -> Entry | None:
        for node, i, sid in self.iter_forward(0):
            return sid, node.fields_at(i)
        return None

    def last_entry(self) -> Entry | None:
        for node, i, sid in self.iter_backward(MAX_ID):
            return sid, node.fields_at(i)
        return None

    def last_live_id(self) -> int:
        """The largest live id, 0 when the stream is empty."""
        for _, _, sid in self.iter_backward(MAX_ID):
            return sid
        return 0

    def _first_live_id(self) -> int:
        for _, _, sid in self.iter_forward(0):
            return sid
        return 0

    # -- deleting -----------------------------------------------------------------------------

    def delete(self, sid: int) -> bool:
        """Delete the live entry ``sid`` (XDEL); returns whether it existed."""
        ni = bisect_right(self.keys, sid) - 1
        if ni < 0:
            return False
        node = self.nodes[ni]
        i = node.find(sid)
        if i < 0:
            return False
        if self.readers:
            self.settle_readers()
        if node.count == 1:
            # The node's last live entry: Redis frees the whole node, tombstones and all.
            self._remove_node(ni)
        else:
            if node.packed is not None:
                self.packed_bytes -= packed_size(node)
            node.mark_deleted(i)
        self.length -= 1
        if sid > self.max_deleted_id:
            self.max_deleted_id = sid
        if self.length == 0:
            self.first_id = 0
        elif sid == self.first_id:
            # The next live entry after the one deleted: deleting from the front in order
            # does not walk the same tombstones again and again.
            for _, _, nxt in self.iter_forward(sid + 1):
                self.first_id = nxt
                break
        return True

    def _remove_node(self, ni: int) -> None:
        nodes = self.nodes
        node = nodes.pop(ni)
        del self.keys[ni]
        if node.packed is not None:
            self.packed_bytes -= packed_size(node)
        if ni < len(nodes):
            self.nbytes -= node.memory()
        elif nodes:
            last = nodes[-1]
            self.nbytes -= last.memory()  # the new last node is the open one
            if last.packed is not None:  # and XADD may append to it
                self.packed_bytes -= packed_size(last)
                last.packed = None

    def trim(
        self,
        strategy: TrimStrategy,
        threshold: int,
        approx: bool = False,
        limit: int = 0,
        policy: RefPolicy = RefPolicy.KEEPREF,
    ) -> int:
        """Trim from the oldest end; returns how many entries were removed.

        MAXLEN keeps at most ``threshold`` entries; MINID removes entries below the id
        ``threshold``. ``approx`` removes whole nodes only; ``limit`` (non-zero) caps the
        entries removed. With DELREF or ACKED each entry is weighed on its own, so whole
        nodes are not dropped blindly (as in Redis 8.2).
        """
        maxlen = threshold if strategy is TrimStrategy.MAXLEN else 0
        minid = threshold
        by_len = strategy is TrimStrategy.MAXLEN
        keepref = policy is RefPolicy.KEEPREF
        min_last = self.min_group_last_id() if policy is RefPolicy.ACKED else 0
        if self.readers:
            self.settle_readers()
        nodes = self.nodes
        removed = 0
        ni = 0
        while ni < len(nodes):
            if by_len and self.length <= maxlen:
                break
            node = nodes[ni]
            entries = node.count
            if limit and removed + entries > limit:
                break
            eligible = self.length - entries >= maxlen if by_len else node.last_id() < minid
            if eligible and keepref:
                self._remove_node(ni)
                self.length -= entries
                removed += entries
                continue
            if approx and keepref:
                break
            flags = node.flags
            removed_here = 0
            for i in range(len(flags)):
                sid = node.id_at(i)
                if (self.length <= maxlen) if by_len else (sid >= minid):
                    break
                if flags[i] & DELETED:
                    continue
                if policy is RefPolicy.ACKED:
                    if self._referenced(sid, min_last):
                        continue
                elif policy is RefPolicy.DELREF:
                    self.drop_references(sid)
                flags[i] |= DELETED
                removed_here += 1
                self.length -= 1
            removed += removed_here
            if eligible and removed_here == entries:
                self._remove_node(ni)
                continue
            if node.packed is not None:
                self.packed_bytes -= packed_size(node)
            node.set_counters(entries - removed_here, node.deleted + removed_here)
            if eligible:
                ni += 1
                continue
            break
        if self.length == 0:
            self.first_id = 0
        elif removed:
            self.first_id = self._first_live_id()
        return removed

    # -- consumer group references (Redis 8.2 KEEPREF / DELREF / ACKED) ------------------------

    def min_group_last_id(self) -> int:
        """The smallest last-delivered id of the groups (the largest id when none): an entry
        above it is not yet delivered to some group. O(groups): compute once per command."""
        groups = self.groups
        return min(g.last_id for g in groups.values()) if groups else MAX_ID

    def _referenced(self, sid: int, min_last: int) -> bool:
        """Whether some group has not read ``sid`` yet or has it pending (O(1))."""
        if not self.groups:
            return False
        return min_last < sid or sid in self.refs

    def is_referenced(self, sid: int, min_last: int | None = None) -> bool:
        """:meth:`_referenced`, given :meth:`min_group_last_id` (computed if not given)."""
        return self._referenced(sid, self.min_group_last_id() if min_last is None else min_last)

    def drop_references(self, sid: int) -> None:
        """Remove ``sid`` from every group's PEL (stops once no group has it pending)."""
        left = self.refs.get(sid, 0)
        if not left:
            return
        for group in self.groups.values():
            if sid in group.pel:
                group.ack(sid)
                left -= 1
                if not left:
                    return

    # -- read counters and lag ----------------------------------------------------------------

    def range_has_tombstones(self, start: int, end: int = MAX_ID) -> bool:
        """Whether a deleted id may lie within ``[start, end]``."""
        if not self.length or not self.max_deleted_id:
            return False
        return start <= self.max_deleted_id <= end

    def estimate_entries_read(self, sid: int) -> int:
        """How many entries were added up to ``sid``, or -1 when that cannot be known."""
        added = self.entries_added
        if not added:
            return 0
        if not self.length and sid <= self.last_id:
            return added
        if sid and sid < self.max_deleted_id:
            return INVALID_ENTRIES_READ
        if sid == self.last_id:
            return added
        if sid > self.last_id:
            return INVALID_ENTRIES_READ
        if not self.max_deleted_id or self.max_deleted_id < self.first_id:
            if sid < self.first_id:
                return added - self.length
            if sid == self.first_id:
                return added - self.length + 1
        return INVALID_ENTRIES_READ

    def group_lag(self, group: ConsumerGroup) -> int | None:
        """Entries not yet delivered to ``group``; None when it cannot be known."""
        if not self.entries_added or not self.length:
            return 0
        if group.last_id < self.first_id and self.max_deleted_id < self.first_id:
            return self.length
        if group.entries_read != INVALID_ENTRIES_READ and not self.range_has_tombstones(
            group.last_id
        ):
            return self.entries_added - group.entries_read
        read = self.estimate_entries_read(group.last_id)
        if read == INVALID_ENTRIES_READ:
            return None
        return self.entries_added - read

    def read_new_resp(
        self,
        start: int,
        count: int,
        group: ConsumerGroup | None,
        consumer: Consumer | None,
        now: int,
        out: list[bytes],
    ) -> int:
        """Serve entries from ``start`` (up to ``count``, 0 for all) as reply bytes appended
        to ``out``; the number served.

        With a ``group`` (XREADGROUP ``>``), each entry past the group's last id advances it
        (as :meth:`advance_group`) and, given a ``consumer`` (None under NOACK), enters the
        PEL as delivered to it at ``now``. The read path of the consumer loop: the group's
        common case (a valid read counter, no tombstone after its last id) costs one
        counter step (:meth:`_deliver_next`).
        """
        n = 0
        max_deleted = self.max_deleted_id
        for node, i, sid in self.iter_forward(start):
            if group is not None:
                if sid > group.last_id:
                    self._deliver_next(group, sid, max_deleted)
                if consumer is not None:
                    group.deliver(sid, consumer, now)
            node.entry_resp(i, sid, out)
            n += 1
            if n == count:
                break
        return n

    def _deliver_next(self, group: ConsumerGroup, sid: int, max_deleted: int) -> None:
        """Move ``group``'s last-delivered id to ``sid`` (above it): its entries-read counter
        steps by one while it is valid and nothing deleted lies between, else it is
        recomputed (:meth:`advance_group`)."""
        last = group.last_id
        if (
            group.entries_read != INVALID_ENTRIES_READ
            and last >= self.first_id
            and not (max_deleted and last <= max_deleted)
        ):
            group.entries_read += 1
            group.last_id = sid
        else:
            self.advance_group(group, sid)

    def deliver_new(self, start: int, count: int, group: ConsumerGroup,
                    consumer: Consumer | None, now: int) -> None:
        """What :meth:`read_new_resp` does to ``group`` (and ``consumer``) for the first
        ``count`` live entries from ``start``, without encoding them: for a read too large
        to encode at once, whose entries are sent by a reader made with the same
        ``start`` and ``count`` (:meth:`range_pieces`). O(count)."""
        max_deleted = self.max_deleted_id
        pel_ids = group.pel_ids
        if consumer is not None and (not pel_ids or pel_ids[-1] < start):
            # Nothing from ``start`` on is pending: the deliveries are made in bulk.
            sids: list[int] = []
            for n, (_, _, sid) in enumerate(self.iter_forward(start), 1):
                if sid > group.last_id:
                    self._deliver_next(group, sid, max_deleted)
                sids.append(sid)
                if n == count:
                    break
            group.deliver_above(sids, consumer, now)
            return
        for n, (_, _, sid) in enumerate(self.iter_forward(start), 1):
            if sid > group.last_id:
                self._deliver_next(group, sid, max_deleted)
            if consumer is not None:
                group.deliver(sid, consumer, now)
            if n == count:
                break

    def advance_group(self, group: ConsumerGroup, sid: int) -> None:
        """Move ``group``'s last delivered id to ``sid`` (> it), updating its read counter."""
        if (
            group.entries_read != INVALID_ENTRIES_READ
            and group.last_id >= self.first_id
            and not self.range_has_tombstones(group.last_id)
        ):
            group.entries_read += 1
        elif self.entries_added:
            group.entries_read = self.estimate_entries_read(sid)
        group.last_id = sid

    # -- history ------------------------------------------------------------------------------

    def set_last_id(
        self, sid: int, entries_added: int = -1, max_deleted_id: int = 0
    ) -> SetIdRefused | None:
        """XSETID: make ``sid`` the last generated id and, when given (not -1, not 0),
        ``entries_added`` the count of entries ever added and ``max_deleted_id`` the largest
        id ever deleted; None when done, else why nothing changed.

        Keeps the invariants: every id and ``max_deleted_id`` stay ``<= last_id`` (so an
        id below the last live entry or below an id already deleted is refused), and
        ``entries_added`` is at least the number of live entries; each group's read counter
        is cut to the new ``entries_added`` (a later Redis fix). Refusals are checked in
        Redis's order. O(groups).
        """
        if sid < max_deleted_id:
            return SetIdRefused.MAX_DELETED_ABOVE
        if sid < self.max_deleted_id:
            return SetIdRefused.BELOW_MAX_DELETED
        if self.length:
            if sid < self.last_live_id():
                return SetIdRefused.BELOW_TOP
            if entries_added != -1 and self.length > entries_added:
                return SetIdRefused.ENTRIES_ADDED_SMALL
        self.last_id = sid
        if entries_added != -1:
            self.entries_added = entries_added
            for group in self.groups.values():
                group.bound_entries_read(entries_added)
        if max_deleted_id:
            self.max_deleted_id = max_deleted_id
        return None

    # -- groups -------------------------------------------------------------------------------

    def create_group(self, name: bytes, last_id: int, entries_read: int) -> ConsumerGroup | None:
        """A new group, or None if the name is taken."""
        if name in self.groups:
            return None
        group = self.groups[name] = ConsumerGroup(name, last_id, entries_read, self.refs)
        return group

    def destroy_group(self, group: ConsumerGroup) -> None:
        """Remove ``group`` and its references (XGROUP DESTROY). O(its PEL)."""
        group.drop_all()
        del self.groups[group.name]

    def idmp_state(self, duration: int, maxsize: int) -> IdmpState:
        """The idempotency state, created with these settings on first use."""
        state = self.idmp
        if state is None:
            state = self.idmp = IdmpState(duration, maxsize)
        return state

    def sorted_groups(self) -> list[ConsumerGroup]:
        """Groups in name order, as Redis lists them."""
        return [self.groups[name] for name in sorted(self.groups)]

    # -- introspection ------------------------------------------------------------------------

    @property
    def node_count(self) -> int:
        """Redis's ``radix-tree-keys``."""
        return len(self.nodes)

    def radix_tree_nodes(self) -> int:
        """Redis's ``radix-tree-nodes``."""
        return radix_node_count(self.keys)

    def check_loaded(self) -> None:
        """ValueError, naming the first broken rule, unless a stream a loader built (RDB,
        RESTORE) keeps the invariants every command relies on.

        Each node's entries were checked against its master entry when it was read
        (:meth:`StreamNode.from_listpack`); here the nodes are checked against each other and
        against the stream's own fields: every node's first id is at least its key (the id
        its master entry was keyed by), ids fit 64+64 bits, each node's last id is below the
        next node's key, ``length`` is the live entries' count, ``last_id`` is at least every
        id (tombstones included; XADD appends after it), ``first_id`` is the first live id,
        ``max_deleted_id`` is at most ``last_id``, and ``entries_added`` counts at least the
        entries present and fits a signed 64-bit counter, as Redis keeps it. Groups are
        checked by the loader as it reads them."""
        nodes = self.nodes
        previous = -1
        live = 0
        for node in nodes:
            if node.id_at(0) < node.master:
                raise ValueError("stream node holds an entry below its key")
            if node.master <= previous:
                raise ValueError("stream nodes out of order")
            last = node.last_id()
            if last > MAX_ID:
                raise ValueError("stream entry id out of range")
            previous = last
            live += node.count
        if live != self.length:
            raise ValueError("stream length inconsistent with its entries")
        if previous > self.last_id:
            raise ValueError("stream last id below an entry's id")
        if self.max_deleted_id > self.last_id:
            raise ValueError("stream max deleted id above its last id")
        if self.length:
            first = self._first_live_id()
            if self.first_id != first:
                raise ValueError("stream first id is not its first entry's")
        if not self.length <= self.entries_added <= _LLONG_MAX:
            raise ValueError("stream entries added inconsistent with its length")

    def recount(self) -> None:
        """Recompute ``nbytes`` and ``packed_bytes`` after a loader appended nodes directly
        (RDB)."""
        nodes = self.nodes
        self.nbytes = sum(node.memory() for node in nodes[:-1])
        if nodes:
            nodes[-1].packed = None
        self.packed_bytes = sum(packed_size(node) for node in nodes if node.packed is not None)

    def keep_packed(self, node: StreamNode, form: bytes, crc: int, shift: int) -> None:
        """Keep ``form``, the node as a compressed snapshot writes it, built by the caller
        from the node as it is now (b"" says it does not compress), with its CRC-64 and
        join factor (0, 0: not computed yet, left to the first save that needs them), so
        the next snapshot copies it. Nothing is kept for the last node. O(1); adds to
        :meth:`memory_usage`, which the caller has the keyspace charge."""
        if node.packed is None and node is not self.nodes[-1]:
            node.packed = form
            node.packed_crc = crc
            node.packed_shift = shift
            self.packed_bytes += packed_size(node)

    def memory_usage(self) -> int:
        """Approximate bytes held by the stream, in O(number of groups) (MEMORY USAGE,
        used_memory): the nodes, the node index, the groups' PELs and consumers, and the
        idempotency state."""
        nodes = self.nodes
        total = 350 + self.nbytes + self.packed_bytes + 16 * len(nodes)
        if nodes:
            total += nodes[-1].memory()
        groups = self.groups
        if groups:
            for group in groups.values():
                total += 300 + 150 * len(group.pel) + 120 * len(group.consumers)
        idmp = self.idmp
        if idmp is not None:
            total += idmp.memory_usage()
        return total

    # -- copying ------------------------------------------------------------------------------

    def copy(self) -> Stream:
        """A deep copy (COPY): entries, history counters, groups, consumers, PELs and the
        idempotency state."""
        twin = Stream()
        twin.nodes = [node.copy() for node in self.nodes]
        twin.nbytes = self.nbytes  # the copy's nodes keep no packed forms
        twin.keys = list(self.keys)
        twin.length = self.length
        twin.last_id = self.last_id
        twin.first_id = self.first_id
        twin.max_deleted_id = self.max_deleted_id
        twin.entries_added = self.entries_added
        twin.groups = {name: group.copy(twin.refs) for name, group in self.groups.items()}
        twin.idmp = None if self.idmp is None else self.idmp.copy()
        return twin


def packed_size(node: StreamNode) -> int:
    """What a node's kept packed form costs: its bytes and two integers (nothing for the
    shared empty marker)."""
    form = node.packed
    return BYTES_HEADER + len(form) + 2 * INT_OBJECT if form else 0


# Not Final, which compiled code would fold in: tests make pieces small.
PIECE_BYTES = 64 * 1024


# An interpreted class (its methods still compiled): the stream's ``readers`` holds weak
# references to readers, which mypyc's native classes do not support. A reader makes
# pieces of 64 KiB, so its attribute reads are not what a range costs.
@mypyc_attr(native_class=False)
class PiecesReader:
    """What the stream's registered readers have in common: :meth:`settle`, which the
    stream calls before it changes an entry (one declared type for ``Stream.readers``)."""

    __slots__ = ("__weakref__",)

    def settle(self) -> None:
        """Encode everything still to produce now."""
        raise NotImplementedError


@mypyc_attr(native_class=False)
class RangePieces(PiecesReader):
    """The wire form of a forward range of live entries (XRANGE's reply without its array
    header, what :meth:`Stream.resp_forward` appends), made piece by piece as it is asked
    for, each piece about :data:`PIECE_BYTES` (whole nodes, through
    :meth:`StreamNode.resp_from`), so that a reply of a million entries is never held
    whole and can be sent across several turns of the event loop.

    Snapshot guarantee: the pieces are the range as it was when the reader was made, when
    ever they are taken. Entries added later have larger ids than the range's end (clamped
    to the last entry then); everything else that changes existing entries (XDEL's
    tombstones, trimming, nodes dropped) goes through :meth:`Stream.delete` or
    :meth:`Stream.trim`, which first has every registered reader :meth:`settle`: encode
    the rest of its range at once, as the whole reply would have been. Nodes dropped from
    the stream stay referenced by the reader's own list until it is done.

    Invariant: ``left`` is the number of entries still to produce; a reader with none left
    holds no node.
    """

    __slots__ = ("bound", "i", "left", "ni", "nodes", "rest")

    def __init__(self, nodes: list[StreamNode], i: int, bound: int, left: int) -> None:
        self.nodes = nodes if left else []
        self.ni = 0
        self.i = i  # the next entry's index in nodes[ni]
        self.bound = bound  # the range's end (its start, for a reverse reader)
        self.left = left
        self.rest: list[bytes] | None = None  # once settled: the remaining pieces, reversed

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        rest = self.rest
        if rest is not None:
            if rest:
                return rest.pop()
            raise StopIteration
        if not self.left:
            raise StopIteration
        return self._make(PIECE_BYTES)

    def settle(self) -> None:
        """Encode everything still to produce now (see the class docstring)."""
        if self.rest is not None:
            return
        rest: list[bytes] = []
        while self.left:
            rest.append(self._make(PIECE_BYTES))
        rest.reverse()
        self.rest = rest

    def _make(self, budget: int) -> bytes:
        parts: list[bytes] = []
        nodes = self.nodes
        ni = self.ni
        i = self.i
        left = self.left
        size = 0
        while left and ni < len(nodes):
            mark = len(parts)
            n, stop = self._encode(nodes[ni], i, left, parts)
            left -= n
            if stop:
                left = 0
                break
            ni += 1
            if ni < len(nodes):
                i = self._first_index(nodes[ni])
            size += sum(map(len, parts[mark:]))
            if size >= budget:
                break
        if not left or ni >= len(nodes):
            left = 0
            self.nodes = []
        self.ni = ni
        self.i = i
        self.left = left
        return b"".join(parts)

    def _encode(self, node: StreamNode, i: int, left: int,
                parts: list[bytes]) -> tuple[int, bool]:
        return node.resp_from(i, self.bound, left, parts)

    @staticmethod
    def _first_index(node: StreamNode) -> int:
        return 0


@mypyc_attr(native_class=False)
class ReverseRangePieces(RangePieces):
    """:class:`RangePieces` of a reverse range (XREVRANGE's reply without its array
    header), newest first: ``nodes`` are the range's nodes newest first, ``i`` the index
    of the first entry to consider in the first of them and ``bound`` the range's start.
    The same snapshot guarantee: entries added later lie past ``i`` of the first node or
    in nodes the reader does not hold, and XDEL and trimming settle it first."""

    __slots__ = ()

    def _encode(self, node: StreamNode, i: int, left: int,
                parts: list[bytes]) -> tuple[int, bool]:
        return node.resp_back(i, self.bound, left, parts)

    @staticmethod
    def _first_index(node: StreamNode) -> int:
        return len(node) - 1




# Entries per piece of an EntryPieces reader.
ENTRIES_PER_PIECE = 1024


@mypyc_attr(native_class=False)
class EntryPieces(PiecesReader):
    """The wire form of given entries, found beforehand (:meth:`Stream.entries_pieces`),
    made :data:`ENTRIES_PER_PIECE` at a time as it is asked for.

    Snapshot guarantee, as for :class:`RangePieces`: an entry's place in its node does not
    change while the node is in the stream, and only :meth:`Stream.delete` and
    :meth:`Stream.trim` remove entries or nodes, after settling every registered reader;
    a node dropped later stays referenced here until the reader is done.

    Invariant: ``located[k:]`` are the entries still to produce; a reader done holds no
    node.
    """

    __slots__ = ("k", "located", "null", "rest")

    def __init__(self, located: list[tuple[StreamNode | None, int, int]], resp: int) -> None:
        self.located = located
        self.k = 0
        self.null = b"_\r\n" if resp == 3 else b"*-1\r\n"  # an entry no longer there
        self.rest: list[bytes] | None = None

    def live_ids(self) -> list[int]:
        """The ids of the entries found in the stream, in order."""
        return [sid for node, _, sid in self.located if node is not None]

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        rest = self.rest
        if rest is not None:
            if rest:
                return rest.pop()
            raise StopIteration
        if self.k >= len(self.located):
            raise StopIteration
        return self._make()

    def settle(self) -> None:
        """Encode everything still to produce now."""
        if self.rest is not None:
            return
        rest: list[bytes] = []
        while self.k < len(self.located):
            rest.append(self._make())
        rest.reverse()
        self.rest = rest

    def _make(self) -> bytes:
        located = self.located
        k = self.k
        end = min(k + ENTRIES_PER_PIECE, len(located))
        parts: list[bytes] = []
        null = self.null
        for j in range(k, end):
            node, i, sid = located[j]
            if node is None:
                idb = b"%d-%d" % (sid >> 64, sid & U64)
                parts.append(b"*2\r\n$%d\r\n%b\r\n%b" % (len(idb), idb, null))
            else:
                node.entry_resp(i, sid, parts)
        if end >= len(located):
            self.located = []
            end = 0
        self.k = end
        return b"".join(parts)
