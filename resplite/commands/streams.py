"""Stream entry commands: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XDELEX, XTRIM, XSETID,
XCFGSET.

Arguments are checked in the order Redis checks them, so a command with several problems
reports the same first one. XADD and XTRIM share one option parser (MAXLEN / MINID with
``=`` or ``~``, LIMIT, Redis 8.2's KEEPREF / DELREF / ACKED and, for XADD, Redis 8.6's
IDMP / IDMPAUTO); XDELEX and XACKDEL share the ``[policy] IDS n id...`` parser. Every
change to a stream signals the key, which wakes WATCHes and blocked readers.

XADD with IDMP or IDMPAUTO consults the stream's idempotency state
(:mod:`resplite.store.stream_idmp`) after expiring what the clock has aged out: a producer's
repeated iid answers the entry it added then and adds nothing (as in Redis it still counts as
a change, logged as received, though WATCH does not see it). XCFGSET sets that
state's duration and size (clearing the remembered iids when either changes); XIDMPRECORD
records an iid for an entry already there, which is how a rewritten append-only file
replays a stream's iids.

The write commands count their changes to the data set as Redis does (``rdb_changes_since_
last_save``): XADD one per entry added or iid found again, XDEL / XDELEX / XTRIM one per
entry removed, XSETID one, XCFGSET and XIDMPRECORD one when they change something.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.commands.streams_common import (
    changes_groups,
    get_stream,
    int_arg,
    interval_id,
    parse_ref_policy,
    range_reply,
    read_stream,
    require_id,
)
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import STREAM
from resplite.engine.registry import command
from resplite.protocol.replies import NULL_ARRAY, OK
from resplite.store.stream import (
    ElementsTooLarge,
    RefPolicy,
    SetIdRefused,
    Stream,
    TrimStrategy,
)
from resplite.store.stream_idmp import DURATION_RANGE, MAXSIZE_RANGE, content_iid
from resplite.store.stream_ids import MAX_ID, MIN_ID, format_id, parse_xadd_id

if TYPE_CHECKING:
    from resplite.engine.client import Client

_DEFAULT_APPROX_LIMIT_CAP = 1_000_000
# XADD's reply text, in pieces: the last millisecond formatted and its "<ms>-" text, and the
# text of small sequence numbers.
_LAST_MS: list[Any] = [-1, b""]
_SMALL_SEQ = [b"%d" % i for i in range(1024)]


@dataclass(slots=True)
class TrimArgs:
    """Parsed XADD / XTRIM options."""

    strategy: TrimStrategy | None = None
    threshold: int = 0
    approx: bool = False
    limit: int = 0
    policy: RefPolicy = RefPolicy.KEEPREF
    nomkstream: bool = False
    id_pos: int = 0
    sid: int = 0
    id_given: bool = False
    seq_given: bool = True
    idmp_pid: bytes | None = None  # IDMP / IDMPAUTO producer id
    idmp_iid: bytes | None = None  # IDMP's idempotent id (None with IDMPAUTO)
    threshold_pos: int = 0  # where the MAXLEN / MINID threshold is
    limit_pos: int = -1  # where LIMIT is (-1: not given)


def parse_add_trim(client: Client, argv: list[bytes], xadd: bool) -> TrimArgs:
    """Parse XADD's options up to its id, or all of XTRIM's options."""
    args = TrimArgs()
    policy: RefPolicy | None = None
    limit_given = False
    n = len(argv)
    i = 2
    while i < n:
        more = n - 1 - i
        opt = argv[i]
        if xadd and opt == b"*":
            break
        upper = opt.upper()
        if upper in (b"MAXLEN", b"MINID") and more:
            if args.strategy is not None:
                raise CommandError(errors.MAXLEN_AND_MINID)
            args.approx = False
            nxt = argv[i + 1]
            if more >= 2 and nxt == b"~":
                args.approx = True
                i += 1
            elif more >= 2 and nxt == b"=":
                i += 1
            args.threshold_pos = i + 1
            if upper == b"MAXLEN":
                maxlen = int_arg(argv[i + 1])
                if maxlen < 0:
                    raise CommandError(errors.MAXLEN_NEGATIVE)
                args.strategy = TrimStrategy.MAXLEN
                args.threshold = maxlen
            else:
                args.threshold = require_id(argv[i + 1], 0, strict=True)
                args.strategy = TrimStrategy.MINID
            i += 1
        elif upper == b"LIMIT" and more:
            args.limit = int_arg(argv[i + 1])
            if args.limit < 0:
                raise CommandError(errors.LIMIT_NEGATIVE)
            limit_given = True
            args.limit_pos = i
            i += 1
        elif policy is None and (found := parse_ref_policy(upper)) is not None:
            policy = found
        elif xadd and upper == b"NOMKSTREAM":
            args.nomkstream = True
        elif xadd and upper == b"IDMPAUTO" and more:
            if args.idmp_pid is not None:
                raise CommandError(errors.IDMP_TWICE)
            i += 1
            if not argv[i]:
                raise CommandError(errors.IDMPAUTO_EMPTY_PID)
            args.idmp_pid = argv[i]
        elif xadd and upper == b"IDMP" and more >= 2:
            if args.idmp_pid is not None:
                raise CommandError(errors.IDMP_TWICE)
            if not argv[i + 1]:
                raise CommandError(errors.IDMP_EMPTY_PID)
            if not argv[i + 2]:
                raise CommandError(errors.IDMP_EMPTY_IID)
            args.idmp_pid, args.idmp_iid = argv[i + 1], argv[i + 2]
            i += 2
        elif xadd:
            parsed = parse_xadd_id(opt)
            if parsed is None:
                raise CommandError(errors.INVALID_STREAM_ID)
            args.sid, args.seq_given = parsed
            args.id_given = True
            break
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    args.id_pos = i
    if args.idmp_pid is not None and args.id_given and not client.server.persistence.loading:
        # (Replayed from the append-only file, XADD IDMP carries the id it generated.)
        raise CommandError(errors.IDMP_EXPLICIT_ID)
    if args.limit and args.strategy is None:
        raise CommandError(errors.LIMIT_WITHOUT_STRATEGY)
    if not xadd and args.strategy is None:
        raise CommandError(errors.XTRIM_WITHOUT_STRATEGY)
    if limit_given:
        if not args.approx:
            raise CommandError(errors.LIMIT_WITHOUT_APPROX)
    elif args.approx:
        # Without LIMIT, an approximate trim does at most 100 nodes' worth of work.
        limit = 100 * client.server.config["stream-node-max-entries"]
        if limit <= 0:
            limit = 10000
        args.limit = min(limit, _DEFAULT_APPROX_LIMIT_CAP)
    else:
        args.limit = 0
    if policy is not None:
        args.policy = policy
    return args


def _trim(stream: Stream, args: TrimArgs) -> int:
    assert args.strategy is not None
    return stream.trim(args.strategy, args.threshold, args.approx, args.limit, args.policy)


def _logged_form(argv: list[bytes], args: TrimArgs | None, stream: Stream,
                 sid: bytes | None) -> list[bytes]:
    """XADD / XTRIM as Redis propagates them: the id XADD generated in place of ``*`` or
    ``<ms>-*`` (``sid``), and an approximate trim made exact (``=`` and the length or first
    id it left, its LIMIT dropped), since where ``~`` stops depends on the node layout, which
    a replay from a rewritten base need not share."""
    out = list(argv)
    if sid is not None:
        out[2 if args is None else args.id_pos] = sid
    if args is not None and args.approx:
        at = args.threshold_pos
        out[at - 1] = b"="
        if args.strategy == TrimStrategy.MAXLEN:
            out[at] = b"%d" % stream.length
        else:
            out[at] = format_id(stream.first_id if stream.length else stream.last_id + 1)
        if args.limit_pos >= 0:
            del out[args.limit_pos:args.limit_pos + 2]
    return out


@command("xadd", counts_changes=True)
def xadd(client: Client, argv: list[bytes]) -> Any:
    n = len(argv)
    if argv[2] == b"*" and n & 1:
        # The common form, XADD key * field value ...: no options to parse.
        key = argv[1]
        db = client.db
        stream = db.get(key)
        if stream is None:
            stream = Stream()
            db.add(key, stream)
        elif stream.__class__ is not Stream:
            raise CommandError(errors.WRONGTYPE)
        server = client.server
        limits = server.config.values
        try:
            new_id = stream.add_auto(server.clock.time_ms(), argv, 3,
                                     limits["stream-node-max-entries"],
                                     limits["stream-node-max-bytes"])
        except ElementsTooLarge:
            raise CommandError(errors.ELEMENTS_TOO_LARGE) from None
        if new_id is None:
            raise CommandError(errors.STREAM_EXHAUSTED)
        db.signal_modified(key)
        if server.notify_flags:
            server.notify(STREAM, b"xadd", key, db.index)
        server.dirty += 1
        # The reply: "<ms>-" changes once a millisecond, so its text is kept.
        ms = new_id >> 64
        seq = new_id & 0xFFFFFFFFFFFFFFFF
        last_ms = _LAST_MS
        if last_ms[0] != ms:
            last_ms[0] = ms
            last_ms[1] = b"%d-" % ms
        reply: bytes = last_ms[1] + (_SMALL_SEQ[seq] if seq < 1024 else b"%d" % seq)
        if server.propagating:
            client.propagate_as([argv[0], key, reply, *argv[3:]])
        return reply
    if argv[2] == b"*":
        args = None
        field_pos = 3
    else:
        args = parse_add_trim(client, argv, xadd=True)
        field_pos = args.id_pos + 1
    pairs = n - field_pos
    if pairs < 2 or pairs & 1:
        raise CommandError(errors.wrong_arity("xadd"))
    if args is not None and args.id_given and args.seq_given and args.sid == MIN_ID:
        raise CommandError(errors.XADD_ID_ZERO)
    key = argv[1]
    db = client.db
    stream = db.get(key)
    if stream is None:
        if args is not None and args.nomkstream:
            return None
        stream = Stream()
        db.add(key, stream)
    elif stream.__class__ is not Stream:
        raise CommandError(errors.WRONGTYPE)
    if stream.last_id == MAX_ID:
        raise CommandError(errors.STREAM_EXHAUSTED)
    server = client.server
    now = server.clock.time_ms()
    pid = args.idmp_pid if args is not None else None
    if pid is not None:
        assert args is not None
        iid = args.idmp_iid if args.idmp_iid is not None else content_iid(argv, field_pos)
        limits = server.config.values
        state = stream.idmp_state(limits["stream-idmp-duration"], limits["stream-idmp-maxsize"])
        state.expire(now)
        earlier = state.lookup(pid, iid)
        if earlier is not None:
            # A producer's retry: nothing is added, yet Redis counts it as a change and
            # logs it as received (its replay is a retry too); WATCH does not see it.
            server.dirty += 1
            return format_id(earlier)
    if args is None or not args.id_given:
        sid = stream.next_auto_id(now)
    elif args.seq_given:
        sid = args.sid
    else:
        sid = stream.next_seq_id(args.sid >> 64)
    if sid is None or sid <= stream.last_id:
        raise CommandError(errors.XADD_ID_TOO_SMALL)
    limits = server.config.values
    try:
        stream.append(sid, argv, field_pos, limits["stream-node-max-entries"],
                      limits["stream-node-max-bytes"])
    except ElementsTooLarge:
        raise CommandError(errors.ELEMENTS_TOO_LARGE) from None
    if pid is not None:
        state.record(pid, iid, sid)
    trimmed = args is not None and args.strategy is not None and _trim(stream, args) > 0
    db.signal_modified(key)
    notify = server.notify
    notify(STREAM, b"xadd", key, db.index)
    if trimmed:
        notify(STREAM, b"xtrim", key, db.index)
    server.dirty += 1
    new = format_id(sid)
    generated = args is None or not args.id_given or not args.seq_given
    if server.propagating and (generated or (args is not None and args.approx)):
        client.propagate_as(_logged_form(argv, args, stream, new if generated else None))
    return new


def _range(client: Client, argv: list[bytes], rev: bool) -> Any:
    start_arg, end_arg = (argv[3], argv[2]) if rev else (argv[2], argv[3])
    start, start_ex = interval_id(start_arg, 0)
    if start_ex:
        if start == MAX_ID:
            raise CommandError(errors.INTERVAL_START)
        start += 1
    end, end_ex = interval_id(end_arg, (1 << 64) - 1)
    if end_ex:
        if end == MIN_ID:
            raise CommandError(errors.INTERVAL_END)
        end -= 1
    count = -1
    j = 4
    n = len(argv)
    while j < n:
        if argv[j].upper() == b"COUNT" and j + 1 < n:
            count = max(int_arg(argv[j + 1]), 0)
            j += 2
        else:
            raise CommandError(errors.SYNTAX)
    stream = read_stream(client, argv[1])
    if stream is None:
        return []
    if count == 0:
        return NULL_ARRAY
    return range_reply(stream, start, end, max(count, 0), rev)


@command("xrange")
def xrange(client: Client, argv: list[bytes]) -> Any:
    return _range(client, argv, rev=False)


@command("xrevrange")
def xrevrange(client: Client, argv: list[bytes]) -> Any:
    return _range(client, argv, rev=True)


@command("xlen")
def xlen(client: Client, argv: list[bytes]) -> Any:
    stream = read_stream(client, argv[1])
    return 0 if stream is None else stream.length


@command("xdel", counts_changes=True)
def xdel(client: Client, argv: list[bytes]) -> Any:
    stream = get_stream(client, argv[1])
    if stream is None:
        return 0
    ids = [require_id(arg, 0, strict=True) for arg in argv[2:]]
    deleted = 0
    for sid in ids:
        if stream.delete(sid):
            deleted += 1
    if deleted:
        client.db.signal_modified(argv[1])
        client.server.notify(STREAM, b"xdel", argv[1], client.db_index)
        client.server.dirty += deleted
    return deleted


def parse_ids_clause(argv: list[bytes], start: int) -> tuple[RefPolicy, int, int]:
    """``[KEEPREF|DELREF|ACKED] IDS numids id...`` of XDELEX / XACKDEL.

    Returns the policy, the position of the first id and the number of ids.
    """
    policy: RefPolicy | None = None
    first = -1
    numids = 0
    n = len(argv)
    j = start
    while j < n:
        upper = argv[j].upper()
        if policy is None and upper in (b"KEEPREF", b"DELREF", b"ACKED"):
            policy = parse_ref_policy(upper)
            j += 1
        elif upper == b"IDS" and j + 1 < n:
            numids_arg = parse_int(argv[j + 1])
            if numids_arg is None or numids_arg < 1:
                raise CommandError(errors.NUMIDS_NOT_POSITIVE)
            if numids_arg > n - j - 2:
                raise CommandError(errors.NUMIDS_MISMATCH)
            numids = numids_arg
            first = j + 2
            j = first + numids
        else:
            raise CommandError(errors.SYNTAX)
    if first < 0:
        raise CommandError(errors.IDS_REQUIRED)
    return policy or RefPolicy.KEEPREF, first, numids


@command("xdelex", counts_changes=True)
def xdelex(client: Client, argv: list[bytes]) -> Any:
    stream = get_stream(client, argv[1])
    policy, first, numids = parse_ids_clause(argv, 2)
    if stream is None:
        return [-1] * numids
    ids = [require_id(arg, 0, strict=True) for arg in argv[first : first + numids]]
    replies: list[int] = []
    deleted = 0
    min_last = stream.min_group_last_id() if policy is RefPolicy.ACKED else 0
    for sid in ids:
        if policy is RefPolicy.ACKED and stream.is_referenced(sid, min_last):
            replies.append(2)
            continue
        if policy is RefPolicy.DELREF:
            stream.drop_references(sid)
        if stream.delete(sid):
            deleted += 1
            replies.append(1)
        else:
            replies.append(-1)
    if deleted:
        client.db.signal_modified(argv[1])
        client.server.notify(STREAM, b"xdel", argv[1], client.db_index)
        client.server.dirty += deleted
    return replies


@command("xtrim", counts_changes=True)
def xtrim(client: Client, argv: list[bytes]) -> Any:
    args = parse_add_trim(client, argv, xadd=False)
    stream = get_stream(client, argv[1])
    if stream is None:
        return 0
    removed = _trim(stream, args)
    if removed:
        if args.approx:
            client.propagate_as(_logged_form(argv, args, stream, None))
        client.db.signal_modified(argv[1])
        client.server.notify(STREAM, b"xtrim", argv[1], client.db_index)
        client.server.dirty += removed
    return removed


_XSETID_REFUSALS = {
    SetIdRefused.MAX_DELETED_ABOVE: errors.XSETID_BELOW_MAX_DELETED_ARG,
    SetIdRefused.BELOW_MAX_DELETED: errors.XSETID_BELOW_MAX_DELETED,
    SetIdRefused.BELOW_TOP: errors.XSETID_BELOW_TOP,
    SetIdRefused.ENTRIES_ADDED_SMALL: errors.XSETID_ENTRIES_ADDED_SMALL,
}


@command("xsetid", counts_changes=True)
def xsetid(client: Client, argv: list[bytes]) -> Any:
    sid = require_id(argv[2], 0, strict=True)
    entries_added = -1
    max_deleted = 0
    n = len(argv)
    i = 3
    while i < n:
        more = n - 1 - i
        upper = argv[i].upper()
        if upper == b"ENTRIESADDED" and more:
            entries_added = int_arg(argv[i + 1])
            if entries_added < 0:
                raise CommandError(errors.ENTRIES_ADDED_NEGATIVE)
            i += 2
        elif upper == b"MAXDELETEDID" and more:
            max_deleted = require_id(argv[i + 1], 0, strict=True)
            if sid < max_deleted:
                raise CommandError(errors.XSETID_BELOW_MAX_DELETED_ARG)
            i += 2
        else:
            raise CommandError(errors.SYNTAX)
    stream = get_stream(client, argv[1])
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    refused = stream.set_last_id(sid, entries_added, max_deleted)
    if refused is not None:
        raise CommandError(_XSETID_REFUSALS[refused])
    client.server.dirty += 1
    # Like Redis, XSETID neither invalidates WATCH nor wakes blocked readers.
    client.server.notify(STREAM, b"xsetid", argv[1], client.db_index)
    return OK


@command("xcfgset", counts_changes=True)
@changes_groups(1)
def xcfgset(client: Client, argv: list[bytes]) -> Any:
    # Redis looks the key up before it reads the options, so a missing key is the first
    # error; only a setting that changes counts as a change (and is logged).
    key = argv[1]
    stream = get_stream(client, key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    duration: int | None = None
    maxsize: int | None = None
    n = len(argv)
    i = 2
    while i < n:
        upper = argv[i].upper()
        if upper == b"IDMP-DURATION" and i + 1 < n:
            if duration is not None:
                raise CommandError(errors.XCFGSET_DURATION_TWICE)
            duration = int_arg(argv[i + 1])
            if not DURATION_RANGE[0] <= duration <= DURATION_RANGE[1]:
                raise CommandError(errors.IDMP_DURATION_RANGE)
        elif upper == b"IDMP-MAXSIZE" and i + 1 < n:
            if maxsize is not None:
                raise CommandError(errors.XCFGSET_MAXSIZE_TWICE)
            maxsize = int_arg(argv[i + 1])
            if not MAXSIZE_RANGE[0] <= maxsize <= MAXSIZE_RANGE[1]:
                raise CommandError(errors.IDMP_MAXSIZE_RANGE)
        else:
            raise CommandError(errors.SYNTAX)
        i += 2
    if duration is None and maxsize is None:
        raise CommandError(errors.XCFGSET_NOTHING)
    limits = client.server.config.values
    state = stream.idmp
    now = (state.duration, state.maxsize) if state is not None else \
        (limits["stream-idmp-duration"], limits["stream-idmp-maxsize"])
    wanted = (now[0] if duration is None else duration, now[1] if maxsize is None else maxsize)
    if wanted != now:
        # A change Redis logs, but does not signal: WATCH and tracking do not see it.
        stream.idmp_state(*now).reset(*wanted)
        client.server.dirty += 1
    return OK


@command("xidmprecord", counts_changes=True)
def xidmprecord(client: Client, argv: list[bytes]) -> Any:
    """XIDMPRECORD key pid iid id: remember that producer ``pid`` added the existing entry
    ``id`` under ``iid``, as XADD IDMP would have. A rewritten append-only file replays a
    stream's iids through it. The same record again is OK and changes nothing; the iid
    recorded for another entry is refused."""
    sid = require_id(argv[4], 0, strict=True)
    pid, iid = argv[2], argv[3]
    if not pid:
        raise CommandError(errors.XIDMPRECORD_EMPTY_PID)
    if not iid:
        raise CommandError(errors.XIDMPRECORD_EMPTY_IID)
    key = argv[1]
    stream = get_stream(client, key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    if not stream.exists(sid):
        raise CommandError(errors.XIDMPRECORD_NO_ENTRY)
    server = client.server
    limits = server.config.values
    state = stream.idmp_state(limits["stream-idmp-duration"], limits["stream-idmp-maxsize"])
    state.expire(server.clock.time_ms())
    known = state.recorded(pid, iid)
    if known is not None:
        if known != sid:
            raise CommandError(errors.XIDMPRECORD_CONFLICT)
        return OK
    state.record(pid, iid, sid)
    client.db.recharge(key)  # (not signalled: WATCH and tracking do not see it, as in Redis)
    server.dirty += 1
    return OK
