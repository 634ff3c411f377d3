"""Values in RDB form: what a key's value looks like in an RDB file and in a DUMP payload.

Writing (:func:`value_type`, :func:`write_value`) follows Redis's ``rdbSaveObjectType`` and
``rdbSaveObject`` for every type resplite keeps, in the encoding OBJECT ENCODING reports:

* strings: one RDB string (integer, LZF or plain form);
* hashes: a listpack of field, value pairs (``listpack``); a listpack of field, value, TTL
  triples after the smallest TTL (``listpackex``, RDB 12), fields with a TTL first in TTL
  order as Redis keeps them; or a count and the pairs (``hashtable``), each pair preceded by
  its TTL relative to the smallest one when any field has a TTL (RDB 12's hash metadata);
* sets: the intset blob, a listpack of members, or a count and the members;
* sorted sets: a listpack of member, score pairs (scores as ``d2string`` writes them), or a
  count and the members from the highest to the lowest with binary double scores;
* lists: quicklist nodes, in :mod:`resplite.formats.rdb_lists` (registered through
  :func:`register_type`);
* streams (RDB 11's third stream layout): each node's master id and its listpack, rebuilt
  exactly as Redis lays it out (master entry, entries with their flags, id deltas and
  ``lp-count``, tombstones kept), then the length, last, first and largest deleted ids,
  entries added, and the consumer groups in name order with their PEL and consumers. The
  listpack comes from :meth:`StreamNode.listpack <resplite.store.stream_node.StreamNode.listpack>`
  (:func:`node_listpack_general` is the element-by-element reference it is tested against);
  with ``keep`` (SAVE and DUMP in the foreground), a sealed node's compressed form is kept on
  the stream (:meth:`Stream.keep_packed <resplite.store.stream.Stream.keep_packed>`) and
  copied by the next snapshot while the node is unchanged.

Where the encoding fixes the order (strings, listpacks, intsets, skiplists, streams), the
bytes equal Redis's; hashtables come out in resplite's order, which Redis does not promise.

Reading (:func:`read_value`) accepts every value type of RDB versions 1 to 12 that resplite
can hold (old ziplists and quicklists included) and builds the store's objects, choosing the
encoding Redis would choose on load from the limits in :class:`Limits`. A module value is
refused with :class:`UnsupportedValue`. Every malformed value raises
:class:`~resplite.formats.rdb_format.RdbError` with the offset where reading failed.

DUMP payloads (:func:`dump_payload`, :func:`parse_payload`) are a value type byte, the value,
the RDB version as two little-endian bytes, and the CRC-64 of all that, little-endian.

What RDB 12 cannot hold is left out of a value in a whole file: a stream's idempotent-producer
state (Redis 8.6) and its NACKed pending entries (Redis 8.8, entries with no owner).
:func:`stream_extras` and :func:`apply_stream_extras` carry them separately (an RDB file keeps
them in an AUX field, which every Redis skips by contract). A DUMP payload of a stream with
idempotent-producer state is Redis 8.6's STREAM_LISTPACKS_4 (RDB 13) with it, byte for byte
what Redis 8.6 writes.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from resplite.algorithms.crc64 import RunningCrc, crc64, shift_for
from resplite.algorithms.scores import d2string, parse_score
from resplite.formats import rdb_format as f
from resplite.store import intset, listpack, ziplist
from resplite.store.consumer_group import (
    INVALID_ENTRIES_READ,
    MAX_DELIVERY_COUNT,
    Consumer,
    ConsumerGroup,
    PendingEntry,
)
from resplite.store.hash import Hash
from resplite.store.listpack_size import as_int64, integer_value
from resplite.store.set import HASHTABLE, INTSET, LISTPACK, Set
from resplite.store.set import Limits as SetLimits
from resplite.store.sorted_ids import SortedIds
from resplite.store.stream import Stream
from resplite.store.stream_idmp import DEFAULT_DURATION as IDMP_DEFAULT_DURATION
from resplite.store.stream_idmp import DEFAULT_MAXSIZE as IDMP_DEFAULT_MAXSIZE
from resplite.store.stream_idmp import DURATION_RANGE as IDMP_DURATION_RANGE
from resplite.store.stream_idmp import MAXSIZE_RANGE as IDMP_MAXSIZE_RANGE
from resplite.store.stream_idmp import IdmpState
from resplite.store.stream_ids import MAX_ID
from resplite.store.stream_node import SAME_FIELDS, StreamNode
from resplite.store.string_value import MutableString
from resplite.store.zset import ZSet

_U64: Final = (1 << 64) - 1
# Redis's EB_EXPIRE_TIME_MAX: the largest hash field expiry time (48 bits of milliseconds).
EXPIRE_TIME_MAX: Final = (1 << 48) - 1
_INT_CODES: Final = {2: "h", 4: "i", 8: "q"}
_CODE_WIDTHS: Final = {"h": 2, "i": 4, "q": 8}


class UnsupportedValue(ValueError):
    """A value of a type resplite cannot hold (a module type); the message names it."""


_DEFAULT_SET_LIMITS: Final = SetLimits(512, 128, 64)


@dataclass(frozen=True, slots=True)
class Limits:
    """The encoding directives a load converts by, as Redis's load does; and whether a
    stream keeps the compressed forms of its nodes it was read from (see
    :meth:`Stream.keep_packed <resplite.store.stream.Stream.keep_packed>`)."""

    hash_entries: int = 512
    hash_value: int = 64
    set_limits: SetLimits = _DEFAULT_SET_LIMITS
    zset_entries: int = 128
    zset_value: int = 64
    list_fill: int = -2  # list-max-listpack-size
    keep_stream_forms: bool = True


DEFAULT_LIMITS: Final = Limits()


# -- writing ------------------------------------------------------------------------------


def value_type(value: Any) -> int:
    """The RDB type byte of a stored value, by its encoding."""
    cls = value.__class__
    if isinstance(value, (bytes, MutableString)):
        return f.TYPE_STRING
    if cls is Hash:
        if value.listpack:
            return f.TYPE_HASH_LISTPACK_EX if value.ex else f.TYPE_HASH_LISTPACK
        return f.TYPE_HASH_METADATA if value.ttls else f.TYPE_HASH
    if cls is Set:
        return (f.TYPE_SET_INTSET, f.TYPE_SET_LISTPACK, f.TYPE_SET)[value.kind]
    if cls is ZSet:
        return f.TYPE_ZSET_LISTPACK if value.listpack else f.TYPE_ZSET_2
    if cls is Stream:
        return f.TYPE_STREAM_LISTPACKS_3
    writer = _EXTRA_WRITERS.get(cls)
    if writer is not None:
        return writer[0](value)
    raise UnsupportedValue(f"no RDB form for a value of type {cls.__name__}")


def write_value(out: bytearray, value: Any, compress: bool, keep: bool = False,
                crc: RunningCrc | None = None) -> None:
    """Append the RDB form of ``value`` (without its type byte). ``keep``: a stream keeps
    its sealed nodes' compressed forms for the next snapshot (which changes its
    ``memory_usage()``: the caller has the keyspace charge it). ``crc``: the checksum of
    ``out`` being kept, which kept forms are joined to without reading them again."""
    cls = value.__class__
    if isinstance(value, (bytes, MutableString)):
        f.write_string(out, value, compress)
    elif cls is Hash:
        _write_hash(out, value, compress)
    elif cls is Set:
        _write_set(out, value, compress)
    elif cls is ZSet:
        _write_zset(out, value, compress)
    elif cls is Stream:
        _write_stream(out, value, compress, keep, crc)
    else:
        writer = _EXTRA_WRITERS.get(cls)
        if writer is None:
            raise UnsupportedValue(f"no RDB form for a value of type {cls.__name__}")
        writer[1](out, value, compress)


# Types that live in other modules (lists) register their writer and reader here, so this
# module need not import them: (type of a value, write a value), by class.
_EXTRA_WRITERS: dict[type, tuple[Callable[[Any], int],
                                 Callable[[bytearray, Any, bool], None]]] = {}


def _hash_fields_in_order(value: Hash) -> list[tuple[bytes, bytes, int]]:
    """(field, value, ttl or 0) in listpackex order: fields with a TTL first, by TTL."""
    ttls = value.ttls or {}
    timed = [(k, v, ttls[k]) for k, v in value.fields.items() if k in ttls]
    timed.sort(key=lambda item: item[2])
    plain = [(k, v, 0) for k, v in value.fields.items() if k not in ttls]
    return timed + plain


def _write_hash(out: bytearray, value: Hash, compress: bool) -> None:
    ttls = value.ttls
    if value.listpack:
        if value.ex:
            triples = _hash_fields_in_order(value)
            f.write_millis(out, min((t for _, _, t in triples if t), default=0))
            f.write_string(out, listpack.encode([x for triple in triples for x in triple]),
                           compress)
        else:
            f.write_string(out, listpack.encode([x for pair in value.fields.items()
                                                 for x in pair]), compress)
        return
    if ttls:
        low = min(ttls.values())
        f.write_millis(out, low)
        f.write_len(out, len(value.fields))
        for field, val in value.fields.items():
            when = ttls.get(field)
            f.write_len(out, 0 if when is None else when - low + 1)
            f.write_string(out, field, compress)
            f.write_string(out, val, compress)
        return
    f.write_len(out, len(value.fields))
    for field, val in value.fields.items():
        f.write_string(out, field, compress)
        f.write_string(out, val, compress)


def _write_set(out: bytearray, value: Set, compress: bool) -> None:
    if value.ints is not None:
        width = _CODE_WIDTHS[value.ints.typecode]
        f.write_string(out, intset.encode(value.ints, width), compress)
    elif value.lp is not None:
        f.write_string(out, listpack.encode(value.lp), compress)
    else:
        members = value.ht or ()
        f.write_len(out, len(members))
        for member in members:
            f.write_string(out, member, compress)


def _write_zset(out: bytearray, value: ZSet, compress: bool) -> None:
    if value.listpack:
        items: list[bytes] = []
        for score, member in value.entries(0, len(value)):
            items.append(member)
            items.append(d2string(score))
        f.write_string(out, listpack.encode(items), compress)
        return
    f.write_len(out, len(value))
    # Highest first, as Redis walks its skiplist backwards (loading then appends in O(1)).
    for score, member in value.entries(0, len(value), reverse=True):
        f.write_string(out, member, compress)
        f.write_binary_double(out, score)


def node_listpack_general(node: StreamNode) -> bytes:
    """The listpack Redis holds for a stream node, tombstones included, built element by
    element from the node's entries: the reference :meth:`StreamNode.listpack` must equal."""
    enc_int = listpack.encode_int
    enc_str = listpack.encode_str
    fields = node.fields
    elements = [enc_int(node.count), enc_int(node.deleted), enc_int(len(fields))]
    elements.extend(enc_str(name) for name in fields)
    elements.append(_ZERO)
    master_seq = node.master_seq
    flags = node.flags
    ms = node.ms
    seq = node.seq
    nfields = len(fields)
    same_count = enc_int(nfields + 3)
    for i in range(len(flags)):
        flag = flags[i]
        elements.append(enc_int(flag))
        elements.append(enc_int(ms[i]))
        elements.append(enc_int(as_int64(seq[i] - master_seq)))
        pairs = node.fields_at(i)
        if flag & SAME_FIELDS:
            values = pairs[1::2]
            elements.extend(enc_str(v) for v in values)
            elements.append(same_count)
        else:
            n = len(pairs) // 2
            elements.append(enc_int(n))
            elements.extend(enc_str(v) for v in pairs)
            elements.append(enc_int(2 * n + 4))
    return listpack.join(elements)


