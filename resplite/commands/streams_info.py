"""XINFO STREAM / GROUPS / CONSUMERS / HELP.

Replies are maps (flat arrays under RESP2) with Redis's field names and order. Consumers
report Redis 7.2's times: ``seen-time`` / ``idle`` for the last attempted read or claim,
``active-time`` / ``inactive`` for the last successful one (-1 when never). The radix tree
figures are the ones Redis's node index would show for the same entries (see
:mod:`resplite.store.radix_shape`). Groups and consumers are listed in name order.

Redis 8.6 adds the idempotency fields to XINFO STREAM (``idmp-duration``, ``idmp-maxsize``,
``pids-tracked``, ``iids-tracked``, ``iids-added``, ``iids-duplicates``, after
``recorded-first-entry-id``), reported after expiring what the clock has aged out, as Redis
does before every command; Redis 8.8 adds ``nacked-count`` to each group of the FULL form,
where a released entry's consumer is the empty string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.commands.streams_common import int_arg, read_stream
from resplite.engine import compat, errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.store.consumer_group import INVALID_ENTRIES_READ, ConsumerGroup
from resplite.store.stream import Stream
from resplite.store.stream_ids import MAX_ID, format_id

if TYPE_CHECKING:
    from resplite.engine.client import Client

_XINFO_HELP = help_reply("XINFO", [
    ("CONSUMERS <key> <groupname>", [
        "Describe each consumer of <groupname>: its pending count and idle times.",
    ]),
    ("GROUPS <key>", ["Describe each consumer group of the stream at <key>."]),
    ("STREAM <key> [FULL [COUNT <count>]", [
        "Describe the stream at <key>. FULL adds its entries and every group with its",
        "consumers and pending entries; <count> caps the entries and pending entries",
        "listed (10 by default, 0 for no cap).",
    ]),
])


def _existing_stream(client: Client, key: bytes) -> Stream:
    stream = read_stream(client, key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    return stream


def _entry(entry: tuple[int, list[bytes]] | None) -> Any:
    return None if entry is None else [format_id(entry[0]), entry[1]]


def _entries_read(group: ConsumerGroup) -> int | None:
    return None if group.entries_read == INVALID_ENTRIES_READ else group.entries_read


def _header(client: Client, stream: Stream) -> dict[bytes, Any]:
    reply: dict[bytes, Any] = {
        b"length": stream.length,
        b"radix-tree-keys": stream.node_count,
        b"radix-tree-nodes": stream.radix_tree_nodes(),
        b"last-generated-id": format_id(stream.last_id),
        b"max-deleted-entry-id": format_id(stream.max_deleted_id),
        b"entries-added": stream.entries_added,
        b"recorded-first-entry-id": format_id(stream.first_id),
    }
    if not compat.follows(client.server.config["redis-compat-version"], "xinfo-stream-idmp"):
        return reply
    state = stream.idmp
    if state is None:
        limits = client.server.config.values
        reply[b"idmp-duration"] = limits["stream-idmp-duration"]
        reply[b"idmp-maxsize"] = limits["stream-idmp-maxsize"]
        reply[b"pids-tracked"] = reply[b"iids-tracked"] = 0
        reply[b"iids-added"] = reply[b"iids-duplicates"] = 0
        return reply
    state.expire(client.server.clock.time_ms())
    reply[b"idmp-duration"] = state.duration
    reply[b"idmp-maxsize"] = state.maxsize
    reply[b"pids-tracked"] = len(state.producers)
    reply[b"iids-tracked"] = state.tracked
    reply[b"iids-added"] = state.iids_added
    reply[b"iids-duplicates"] = state.iids_duplicates
    return reply


def _full_group(stream: Stream, group: ConsumerGroup, count: int, version: compat.Version
                ) -> dict[bytes, Any]:
    pel = group.pel
    pending = []
    for sid in group.pel_ids.islice(0, count or None):
        nack = pel[sid]
        owner = b"" if nack.consumer is None else nack.consumer.name
        pending.append([format_id(sid), owner, nack.delivery_time, nack.delivery_count])
    consumers = []
    for consumer in group.sorted_consumers():
        own = []
        for sid in consumer.pel.islice(0, count or None):
            nack = pel[sid]
            own.append([format_id(sid), nack.delivery_time, nack.delivery_count])
        entry: dict[bytes, Any] = {b"name": consumer.name, b"seen-time": consumer.seen_time}
        if compat.follows(version, "xinfo-active-time"):
            entry[b"active-time"] = consumer.active_time
        entry[b"pel-count"] = len(consumer.pel)
        entry[b"pending"] = own
        consumers.append(entry)
    reply: dict[bytes, Any] = {
        b"name": group.name,
        b"last-delivered-id": format_id(group.last_id),
        b"entries-read": _entries_read(group),
        b"lag": stream.group_lag(group),
        b"pel-count": len(pel),
        b"pending": pending,
        b"consumers": consumers,
    }
    if compat.follows(version, "xinfo-nacked-count"):
        reply[b"nacked-count"] = len(group.nacked)
    return reply


@command("xinfo|stream")
def xinfo_stream(client: Client, argv: list[bytes]) -> Any:
    stream = _existing_stream(client, argv[2])
    options = argv[3:]
    if not options:
        reply = _header(client, stream)
        reply[b"groups"] = len(stream.groups)
        reply[b"first-entry"] = _entry(stream.first_entry())
        reply[b"last-entry"] = _entry(stream.last_entry())
        return reply
    if len(options) not in (1, 3) or options[0].upper() != b"FULL":
        raise CommandError(errors.subcommand_syntax(argv))
    count = 10
    if len(options) == 3:
        if options[1].upper() != b"COUNT":
            raise CommandError(errors.subcommand_syntax(argv))
        count = int_arg(options[2])
        if count < 0:
            count = 10
    reply = _header(client, stream)
    reply[b"entries"] = [
        [format_id(sid), fields] for sid, fields in stream.range(0, MAX_ID, count)
    ]
    version = client.server.config["redis-compat-version"]
    reply[b"groups"] = [_full_group(stream, g, count, version) for g in stream.sorted_groups()]
    return reply


@command("xinfo|groups")
def xinfo_groups(client: Client, argv: list[bytes]) -> Any:
    stream = _existing_stream(client, argv[2])
    return [
        {
            b"name": group.name,
            b"consumers": len(group.consumers),
            b"pending": len(group.pel),
            b"last-delivered-id": format_id(group.last_id),
            b"entries-read": _entries_read(group),
            b"lag": stream.group_lag(group),
        }
        for group in stream.sorted_groups()
    ]


@command("xinfo|consumers")
def xinfo_consumers(client: Client, argv: list[bytes]) -> Any:
    stream = _existing_stream(client, argv[2])
    group = stream.groups.get(argv[3])
    if group is None:
        raise CommandError(errors.nogroup_for_key(argv[3], argv[2]))
    now = client.server.clock.time_ms()
    active = compat.follows(client.server.config["redis-compat-version"], "xinfo-active-time")
    reply = []
    for consumer in group.sorted_consumers():
        entry: dict[bytes, Any] = {
            b"name": consumer.name,
            b"pending": len(consumer.pel),
            b"idle": max(now - consumer.seen_time, 0),
        }
        if active:
            entry[b"inactive"] = (now - consumer.active_time if consumer.active_time != -1
                                  else -1)
        reply.append(entry)
    return reply


@command("xinfo|help")
def xinfo_help(client: Client, argv: list[bytes]) -> Any:
    return _XINFO_HELP
