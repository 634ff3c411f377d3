"""What the stream command modules share: key lookup, id arguments, entry replies.

The stream commands are split by theme: :mod:`resplite.commands.streams` (entries: XADD,
XRANGE, XREVRANGE, XLEN, XDEL, XDELEX, XTRIM, XSETID), :mod:`.streams_read` (XREAD,
XREADGROUP, blocking), :mod:`.streams_groups` (XGROUP, XACK, XACKDEL, XPENDING, XCLAIM,
XAUTOCLAIM) and :mod:`.streams_info` (XINFO). The store (:mod:`resplite.store.stream`)
does the work; these modules parse arguments in Redis's order, so the first error Redis
would report is the one reported, and shape replies as Redis does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from resplite.commands.args import int_arg as int_arg  # re-exported for the stream commands
from resplite.commands.generic import lookup_read
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import STREAM
from resplite.protocol.replies import Chunked, Raw
from resplite.store.stream import RefPolicy, Stream
from resplite.store.stream_ids import format_id, parse_id, parse_interval_id

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.store.consumer_group import Consumer, ConsumerGroup

H = TypeVar("H", bound=Callable[..., Any])

__all__ = [
    "changes_groups",
    "entries_raw",
    "get_stream",
    "int_arg",
    "interval_id",
    "parse_ref_policy",
    "range_reply",
    "read_stream",
    "reply_count",
    "require_id",
]

def changes_groups(position: int) -> Callable[[H], H]:
    """For a handler that changes the consumer groups of the stream at ``argv[position]``
    (XGROUP, XACK, XCLAIM, ...), which Redis does not signal as a change of the key: the
    keyspace re-measures the stream once it ran, whatever it answered, so pending entries
    and consumers count towards used_memory; one that changed something (``dirty``) is a
    modification for an ``*-lrm`` policy's clock."""

    def wrap(handler: H) -> H:
        @functools.wraps(handler)
        def run(client: Client, argv: list[bytes]) -> Any:
            dirty = client.server.dirty
            try:
                return handler(client, argv)
            finally:
                if len(argv) > position:
                    db = client.db
                    db.recharge(argv[position])
                    if client.server.dirty != dirty:
                        db.note_change(argv[position])

        return run  # type: ignore[return-value]

    return wrap


_POLICIES = {b"KEEPREF": RefPolicy.KEEPREF, b"DELREF": RefPolicy.DELREF, b"ACKED": RefPolicy.ACKED}


def get_stream(client: Client, key: bytes) -> Stream | None:
    """The stream at ``key`` for a command that writes it, None if absent; WRONGTYPE if it
    holds something else."""
    value = client.db.get(key)
    if value is None or value.__class__ is Stream:
        return value
    raise CommandError(errors.WRONGTYPE)


def read_stream(client: Client, key: bytes) -> Stream | None:
    """:func:`get_stream` for a command that reads the stream: a counted read lookup."""
    value = lookup_read(client, key)
    if value is None or value.__class__ is Stream:
        return value
    raise CommandError(errors.WRONGTYPE)


def require_id(arg: bytes, missing_seq: int = 0, strict: bool = False) -> int:
    sid = parse_id(arg, missing_seq, strict)
    if sid is None:
        raise CommandError(errors.INVALID_STREAM_ID)
    return sid


def interval_id(arg: bytes, missing_seq: int) -> tuple[int, bool]:
    parsed = parse_interval_id(arg, missing_seq)
    if parsed is None:
        raise CommandError(errors.INVALID_STREAM_ID)
    return parsed


def parse_ref_policy(arg: bytes) -> RefPolicy | None:
    return _POLICIES.get(arg.upper())


def entries_raw(stream: Stream, start: int, end: int, count: int = 0, rev: bool = False) -> Raw:
    """The live entries from ``start`` to ``end`` (at most ``count`` if non-zero), encoded.

    The bytes an array of ``[id, [field, value ...]]`` pairs encodes to (alike in RESP2 and
    RESP3), written straight from the nodes' packed data: the read commands' hot path.
    """
    parts = [b""]
    n = 0
    if start <= end:
        if not rev:
            n = stream.resp_forward(start, end, count, parts)
        else:
            for node, i, sid in stream.iter_backward(end, start):
                node.entry_resp(i, sid, parts)
                n += 1
                if n == count:
                    break
    parts[0] = b"*%d\r\n" % n
    return Raw(b"".join(parts))