_ZERO: Final = listpack.encode_int(0)


def _write_id_pair(out: bytearray, sid: int) -> None:
    f.write_len(out, sid >> 64)
    f.write_len(out, sid & _U64)


def _raw_id(sid: int) -> bytes:
    return sid.to_bytes(16, "big")


def _write_stream(out: bytearray, value: Stream, compress: bool, keep: bool = False,
                  crc: RunningCrc | None = None, active_times: bool = True) -> None:
    """STREAM_LISTPACKS_3 (RDB 11), or without ``active_times`` STREAM_LISTPACKS_2 (RDB 10,
    which has no consumer active-time: loading it takes the seen-time for both). The nodes
    are the same in both; ``keep`` and ``crc`` as for :func:`write_value`."""
    nodes = value.nodes
    f.write_len(out, len(nodes))
    write_string = f.write_string
    last = nodes[-1] if nodes else None
    for node in nodes:
        form = node.packed if compress else None
        if form:
            if crc is None:
                out += form
            else:
                if not node.packed_shift:  # kept by a load: its checksum not computed yet
                    node.packed_crc = crc64(0, form)
                    node.packed_shift = shift_for(len(form))
                crc.append(out, form, node.packed_crc, node.packed_shift)
            continue
        start = len(out)
        write_string(out, _raw_id(node.master), compress)
        if form is not None:
            # Known not to compress: the plain string, as write_string's failed try gives.
            write_string(out, node.listpack(), False)
            continue
        at = len(out)
        write_string(out, node.listpack(), compress)
        if keep and compress and node is not last:
            # Keep only a compressed form (smaller than the listpack); for a node that does
            # not compress, the empty marker saves the next save's attempt.
            if out[at] == f.LZF_HEAD:
                part = bytes(out[start:])
                part_crc = crc64(0, part)
                shift = shift_for(len(part))
                if crc is not None:  # the part's checksum joins the output's: read once
                    crc.update(out, start)
                    crc.join(part_crc, shift, len(out))
                value.keep_packed(node, part, part_crc, shift)
            else:
                value.keep_packed(node, b"", 0, 0)
    f.write_len(out, value.length)
    _write_id_pair(out, value.last_id)
    _write_id_pair(out, value.first_id)
    _write_id_pair(out, value.max_deleted_id)
    f.write_len(out, value.entries_added)
    groups = value.sorted_groups()
    f.write_len(out, len(groups))
    for group in groups:
        f.write_string(out, group.name, compress)
        _write_id_pair(out, group.last_id)
        f.write_len(out, group.entries_read & _U64)
        # NACKed entries (no owner, Redis 8.8) have no place in RDB 12: every PEL entry
        # there belongs to a consumer. They travel in the stream's extras instead.
        owned = [sid for sid in group.pel_ids if group.pel[sid].consumer is not None]
        f.write_len(out, len(owned))
        for sid in owned:
            nack = group.pel[sid]
            out += _raw_id(sid)
            f.write_millis(out, nack.delivery_time)
            f.write_len(out, nack.delivery_count)
        consumers = group.sorted_consumers()
        f.write_len(out, len(consumers))
        for consumer in consumers:
            f.write_string(out, consumer.name, compress)
            f.write_millis(out, consumer.seen_time)
            if active_times:
                f.write_millis(out, consumer.active_time)
            f.write_len(out, len(consumer.pel))
            for sid in consumer.pel:
                out += _raw_id(sid)


