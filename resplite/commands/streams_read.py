"""XREAD and XREADGROUP, including BLOCK, Redis 8.4's CLAIM and Redis 8.10's MAXCOUNT and
MAXSIZE.

One code path serves both commands, as in Redis. Per stream it decides whether there is
something to serve now: for XREAD, an entry above the given id; for XREADGROUP ``>``, an
entry above the group's last delivered id (or, with CLAIM, a pending entry idle long
enough); a history id always serves the consumer's own pending entries, even if none.
Whatever can be served is; if nothing can and BLOCK was given, the handler returns a
:class:`~resplite.engine.blocking.BlockRequest`.

Blocking follows Redis 7.2+: the blocked command is re-run whole when a key it waits on
changes, and stays blocked if it still has nothing to serve. ``$`` is resolved to the
stream's last id when the client blocks, so the re-run waits for what arrives after that
moment. A blocked XREAD is only re-run once its key holds a stream (it survives DEL and
type changes); a blocked XREADGROUP is re-run on any change and so answers NOGROUP or
WRONGTYPE once its stream or group is gone. A re-run that would find nothing and block again
is skipped, its lookups and its consumers' seen time done in its place, so that an entry
added to a stream many readers wait on re-runs only the readers it serves. A blocked
XREADGROUP with CLAIM is also re-run when the oldest pending entry becomes idle long enough
to be claimed. Inside MULTI the
dispatcher turns the request into its timeout reply (a null array), as Redis does.

MAXCOUNT and MAXSIZE bound the whole reply, across the streams (COUNT bounds each stream):
streams are served in the order given until MAXCOUNT entries have been served, or until the
reply has reached MAXSIZE bytes, measured before each entry (so the entry that crosses the
limit is the last one, and the first entry is always served). A stream the budget no longer
reaches is left out of the reply, and an entry not served is not delivered (it does not
enter the PEL). The reply's size is counted as the bytes of the stream names and entries
written so far. A re-run after blocking starts with a full budget, as Redis re-executes
the command.

XREADGROUP counts its changes as Redis 7.4+ does (``rdb_changes_since_last_save``): one per
consumer it creates and one per stream from which it delivered or claimed entries; a read
of the consumer's own pending entries (a history id) changes nothing.

Replies: RESP3 maps stream names to their entries, RESP2 lists ``[name, entries]`` pairs;
nothing served is a null array. A stream's new entries, when there are
:data:`~resplite.commands.streams_common.CHUNKED_ENTRIES` or more and no MAXSIZE or CLAIM
applies, are sent in pieces made as they go (:class:`~resplite.protocol.replies.Chunked`,
the whole reply then encoded around them for the client's protocol): XREADGROUP's changes
to the group are all made when it runs (:meth:`Stream.deliver_new`), and the pieces are
the entries as they were then, whatever happens to the stream meanwhile. Smaller reads keep
the encoded fast paths (:meth:`Stream.read_new_resp`,
:func:`~resplite.commands.streams_common.entries_raw`). A read of the consumer's own pending
entries (a history id) without MAXSIZE is written from the nodes too, in pieces from
CHUNKED_ENTRIES on (:meth:`Stream.entries_pieces`), its changes to the delivery counts and
times made when it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from resplite.commands.args import INT64_MAX, parse_int
from resplite.commands.generic import lookup_read
from resplite.commands.streams_common import (
    CHUNKED_ENTRIES,
    consumer_for,
    int_arg,
    propagate_consumer,
    propagate_pending,
    propagate_setid,
    range_reply,
    reply_count,
    require_id,
)
from resplite.engine import errors
from resplite.engine.blocking import BlockRequest
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.encoder import encode, encode_into
from resplite.protocol.replies import NULL_ARRAY, Chunked, Raw
from resplite.store.consumer_group import Consumer, ConsumerGroup
from resplite.store.stream import Stream
from resplite.store.stream_ids import MAX_ID, U64, format_id

if TYPE_CHECKING:
    from resplite.engine.client import Client

_NEW_ONLY = MAX_ID  # ">": what the group has not delivered yet


@dataclass(slots=True)
class ReadArgs:
    count: int = 0
    maxcount: int = 0  # MAXCOUNT; 0 without it
    maxsize: int = 0  # MAXSIZE; 0 without it
    timeout: int = -1  # ms; -1 without BLOCK, 0 for ever
    min_idle: int = -1  # CLAIM; -1 without it
    noack: bool = False
    group: bytes | None = None
    consumer: bytes | None = None
    streams_at: int = 0
    nstreams: int = 0


def _parse(argv: list[bytes], grouped: bool, now: int) -> ReadArgs:
    name = "xreadgroup" if grouped else "xread"
    args = ReadArgs()
    n = len(argv)
    i = 1
    while i < n:
        more = n - i - 1
        opt = argv[i].upper()
        if opt == b"CLAIM" and more:
            if not grouped:
                raise CommandError(errors.xreadgroup_only("CLAIM"))
            i += 1
            value = parse_int(argv[i])
            if value is None:
                raise CommandError(errors.CLAIM_NOT_INTEGER)
            if value < 0:
                raise CommandError(errors.CLAIM_NEGATIVE)
            args.min_idle = value
        elif opt == b"BLOCK" and more:
            i += 1
            timeout = parse_int(argv[i])
            if timeout is None:
                raise CommandError(errors.TIMEOUT_NOT_INTEGER)
            if timeout < 0:
                raise CommandError(errors.TIMEOUT_NEGATIVE)
            if timeout > 0 and timeout > INT64_MAX - now:
                raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
            args.timeout = timeout
        elif opt == b"COUNT" and more:
            i += 1
            args.count = max(int_arg(argv[i]), 0)
        elif opt == b"MAXCOUNT" and more:
            i += 1
            args.maxcount = int_arg(argv[i])
            if args.maxcount <= 0:
                raise CommandError(errors.MAXCOUNT_NOT_POSITIVE)
        elif opt == b"MAXSIZE" and more:
            i += 1
            args.maxsize = int_arg(argv[i])
            if args.maxsize <= 0:
                raise CommandError(errors.MAXSIZE_NOT_POSITIVE)
        elif opt == b"STREAMS" and more:
            args.streams_at = i + 1
            rest = n - args.streams_at
            if rest & 1:
                raise CommandError(errors.unbalanced_streams(name))
            args.nstreams = rest >> 1
            break
        elif opt == b"GROUP" and more >= 2:
            if not grouped:
                raise CommandError(errors.xreadgroup_only("GROUP"))
            args.group = argv[i + 1]
            args.consumer = argv[i + 2]
            i += 2
        elif opt == b"NOACK":
            if not grouped:
                raise CommandError(errors.xreadgroup_only("NOACK"))
            args.noack = True
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    if not args.streams_at:
        raise CommandError(errors.SYNTAX)
    if grouped and args.group is None:
        raise CommandError(errors.XREADGROUP_NO_GROUP)
    if args.maxcount and args.count and args.maxcount < args.count:
        raise CommandError(errors.MAXCOUNT_BELOW_COUNT)
    return args


class Budget:
    """What MAXSIZE still allows: the reply's bytes so far and the entries served (and
    whether some stream's entries are a :class:`Chunked` reply, made as they are sent)."""

    __slots__ = ("chunked", "entries", "limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit  # bytes; 0: no limit
        self.used = 0
        self.entries = 0
        self.chunked = False

    def spent(self) -> bool:
        """Whether no further entry may be served (never before the first one)."""
        return bool(self.limit) and self.entries > 0 and self.used >= self.limit

    def add(self, entry: list[Any]) -> None:
        self.entries += 1
        if self.limit:
            self.used += len(encode(entry, 2))


def _chunked_reply(resp: int, served: list[tuple[bytes, Any]]) -> Chunked:
    """The reply :func:`_map_reply` encodes to, when some stream's entries are a
    :class:`Chunked` reply: the bytes up to its pieces as the head, then its pieces, and
    the other streams' parts between them (encoded now: each is the data as it is now)."""
    head: list[bytes] = [b"%%%d\r\n" % len(served) if resp == 3 else b"*%d\r\n" % len(served)]
    first: Chunked | None = None
    later: list[bytes | Chunked] = []
    for key, entries in served:
        out: list[bytes] = head if first is None else []
        if resp != 3:
            out.append(b"*2\r\n")
        encode_into(out, key, resp)
        if isinstance(entries, Chunked):
            if first is None:
                first = entries
                head.append(entries.head)
                continue
            later.extend(out)
            later.append(entries)
            continue
        encode_into(out, entries, resp)
        if out is not head:
            later.extend(out)
    assert first is not None
    return Chunked(b"".join(head), _chain(first, later))


def _chain(first: Chunked, later: list[bytes | Chunked]) -> Iterator[bytes]:
    yield from first.pieces
    for part in later:
        if isinstance(part, Chunked):
            yield part.head
            yield from part.pieces
        else:
            yield part


def _map_reply(client: Client, served: list[tuple[bytes, Any]]) -> Any:
    if client.resp != 3:
        return [[key, entries] for key, entries in served]
    keys = {key for key, _ in served}
    if len(keys) == len(served):
        return dict(served)
    # The same stream named twice: a RESP3 map with a repeated key, as Redis sends it.
    body = [b"%%%d\r\n" % len(served)]
    for key, entries in served:
        body.append(encode(key, 3))
        body.append(encode(entries, 3))
    return Raw(b"".join(body))


def _claim(
    stream: Stream, group: ConsumerGroup, consumer: Consumer, min_idle: int, count: int, now: int,
    budget: Budget,
) -> list[Any]:
    """CLAIM: hand the most idle pending entries (idle >= ``min_idle``) to ``consumer``,
    the ones released by XNACK first."""
    out: list[Any] = []
    claimed: list[int] = []
    pel = group.pel
    for sid in group.claimable(min_idle, count, now):
        fields = stream.get(sid)
        if fields is None:
            continue  # deleted from the stream: left pending, not served
        if budget.spent():
            break
        nack = pel[sid]
        # The entry as it was pending: the claim below changes its time and count.
        entry = [format_id(sid), fields, now - nack.delivery_time, nack.delivery_count]
        out.append(entry)
        budget.add(entry)
        claimed.append(sid)
    group.redeliver(claimed, consumer, now)
    return out


def _history(
    stream: Stream, group: ConsumerGroup, consumer: Consumer, start: int, count: int, now: int,
    budget: Budget,
    resp: int,
) -> Any:
    """The consumer's own pending entries from ``start``; deleted ones as ``[id, nil]``.
    Without a byte budget they are written straight from the stream's nodes, and from
    :data:`CHUNKED_ENTRIES` on sent in pieces made as they go (the group's changes made
    now, the entries as they are now)."""
    if not budget.limit:
        ids = consumer.pel.irange(minimum=start)
        sids = list(islice(ids, count) if count else ids)
        pieces = stream.entries_pieces(sids, resp)
        group.redeliver_own(pieces.live_ids(), now)
        budget.entries += len(sids)
        head = b"*%d\r\n" % len(sids)
        if len(sids) >= CHUNKED_ENTRIES:
            budget.chunked = True
            return Chunked(head, pieces)
        return Raw(head + b"".join(pieces))
    out: list[Any] = []
    live: list[int] = []
    for sid in consumer.pel.irange(minimum=start):
        if (count and len(out) >= count) or budget.spent():
            break
        fields = stream.get(sid)
        if fields is None:
            entry: list[Any] = [format_id(sid), NULL_ARRAY]
            out.append(entry)
            budget.add(entry)
            continue
        entry = [format_id(sid), fields]
        out.append(entry)
        budget.add(entry)
        live.append(sid)
    group.redeliver_own(live, now)
    return out


def _new_entries(
    stream: Stream,
    start: int,
    count: int,
    group: ConsumerGroup | None,
    consumer: Consumer | None,
    noack: bool,
    claim_shape: bool,
    now: int,
    out: list[Any],
    budget: Budget,
) -> Any:
    """Serve entries after ``start``; returns the reply's entries (``out`` extended or, when
    there is nothing before them and no byte budget, the wire bytes of all of them)."""
    if claim_shape or out or budget.limit:
        for node, i, sid in stream.iter_forward(start):
            if budget.spent():
                break
            if group is not None:
                if sid > group.last_id:
                    stream.advance_group(group, sid)
                if not noack:
                    assert consumer is not None
                    group.deliver(sid, consumer, now)
            entry: list[Any]
            if claim_shape:
                entry = [format_id(sid), node.fields_at(i), 0, 0]
            else:
                entry = [format_id(sid), node.fields_at(i)]
            out.append(entry)
            budget.add(entry)
            if count and len(out) == count:
                break
        return out
    if not 0 < count < CHUNKED_ENTRIES and len(stream) >= CHUNKED_ENTRIES and group is not None:
        # A large read: the group changes now, the entries are sent in pieces made as
        # they go (the entries as they are now, whatever happens to the stream meanwhile).
        total, pieces = stream.range_pieces(start, MAX_ID, count)
        if total >= CHUNKED_ENTRIES:
            stream.deliver_new(start, total, group, None if noack else consumer, now)
            budget.entries += total
            budget.chunked = True
            return Chunked(b"*%d\r\n" % total, pieces)
    parts = [b""]
    n = stream.read_new_resp(start, count, group, None if noack else consumer, now, parts)
    budget.entries += n
    parts[0] = b"*%d\r\n" % n
    return Raw(b"".join(parts))


def _entries(stream: Stream, start: int, count: int, budget: Budget) -> Any:
    """XREAD's entries after ``start``: the encoded fast path, or entry by entry under a
    byte budget."""
    if not budget.limit:
        reply = range_reply(stream, start, MAX_ID, count)
        budget.entries += reply_count(reply)
        if reply.__class__ is Chunked:
            budget.chunked = True
        return reply
    out: list[Any] = []
    for node, i, sid in stream.iter_forward(start):
        if budget.spent():
            break
        entry = [format_id(sid), node.fields_at(i)]
        out.append(entry)
        budget.add(entry)
        if count and len(out) == count:
            break
    return out


def _propagate_read(client: Client, group_name: bytes,
                    named: list[tuple[bytes, ConsumerGroup, Consumer]], now: int) -> None:
    """XREADGROUP is logged, as Redis propagates it, as the state it left in each group it
    read: the consumer, every pending entry delivered now (the PEL's entries delivered at or
    after ``now``; one delivered earlier in the same millisecond is logged again, which
    changes nothing) and the group's position (logged only when the read changed
    something)."""
    mask = (1 << 128) - 1
    for key, group, consumer in named:
        propagate_consumer(client, key, group_name, consumer.name)
        for pair in group.by_time().irange(minimum=now << 128):
            propagate_pending(client, key, group_name, group, pair & mask)
        propagate_setid(client, key, group_name, group)


def _read(client: Client, argv: list[bytes], grouped: bool) -> Any:
    clock = client.server.clock
    now = clock.time_ms()
    args = _parse(argv, grouped, now)
    first = args.streams_at
    nstreams = args.nstreams
    group_name = args.group
    ids: list[int] = []
    groups: list[ConsumerGroup | None] = []
    for idx in range(nstreams):
        key = argv[first + idx]
        arg = argv[first + nstreams + idx]
        # Counted as a read lookup here and again where the key is served: Redis 7.0 looks
        # each key up twice (INFO keyspace_hits / keyspace_misses show it).
        stream = lookup_read(client, key)
        if stream is not None and stream.__class__ is not Stream:
            raise CommandError(errors.WRONGTYPE)
        group = None
        if group_name is not None:
            group = stream.groups.get(group_name) if stream is not None else None
            if group is None:
                raise CommandError(
                    errors.nogroup_key_or_group(key, group_name, " in XREADGROUP with GROUP option")
                )
        groups.append(group)
        if arg == b"$":
            if grouped:
                raise CommandError(errors.XREADGROUP_DOLLAR)
            ids.append(stream.last_id if stream is not None else 0)
        elif arg == b"+":
            if grouped:
                raise CommandError(errors.XREADGROUP_PLUS)
            if stream is not None and stream.length:
                ids.append(stream.last_live_id() - 1)
            else:
                ids.append(0)
        elif arg == b">":
            if not grouped:
                raise CommandError(errors.XREAD_GT_WITHOUT_GROUP)
            ids.append(_NEW_ONLY)
        else:
            ids.append(require_id(arg, 0, strict=True))

    served: list[tuple[bytes, Any]] = []
    min_idle = args.min_idle
    count = args.count
    left = args.maxcount  # MAXCOUNT still to serve (0: no MAXCOUNT)
    budget = Budget(args.maxsize)
    server = client.server
    min_pel_time: int | None = None
    named: list[tuple[bytes, ConsumerGroup, Consumer]] = []  # where the consumer was named
    for idx in range(nstreams):
        if (args.maxcount and not left) or budget.spent():
            break  # the reply is full: the remaining streams are left out
        key = argv[first + idx]
        stream = lookup_read(client, key)
        if stream is None:
            continue
        gt = ids[idx]
        group = groups[idx]
        consumer = None
        serve = history = claimable = False
        if group is not None:
            assert args.consumer is not None
            if min_idle != -1:
                for when, sid in group.by_idle():
                    if not stream.exists(sid):
                        continue
                    if min_pel_time is None or when < min_pel_time:
                        min_pel_time = when
                    claimable = ((now - when) & U64) >= min_idle
                    break
            if gt != _NEW_ONLY:
                serve = history = True
            elif stream.length and stream.last_live_id() > group.last_id:
                serve = True
                gt = group.last_id
            consumer = consumer_for(client, group, key, args.consumer, now)
            client.db.note_change(key)  # the consumer was seen: a change, unsignalled
            named.append((key, group, consumer))
        elif stream.length and stream.last_live_id() > gt:
            serve = True
        claimed_only = False
        if history:
            min_idle = -1  # CLAIM is ignored from here on, as in Redis
        elif not serve and claimable:
            serve = claimed_only = True
        if not serve:
            continue
        start = gt + 1 if gt != MAX_ID else 0
        limit = count
        if args.maxcount and (not limit or left < limit):
            limit = left
        if budget.limit:
            # The stream's name and its pair's header count towards the reply's size.
            budget.used += len(key) + 16
        before = budget.entries
        entries: Any
        if group is None:
            entries = _entries(stream, start, limit, budget)
        else:
            assert consumer is not None
            if history:
                entries = _history(stream, group, consumer, start, limit, now, budget,
                                   client.resp)
            else:
                entries = []
                if min_idle != -1:
                    entries = _claim(stream, group, consumer, min_idle, limit, now, budget)
                if not claimed_only and not (limit and len(entries) == limit):
                    entries = _new_entries(
                        stream, start, limit, group, consumer, args.noack, min_idle != -1,
                        now, entries, budget,
                    )
                if budget.entries > before:
                    server.dirty += 1  # entries delivered or claimed: the group changed
        if args.maxcount:
            left -= budget.entries - before
        served.append((key, entries))

    if group_name is not None:
        # Consumers created and entries delivered changed the groups, which Redis does not
        # signal as a change of the keys: the keyspace re-measures the streams.
        for idx in range(nstreams):
            client.db.recharge(argv[first + idx])
        if server.propagating:
            _propagate_read(client, group_name, named, now)
    if served:
        if budget.chunked:
            return _chunked_reply(client.resp, served)
        return _map_reply(client, served)
    if args.timeout == -1:
        return NULL_ARRAY
    keys = argv[first : first + nstreams]
    retry_argv = argv
    if not grouped and b"$" in argv[first + nstreams :]:
        # "$" means "after what the stream holds now": fix it for the re-runs.
        retry_argv = list(argv)
        for idx in range(nstreams):
            if retry_argv[first + nstreams + idx] == b"$":
                retry_argv[first + nstreams + idx] = format_id(ids[idx])
    recheck = None
    if min_idle != -1:
        expire = min_idle + (min_pel_time if min_pel_time is not None else now)
        recheck = expire + 1  # Redis wakes once the expiry time has passed
    wakes_on: Callable[[bytes], bool] | None
    if grouped:
        # With CLAIM, whether a pending entry is idle enough is the re-run's to judge.
        assert group_name is not None and args.consumer is not None
        wakes_on = None if min_idle != -1 else _group_wakes_on(
            client, keys, group_name, args.consumer)
    else:
        after = [-1 if argv[first + nstreams + idx] == b"+" else ids[idx]
                 for idx in range(nstreams)]
        wakes_on = _read_wakes_on(client, keys, after)
    return BlockRequest(
        keys=keys,
        timeout_ms=args.timeout,
        retry=lambda: _read(client, retry_argv, grouped),
        timeout_reply=NULL_ARRAY,
        wakes_on=wakes_on,
        recheck_ms=recheck,
    )


def _group_wakes_on(client: Client, keys: list[bytes], group_name: bytes,
                    consumer_name: bytes) -> Callable[[bytes], bool]:
    """A blocked XREADGROUP's wake-up test: whether its re-run would do anything but block
    again (serve new entries, or answer NOGROUP or WRONGTYPE). When it would not, the test
    does what that re-run would have done instead (two counted lookups of each stream, as
    :func:`_read` makes them, and the consumer's seen time), so that skipping it is not
    observable. Each blocked reader then costs a few dictionary lookups per change of its
    key rather than a whole command: with many readers on one stream, only the ones served
    are re-run."""

    def wakes_on(_key: bytes) -> bool:
        db = client.db
        data = db.data
        expiring = bool(db.expires)
        consumers: list[Consumer] = []
        for key in keys:
            stream = db.peek(key) if expiring else data.get(key)
            if stream.__class__ is not Stream:
                return True  # gone or replaced: NOGROUP or WRONGTYPE
            group = stream.groups.get(group_name)
            if group is None:
                return True  # NOGROUP
            consumer = group.consumers.get(consumer_name)
            if consumer is None:
                return True  # the consumer is created again
            if stream.last_id > group.last_id and stream.length \
                    and stream.last_live_id() > group.last_id:
                return True  # something new for the group
            consumers.append(consumer)
        db.count_reads(keys, 2, not client.no_touch)
        now = client.server.clock.time_ms()
        for consumer in consumers:
            consumer.seen(now)
        return False

    return wakes_on


def _read_wakes_on(client: Client, keys: list[bytes],
                   after: list[int]) -> Callable[[bytes], bool]:
    """A blocked XREAD's wake-up test: never while the changed key holds no stream (the
    reader stays blocked across DEL and type changes, as in Redis, without a re-run);
    otherwise whether the re-run would serve an entry above ``after`` (-1 for ``+``: any
    entry) or answer WRONGTYPE. A re-run that would block again is replaced by what it
    would have done: two counted lookups of each key."""

    def wakes_on(key: bytes) -> bool:
        db = client.db
        if db.peek(key).__class__ is not Stream:
            return False
        missing = False
        for i, name in enumerate(keys):
            stream = db.peek(name)
            if stream is None:
                missing = True
                continue
            if stream.__class__ is not Stream:
                return True  # WRONGTYPE
            gt = after[i]
            if stream.last_id > gt and stream.length and stream.last_live_id() > gt:
                return True
        touch = not client.no_touch
        if missing:
            for name in keys:
                db.read(name, touch)  # a miss is also the keymiss event
                db.read(name, touch)
        else:
            db.count_reads(keys, 2, touch)
        return False

    return wakes_on


@command("xread")
def xread(client: Client, argv: list[bytes]) -> Any:
    return _read(client, argv, grouped=False)


@command("xreadgroup", counts_changes=True)
def xreadgroup(client: Client, argv: list[bytes]) -> Any:
    return _read(client, argv, grouped=True)
