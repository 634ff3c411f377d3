"""Sorted set commands: ZADD, ZINCRBY, ZREM, ZCARD, ZCOUNT, ZLEXCOUNT, ZSCORE, ZMSCORE, ZRANK,
ZREVRANK, the ZRANGE family (ZRANGE, ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE,
ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX), ZREMRANGEBYRANK / BYSCORE / BYLEX, ZPOPMIN,
ZPOPMAX, ZMPOP, ZRANDMEMBER, the algebra (ZUNION, ZINTER, ZDIFF, their STORE forms,
ZINTERCARD), ZSCAN, and the blocking BZPOPMIN, BZPOPMAX and BZMPOP.

The value type is :class:`resplite.store.zset.ZSet`. Handlers follow Redis's ``t_zset.c``
step by step, so that of several problems the one Redis reports first is the one reported:
options, then numbers and ranges, then the key's type, then the work. Scores and ranges are
read and printed by :mod:`resplite.algorithms.scores`.

Encodings. A new sorted set is a listpack unless the command brings more members than
``zset-max-listpack-entries`` or its first member is longer than ``zset-max-listpack-value``
(Redis 7.2+; 7.0 looked at the member only); an existing listpack converts when a command
brings more members than the entry limit (7.2+), or before storing a new member that would
exceed either limit. Results of ZRANGESTORE and the STORE forms of the algebra are stored
as listpacks when they fit both limits. Nothing converts back otherwise.

Replies. A score is a double: a bulk string in RESP2 and ``,`` in RESP3, printed as Redis
7.2+ prints it (:func:`~resplite.algorithms.scores.d2string`: integers as integers,
others as a short digit string that reads back as the same double, ``inf``, ``-inf``).
With WITHSCORES, RESP2 gets one flat array of member, score, member, score ... and RESP3
an array of ``[member, score]`` pairs (ZRANGE and friends, ZUNION / ZINTER / ZDIFF,
ZRANDMEMBER, ZPOPMIN / ZPOPMAX with a count). BZPOPMIN / BZPOPMAX answer ``[key, member,
score]``; ZMPOP / BZMPOP ``[key, [[member, score], ...]]`` in both protocols. ZSCAN answers
scores as strings: a listpack's as it stores them (integers as integers, others as a reply
prints them), a skiplist's with ``%.17g``, as Redis 8.4 still does.

Blocking (BZPOPMIN, BZPOPMAX, BZMPOP) follows Redis 7.2+: with nothing to pop, the handler
returns a :class:`~resplite.engine.blocking.BlockRequest` on its keys, and the command is
run again, whole, when one of them holds a sorted set again (clients in the order they
blocked; with several keys the first non-empty one in argument order serves). A key deleted
or given another type leaves its clients blocked. Inside MULTI the dispatcher turns the
request into its timeout reply, a null array.

Option names are compared as C strings, case-insensitive and ending at the first NUL byte,
as Redis's ``strcasecmp`` sees them. Keys are deleted with their last member; every change
calls ``signal_modified``, and a command that changes nothing signals nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from resplite.algorithms.scores import (
    LEX_MAX,
    LEX_MIN,
    d2string,
    format_17g,
    format_listpack_score,
    parse_lex_bound,
    parse_score,
    parse_score_bound,
)
from resplite.commands.args import INT64_MAX, c_option, int_arg, parse_int, timeout_ms
from resplite.commands.generic import (
    lookup,
    lookup_read,
    note_overwrite,
    parse_scan_cursor,
    parse_scan_options,
    type_before,
    type_name,
)
from resplite.engine import compat, errors
from resplite.engine.blocking import BlockRequest
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, ZSET
from resplite.engine.registry import command
from resplite.protocol.encoder import PIECES_FROM, in_pieces
from resplite.protocol.replies import NULL_ARRAY, Chunked, Double
from resplite.store.glob import compile_matcher
from resplite.store.zset import Entry, LexBound, ZSet, lex_in_max, lex_in_min

if TYPE_CHECKING:
    from resplite.engine.client import Client

# The longest reply of random draws with repetitions we build (see errors.REPLY_TOO_LONG).
MAX_DRAWS = 1 << 25




def _zset(client: Client, key: bytes) -> ZSet | None:
    """The sorted set at ``key`` for a command that writes it, None when absent; WRONGTYPE
    for another type."""
    value = lookup(client, key)
    if value is None or type(value) is ZSet:
        return value
    raise CommandError(errors.WRONGTYPE)


def _read_zset(client: Client, key: bytes) -> ZSet | None:
    """As :func:`_zset`, for a command that only reads (a counted read lookup, as Redis's
    lookupKeyRead)."""
    value = lookup_read(client, key)
    if value is None or type(value) is ZSet:
        return value
    raise CommandError(errors.WRONGTYPE)


def _limits(client: Client) -> tuple[int, int]:
    # The dict itself: Config.__getitem__ is a Python call, twice per write.
    values = client.server.config.values
    return values["zset-max-listpack-entries"], values["zset-max-listpack-value"]


def _new_zset(client: Client, size_hint: int, length_hint: int) -> ZSet:
    """An empty sorted set in the encoding Redis 7.2+ picks for the hints (``zsetTypeCreate``)."""
    max_entries, max_value = _limits(client)
    return ZSet(skiplist=size_hint > max_entries or length_hint > max_value)


def _add_member(zs: ZSet, member: bytes, score: float, max_entries: int, max_value: int) -> None:
    """Store a member that is not there yet, converting first as Redis's ``zsetAdd`` does."""
    if zs.listpack and (len(zs) + 1 > max_entries or len(member) > max_value):
        zs.convert()
    zs.insert(member, score)