# -- the parts of a stream RDB 12 cannot hold ----------------------------------------------


def stream_extras(value: Stream) -> bytes | None:
    """The stream's state newer than RDB 12 (IDMP, NACKed entries) in resplite's own
    form, or None when there is none."""
    nacked = [(group.name, sid, group.pel[sid].delivery_count)
              for group in value.sorted_groups() for sid in group.nacked]
    idmp = value.idmp
    if not nacked and idmp is None:
        return None
    out = bytearray(b"\x01")  # format version
    f.write_len(out, len(nacked))
    for name, sid, count in nacked:
        f.write_string(out, name, False)
        out += _raw_id(sid)
        f.write_len(out, count)
    if idmp is None:
        out.append(0)
    else:
        out.append(1)
        f.write_len(out, idmp.duration)
        f.write_len(out, idmp.maxsize)
        f.write_len(out, idmp.iids_added)
        f.write_len(out, idmp.iids_duplicates)
        f.write_len(out, len(idmp.order))
        for (pid, iid), sid in idmp.order.items():
            f.write_string(out, pid, False)
            f.write_string(out, iid, False)
            out += _raw_id(sid)
    return bytes(out)


def apply_stream_extras(value: Stream, data: bytes) -> None:
    """Restore what :func:`stream_extras` saved; RdbError if it is malformed."""
    r = f.Reader(data)
    if r.byte("the extras format") != 1:
        raise r.error("unknown stream extras format", 0)
    for _ in range(r.length()):
        name = r.string("a group name")
        sid = int.from_bytes(r.take(16, "an entry id"), "big")
        count = r.length("a delivery count")
        group = value.groups.get(name)
        if group is None:
            raise r.error(f"stream extras name an unknown group {name!r}")
        if sid in group.pel:
            raise r.error("a NACKed entry is already pending")
        group.force_release(sid, count)
    if r.byte("the IDMP flag"):
        state = IdmpState(r.length(), r.length())
        state.iids_added = r.length()
        state.iids_duplicates = r.length()
        for _ in range(r.length()):
            pid = r.string("a producer id")
            iid = r.string("an idempotent id")
            sid = int.from_bytes(r.take(16, "an entry id"), "big")
            known = state.producers.get(pid)
            if known is None:
                known = state.producers[pid] = OrderedDict()
            known[iid] = sid
            state.order[(pid, iid)] = sid
        value.idmp = state


