"""Stream DUMP payloads taken apart and put back together, for tests that corrupt one field.

:func:`parse` reads a stream payload (RDB types 15, 19, 21 and Redis 8.6's 26) into a
:class:`StreamParts` whose every field is plain data (each node's listpack as its decoded
elements); a test changes one of them and :func:`build` writes the payload again, in the type
and RDB version asked for, with a correct CRC-64, so that only the changed field is wrong.
Type 19 with RDB version 10 is what Redis 7.0 reads.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from resplite.algorithms.crc64 import crc64
from resplite.formats import rdb_format as f
from resplite.store import listpack


@dataclass
class Group:
    name: bytes
    last: tuple[int, int]
    entries_read: int
    pel: list[list[Any]]  # [raw 16-byte id, delivery time, delivery count]
    consumers: list[list[Any]]  # [name, seen time, active time, [raw ids]]


@dataclass
class StreamParts:
    nodes: list[list[Any]]  # [16-byte key, decoded listpack elements]
    length: int
    last: tuple[int, int]
    first: tuple[int, int] = (0, 0)
    max_deleted: tuple[int, int] = (0, 0)
    entries_added: int = 0
    groups: list[Group] = field(default_factory=list)
    # Type 26: [duration, maxsize, [[pid, [[iid, ms, seq], ...]], ...], iids added, duplicates]
    idmp: list[Any] = field(default_factory=lambda: [100, 100, [], 0, 0])

    def copy(self) -> StreamParts:
        return copy.deepcopy(self)


def raw_id(ms: int, seq: int) -> bytes:
    return ms.to_bytes(8, "big") + seq.to_bytes(8, "big")


def parse(payload: bytes) -> StreamParts:
    r = f.Reader(payload[:-10])
    kind = r.byte()
    assert kind in (f.TYPE_STREAM_LISTPACKS, f.TYPE_STREAM_LISTPACKS_2,
                    f.TYPE_STREAM_LISTPACKS_3, f.TYPE_STREAM_LISTPACKS_4), kind
    nodes = []
    for _ in range(r.length()):
        key = r.string()
        nodes.append([key, listpack.decode(r.string())])
    parts = StreamParts(nodes, r.length(), (r.length(), r.length()))
    if kind >= f.TYPE_STREAM_LISTPACKS_2:
        parts.first = (r.length(), r.length())
        parts.max_deleted = (r.length(), r.length())
        parts.entries_added = r.length()
    else:
        parts.entries_added = parts.length
    for _ in range(r.length()):
        name = r.string()
        last = (r.length(), r.length())
        read = r.length() if kind >= f.TYPE_STREAM_LISTPACKS_2 else (1 << 64) - 1
        pel = [[r.take(16), r.millis(), r.length()] for _ in range(r.length())]
        consumers = []
        for _ in range(r.length()):
            cname = r.string()
            seen = r.millis()
            active = r.millis() if kind >= f.TYPE_STREAM_LISTPACKS_3 else seen
            consumers.append([cname, seen, active, [r.take(16) for _ in range(r.length())]])
        parts.groups.append(Group(name, last, read, pel, consumers))
    if kind >= f.TYPE_STREAM_LISTPACKS_4:
        duration, maxsize = r.length(), r.length()
        producers = [[r.string(), [[r.string(), r.length(), r.length()]
                                   for _ in range(r.length())]] for _ in range(r.length())]
        parts.idmp = [duration, maxsize, producers, r.length(), r.length()]
    assert r.at_end()
    return parts


def build(parts: StreamParts, kind: int = f.TYPE_STREAM_LISTPACKS_2,
          version: int | None = None) -> bytes:
    out = bytearray((kind,))
    f.write_len(out, len(parts.nodes))
    for key, items in parts.nodes:
        f.write_string(out, key, False)
        f.write_string(out, listpack.encode(items), False)
    f.write_len(out, parts.length)
    for n in parts.last:
        f.write_len(out, n)
    if kind >= f.TYPE_STREAM_LISTPACKS_2:
        for n in (*parts.first, *parts.max_deleted, parts.entries_added):
            f.write_len(out, n)
    f.write_len(out, len(parts.groups))
    for group in parts.groups:
        f.write_string(out, group.name, False)
        for n in group.last:
            f.write_len(out, n)
        if kind >= f.TYPE_STREAM_LISTPACKS_2:
            f.write_len(out, group.entries_read & ((1 << 64) - 1))
        f.write_len(out, len(group.pel))
        for sid, when, count in group.pel:
            out += sid
            f.write_millis(out, when)
            f.write_len(out, count)
        f.write_len(out, len(group.consumers))
        for name, seen, active, ids in group.consumers:
            f.write_string(out, name, False)
            f.write_millis(out, seen)
            if kind >= f.TYPE_STREAM_LISTPACKS_3:
                f.write_millis(out, active)
            f.write_len(out, len(ids))
            for sid in ids:
                out += sid
    if kind >= f.TYPE_STREAM_LISTPACKS_4:
        duration, maxsize, producers, added, duplicates = parts.idmp
        for n in (duration, maxsize, len(producers)):
            f.write_len(out, n)
        for pid, iids in producers:
            f.write_string(out, pid, False)
            f.write_len(out, len(iids))
            for iid, ms, seq in iids:
                f.write_string(out, iid, False)
                f.write_len(out, ms)
                f.write_len(out, seq)
        f.write_len(out, added)
        f.write_len(out, duplicates)
    if version is None:
        version = f.TYPE_SINCE[kind]
    out += version.to_bytes(2, "little")
    out += crc64(0, bytes(out)).to_bytes(8, "little")
    return bytes(out)