def score_reply(score: float) -> Double:
    """A score as a reply carries it: a double printed as Redis 7.2+ prints one."""
    return Double(d2string(score))


def _scored(client: Client, entries: Iterable[Entry]) -> list[Any]:
    """Entries with their scores: flat in RESP2, ``[member, score]`` pairs in RESP3."""
    if client.resp == 3:
        return [[member, Double(d2string(score))] for score, member in entries]
    out: list[Any] = []
    for score, member in entries:
        out.append(member)
        out.append(Double(d2string(score)))
    return out


def _scored_pieces(entries: list[Entry], resp: int) -> Iterator[bytes]:
    """What :func:`_scored` encodes to (without the array's header), a thousand entries a
    piece, the scores printed as the pieces are made."""
    for start in range(0, len(entries), 1024):
        out: list[bytes] = []
        for score, member in entries[start : start + 1024]:
            text = d2string(score)
            if resp == 3:
                out.append(b"*2\r\n$%d\r\n%b\r\n,%b\r\n" % (len(member), member, text))
            else:
                out.append(b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(member), member, len(text),
                                                              text))
        yield b"".join(out)


def _members(entries: Iterable[Entry]) -> list[bytes]:
    return [member for _, member in entries]


def store_entries(client: Client, dst: bytes, entries: list[Entry], event: bytes) -> int:
    """Replace ``dst`` by a sorted set of ``entries`` (in order), or delete it when there are
    none; the reply of the STORE commands, whose keyspace event is ``event``."""
    db = client.db
    if not entries:
        if db.delete(dst):
            db.signal_modified(dst)
            client.server.notify(GENERIC, b"del", dst, db.index)
        return 0
    max_entries, max_value = _limits(client)
    skiplist = len(entries) > max_entries or any(len(m) > max_value for _, m in entries)
    zs = ZSet(skiplist=skiplist)
    for score, member in entries:
        zs.add(member, score)
    before = type_before(client, dst)
    db.set(dst, zs)
    db.signal_modified(dst)
    note_overwrite(client, dst, before, zs)
    client.server.notify(ZSET, event, dst, db.index)
    return len(entries)


# -- ZADD, ZINCRBY, ZREM -------------------------------------------------------------------------

_NX, _XX, _GT, _LT, _INCR, _CH = 1, 2, 4, 8, 16, 32
_ZADD_FLAGS = {b"nx": _NX, b"xx": _XX, b"gt": _GT, b"lt": _LT, b"incr": _INCR, b"ch": _CH}