# -- DUMP payloads --------------------------------------------------------------------------


def payload_version(rdb_type: int) -> int:
    """The RDB version a DUMP payload of this type carries: the oldest that knows it."""
    return f.TYPE_SINCE.get(rdb_type, f.RDB_VERSION)


def dump_payload(value: Any, compress: bool = True, keep: bool = False,
                 idmp: bool = True) -> bytes:
    """DUMP's serialization of ``value``: type, value, version, CRC-64 (``keep`` as for
    :func:`write_value`). A stream with idempotent-producer state is written, with it, as
    Redis 8.6's STREAM_LISTPACKS_4 (RDB 13), the oldest form that holds it; ``idmp=False``
    leaves that state out (the rest of the stream in the form an older Redis reads)."""
    kind = value_type(value)
    state = value.idmp if idmp and value.__class__ is Stream else None
    if state is not None:
        kind = f.TYPE_STREAM_LISTPACKS_4
    out = bytearray((kind,))
    crc = RunningCrc()
    write_value(out, value, compress, keep, crc)
    if state is not None:
        _write_stream_idmp(out, state, compress)
    out += payload_version(kind).to_bytes(2, "little")
    out += crc.update(out).to_bytes(8, "little")
    return bytes(out)


def _write_stream_idmp(out: bytearray, state: IdmpState, compress: bool) -> None:
    """Redis 8.6's idempotent-producer part of a stream (after its groups): duration,
    maxsize, the producers in the byte order of their ids (Redis's radix tree), each with
    its iids oldest first and their entry ids, then the lifetime counters."""
    f.write_len(out, state.duration)
    f.write_len(out, state.maxsize)
    f.write_len(out, len(state.producers))
    for pid in sorted(state.producers):
        known = state.producers[pid]
        f.write_string(out, pid, compress)
        f.write_len(out, len(known))
        for iid, sid in known.items():
            f.write_string(out, iid, compress)
            f.write_len(out, sid >> 64)
            f.write_len(out, sid & 0xFFFF_FFFF_FFFF_FFFF)
    f.write_len(out, state.iids_added)
    f.write_len(out, state.iids_duplicates)


def _stream_fits_v2(value: Stream) -> bool:
    """Whether STREAM_LISTPACKS_2 holds the stream exactly: it has no idempotent-producer
    state, and every consumer's active-time is its seen-time, which is what a loader of that
    form assumes."""
    return value.idmp is None and all(consumer.active_time == consumer.seen_time
               for group in value.groups.values() for consumer in group.consumers.values())


