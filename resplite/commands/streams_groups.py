"""Consumer group commands: XGROUP, XACK, XACKDEL, XPENDING, XCLAIM, XAUTOCLAIM, XNACK.

Each follows Redis's order of checks (option syntax, then the key and its type, then the
group), and, as in Redis 7.2+, XCLAIM and XAUTOCLAIM create their consumer even when they
claim nothing and record the attempt as the consumer's ``seen-time``; a successful claim
also sets its ``active-time``. Entries that no longer exist in the stream are dropped from
the PEL when a claim meets them (and XAUTOCLAIM reports them). The claims and the group
moves are one store call each (:meth:`ConsumerGroup.claim`, :meth:`~ConsumerGroup.autoclaim`,
:meth:`~ConsumerGroup.set_position`), which keep the PEL's invariants; the handlers parse,
log and shape replies. PEL walks start at the requested id (O(log p)) and stop after the
work Redis would do: XAUTOCLAIM looks at no more than COUNT x 10 pending entries.

XNACK (Redis 8.8) releases pending entries back to the group: they lose their owner, their
delivery time becomes 0 (so any claim takes them at once, before merely idle ones) and
their delivery count follows the mode (SILENT one less, FAIL unchanged, FATAL the largest
count) unless RETRYCOUNT sets it. XPENDING and XINFO show such an entry with an empty
consumer name; the extended XPENDING form reports its idle time as -1.

Changes are counted as Redis counts them (``rdb_changes_since_last_save``): one per entry
acknowledged, claimed, released or dropped, one per consumer created or deleted, one per
group created, moved or destroyed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.commands.helptext import help_reply
from resplite.commands.streams import parse_ids_clause
from resplite.commands.streams_common import (
    CHUNKED_ENTRIES,
    changes_groups,
    consumer_for,
    get_stream,
    int_arg,
    interval_id,
    propagate_consumer,
    propagate_pending,
    propagate_setid,
    read_stream,
    require_id,
)
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import STREAM
from resplite.engine.registry import command
from resplite.protocol.encoder import bulk_array
from resplite.protocol.replies import NULL_ARRAY, OK, Chunked, Raw
from resplite.store.consumer_group import (
    INVALID_ENTRIES_READ,
    MAX_DELIVERY_COUNT,
    ConsumerGroup,
    PendingEntry,
    bounded_entries_read,
)
from resplite.store.stream import RefPolicy, Stream
from resplite.store.stream_ids import MAX_ID, MIN_ID, U64, format_id, parse_id

if TYPE_CHECKING:
    from resplite.engine.client import Client

_XGROUP_HELP = help_reply("XGROUP", [
    ("CREATE <key> <groupname> <id|$> [option]", [
        "Add the group <groupname> to the stream at <key>, with <id> ($ for the stream's",
        "last entry) as the last entry it has seen. Options:",
        "* MKSTREAM",
        "  make an empty stream at <key> when there is none;",
        "* ENTRIESREAD entries_read",
        "  start the group's count of entries read at this value (used by replication).",
    ]),
    ("CREATECONSUMER <key> <groupname> <consumer>", [
        "Add <consumer> to the group without reading anything.",
    ]),
    ("DELCONSUMER <key> <groupname> <consumer>", [
        "Drop <consumer> and its pending entries from the group.",
    ]),
    ("DESTROY <key> <groupname>", ["Drop the whole group, its consumers and pending entries."]),
    ("SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]", [
        "Move the group's last seen entry to <id>, and optionally its count of entries read.",
    ]),
])
# XPENDING's entries per piece of a Chunked reply (about 64 KB).
_PENDING_PIECE = 1024
# XAUTOCLAIM's COUNT upper bound: Redis keeps COUNT * 16 bytes within a signed long.
_XAUTOCLAIM_MAX_COUNT = ((1 << 63) - 1) // 16


def _now(client: Client) -> int:
    return client.server.clock.time_ms()


def _group_or_nogroup(client: Client, key: bytes, name: bytes) -> tuple[Stream, ConsumerGroup]:
    stream = read_stream(client, key)
    group = stream.groups.get(name) if stream is not None else None
    if stream is None or group is None:
        raise CommandError(errors.nogroup_key_or_group(key, name))
    return stream, group


# -- XGROUP ----------------------------------------------------------------------------------


def _xgroup_prologue(
    client: Client, argv: list[bytes], needs_group: bool
) -> tuple[Stream | None, ConsumerGroup | None, bool, int]:
    """Options, key and group checks shared by every XGROUP subcommand but HELP."""
    sub = argv[1].upper()
    mkstream = False
    entries_read = INVALID_ENTRIES_READ
    i = 5
    n = len(argv)
    while i < n:
        opt = argv[i].upper()
        if sub == b"CREATE" and opt == b"MKSTREAM":
            mkstream = True
            i += 1
        elif sub in (b"CREATE", b"SETID") and opt == b"ENTRIESREAD" and i + 1 < n:
            entries_read = int_arg(argv[i + 1])
            if entries_read < 0 and entries_read != INVALID_ENTRIES_READ:
                raise CommandError(errors.ENTRIESREAD_INVALID)
            i += 2
        else:
            raise CommandError(errors.subcommand_syntax(argv))
    stream = get_stream(client, argv[2])
    group = None
    if not mkstream:
        if stream is None:
            raise CommandError(errors.XGROUP_NO_KEY)
        group = stream.groups.get(argv[3])
        if group is None and needs_group:
            raise CommandError(errors.nogroup_for_key(argv[3], argv[2]))
    elif stream is not None:
        group = stream.groups.get(argv[3])
    return stream, group, mkstream, entries_read


@command("xgroup|create", counts_changes=True)
@changes_groups(2)
def xgroup_create(client: Client, argv: list[bytes]) -> Any:
    stream, _, _, entries_read = _xgroup_prologue(client, argv, needs_group=False)
    if len(argv) > 8:
        raise CommandError(errors.subcommand_syntax(argv))
    if argv[4] == b"$":
        last_id = stream.last_id if stream is not None else 0
    else:
        last_id = require_id(argv[4], 0, strict=True)
    key = argv[2]
    if stream is None:
        stream = Stream()
        client.db.add(key, stream)
        client.db.signal_modified(key)
    entries_read = bounded_entries_read(entries_read, stream.entries_added)
    if stream.create_group(argv[3], last_id, entries_read) is None:
        raise CommandError(errors.BUSYGROUP)
    client.server.notify(STREAM, b"xgroup-create", key, client.db_index)
    client.server.dirty += 1
    return OK


@command("xgroup|setid", counts_changes=True)
def xgroup_setid(client: Client, argv: list[bytes]) -> Any:
    stream, group, _, entries_read = _xgroup_prologue(client, argv, needs_group=True)
    if len(argv) not in (5, 7):
        raise CommandError(errors.subcommand_syntax(argv))
    assert stream is not None and group is not None
    last_id = stream.last_id if argv[4] == b"$" else require_id(argv[4], 0)
    group.set_position(last_id, entries_read, stream.entries_added)
    client.server.notify(STREAM, b"xgroup-setid", argv[2], client.db_index)
    client.server.dirty += 1
    return OK


@command("xgroup|destroy", counts_changes=True)
@changes_groups(2)
def xgroup_destroy(client: Client, argv: list[bytes]) -> Any:
    stream, group, _, _ = _xgroup_prologue(client, argv, needs_group=False)
    if stream is None or group is None:
        return 0
    stream.destroy_group(group)
    client.server.dirty += 1
    client.server.notify(STREAM, b"xgroup-destroy", argv[2], client.db_index)
    # Readers blocked on this group must be re-run, and then answer NOGROUP.
    client.server.blocking.signal(client.db_index, argv[2])
    return 1


@command("xgroup|createconsumer", counts_changes=True)
@changes_groups(2)
def xgroup_createconsumer(client: Client, argv: list[bytes]) -> Any:
    _, group, _, _ = _xgroup_prologue(client, argv, needs_group=True)
    assert group is not None
    if group.create_consumer(argv[4], _now(client)) is None:
        return 0
    client.server.notify(STREAM, b"xgroup-createconsumer", argv[2], client.db_index)
    client.server.dirty += 1
    return 1


@command("xgroup|delconsumer", counts_changes=True)
@changes_groups(2)
def xgroup_delconsumer(client: Client, argv: list[bytes]) -> Any:
    _, group, _, _ = _xgroup_prologue(client, argv, needs_group=True)
    assert group is not None
    consumer = group.consumer(argv[4])
    if consumer is None:
        return 0
    pending = group.delete_consumer(consumer)
    client.server.dirty += 1
    client.server.notify(STREAM, b"xgroup-delconsumer", argv[2], client.db_index)
    return pending


@command("xgroup|help")
def xgroup_help(client: Client, argv: list[bytes]) -> Any:
    return _XGROUP_HELP


# -- XACK / XACKDEL ----------------------------------------------------------------------------


@command("xack", counts_changes=True)
@changes_groups(1)
def xack(client: Client, argv: list[bytes]) -> Any:
    stream = read_stream(client, argv[1])
    group = stream.groups.get(argv[2]) if stream is not None else None
    if group is None:
        return 0
    # Every id is checked before any is acknowledged, as in Redis.
    ids = []
    for arg in argv[3:]:
        sid = parse_id(arg, 0, True)
        if sid is None:
            raise CommandError(errors.INVALID_STREAM_ID)
        ids.append(sid)
    ack = group.ack
    acked = 0
    for sid in ids:
        if ack(sid):
            acked += 1
    client.server.dirty += acked
    return acked


@command("xackdel", counts_changes=True)
@changes_groups(1)
def xackdel(client: Client, argv: list[bytes]) -> Any:
    stream = read_stream(client, argv[1])
    policy, first, numids = parse_ids_clause(argv, 3)
    group = stream.groups.get(argv[2]) if stream is not None else None
    if stream is None or group is None:
        return [-1] * numids
    ids = [require_id(arg, 0, strict=True) for arg in argv[first : first + numids]]
    replies: list[int] = []
    deleted = acked = 0
    min_last = stream.min_group_last_id() if policy is RefPolicy.ACKED else 0
    for sid in ids:
        if not group.ack(sid):
            replies.append(-1)
            continue
        acked += 1
        if policy is RefPolicy.ACKED and stream.is_referenced(sid, min_last):
            replies.append(2)
            continue
        if policy is RefPolicy.DELREF:
            stream.drop_references(sid)
        if stream.delete(sid):
            deleted += 1
        replies.append(1)
    if deleted:
        client.db.signal_modified(argv[1])
        client.server.notify(STREAM, b"xdel", argv[1], client.db_index)
    client.server.dirty += acked
    return replies


# -- XPENDING ----------------------------------------------------------------------------------


@command("xpending")
def xpending(client: Client, argv: list[bytes]) -> Any:
    n = len(argv)
    if n != 3 and not 6 <= n <= 9:
        raise CommandError(errors.SYNTAX)
    min_idle = 0
    count = 0
    start = end = 0
    consumer_name: bytes | None = None
    if n >= 6:
        at = 3
        if argv[3].upper() == b"IDLE":
            min_idle = int_arg(argv[4])
            if n < 8:
                raise CommandError(errors.SYNTAX)
            at += 2
        count = max(int_arg(argv[at + 2]), 0)
        start, start_ex = interval_id(argv[at], 0)
        if start_ex:
            if start == MAX_ID:
                raise CommandError(errors.INTERVAL_START)
            start += 1
        end, end_ex = interval_id(argv[at + 1], (1 << 64) - 1)
        if end_ex:
            if end == MIN_ID:
                raise CommandError(errors.INTERVAL_END)
            end -= 1
        if at + 3 < n:
            consumer_name = argv[at + 3]
    _, group = _group_or_nogroup(client, argv[1], argv[2])
    pel = group.pel
    if n == 3:
        if not pel:
            return [0, None, None, NULL_ARRAY]
        owners = [
            [c.name, b"%d" % len(c.pel)] for c in group.sorted_consumers() if c.pel
        ]
        order = group.pel_ids
        return [len(pel), format_id(order[0]), format_id(order[-1]), owners]
    ids: Any
    if consumer_name is not None:
        consumer = group.consumer(consumer_name)
        if consumer is None:
            return []
        ids = consumer.pel.irange(start, end)
    else:
        ids = group.pel_ids.irange(start, end)
    now = _now(client)
    # What each answered entry shows, copied now (a pending entry's record changes in
    # place): the reply is the PEL as it is when the command runs, however long it takes
    # to send. Four items a row (id, consumer, idle, deliveries) in one flat list: a tuple
    # a row would be a million objects for the cyclic collector to walk.
    rows: list[Any] = []
    append = rows.append
    # The group's ``pel`` dict is in delivery order, which is id order while entries are
    # delivered as they come (XREADGROUP >). Where the range starts at the PEL's head, the
    # records are read off the dict beside the ids rather than looked up one by one, until
    # the first id out of step. (A lookup is the walk's main cost: Python hashes an int
    # modulo 2**61 - 1, so ids a millisecond apart, ms * 2**64 + seq, share hash values.)
    in_step: Iterator[tuple[int, PendingEntry]] | None = None
    if consumer_name is None and pel and start <= group.pel_ids[0]:
        in_step = iter(pel.items())
    for sid in ids:
        if not count:
            break
        if in_step is not None:
            key, nack = next(in_step)
            if key != sid:
                in_step = None
                nack = pel[sid]
        else:
            nack = pel[sid]
        idle = now - nack.delivery_time
        if min_idle and idle < min_idle:
            continue
        owner = nack.consumer
        append(sid)
        if owner is None:
            # Released by XNACK: no owner, delivery time 0, reported idle as -1.
            append(b"")
            append(-1)
        else:
            append(owner.name)
            append(idle if idle > 0 else 0)
        append(nack.delivery_count)
        count -= 1
    entries = len(rows) // 4
    head = b"*%d\r\n" % entries
    if entries < CHUNKED_ENTRIES:
        return Raw(head + _pending_rows(rows, 0, entries))
    return Chunked(head, _pending_pieces(rows, entries))


def _pending_rows(rows: list[Any], start: int, end: int) -> bytes:
    """XPENDING's ``[id, consumer, idle, deliveries]`` arrays of rows ``start`` to ``end``
    of ``rows`` (four items a row), the same bytes in RESP2 and RESP3."""
    out = []
    for at in range(4 * start, 4 * min(end, len(rows) // 4), 4):
        # Typed, so that compiled code formats the numbers itself rather than through
        # bytes.__mod__.
        sid: int = rows[at]
        name: bytes = rows[at + 1]
        idle: int = rows[at + 2]
        deliveries: int = rows[at + 3]
        idb = b"%d-%d" % (sid >> 64, sid & U64)
        out.append(b"*4\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n:%d\r\n:%d\r\n"
                   % (len(idb), idb, len(name), name, idle, deliveries))
    return b"".join(out)


def _pending_pieces(rows: list[Any], entries: int) -> Iterator[bytes]:
    for start in range(0, entries, _PENDING_PIECE):
        yield _pending_rows(rows, start, start + _PENDING_PIECE)


# -- XCLAIM / XAUTOCLAIM -------------------------------------------------------------------------


@command("xclaim", counts_changes=True)
@changes_groups(1)
def xclaim(client: Client, argv: list[bytes]) -> Any:
    stream, group = _group_or_nogroup(client, argv[1], argv[2])
    min_idle = max(int_arg(argv[4], errors.XCLAIM_MIN_IDLE), 0)
    n = len(argv)
    ids: list[int] = []
    j = 5
    while j < n:
        sid = parse_id(argv[j], 0, strict=True)
        if sid is None:
            break
        ids.append(sid)
        j += 1
    now = _now(client)
    force = justid = False
    retrycount = -1
    when = -1
    last_id = 0
    while j < n:
        more = n - 1 - j
        opt = argv[j].upper()
        if opt == b"FORCE":
            force = True
        elif opt == b"JUSTID":
            justid = True
        elif opt == b"IDLE" and more:
            j += 1
            when = now - int_arg(argv[j], errors.XCLAIM_IDLE)
        elif opt == b"TIME" and more:
            j += 1
            when = int_arg(argv[j], errors.XCLAIM_TIME)
        elif opt == b"RETRYCOUNT" and more:
            j += 1
            retrycount = int_arg(argv[j], errors.XCLAIM_RETRYCOUNT)
        elif opt == b"LASTID" and more:
            j += 1
            last_id = require_id(argv[j], 0, strict=True)
        else:
            raise CommandError(errors.xclaim_unknown_option(argv[j]))
        j += 1
    # A LASTID past the group's is a change of its own, unless a claim carries it.
    moved_last = last_id > group.last_id
    consumer = consumer_for(client, group, argv[1], argv[3], now)
    key, group_name = argv[1], argv[2]
    propagate_consumer(client, key, group_name, argv[3])
    changed = group.claim(
        stream, ids, consumer, now, when, min_idle, retrycount, force, justid, last_id)
    out: list[Any] = []
    for sid, fields in changed:
        propagate_pending(client, key, group_name, group, sid)
        if fields is not None:
            out.append(format_id(sid) if justid else [format_id(sid), fields])
    if moved_last and not changed:
        propagate_setid(client, key, group_name, group)
    client.server.dirty += len(changed) or moved_last
    return out


@command("xautoclaim", counts_changes=True)
@changes_groups(1)
def xautoclaim(client: Client, argv: list[bytes]) -> Any:
    min_idle = max(int_arg(argv[4], errors.XAUTOCLAIM_MIN_IDLE), 0)
    start, start_ex = interval_id(argv[5], 0)
    if start_ex:
        if start == MAX_ID:
            raise CommandError(errors.INTERVAL_START)
        start += 1
    count = 100
    justid = False
    n = len(argv)
    j = 6
    while j < n:
        opt = argv[j].upper()
        if opt == b"COUNT" and j + 1 < n:
            value = parse_int(argv[j + 1])
            if value is None or not 1 <= value <= _XAUTOCLAIM_MAX_COUNT:
                raise CommandError(errors.COUNT_MUST_BE_ABOVE_0)
            count = value
            j += 1
        elif opt == b"JUSTID":
            justid = True
        else:
            raise CommandError(errors.SYNTAX)
        j += 1
    stream, group = _group_or_nogroup(client, argv[1], argv[2])
    now = _now(client)
    consumer = consumer_for(client, group, argv[1], argv[3], now)
    propagate_consumer(client, argv[1], argv[2], argv[3])
    claimed, entries, deleted, cursor = group.autoclaim(
        stream, start, count, min_idle, consumer, now, justid)
    key, group_name = argv[1], argv[2]
    out: list[Any] = []
    for i, sid in enumerate(claimed):
        propagate_pending(client, key, group_name, group, sid)
        if justid:
            out.append(b"%d-%d" % (sid >> 64, sid & U64))
        else:
            out.append([format_id(sid), entries[i]])
    for sid in deleted:
        propagate_pending(client, key, group_name, group, sid)
    client.server.dirty += len(claimed) + len(deleted)
    return [format_id(cursor), bulk_array(out) if justid else out,
            [format_id(sid) for sid in deleted]]


# -- XNACK -----------------------------------------------------------------------------------

_XNACK_MODES = {b"SILENT": 0, b"FAIL": 1, b"FATAL": 2}


def _nack_count(mode: int, count: int) -> int:
    if mode == 0:
        return count - 1 if count > 0 else 0  # SILENT: the delivery did not count
    return count if mode == 1 else MAX_DELIVERY_COUNT


@command("xnack", counts_changes=True)
@changes_groups(1)
def xnack(client: Client, argv: list[bytes]) -> Any:
    mode = _XNACK_MODES.get(argv[3].upper())
    if mode is None or argv[4].upper() != b"IDS":
        raise CommandError(errors.SYNTAX)
    n = len(argv)
    numids = parse_int(argv[5])
    if numids is None or numids < 1:
        raise CommandError(errors.NUMIDS_NOT_POSITIVE)
    if numids > n - 6:
        raise CommandError(errors.NUMIDS_MISMATCH)
    first = 6
    j = first + numids
    retrycount = -1
    force = False
    while j < n:
        opt = argv[j].upper()
        if opt == b"RETRYCOUNT" and j + 1 < n:
            j += 1
            retrycount = int_arg(argv[j], errors.XNACK_RETRYCOUNT)
            if retrycount < 0:
                raise CommandError(errors.XNACK_RETRYCOUNT)
        elif opt == b"FORCE":
            force = True
        else:
            raise CommandError(errors.SYNTAX)
        j += 1
    ids = [require_id(arg, 0, strict=True) for arg in argv[first : first + numids]]
    stream, group = _group_or_nogroup(client, argv[1], argv[2])
    pel = group.pel
    released = 0
    for sid in ids:
        nack = pel.get(sid)
        if nack is None:
            if not force or not stream.exists(sid):
                continue
            start = 0 if mode != 2 else MAX_DELIVERY_COUNT
            group.force_release(sid, retrycount if retrycount >= 0 else start)
        else:
            count = retrycount if retrycount >= 0 else _nack_count(mode, nack.delivery_count)
            group.release(sid, nack, count)
        released += 1
    client.server.dirty += released
    return released