def _zadd(client: Client, argv: list[bytes], flags: int) -> Any:
    n = len(argv)
    i = 2
    while i < n:
        flag = _ZADD_FLAGS.get(c_option(argv[i]))
        if flag is None:
            break
        flags |= flag
        i += 1
    pairs = n - i
    if pairs % 2 or not pairs:
        raise CommandError(errors.SYNTAX)
    pairs //= 2
    if flags & _NX and flags & _XX:
        raise CommandError(errors.ZADD_XX_AND_NX)
    if (flags & _NX and flags & (_GT | _LT)) or (flags & _GT and flags & _LT):
        raise CommandError(errors.ZADD_GT_LT_NX)
    incr = flags & _INCR
    if incr and pairs > 1:
        raise CommandError(errors.ZADD_INCR_ONE_PAIR)
    scores: list[float] = []
    for j in range(i, n, 2):
        score = parse_score(argv[j])
        if score is None:
            raise CommandError(errors.NOT_FLOAT)
        scores.append(score)

    key = argv[1]
    zs = _zset(client, key)
    if zs is None:
        if flags & _XX:
            return None if incr else 0
        zs = _new_zset(client, pairs, len(argv[i + 1]))
        client.db.add(key, zs)
    max_entries, max_value = _limits(client)
    if pairs > max_entries:
        zs.convert()  # Redis 7.2+: so many members will not fit, whatever their sizes

    added = updated = processed = 0
    result = 0.0
    nx, xx, gt, lt = flags & _NX, flags & _XX, flags & _GT, flags & _LT
    current = zs.scores
    try:
        for k, score in enumerate(scores):
            member = argv[i + 1 + 2 * k]
            old = current.get(member)
            if old is None:
                if xx:
                    continue
                _add_member(zs, member, score, max_entries, max_value)
                added += 1
                processed += 1
                result = score
                continue
            if nx:
                continue
            if incr:
                score += old
                if score != score:
                    raise CommandError(errors.SCORE_NAN)
            if (lt and score >= old) or (gt and score <= old):
                continue
            processed += 1
            result = score
            if score != old:
                zs.update(member, old, score)
                updated += 1
    finally:
        if added or updated:
            db = client.db
            db.signal_modified(key)
            client.server.notify(ZSET, b"zincr" if incr else b"zadd", key, db.index)
    if incr:
        return score_reply(result) if processed else None
    return added + updated if flags & _CH else added


