"""List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET,
LINSERT, LREM, LTRIM, LPOS, LMOVE, LMOVEM, RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP,
BLMOVE, BLMOVEM, BRPOPLPUSH and BLMPOP.

The value type is :class:`resplite.store.list.List`. Handlers parse their arguments in
Redis's order, so the first error Redis would report is the one reported (LRANGE reads its
indexes before the key, LINDEX after it, and so on), and decide where Redis checks the
encoding: :meth:`~resplite.store.list.List.grow` before elements are added (with the raw
lengths of the arguments, even for an LSET or an LINSERT that ends up adding nothing), and
:meth:`~resplite.store.list.List.shrink` after elements are removed. A list is created by
its first push and deleted by the command that empties it, so the keyspace never holds an
empty list; every change calls ``signal_modified`` and reports Redis's keyspace event
(``lpush``, ``rpop``, ``linsert`` ..., then ``del`` when the list was emptied), LTRIM even
when it removed nothing. LLEN, LRANGE, LINDEX and LPOS look their key up as reads (counted
in ``keyspace_hits`` / ``keyspace_misses``), the others as writes, as in Redis. The writes
count their changes as Redis does (INFO's ``rdb_changes_since_last_save``): one per element
pushed or removed, one for an LSET, LINSERT or move, none for a write that changed nothing.

LMOVE counts a moved element's bytes in the destination's conversion check only when Redis
would hold it as a string: an element that a quicklist stored as an integer comes out of
Redis's pop as an integer object, whose length Redis does not count.

Blocking follows Redis 7.2+. A blocking pop that finds nothing returns a
:class:`~resplite.engine.blocking.BlockRequest` for its keys; the client is re-run, in the
order clients blocked, whenever one of its keys holds a list again (a key deleted or
replaced by another type leaves it waiting), and a re-run that pops answers the client.
BLMOVE's push wakes clients blocked on its destination in the same round, so chains of
BLMOVEs serve each other. Inside MULTI a blocking command answers as if it had timed out
(a null array), except BLMOVE and BRPOPLPUSH, which answer a null bulk there but a null
array on a real timeout or CLIENT UNBLOCK, as Redis does. Timeouts are seconds,
parsed as Redis does (:func:`~resplite.commands.args.timeout_ms`), measured on the server's
clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import INT64_MAX, c_option, parse_int, timeout_ms
from resplite.commands.generic import lookup, lookup_read
from resplite.engine import compat, errors
from resplite.engine.blocking import BlockRequest
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, LIST
from resplite.engine.registry import command
from resplite.protocol.encoder import in_pieces
from resplite.protocol.replies import NULL_ARRAY, OK
from resplite.store.list import List
from resplite.store.listpack_size import stored_as_int

if TYPE_CHECKING:
    from resplite.engine.client import Client

_LONG_MIN_ALLOWED = -INT64_MAX  # Redis's -LONG_MAX bound for LREM counts and LPOS ranks




def _list(client: Client, key: bytes) -> List | None:
    """The list at ``key`` for a command that writes it, None when absent; WRONGTYPE for
    another type."""
    value = lookup(client, key)
    if value is None or type(value) is List:
        return value
    raise CommandError(errors.WRONGTYPE)


def _read_list(client: Client, key: bytes) -> List | None:
    """As :func:`_list`, for a command that only reads (a counted read lookup)."""
    value = lookup_read(client, key)
    if value is None or type(value) is List:
        return value
    raise CommandError(errors.WRONGTYPE)


def _notify(client: Client, event: bytes, key: bytes) -> None:
    server = client.server
    if server.notify_flags:
        server.notify(LIST, event, key, client.db.index)


def _fill(client: Client) -> int:
    return client.server.config.values["list-max-listpack-size"]  # type: ignore[no-any-return]


def _long(arg: bytes) -> int:
    value = parse_int(arg)
    if value is None:
        raise CommandError(errors.NOT_INTEGER)
    return value


def _side(arg: bytes) -> bool:
    """LEFT (True) or RIGHT (False), as LMOVE and LMPOP read them."""
    option = c_option(arg)
    if option == b"left":
        return True
    if option == b"right":
        return False
    raise CommandError(errors.SYNTAX)


def _removed(client: Client, key: bytes, lst: List, event: bytes, count: int) -> None:
    """After ``count`` elements left ``lst`` (Redis's listElementsRemoved): the command's
    event, then the emptied key deleted (and ``del`` reported) or the list shrunk, then the
    signal; ``count`` changes counted."""
    db = client.db
    server = client.server
    server.dirty += count
    if server.notify_flags:
        server.notify(LIST, event, key, db.index)
    if not lst.length:
        db.delete(key)
        if server.notify_flags:
            server.notify(GENERIC, b"del", key, db.index)
    elif lst.quick and len(lst.nodes) == 1:  # the only case shrink() can act on
        lst.shrink(_fill(client))
    db.signal_modified(key)


# -- pushing -------------------------------------------------------------------------------------


def _push(client: Client, argv: list[bytes], head: bool, only_existing: bool) -> int:
    key = argv[1]
    db = client.db
    lst = db.peek(key) if client.no_touch else db.get(key)
    if type(lst) is not List:
        if lst is not None:
            raise CommandError(errors.WRONGTYPE)
        if only_existing:
            return 0
        lst = List()
        db.add(key, lst)
    length = lst.push(argv, 2, head, _fill(client))
    db.signal_modified(key)
    client.server.dirty += len(argv) - 2
    _notify(client, b"lpush" if head else b"rpush", key)
    return length


@command("lpush", counts_changes=True)
def lpush(client: Client, argv: list[bytes]) -> int:
    return _push(client, argv, head=True, only_existing=False)


@command("rpush", counts_changes=True)
def rpush(client: Client, argv: list[bytes]) -> int:
    return _push(client, argv, head=False, only_existing=False)


@command("lpushx", counts_changes=True)
def lpushx(client: Client, argv: list[bytes]) -> int:
    return _push(client, argv, head=True, only_existing=True)


@command("rpushx", counts_changes=True)
def rpushx(client: Client, argv: list[bytes]) -> int:
    return _push(client, argv, head=False, only_existing=True)


@command("linsert", counts_changes=True)
def linsert(client: Client, argv: list[bytes]) -> int:
    where = c_option(argv[2])
    if where == b"after":
        after = True
    elif where == b"before":
        after = False
    else:
        raise CommandError(errors.SYNTAX)
    key = argv[1]
    lst = _list(client, key)
    if lst is None:
        return 0
    value = argv[4]
    # Redis converts before it knows whether the pivot is there.
    lst.grow(_fill(client), len(value), 1)
    if not lst.insert(argv[3], value, after):
        return -1
    client.db.signal_modified(key)
    client.server.dirty += 1
    _notify(client, b"linsert", key)
    return lst.length


@command("lset", counts_changes=True)
def lset(client: Client, argv: list[bytes]) -> Any:
    key = argv[1]
    lst = _list(client, key)
    if lst is None:
        raise CommandError(errors.NO_SUCH_KEY)
    index = _long(argv[2])
    if compat.follows(client.server.config["redis-compat-version"], "lset-int-index"):
        # Redis 7.2 on passes the index on as a C int: the low 32 bits, signed.
        index = ((index + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    value = argv[3]
    fill = _fill(client)
    lst.grow(fill, len(value), 1)
    if not lst.set(index, value):
        raise CommandError(errors.INDEX_OUT_OF_RANGE)
    lst.shrink(fill)
    client.db.signal_modified(key)
    client.server.dirty += 1
    _notify(client, b"lset", key)
    return OK


# -- popping -------------------------------------------------------------------------------------


def _pop(client: Client, argv: list[bytes], head: bool) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.wrong_arity("lpop" if head else "rpop"))
    count = None
    if len(argv) == 3:
        count = parse_int(argv[2])
        if count is None or count < 0:
            raise CommandError(errors.NOT_POSITIVE)
    key = argv[1]
    lst = _list(client, key)
    if lst is None:
        return None if count is None else NULL_ARRAY
    if count == 0:
        return []
    reply: Any
    if count is None:
        reply = lst.pop_head() if head else lst.pop_tail()
    else:
        reply = lst.pop_many(count, head)
    _removed(client, key, lst, b"lpop" if head else b"rpop",
             1 if count is None else len(reply))
    return reply


def _pop_one(client: Client, key: bytes, head: bool) -> Any:
    """LPOP / RPOP without a count, on a client that counts accesses (the hot path)."""
    db = client.db
    lst = db.get(key)
    if type(lst) is not List:
        if lst is None:
            return None
        raise CommandError(errors.WRONGTYPE)
    value = lst.pop_head() if head else lst.pop_tail()
    server = client.server
    if server.notify_flags or not lst.length:
        _removed(client, key, lst, b"lpop" if head else b"rpop", 1)
        return value
    server.dirty += 1
    if lst.quick and len(lst.nodes) == 1:
        lst.shrink(_fill(client))
    db.signal_modified(key)
    return value


@command("lpop", counts_changes=True)
def lpop(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2 and not client.no_touch:
        return _pop_one(client, argv[1], head=True)
    return _pop(client, argv, head=True)


@command("rpop", counts_changes=True)
def rpop(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2 and not client.no_touch:
        return _pop_one(client, argv[1], head=False)
    return _pop(client, argv, head=False)


def _parse_mpop(argv: list[bytes], numkeys_at: int) -> tuple[list[bytes], bool, int]:
    """LMPOP / BLMPOP's ``numkeys key... LEFT|RIGHT [COUNT n]``: (keys, head, count)."""
    numkeys = parse_int(argv[numkeys_at])
    if numkeys is None or numkeys < 1:
        raise CommandError(errors.NUMKEYS_NOT_POSITIVE)
    where_at = numkeys_at + numkeys + 1
    if where_at >= len(argv):
        raise CommandError(errors.SYNTAX)
    head = _side(argv[where_at])
    count = -1
    i = where_at + 1
    while i < len(argv):
        if count == -1 and c_option(argv[i]) == b"count" and i + 1 < len(argv):
            i += 1
            value = parse_int(argv[i])
            if value is None or value < 1:
                raise CommandError(errors.COUNT_NOT_POSITIVE)
            count = value
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    return argv[numkeys_at + 1 : where_at], head, max(count, 1)


def _pop_first_list(client: Client, keys: list[bytes], head: bool, count: int | None) -> Any:
    """Pop from the first of ``keys`` that holds a list: ``[key, element]`` (BLPOP) or, with
    a count, ``[key, [elements]]`` (LMPOP); None when none does. A key of another type met
    on the way is WRONGTYPE."""
    for key in keys:
        lst = _list(client, key)
        if lst is None:
            continue
        pop = b"LPOP" if head else b"RPOP"
        if count is None:
            value: Any = lst.pop_head() if head else lst.pop_tail()
            client.propagate_as([pop, key])  # as Redis logs BLPOP / BRPOP
        else:
            value = lst.pop_many(count, head)
            # As Redis logs LMPOP / BLMPOP: the pop of the key it served, with the count.
            client.propagate_as([pop, key, b"%d" % len(value)])
        _removed(client, key, lst, b"lpop" if head else b"rpop",
                 1 if count is None else len(value))
        return [key, value]
    return None


@command("lmpop", counts_changes=True)
def lmpop(client: Client, argv: list[bytes]) -> Any:
    keys, head, count = _parse_mpop(argv, 1)
    reply = _pop_first_list(client, keys, head, count)
    return NULL_ARRAY if reply is None else reply


# -- moving --------------------------------------------------------------------------------------


def _move(client: Client, source: bytes, target: bytes, from_head: bool, to_head: bool) -> Any:
    """LMOVE: the moved element, or None when ``source`` is absent."""
    src = _list(client, source)
    if src is None:
        return None
    dst = _list(client, target)
    db = client.db
    fill = _fill(client)
    from_quicklist = src.quick
    value = src.pop_head() if from_head else src.pop_tail()
    if dst is None:
        dst = List()
        db.add(target, dst)
    # An element a quicklist held as an integer comes back from Redis's pop as an integer
    # object, which the conversion check does not measure.
    counted = 0 if from_quicklist and stored_as_int(value) else len(value)
    dst.grow(fill, counted, 1)
    if to_head:
        dst.push_head(value)
    else:
        dst.push_tail(value)
    db.signal_modified(target)
    _notify(client, b"lpush" if to_head else b"rpush", target)
    _removed(client, source, src, b"lpop" if from_head else b"rpop", 1)
    return value


@command("lmove", counts_changes=True)
def lmove(client: Client, argv: list[bytes]) -> Any:
    from_head = _side(argv[3])
    to_head = _side(argv[4])
    return _move(client, argv[1], argv[2], from_head, to_head)


@command("rpoplpush", counts_changes=True)
def rpoplpush(client: Client, argv: list[bytes]) -> Any:
    return _move(client, argv[1], argv[2], from_head=False, to_head=True)


def _parse_how_many(argv: list[bytes], at: int) -> tuple[int, bool, bool]:
    """LMOVEM's optional how-many block from ``argv[at]``: (count, exactly, obo). Both the
    selector and the ordering are required once the block starts; without it one element
    moves (as LMOVE)."""
    n = len(argv)
    if n == at:
        return 1, False, True
    if n != at + 3:
        raise CommandError(errors.SYNTAX)
    selector = c_option(argv[at])
    if selector not in (b"count", b"exactly"):
        raise CommandError(errors.SYNTAX)
    value = parse_int(argv[at + 1])
    if value is None or value < 1:
        raise CommandError(errors.COUNT_NOT_POSITIVE)
    ordering = c_option(argv[at + 2])
    if ordering not in (b"obo", b"bulk"):
        raise CommandError(errors.SYNTAX)
    return value, selector == b"exactly", ordering == b"obo"


def _move_many(client: Client, source: bytes, target: bytes, from_head: bool, to_head: bool,
               count: int, exactly: bool, obo: bool) -> Any:
    """LMOVEM: the moved elements as they now sit in ``target`` (left to right); None when
    ``source`` is absent or EXACTLY asks for more than it holds. (Redis's page says an
    absent source answers an empty array under COUNT; the server answers nil, as redis-py's
    tests against it assert.)

    The elements are popped first, nearest first, then pushed: OBO pushes them one at a
    time in the order popped (reversing them at the destination end), BULK as one block in
    the order they had in ``source``. With ``source`` == ``target`` OBO therefore reverses
    the moved run in place and BULK leaves the list as it was."""
    src = _list(client, source)
    if src is None:
        return None
    dst = src if target == source else _list(client, target)
    if exactly and src.length < count:
        return None
    db = client.db
    fill = _fill(client)
    taken = src.pop_many(count, from_head)
    moved = len(taken)
    if obo:
        pushed = taken  # each pushed at the destination end in turn
        placed = taken[::-1] if to_head else taken
    else:
        block = taken if from_head else taken[::-1]  # the source's own order
        pushed = block[::-1] if to_head else block
        placed = block
    if dst is None:
        dst = List()
        db.add(target, dst)
    dst.push(pushed, 0, to_head, fill)
    db.signal_modified(target)
    _notify(client, b"lpush" if to_head else b"rpush", target)
    _removed(client, source, src, b"lpop" if from_head else b"rpop", moved)
    return placed


def _propagate_moved(client: Client, argv: list[bytes], at: int, moved: int) -> None:
    """LMOVEM / BLMOVEM that moved elements are logged as ``LMOVEM source destination
    wherefrom whereto EXACTLY n ordering`` (``at``: the index of the how-many block), so
    that a replay moves the same elements whatever the list holds then (BLMOVEM's timeout
    dropped, as Redis 8.10 rewrites it)."""
    ordering = argv[at + 2] if len(argv) == at + 3 else b"OBO"
    client.propagate_as([b"LMOVEM", *argv[1:5], b"EXACTLY", b"%d" % moved, ordering])


@command("lmovem", counts_changes=True)
def lmovem(client: Client, argv: list[bytes]) -> Any:
    from_head = _side(argv[3])
    to_head = _side(argv[4])
    count, exactly, obo = _parse_how_many(argv, 5)
    reply = _move_many(client, argv[1], argv[2], from_head, to_head, count, exactly, obo)
    if reply is None:
        return NULL_ARRAY
    _propagate_moved(client, argv, 5, len(reply))
    return reply


# -- blocking ------------------------------------------------------------------------------------


def _holds_list(client: Client) -> Any:
    def wakes_on(key: bytes) -> bool:
        return type(client.db.peek(key)) is List

    return wakes_on


def _block_pop(
    client: Client, keys: list[bytes], head: bool, count: int | None, timeout: int
) -> Any:
    reply = _pop_first_list(client, keys, head, count)
    if reply is not None:
        return reply
    request = BlockRequest(keys=keys, timeout_ms=timeout, retry=lambda: None,
                           timeout_reply=NULL_ARRAY, wakes_on=_holds_list(client))

    def retry() -> Any:
        again = _pop_first_list(client, keys, head, count)
        return request if again is None else again

    request.retry = retry
    return request


def _blpop(client: Client, argv: list[bytes], head: bool) -> Any:
    timeout = timeout_ms(argv[-1], client.server.clock.time_ms())
    return _block_pop(client, argv[1:-1], head, None, timeout)


@command("blpop", counts_changes=True)
def blpop(client: Client, argv: list[bytes]) -> Any:
    return _blpop(client, argv, head=True)


@command("brpop", counts_changes=True)
def brpop(client: Client, argv: list[bytes]) -> Any:
    return _blpop(client, argv, head=False)


@command("blmpop", counts_changes=True)
def blmpop(client: Client, argv: list[bytes]) -> Any:
    keys, head, count = _parse_mpop(argv, 2)
    timeout = timeout_ms(argv[1], client.server.clock.time_ms())
    return _block_pop(client, keys, head, count, timeout)


def _block_move(
    client: Client, source: bytes, target: bytes, from_head: bool, to_head: bool, timeout: int,
    form: list[bytes],
) -> Any:
    """BLMOVE / BRPOPLPUSH, logged when they move as ``form`` (LMOVE / RPOPLPUSH)."""
    if _list(client, source) is not None:
        moved = _move(client, source, target, from_head, to_head)
        client.propagate_as(form)
        return moved
    if not client.may_block:
        return None  # a null bulk inside MULTI; a timeout answers a null array
    request = BlockRequest(keys=[source], timeout_ms=timeout, retry=lambda: None,
                           timeout_reply=NULL_ARRAY, wakes_on=_holds_list(client))

    def retry() -> Any:
        if _list(client, source) is None:
            return request
        value = _move(client, source, target, from_head, to_head)
        client.propagate_as(form)
        return value

    request.retry = retry
    return request


@command("blmove", counts_changes=True)
def blmove(client: Client, argv: list[bytes]) -> Any:
    from_head = _side(argv[3])
    to_head = _side(argv[4])
    timeout = timeout_ms(argv[5], client.server.clock.time_ms())
    return _block_move(client, argv[1], argv[2], from_head, to_head, timeout,
                       [b"LMOVE", *argv[1:5]])


@command("brpoplpush", counts_changes=True)
def brpoplpush(client: Client, argv: list[bytes]) -> Any:
    timeout = timeout_ms(argv[3], client.server.clock.time_ms())
    return _block_move(client, argv[1], argv[2], False, True, timeout,
                       [b"RPOPLPUSH", argv[1], argv[2]])


@command("blmovem", counts_changes=True)
def blmovem(client: Client, argv: list[bytes]) -> Any:
    """BLMOVEM: LMOVEM, waiting while ``source`` is absent (COUNT) or shorter than asked
    (EXACTLY). Re-run on every change of ``source`` while it holds a list, since a push to
    an existing list can be what satisfies EXACTLY."""
    from_head = _side(argv[3])
    to_head = _side(argv[4])
    timeout = timeout_ms(argv[5], client.server.clock.time_ms())
    count, exactly, obo = _parse_how_many(argv, 6)
    source, target = argv[1], argv[2]

    def attempt() -> Any:
        src = _list(client, source)
        if src is None or (exactly and src.length < count):
            return None
        moved = _move_many(client, source, target, from_head, to_head, count, exactly, obo)
        if moved is not None:
            _propagate_moved(client, argv, 6, len(moved))
        return moved

    reply = attempt()
    if reply is not None:
        return reply
    request = BlockRequest(keys=[source], timeout_ms=timeout, retry=lambda: None,
                           timeout_reply=NULL_ARRAY, wakes_on=_holds_list(client))

    def retry() -> Any:
        again = attempt()
        return request if again is None else again

    request.retry = retry
    return request


# -- reading -------------------------------------------------------------------------------------


@command("llen")
def llen(client: Client, argv: list[bytes]) -> int:
    lst = _read_list(client, argv[1])
    return 0 if lst is None else lst.length


@command("lindex")
def lindex(client: Client, argv: list[bytes]) -> Any:
    lst = _read_list(client, argv[1])
    if lst is None:
        return None
    return lst.get(_long(argv[2]))


@command("lrange")
def lrange(client: Client, argv: list[bytes]) -> Any:
    start = _long(argv[2])
    stop = _long(argv[3])
    lst = _read_list(client, argv[1])
    return [] if lst is None else in_pieces(lst.range(start, stop), client.resp)


@command("lpos")
def lpos(client: Client, argv: list[bytes]) -> Any:
    rank, count, maxlen = 1, -1, 0  # count -1: no COUNT option
    i, n = 3, len(argv)
    while i < n:
        option = c_option(argv[i])
        more = i + 1 < n
        if option == b"rank" and more:
            i += 1
            rank = _long(argv[i])
            if rank < _LONG_MIN_ALLOWED:
                raise CommandError(errors.LONG_OUT_OF_RANGE)
            if rank == 0:
                raise CommandError(errors.LPOS_RANK_ZERO)
        elif option == b"count" and more:
            i += 1
            value = parse_int(argv[i])
            if value is None or value < 0:
                raise CommandError(errors.LPOS_COUNT_NEGATIVE)
            count = value
        elif option == b"maxlen" and more:
            i += 1
            value = parse_int(argv[i])
            if value is None or value < 0:
                raise CommandError(errors.LPOS_MAXLEN_NEGATIVE)
            maxlen = value
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    lst = _read_list(client, argv[1])
    if lst is None:
        return [] if count != -1 else None
    if count == -1:
        found = lst.positions(argv[2], rank, 1, maxlen)
        return found[0] if found else None
    return lst.positions(argv[2], rank, count, maxlen)


# -- removing ------------------------------------------------------------------------------------


@command("lrem", counts_changes=True)
def lrem(client: Client, argv: list[bytes]) -> int:
    count = _long(argv[2])
    if count < _LONG_MIN_ALLOWED:
        raise CommandError(errors.LONG_OUT_OF_RANGE)
    key = argv[1]
    lst = _list(client, key)
    if lst is None:
        return 0
    removed = lst.remove(argv[3], count)
    if removed:
        _removed(client, key, lst, b"lrem", removed)
    return removed


@command("ltrim", counts_changes=True)
def ltrim(client: Client, argv: list[bytes]) -> Any:
    start = _long(argv[2])
    stop = _long(argv[3])
    key = argv[1]
    lst = _list(client, key)
    if lst is None:
        return OK
    _removed(client, key, lst, b"ltrim", lst.trim(start, stop))
    return OK