def portable_payload(value: Any, compress: bool = True) -> bytes:
    """A DUMP payload for MIGRATE, in the oldest RDB form that holds ``value`` exactly.

    DUMP itself writes the encoding the value has (byte for byte what Redis writes for it);
    a target older than that encoding refuses the payload (``DUMP payload version or
    checksum are wrong``). MIGRATE does not know its target's version, so it sends what the
    oldest target can read without loss: a listpack set (RDB 11) as a plain set of members
    (RDB 9; the target encodes it as its own limits say), a stream as STREAM_LISTPACKS_2
    (RDB 10) when no consumer's active-time differs from its seen-time. Everything else is
    DUMP's payload: its versions are already the oldest that know each encoding."""
    cls = value.__class__
    crc = RunningCrc()
    if cls is Set and value.lp is not None:
        out = bytearray((f.TYPE_SET,))
        f.write_len(out, len(value.lp))
        for member in value.lp:
            f.write_string(out, member, compress)
    elif cls is Stream and _stream_fits_v2(value):
        out = bytearray((f.TYPE_STREAM_LISTPACKS_2,))
        _write_stream(out, value, compress, crc=crc, active_times=False)
    else:
        return dump_payload(value, compress)
    out += payload_version(out[0]).to_bytes(2, "little")
    out += crc.update(out).to_bytes(8, "little")
    return bytes(out)


def payload_valid(payload: bytes, check_crc: bool = True, zero_crc: bool = False) -> bool:
    """Redis's ``verifyDumpPayload``: a version this code reads, and a matching CRC-64
    (with ``zero_crc``, as Redis 8 has it, a checksum of 0 stands for none)."""
    if len(payload) < 10:
        return False
    version = payload[-10] | (payload[-9] << 8)
    if version > f.NEWEST_READABLE:
        return False
    if not check_crc or (zero_crc and payload[-8:] == bytes(8)):
        return True
    return crc64(0, payload[:-8]).to_bytes(8, "little") == payload[-8:]