@command("zadd")
def zadd(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 4:
        # The common ZADD key score member: no option can read as a score, so when the
        # score parses, this is one pair without options (anything else, errors included,
        # takes the general path).
        score = parse_score(argv[2])
        if score is not None:
            return _zadd_one(client, argv[1], score, argv[3])
    return _zadd(client, argv, 0)


def _zadd_one(client: Client, key: bytes, score: float, member: bytes) -> int:
    """ZADD of one pair without options: what :func:`_zadd` does for it, in fewer steps."""
    zs = _zset(client, key)
    db = client.db
    if zs is None:
        zs = _new_zset(client, 1, len(member))
        db.add(key, zs)
    old = zs.scores.get(member)
    if zs.listpack:
        max_entries, max_value = _limits(client)
        # More pairs than the limit (one, over a limit of 0), or a member that will not fit.
        if max_entries < 1 or (old is None and (len(zs) + 1 > max_entries
                                                or len(member) > max_value)):
            zs.convert()
    if old is None:
        zs.insert(member, score)
        added = 1
    elif score != old:
        zs.update(member, old, score)
        added = 0
    else:
        return 0
    db.signal_modified(key)
    client.server.notify(ZSET, b"zadd", key, db.index)
    return added


@command("zincrby")
def zincrby(client: Client, argv: list[bytes]) -> Any:
    return _zadd(client, argv, _INCR)


@command("zrem")
def zrem(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    zs = _zset(client, key)
    if zs is None:
        return 0
    deleted = 0
    db = client.db
    for member in argv[2:]:
        if zs.remove(member):
            deleted += 1
            if not zs.scores:
                db.delete(key)
                break
    if deleted:
        notify = client.server.notify
        notify(ZSET, b"zrem", key, db.index)
        if not zs.scores:
            notify(GENERIC, b"del", key, db.index)
        db.signal_modified(key)
    return deleted


# -- single-member reads ------------------------------------------------------------------------


@command("zcard")
def zcard(client: Client, argv: list[bytes]) -> int:
    zs = _read_zset(client, argv[1])
    return 0 if zs is None else len(zs)


@command("zscore")
def zscore(client: Client, argv: list[bytes]) -> Double | None:
    zs = _read_zset(client, argv[1])
    score = None if zs is None else zs.scores.get(argv[2])
    return None if score is None else Double(d2string(score))


@command("zmscore")
def zmscore(client: Client, argv: list[bytes]) -> list[Double | None]:
    zs = _read_zset(client, argv[1])
    if zs is None:
        return [None] * (len(argv) - 2)
    get = zs.scores.get
    return [None if (score := get(member)) is None else Double(d2string(score))
            for member in argv[2:]]


def _zrank(client: Client, argv: list[bytes], reverse: bool) -> Any:
    if len(argv) > 4:
        raise CommandError(errors.wrong_arity("zrevrank" if reverse else "zrank"))
    withscore = False
    if len(argv) == 4:
        if c_option(argv[3]) != b"withscore":  # Redis 7.2
            raise CommandError(errors.SYNTAX)
        withscore = True
    zs = _read_zset(client, argv[1])
    rank = None if zs is None else zs.rank(argv[2], reverse)
    if rank is None:
        return NULL_ARRAY if withscore else None
    if withscore:
        assert zs is not None
        return [rank, score_reply(zs.scores[argv[2]])]
    return rank


@command("zrank")
def zrank(client: Client, argv: list[bytes]) -> Any:
    return _zrank(client, argv, reverse=False)


@command("zrevrank")
def zrevrank(client: Client, argv: list[bytes]) -> Any:
    return _zrank(client, argv, reverse=True)


# -- ranges -------------------------------------------------------------------------------------


def _score_range(client: Client, lo: bytes, hi: bytes) -> tuple[float, bool, float, bool]:
    fast = compat.follows(client.server.config["redis-compat-version"], "fast-float-strtod")
    low = parse_score_bound(lo, fast)
    high = parse_score_bound(hi, fast)
    if low is None or high is None:
        raise CommandError(errors.MIN_MAX_NOT_FLOAT)
    return low[0], low[1], high[0], high[1]


def _lex_bound(arg: bytes) -> LexBound | None:
    parsed = parse_lex_bound(arg)
    if parsed is None:
        return None
    value, exclusive = parsed
    if value is LEX_MIN:
        return (-1, b"", True)
    if value is LEX_MAX:
        return (1, b"", True)
    assert isinstance(value, bytes)
    return (0, value, exclusive)


def _lex_range(lo: bytes, hi: bytes) -> tuple[LexBound, LexBound]:
    low = _lex_bound(lo)
    high = _lex_bound(hi)
    if low is None or high is None:
        raise CommandError(errors.MIN_MAX_NOT_LEX)
    return low, high


def _rank_span(length: int, start: int, end: int) -> tuple[int, int]:
    """Redis's index sanitising: positions [start, stop) for ``start``..``end`` inclusive,
    negatives counting from the end."""
    if start < 0:
        start += length
    if end < 0:
        end += length
    if start < 0:
        start = 0
    if start > end or start >= length:
        return 0, 0
    if end >= length:
        end = length - 1
    return start, end + 1


@command("zcount")
def zcount(client: Client, argv: list[bytes]) -> int:
    lo, lo_ex, hi, hi_ex = _score_range(client, argv[2], argv[3])
    zs = _read_zset(client, argv[1])
    if zs is None:
        return 0
    start, stop = zs.score_span(lo, lo_ex, hi, hi_ex)
    return stop - start


@command("zlexcount")
def zlexcount(client: Client, argv: list[bytes]) -> int:
    lo, hi = _lex_range(argv[2], argv[3])
    zs = _read_zset(client, argv[1])
    if zs is None:
        return 0
    start, stop = zs.lex_span(lo, hi)
    return stop - start


_RANK, _SCORE, _LEX = 1, 2, 3


def _score_entries(zs: ZSet, bounds: tuple[float, bool, float, bool], offset: int, limit: int,
                   reverse: bool) -> list[Entry]:
    # A negative offset: Redis walks off the end while skipping it, so nothing.
    lo, lo_ex, hi, hi_ex = bounds
    return zs.score_range(lo, lo_ex, hi, hi_ex, offset, limit, reverse)


def _lex_entries(zs: ZSet, lo: LexBound, hi: LexBound, offset: int, limit: int,
                 reverse: bool) -> list[Entry]:
    if offset < 0 or not limit:
        return []
    first = zs.lex_first(lo, hi, reverse)
    if first is None:
        return []
    out: list[Entry] = []
    if reverse:
        position = first - offset
        inside: Callable[[bytes], bool] = lambda m: lex_in_min(m, lo)  # noqa: E731
    else:
        position = first + offset
        inside = lambda m: lex_in_max(m, hi)  # noqa: E731
    if not 0 <= position < len(zs):
        return []
    for entry in zs.iter_from(position, reverse):
        if not inside(entry[1]):
            break
        out.append(entry)
        if len(out) == limit:
            break
    return out


def _zrange(client: Client, argv: list[bytes], at: int, store: bool, kind: int,
            reverse: bool | None) -> Any:
    """ZRANGE and every form of it; ``at`` is the index of the source key in ``argv``;
    ``kind`` and ``reverse`` are None / 0 when the options decide them."""
    withscores = False
    offset, limit = 0, -1
    n = len(argv)
    j = at + 3
    while j < n:
        option = c_option(argv[j])
        if not store and option == b"withscores":
            withscores = True
        elif option == b"limit" and n - j - 1 >= 2:
            offset = int_arg(argv[j + 1])
            limit = int_arg(argv[j + 2])
            j += 2
        elif reverse is None and option == b"rev":
            reverse = True
        elif not kind and option == b"bylex":
            kind = _LEX
        elif not kind and option == b"byscore":
            kind = _SCORE
        else:
            raise CommandError(errors.SYNTAX)
        j += 1
    reverse = bool(reverse)
    kind = kind or _RANK
    if limit != -1 and kind == _RANK:
        raise CommandError(errors.ZRANGE_LIMIT_NEEDS_BY)
    if withscores and kind == _LEX:
        raise CommandError(errors.ZRANGE_WITHSCORES_BYLEX)
    lo_arg, hi_arg = argv[at + 1], argv[at + 2]
    if reverse and kind != _RANK:
        lo_arg, hi_arg = hi_arg, lo_arg  # given as max, min
    if kind == _RANK:
        first, last = int_arg(lo_arg), int_arg(hi_arg)
    elif kind == _SCORE:
        bounds = _score_range(client, lo_arg, hi_arg)
    else:
        lex_lo, lex_hi = _lex_range(lo_arg, hi_arg)

    value = lookup_read(client, argv[at])
    if value is None:
        return store_entries(client, argv[1], [], b"zrangestore") if store else []
    if type(value) is not ZSet:
        raise CommandError(errors.WRONGTYPE)
    zs: ZSet = value
    if kind == _RANK:
        start, stop = _rank_span(len(zs), first, last)
        entries = zs.entries(start, stop, reverse) if start < stop else []
    elif kind == _SCORE and not store and not withscores:
        if offset < 0:
            return []
        lo, lo_ex, hi, hi_ex = bounds
        return in_pieces(zs.score_range_members(lo, lo_ex, hi, hi_ex, offset, limit, reverse),
                         client.resp)
    elif kind == _SCORE:
        entries = _score_entries(zs, bounds, offset, limit, reverse)
    else:
        entries = _lex_entries(zs, lex_lo, lex_hi, offset, limit, reverse)
    if store:
        return store_entries(client, argv[1], entries, b"zrangestore")
    if len(entries) >= PIECES_FROM:
        resp = client.resp
        if not withscores:
            return in_pieces(_members(entries), resp)
        n = len(entries)
        return Chunked(b"*%d\r\n" % (n if resp == 3 else 2 * n), _scored_pieces(entries, resp))
    return _scored(client, entries) if withscores else _members(entries)


@command("zrange")
def zrange(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 1, False, 0, None)


@command("zrangestore")
def zrangestore(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 2, True, 0, None)


@command("zrevrange")
def zrevrange(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 1, False, _RANK, True)


@command("zrangebyscore")
def zrangebyscore(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 1, False, _SCORE, False)


@command("zrevrangebyscore")
def zrevrangebyscore(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 1, False, _SCORE, True)


@command("zrangebylex")
def zrangebylex(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 1, False, _LEX, False)


@command("zrevrangebylex")
def zrevrangebylex(client: Client, argv: list[bytes]) -> Any:
    return _zrange(client, argv, 1, False, _LEX, True)


# -- ZREMRANGEBY* -------------------------------------------------------------------------------


def _remove_span(client: Client, key: bytes, zs: ZSet, start: int, stop: int,
                 event: bytes) -> int:
    deleted = zs.delete_positions(start, stop) if start < stop else 0
    if deleted:
        db = client.db
        db.signal_modified(key)
        notify = client.server.notify
        notify(ZSET, event, key, db.index)
        if not zs.scores:
            db.delete(key)
            notify(GENERIC, b"del", key, db.index)
    return deleted


@command("zremrangebyrank")
def zremrangebyrank(client: Client, argv: list[bytes]) -> int:
    first, last = int_arg(argv[2]), int_arg(argv[3])
    zs = _zset(client, argv[1])
    if zs is None:
        return 0
    start, stop = _rank_span(len(zs), first, last)
    return _remove_span(client, argv[1], zs, start, stop, b"zremrangebyrank")


@command("zremrangebyscore")
def zremrangebyscore(client: Client, argv: list[bytes]) -> int:
    bounds = _score_range(client, argv[2], argv[3])
    zs = _zset(client, argv[1])
    if zs is None:
        return 0
    start, stop = zs.score_span(*bounds)
    return _remove_span(client, argv[1], zs, start, stop, b"zremrangebyscore")


@command("zremrangebylex")
def zremrangebylex(client: Client, argv: list[bytes]) -> int:
    lo, hi = _lex_range(argv[2], argv[3])
    zs = _zset(client, argv[1])
    if zs is None:
        return 0
    start, stop = zs.lex_span(lo, hi)
    return _remove_span(client, argv[1], zs, start, stop, b"zremrangebylex")


# -- popping ------------------------------------------------------------------------------------


def _first_zset(client: Client, keys: list[bytes]) -> tuple[bytes, ZSet] | None:
    """The first of ``keys`` that holds a sorted set; WRONGTYPE at the first one of another
    type met before it."""
    for key in keys:
        zs = _zset(client, key)
        if zs is not None:
            return key, zs
    return None


def _pop(client: Client, key: bytes, zs: ZSet, count: int, highest: bool) -> list[Entry]:
    popped = zs.pop(count, highest)
    db = client.db
    server = client.server
    server.dirty += len(popped)
    notify = server.notify
    notify(ZSET, b"zpopmax" if highest else b"zpopmin", key, db.index)
    if not zs.scores:
        db.delete(key)
        notify(GENERIC, b"del", key, db.index)
    db.signal_modified(key)
    return popped


def _zpop(client: Client, argv: list[bytes], highest: bool) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.SYNTAX)
    count = -1
    if len(argv) == 3:
        parsed = parse_int(argv[2])
        if parsed is None or parsed < 0:
            raise CommandError(errors.NOT_POSITIVE)
        count = parsed
    key = argv[1]
    zs = _zset(client, key)
    if zs is None or count == 0:
        return []
    popped = _pop(client, key, zs, 1 if count == -1 else count, highest)
    if client.resp == 3 and count != -1:
        return [[member, score_reply(score)] for score, member in popped]
    return [x for score, member in popped for x in (member, score_reply(score))]


@command("zpopmin", counts_changes=True)
def zpopmin(client: Client, argv: list[bytes]) -> Any:
    return _zpop(client, argv, highest=False)


@command("zpopmax", counts_changes=True)
def zpopmax(client: Client, argv: list[bytes]) -> Any:
    return _zpop(client, argv, highest=True)


def _is_zset_now(client: Client) -> Callable[[bytes], bool]:
    """A blocked pop's wake-up test: the key holds a sorted set (Redis 7.2+ serves a client
    only when the ready key has the type it waits for)."""

    def wakes_on(key: bytes) -> bool:
        return type(client.db.peek(key)) is ZSet

    return wakes_on


def _bzpop_serve(client: Client, keys: list[bytes], highest: bool) -> Any:
    found = _first_zset(client, keys)
    if found is None:
        return None
    key, zs = found
    (score, member), = _pop(client, key, zs, 1, highest)
    # As Redis logs BZPOPMIN / BZPOPMAX: the pop of the key it served.
    client.propagate_as([b"ZPOPMAX" if highest else b"ZPOPMIN", key])
    return [key, member, score_reply(score)]


def _bzpop(client: Client, argv: list[bytes], highest: bool) -> Any:
    timeout = timeout_ms(argv[-1], client.server.clock.time_ms())
    keys = argv[1:-1]
    reply = _bzpop_serve(client, keys, highest)
    if reply is not None:
        return reply

    def retry() -> Any:
        again = _bzpop_serve(client, keys, highest)
        return request if again is None else again

    request = BlockRequest(keys=keys, timeout_ms=timeout, retry=retry,
                           timeout_reply=NULL_ARRAY, wakes_on=_is_zset_now(client))
    return request


@command("bzpopmin", counts_changes=True)
def bzpopmin(client: Client, argv: list[bytes]) -> Any:
    return _bzpop(client, argv, highest=False)


@command("bzpopmax", counts_changes=True)
def bzpopmax(client: Client, argv: list[bytes]) -> Any:
    return _bzpop(client, argv, highest=True)


def _mpop_args(argv: list[bytes], at: int) -> tuple[list[bytes], bool, int]:
    """ZMPOP's arguments from ``numkeys`` at index ``at``: (keys, highest, count)."""
    numkeys = parse_int(argv[at])
    if numkeys is None or numkeys < 1:
        raise CommandError(errors.NUMKEYS_NOT_POSITIVE)
    where = at + numkeys + 1
    n = len(argv)
    if where >= n:
        raise CommandError(errors.SYNTAX)
    side = c_option(argv[where])
    if side not in (b"min", b"max"):
        raise CommandError(errors.SYNTAX)
    count = -1
    j = where + 1
    while j < n:
        if count == -1 and c_option(argv[j]) == b"count" and j < n - 1:
            j += 1
            count = parse_int(argv[j]) or 0
            if count < 1:
                raise CommandError(errors.COUNT_NOT_POSITIVE)
        else:
            raise CommandError(errors.SYNTAX)
        j += 1
    return argv[at + 1 : where], side == b"max", max(count, 1)


def _mpop_serve(client: Client, keys: list[bytes], highest: bool, count: int) -> Any:
    found = _first_zset(client, keys)
    if found is None:
        return None
    key, zs = found
    popped = _pop(client, key, zs, count, highest)
    # As Redis logs ZMPOP / BZMPOP: the pop of the key it served, with the count.
    client.propagate_as([b"ZPOPMAX" if highest else b"ZPOPMIN", key, b"%d" % len(popped)])
    return [key, [[member, score_reply(score)] for score, member in popped]]


@command("zmpop", counts_changes=True)
def zmpop(client: Client, argv: list[bytes]) -> Any:
    keys, highest, count = _mpop_args(argv, 1)
    reply = _mpop_serve(client, keys, highest, count)
    return NULL_ARRAY if reply is None else reply


@command("bzmpop", counts_changes=True)
def bzmpop(client: Client, argv: list[bytes]) -> Any:
    keys, highest, count = _mpop_args(argv, 2)
    timeout = timeout_ms(argv[1], client.server.clock.time_ms())
    reply = _mpop_serve(client, keys, highest, count)
    if reply is not None:
        return reply

    def retry() -> Any:
        again = _mpop_serve(client, keys, highest, count)
        return request if again is None else again

    request = BlockRequest(keys=keys, timeout_ms=timeout, retry=retry,
                           timeout_reply=NULL_ARRAY, wakes_on=_is_zset_now(client))
    return request


# -- ZRANDMEMBER --------------------------------------------------------------------------------


@command("zrandmember")
def zrandmember(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2:
        zs = _read_zset(client, argv[1])
        return None if zs is None else zs.random_entry()[1]
    wanted = int_arg(argv[2])
    if wanted < -INT64_MAX:
        raise CommandError(errors.LONG_OUT_OF_RANGE)
    if len(argv) > 4 or (len(argv) == 4 and c_option(argv[3]) != b"withscores"):
        raise CommandError(errors.SYNTAX)
    withscores = len(argv) == 4
    # Redis bounds the count so that twice it (members and scores) still fits a long.
    if withscores and not -(INT64_MAX // 2) <= wanted <= INT64_MAX // 2:
        raise CommandError(errors.VALUE_OUT_OF_RANGE)
    zs = _read_zset(client, argv[1])
    if zs is None or wanted == 0:
        return []
    count = abs(wanted)
    if wanted < 0 or count == 1:
        if count > MAX_DRAWS:
            raise CommandError(errors.REPLY_TOO_LONG)
        entries = zs.random_entries(count)
    elif count >= len(zs):
        entries = zs.entries(0, len(zs), reverse=True)  # Redis walks its inputs from the top
    else:
        entries = zs.distinct_entries(count)
    return _scored(client, entries) if withscores else _members(entries)


# -- algebra: ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD ------------------------------


class _Source:
    """One input of the algebra: a sorted set, or a set whose members all score 1."""

    __slots__ = ("get", "items", "length", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.items: Callable[[], Iterator[tuple[bytes, float]]]
        self.get: Callable[[bytes], float | None]
        if value is None:
            self.length = 0
            self.items = lambda: iter(())
            self.get = lambda member: None
        elif type(value) is ZSet:
            scores = value.scores
            self.length = len(scores)
            self.items = lambda: iter(scores.items())
            self.get = scores.get
        else:  # a set: its members score 1
            self.length = len(value)
            self.items = lambda: ((member, 1.0) for member in value)
            self.get = lambda member: 1.0 if member in value else None


_SUM, _MIN, _MAX, _COUNT = 1, 2, 3, 4
# COUNT (Redis 8.8): each input holding a member adds its weight (1 without WEIGHTS); the
# members' own scores are ignored.
_AGGREGATES = {b"sum": _SUM, b"min": _MIN, b"max": _MAX, b"count": _COUNT}
_UNION, _INTER, _DIFF = 1, 2, 3
_STORE_EVENTS = {_UNION: b"zunionstore", _INTER: b"zinterstore", _DIFF: b"zdiffstore"}


def _aggregate(target: float, value: float, how: int) -> float:
    if how == _SUM:
        total = target + value
        return 0.0 if total != total else total  # inf + -inf: Redis keeps 0
    if how == _MIN:
        return value if value < target else target
    return value if value > target else target


def _algebra(client: Client, argv: list[bytes], at: int, op: int, store: bool,
             card_only: bool = False) -> Any:
    """ZUNION / ZINTER / ZDIFF (``at``: index of numkeys), their STORE forms and ZINTERCARD."""
    fullname = argv[0].decode("latin-1").lower()
    numkeys = int_arg(argv[at])
    if numkeys < 1:
        raise CommandError(errors.at_least_one_key(fullname))
    n = len(argv)
    if numkeys > n - (at + 1):
        raise CommandError(errors.SYNTAX)
    sources: list[_Source] = []
    for key in argv[at + 1 : at + 1 + numkeys]:
        value = lookup_read(client, key)
        if value is not None and type(value) is not ZSet and type_name(value) != "set":
            raise CommandError(errors.WRONGTYPE)
        sources.append(_Source(value))
    weights = [1.0] * numkeys
    how = _SUM
    withscores = False
    limit = 0
    j = at + 1 + numkeys
    while j < n:
        remaining = n - j
        option = c_option(argv[j])
        if op != _DIFF and not card_only and remaining >= numkeys + 1 and option == b"weights":
            for k in range(numkeys):
                weight = parse_score(argv[j + 1 + k])
                if weight is None:
                    raise CommandError(errors.WEIGHT_NOT_FLOAT)
                weights[k] = weight
            j += numkeys + 1
        elif op != _DIFF and not card_only and remaining >= 2 and option == b"aggregate":
            found = _AGGREGATES.get(c_option(argv[j + 1]))
            if found is None:
                raise CommandError(errors.SYNTAX)
            how = found
            j += 2
        elif not store and not card_only and option == b"withscores":
            withscores = True
            j += 1
        elif card_only and remaining >= 2 and option == b"limit":
            parsed = parse_int(argv[j + 1])
            if parsed is None or parsed < 0:
                raise CommandError(errors.LIMIT_CANT_BE_NEGATIVE)
            limit = parsed
            j += 2
        else:
            raise CommandError(errors.SYNTAX)

    counting = how == _COUNT
    if counting:
        how = _SUM
    weighted = list(zip(sources, weights, strict=True))
    if op != _DIFF:
        weighted.sort(key=lambda sw: sw[0].length)  # stable, like glibc's merge sort
    result: dict[bytes, float] = {}
    if op == _INTER:
        first, w0 = weighted[0]
        rest = weighted[1:]
        cardinality = 0
        if first.length:
            for member, score in first.items():
                total = w0 if counting else w0 * score
                if total != total:
                    total = 0.0
                for src, weight in rest:
                    found_score = src.get(member)
                    if found_score is None:
                        break
                    total = _aggregate(total, weight if counting else found_score * weight,
                                       how)
                else:
                    if card_only:
                        cardinality += 1
                        if limit and cardinality >= limit:
                            break
                    else:
                        result[member] = total
        if card_only:
            return cardinality
    elif op == _UNION:
        for src, weight in weighted:
            if not src.length:
                continue
            for member, score in src.items():
                value = weight if counting else weight * score
                if value != value:
                    value = 0.0
                existing = result.get(member)
                result[member] = value if existing is None else _aggregate(existing, value, how)
    else:
        first = sources[0]
        others = sources[1:]
        if first.length and not any(src.value is first.value for src in others):
            for member, score in first.items():
                if not any(src.get(member) is not None for src in others):
                    result[member] = score
    entries = sorted((score, member) for member, score in result.items())
    if store:
        return store_entries(client, argv[1], entries, _STORE_EVENTS[op])
    return _scored(client, entries) if withscores else _members(entries)


@command("zunion")
def zunion(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 1, _UNION, store=False)


@command("zinter")
def zinter(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 1, _INTER, store=False)


@command("zdiff")
def zdiff(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 1, _DIFF, store=False)


@command("zunionstore")
def zunionstore(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 2, _UNION, store=True)


@command("zinterstore")
def zinterstore(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 2, _INTER, store=True)


@command("zdiffstore")
def zdiffstore(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 2, _DIFF, store=True)


@command("zintercard")
def zintercard(client: Client, argv: list[bytes]) -> Any:
    return _algebra(client, argv, 1, _INTER, store=False, card_only=True)


# -- ZSCAN --------------------------------------------------------------------------------------


@command("zscan")
def zscan(client: Client, argv: list[bytes]) -> list[Any]:
    cursor = parse_scan_cursor(argv[2], client)
    zs = _read_zset(client, argv[1])
    if zs is None:
        return [b"0", []]  # Redis answers before it looks at the options
    count, pattern, _ = parse_scan_options(argv, 3)
    listpack = zs.listpack
    next_cursor, members = zs.scan(cursor, count)
    if pattern is not None:
        match = compile_matcher(pattern)
        members = [m for m in members if match(m)]
    # A listpack holds its scores as text (integers as integers, others as a reply prints
    # them); Redis 8.4 still prints a skiplist's doubles with 17 significant digits.
    fmt = format_listpack_score if listpack else format_17g
    scores = zs.scores
    items = [x for m in members for x in (m, fmt(scores[m]))]
    return [b"%d" % next_cursor, items]