# From this many entries a read answers in pieces made as they are sent (Chunked).
CHUNKED_ENTRIES = 4096


def range_reply(stream: Stream, start: int, end: int, count: int = 0,
                rev: bool = False) -> Raw | Chunked:
    """XRANGE's, XREVRANGE's and XREAD's entries: :func:`entries_raw`, except that a
    range of :data:`CHUNKED_ENTRIES` or more is a :class:`Chunked` reply, made piece by
    piece as the connection sends it (:meth:`Stream.range_pieces`,
    :meth:`Stream.range_pieces_rev`), never whole."""
    if start > end or len(stream) < CHUNKED_ENTRIES or 0 < count < CHUNKED_ENTRIES:
        return entries_raw(stream, start, end, count, rev)
    if rev:
        total, pieces = stream.range_pieces_rev(end, start, count)
    else:
        total, pieces = stream.range_pieces(start, end, count)
    if total >= CHUNKED_ENTRIES:
        return Chunked(b"*%d\r\n" % total, pieces)
    return Raw(b"*%d\r\n%b" % (total, b"".join(pieces)))


def reply_count(reply: Raw | Chunked) -> int:
    """How many entries a :func:`range_reply` holds (read from its array header)."""
    head = reply.head if isinstance(reply, Chunked) else reply
    return int(head[1 : head.index(b"\r")])


def consumer_for(client: Client, group: ConsumerGroup, key: bytes, name: bytes,
                 now: int) -> Consumer:
    """The consumer ``name`` of ``group``, seen at ``now``: XREADGROUP, XCLAIM and
    XAUTOCLAIM name it, whatever they then get. Created (reported as Redis's
    ``xgroup-createconsumer`` event, and counted as one change) when first named."""
    consumer = group.seen_consumer(name, now)
    if consumer is None:
        consumer = group.get_or_create_consumer(name, now)
        server = client.server
        server.dirty += 1
        server.notify(STREAM, b"xgroup-createconsumer", key, client.db_index)
    return consumer


# -- how the group commands are logged ----------------------------------------------------------
#
# XREADGROUP, XCLAIM and XAUTOCLAIM depend on the clock (delivery times, min-idle-time), so
# as in Redis each pending entry they touched is logged as the state it is left in, ``XCLAIM
# key group owner 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID last-id`` (an entry dropped
# from the PEL as XACK), a consumer they name as ``XGROUP CREATECONSUMER`` and a group whose
# position moved as ``XGROUP SETID key group last-id ENTRIESREAD n``.


def propagate_consumer(client: Client, key: bytes, group_name: bytes, name: bytes) -> None:
    client.propagate_as([b"XGROUP", b"CREATECONSUMER", key, group_name, name])


def propagate_pending(client: Client, key: bytes, group_name: bytes, group: ConsumerGroup,
                      sid: int) -> None:
    """Log the pending entry ``sid`` of ``group`` as the state it is in now."""
    nack = group.pel.get(sid)
    raw = format_id(sid)
    if nack is None:
        client.propagate_as([b"XACK", key, group_name, raw])
    elif nack.consumer is not None:
        client.propagate_as([
            b"XCLAIM", key, group_name, nack.consumer.name, b"0", raw,
            b"TIME", b"%d" % nack.delivery_time, b"RETRYCOUNT", b"%d" % nack.delivery_count,
            b"FORCE", b"JUSTID", b"LASTID", format_id(group.last_id)])


def propagate_setid(client: Client, key: bytes, group_name: bytes,
                    group: ConsumerGroup) -> None:
    client.propagate_as([b"XGROUP", b"SETID", key, group_name, format_id(group.last_id),
                         b"ENTRIESREAD", b"%d" % group.entries_read])