def parse_payload(payload: bytes, key: bytes, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The value a verified DUMP payload holds; RdbError or UnsupportedValue if it holds
    none this server can keep."""
    return parse_payload_checked(payload, key, limits)[0]


def parse_payload_checked(payload: bytes, key: bytes,
                          limits: Limits = DEFAULT_LIMITS) -> tuple[Any, int]:
    """:func:`parse_payload`, and how many packed blobs (listpacks, intsets, stream nodes)
    were validated on the way (what Redis counts as sanitizations)."""
    r = f.Reader(memoryview(payload)[:-10])
    kind = r.byte()
    value = read_value(r, kind, key, limits)
    return value, r.checked


# -- reading --------------------------------------------------------------------------------


# Readers registered by other modules (lists): RDB type -> read(reader, type, limits).
_EXTRA_READERS: dict[int, Callable[[f.Reader, int, Limits], Any]] = {}


def register_type(cls: type, type_of: Callable[[Any], int],
                  write: Callable[[bytearray, Any, bool], None],
                  readers: dict[int, Callable[[f.Reader, int, Limits], Any]]) -> None:
    """Teach this module a value class defined elsewhere: how to write it, and how to read
    the RDB types that load into it."""
    _EXTRA_WRITERS[cls] = (type_of, write)
    _EXTRA_READERS.update(readers)


class EmptyValue(Exception):
    """The value read is empty (Redis skips such keys with a notice)."""


def read_value(r: f.Reader, kind: int, key: bytes, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Read a value of RDB type ``kind`` at the reader's position."""
    start = r.pos
    if kind == f.TYPE_STRING:
        return r.string("a string value")
    if kind in (f.TYPE_HASH, f.TYPE_HASH_METADATA, f.TYPE_HASH_METADATA_PRE_GA):
        return _read_hash(r, kind, limits)
    if kind in (f.TYPE_HASH_LISTPACK, f.TYPE_HASH_LISTPACK_EX, f.TYPE_HASH_LISTPACK_EX_PRE_GA,
                f.TYPE_HASH_ZIPLIST):
        return _read_hash_packed(r, kind, limits)
    if kind in (f.TYPE_SET, f.TYPE_SET_INTSET, f.TYPE_SET_LISTPACK):
        return _read_set(r, kind, limits)
    if kind in (f.TYPE_ZSET, f.TYPE_ZSET_2, f.TYPE_ZSET_LISTPACK, f.TYPE_ZSET_ZIPLIST):
        return _read_zset(r, kind, limits)
    if kind in (f.TYPE_STREAM_LISTPACKS, f.TYPE_STREAM_LISTPACKS_2, f.TYPE_STREAM_LISTPACKS_3,
                f.TYPE_STREAM_LISTPACKS_4):
        return _read_stream(r, kind, limits.keep_stream_forms)
    reader = _EXTRA_READERS.get(kind)
    if reader is not None:
        return reader(r, kind, limits)
    if kind in (f.TYPE_MODULE_2, f.TYPE_MODULE_PRE_GA):
        module_id = r.length("a module type id") if kind == f.TYPE_MODULE_2 else 0
        raise UnsupportedValue(
            f"key {key!r} holds a value of module type '{module_type_name(module_id)}', "
            "which resplite cannot hold (it loads no modules)")
    if kind == f.TYPE_HASH_ZIPMAP:
        raise UnsupportedValue(f"key {key!r} holds a zipmap hash (Redis before 2.6), which "
                               "is not supported")
    raise r.error(f"unknown value type {kind}", start - 1)


_MODULE_CHARSET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def module_type_name(module_id: int) -> str:
    """The 9-character module type name encoded in the top 54 bits of a module id."""
    ident = module_id >> 10
    return "".join(_MODULE_CHARSET[(ident >> (6 * (8 - i))) & 63] for i in range(9))


def _packed(r: f.Reader, what: str, use_ziplist: bool) -> list[bytes]:
    start = r.pos
    blob = r.string(what)
    try:
        if use_ziplist:
            return ziplist.decode(blob)
        r.checked += 1
        return listpack.decode(blob, as_bytes=True)  # type: ignore[return-value]
    except ValueError as exc:
        raise r.error(f"{what}: {exc}", start) from None


def _strings_run(r: f.Reader, n: int) -> list[bytes] | None:
    """The next ``n`` strings, read in C (one call for a hashtable's fields and values or a
    set's members), the reader moved past them; None, the reader left where it was, where
    the extension is not built or one of them does not read (the caller then reads them
    one by one, which says where and why)."""
    fast = f.read_strings
    if fast is None:
        return None
    got = fast(r.data, r.pos, n)
    if got is None:
        return None
    strings, r.pos = got
    return strings


def _fit_hash(value: Hash, limits: Limits) -> None:
    """Redis's load-time conversion: a listpack with too many fields, or (for the pair
    layout) a field or value too long, becomes a hashtable."""
    value.fit_size(limits.hash_entries)


def _read_hash(r: f.Reader, kind: int, limits: Limits) -> Hash:
    low = r.millis("the smallest field expiry") if kind == f.TYPE_HASH_METADATA else 0
    if not 0 <= low <= EXPIRE_TIME_MAX + 1:
        raise r.error("Hash read invalid minExpire value")
    count = r.length("a hash size")
    if count == 0:
        raise EmptyValue
    value = Hash()
    fields = value.fields
    timed = kind != f.TYPE_HASH
    at = r.pos
    strings = None if timed else _strings_run(r, 2 * count)
    if strings is not None:
        fields.update(zip(strings[::2], strings[1::2], strict=True))
        if len(fields) != count:  # a duplicate: read again below, to say where
            fields.clear()
            strings = None
            r.pos = at
    for _ in range(0 if strings is not None else count):
        ttl = r.length("a field TTL") if timed else 0
        field = r.string("a hash field")
        val = r.string("a hash value")
        if field in fields:
            raise r.error("duplicate hash fields detected")
        fields[field] = val
        if ttl:
            when = ttl + low - 1 if kind == f.TYPE_HASH_METADATA else ttl
            if when > EXPIRE_TIME_MAX:
                raise r.error(f"invalid expireAt time: {when}")
            value.set_ttl(field, when, place=False)
    value.recount()
    if timed:
        value.mark_ex()
    if count > limits.hash_entries:
        value.convert()
    else:
        value.fit_lengths(list(fields) + list(fields.values()), limits.hash_value)
    return value


def _read_hash_packed(r: f.Reader, kind: int, limits: Limits) -> Hash:
    ex = kind in (f.TYPE_HASH_LISTPACK_EX, f.TYPE_HASH_LISTPACK_EX_PRE_GA)
    if kind == f.TYPE_HASH_LISTPACK_EX:
        r.millis("the smallest field expiry")
    start = r.pos
    items = _packed(r, "a hash listpack", kind == f.TYPE_HASH_ZIPLIST)
    step = 3 if ex else 2
    if len(items) % step:
        raise r.error("hash listpack holds an incomplete field", start)
    if not items:
        raise EmptyValue
    value = Hash()
    fields = value.fields
    last_ttl = 0
    for i in range(0, len(items), step):
        field = items[i]
        if field in fields:
            raise r.error("duplicate hash fields detected", start)
        fields[field] = items[i + 1]
        if ex:
            # Redis's rules for a listpackex: each TTL an integer in [0, EB_EXPIRE_TIME_MAX],
            # the fields with a TTL first, in TTL order (what the expiry walk relies on).
            ttl = integer_value(items[i + 2])
            if ttl is None or not 0 <= ttl <= EXPIRE_TIME_MAX or \
                    (ttl and ((i and not last_ttl) or ttl < last_ttl)):
                raise r.error("Hash listpack integrity check failed.", start)
            last_ttl = ttl
            if ttl:
                value.set_ttl(field, ttl, place=False)
    value.recount()
    if ex:
        value.mark_ex()
    _fit_hash(value, limits)
    return value


def _read_set(r: f.Reader, kind: int, limits: Limits) -> Set:
    set_limits = limits.set_limits
    start = r.pos
    if kind == f.TYPE_SET_INTSET:
        blob = r.string("an intset")
        r.checked += 1
        try:
            values, width = intset.decode(blob)
        except ValueError as exc:
            raise r.error(f"intset: {exc}", start) from None
        if not values:
            raise EmptyValue
        value = Set(INTSET)
        value.ints = array(_INT_CODES[width], values)
        if len(values) > min(set_limits.intset_entries, 1 << 30):
            value.convert(HASHTABLE)
        return value
    if kind == f.TYPE_SET_LISTPACK:
        members = _packed(r, "a set listpack", False)
        if not members:
            raise EmptyValue
        value = Set(LISTPACK)
        lp = dict.fromkeys(members)
        if len(lp) != len(members):
            raise r.error("duplicate set members detected", start)
        value.lp = lp
        value.recount()
        if len(members) > set_limits.listpack_entries:
            value.convert(HASHTABLE)
        return value
    count = r.length("a set size")
    if count == 0:
        raise EmptyValue
    members = _strings_run(r, count) or [r.string("a set member") for _ in range(count)]
    if len(set(members)) != len(members):
        raise r.error("duplicate set members detected", start)
    ints = [integer_value(m) for m in members]
    if count <= min(set_limits.intset_entries, 1 << 30) and all(v is not None for v in ints):
        value = Set(INTSET)
        values = sorted(v for v in ints if v is not None)
        value.ints = array(_INT_CODES[intset.width_for(values)], values)
        return value
    if count <= set_limits.listpack_entries and max(map(len, members)) <= \
            set_limits.listpack_value and count <= set_limits.intset_entries:
        # Redis starts an intset and turns it into a listpack at the first non-integer:
        # the integers read before it come out sorted.
        first = next(i for i, v in enumerate(ints) if v is None)
        head = sorted(members[:first], key=lambda m: integer_value(m) or 0)
        value = Set(LISTPACK)
        value.lp = dict.fromkeys(head + members[first:])
        value.recount()
        return value
    value = Set(HASHTABLE)
    value.ht = set(members)
    value.recount()
    return value


def _read_zset(r: f.Reader, kind: int, limits: Limits) -> ZSet:
    start = r.pos
    entries: list[tuple[float, bytes]] = []
    if kind in (f.TYPE_ZSET_LISTPACK, f.TYPE_ZSET_ZIPLIST):
        items = _packed(r, "a sorted set listpack", kind == f.TYPE_ZSET_ZIPLIST)
        if len(items) % 2:
            raise r.error("sorted set listpack holds an incomplete member", start)
        for i in range(0, len(items), 2):
            # A score as ZADD reads it: no NaN, nothing strtod would stop short of.
            score = parse_score(items[i + 1])
            if score is None:
                raise r.error("unreadable score in a sorted set listpack", start)
            entries.append((score, items[i]))
        packed = True
    else:
        count = r.length("a sorted set size")
        fast = f.read_scored if kind == f.TYPE_ZSET_2 else None
        got = fast(r.data, r.pos, count) if fast is not None else None
        if got is not None:  # else read one by one below, which says where and why
            names, scores, r.pos = got
            entries = list(zip(scores, names, strict=True))
            count = 0
        for _ in range(count):
            member = r.string("a sorted set member")
            score = r.binary_double() if kind == f.TYPE_ZSET_2 else r.string_double()
            if score != score:
                raise r.error("zset with NAN score detected")
            entries.append((score, member))
        packed = False
    if not entries:
        raise EmptyValue
    members = {m for _, m in entries}
    if len(members) != len(entries):
        raise r.error("duplicate zset fields detected", start)
    if packed:
        small = len(entries) <= limits.zset_entries
    else:
        small = len(entries) <= limits.zset_entries and \
            max(len(m) for _, m in entries) <= limits.zset_value
    if small:
        # As ZSet.compact: a listpack holds an integral score as an integer, so -0 is 0.
        entries = [(0.0 if s == 0.0 else s, m) for s, m in entries]
    return ZSet.from_entries(entries, skiplist=not small)


def _read_stream(r: f.Reader, kind: int, keep: bool = True) -> Stream:
    value = Stream()
    nodes = r.length("a stream node count")
    forms: list[tuple[StreamNode, bytes, int, int]] = []
    for _ in range(nodes):
        at = start = r.pos
        key = r.string("a stream node key")
        if len(key) != 16:
            raise r.error("stream node key entry is not the size of a stream ID", at)
        at = r.pos
        blob = r.string("a stream node listpack")
        r.checked += 1
        try:
            master = int.from_bytes(key, "big")
            node = StreamNode.from_blob(master, blob) or \
                StreamNode.from_listpack(master, listpack.decode(blob), len(blob))
        except (ValueError, IndexError, TypeError, OverflowError) as exc:
            raise r.error(f"stream listpack integrity check failed ({exc})", at) from None
        if value.keys and node.master <= value.keys[-1]:
            raise r.error("stream nodes out of order", at)
        value.nodes.append(node)
        value.keys.append(node.master)
        if keep and r.data[at] == f.LZF_HEAD:
            # The node exactly as a compressed snapshot writes it (the bytes it was read
            # from), kept so that the next save copies it: see Stream.keep_packed. Its
            # checksum is part of a whole file's, so computing it here costs a load nothing.
            form = bytes(r.data[start:r.pos])
            forms.append((node, form, *r.part_checksum(start, form)))
    for node, form, crc, shift in forms[:-1]:
        value.keep_packed(node, form, crc, shift)
    value.length = r.length("the stream length")
    value.last_id = _read_id_pair(r)
    if kind >= f.TYPE_STREAM_LISTPACKS_2:
        value.first_id = _read_id_pair(r)
        value.max_deleted_id = _read_id_pair(r)
        value.entries_added = r.length("the entries-added counter")
    else:
        value.entries_added = value.length
        # The first live entry's id (check_loaded then holds the length to the entries);
        # with none, the largest id, as Redis's streamGetEdgeID answers.
        first = value.first_entry()
        value.first_id = first[0] if first is not None else MAX_ID
    try:
        value.check_loaded()
    except ValueError as exc:
        raise r.error(str(exc)) from None
    value.recount()
    for _ in range(r.length("a consumer group count")):
        name = r.string("a consumer group name")
        last = _read_id_pair(r)
        if kind >= f.TYPE_STREAM_LISTPACKS_2:
            read = r.length("a group's entries-read")
            entries_read = read - (1 << 64) if read > (1 << 63) - 1 else read
            # As XGROUP keeps it: unknown (-1), or at most the entries ever added.
            if not INVALID_ENTRIES_READ <= entries_read <= value.entries_added:
                raise r.error("consumer group entries-read out of range")
        else:
            entries_read = value.estimate_entries_read(last)
        group = value.create_group(name, last, entries_read)
        if group is None:
            raise r.error(f"duplicated consumer group name {name!r}")
        _read_group_pel(r, group, kind)
    if kind >= f.TYPE_STREAM_LISTPACKS_4:
        _read_stream_idmp(r, value)
    return value


def _read_stream_idmp(r: f.Reader, value: Stream) -> None:
    """Redis 8.6's idempotent-producer state: duration, maxsize, each producer's iids (with
    their entry ids, oldest first), then the lifetime counters. A stream that never used
    IDMP (the defaults, nothing tracked or counted) keeps none."""
    duration = r.length("the IDMP duration")
    if not IDMP_DURATION_RANGE[0] <= duration <= IDMP_DURATION_RANGE[1]:
        raise r.error("Stream IDMP duration out of range")
    maxsize = r.length("the IDMP max entries")
    if not IDMP_MAXSIZE_RANGE[0] <= maxsize <= IDMP_MAXSIZE_RANGE[1]:
        raise r.error("Stream IDMP max entries out of range")
    tracked: list[tuple[int, int, bytes, bytes]] = []
    producers: set[bytes] = set()
    for _ in range(r.length("an IDMP producer count")):
        pid = r.string("an IDMP producer id")
        if pid in producers:
            raise r.error("duplicated IDMP producer")
        producers.add(pid)
        for _ in range(r.length("an IDMP entry count")):
            iid = r.string("an idempotent id")
            sid = (r.length("an IDMP entry id") << 64) | r.length("an IDMP entry id")
            tracked.append((sid, len(tracked), pid, iid))
    added = r.length("the IDMP iids added")
    duplicates = r.length("the IDMP duplicates")
    if (not tracked and not added and not duplicates
            and (duration, maxsize) == (IDMP_DEFAULT_DURATION, IDMP_DEFAULT_MAXSIZE)):
        return
    state = IdmpState(duration, maxsize)
    state.iids_added = added
    state.iids_duplicates = duplicates
    # resplite keeps every producer's iids in one order, that of their entry ids.
    for sid, _, pid, iid in sorted(tracked):
        known = state.producers.get(pid)
        if known is None:
            known = state.producers[pid] = OrderedDict()
        if iid in known:  # Redis skips a duplicate when it loads
            continue
        known[iid] = sid
        state.order[(pid, iid)] = sid
    value.idmp = state


def _read_group_pel(r: f.Reader, group: ConsumerGroup, kind: int) -> None:
    waiting: dict[int, PendingEntry] = {}
    for _ in range(r.length("a PEL size")):
        sid = int.from_bytes(r.take(16, "a PEL entry id"), "big")
        when = r.millis("a delivery time")
        count = r.length("a delivery count")
        if count > MAX_DELIVERY_COUNT:
            raise r.error("PEL entry delivery count out of range")
        if sid in waiting:
            raise r.error("duplicated global PEL entry loading stream consumer group")
        waiting[sid] = PendingEntry(None, when, count)
    for _ in range(r.length("a consumer count")):
        name = r.string("a consumer name")
        seen = r.millis("a consumer's seen time")
        active = r.millis("a consumer's active time") \
            if kind >= f.TYPE_STREAM_LISTPACKS_3 else seen
        if name in group.consumers:
            raise r.error("duplicate stream consumer detected")
        consumer = group.consumers[name] = Consumer(name, seen)
        consumer.active_time = active
        ids = []
        for _ in range(r.length("a consumer PEL size")):
            sid = int.from_bytes(r.take(16, "a consumer PEL entry id"), "big")
            nack = waiting.get(sid)
            if nack is None:
                raise r.error("consumer entry not found in group global PEL")
            if nack.consumer is not None:
                raise r.error("duplicated consumer PEL entry loading a stream consumer group")
            nack.consumer = consumer
            ids.append(sid)
        consumer.pel = SortedIds(sorted(ids))
    for sid in sorted(waiting):
        nack = waiting[sid]
        if nack.consumer is None:
            raise r.error("stream CG PEL entry without consumer")
        group.pel[sid] = nack
        group.refs[sid] = group.refs.get(sid, 0) + 1
    group.pel_ids = SortedIds(sorted(waiting))


def _read_id_pair(r: f.Reader) -> int:
    ms = r.length("an id's milliseconds")
    seq = r.length("an id's sequence")
    return (ms << 64) | seq
