"""One stream node: up to ``stream-node-max-entries`` entries packed without per-entry objects.

A node mirrors one of Redis's stream listpacks. It is keyed by its *master id* (the id of
the first entry ever added to it) and carries the *master fields* (that entry's field
names), shared by every later entry of the node that has exactly the same field names.
Entries are never moved or removed inside a node: deleting one sets its tombstone flag,
as Redis marks listpack entries deleted; a node disappears only as a whole.

Layout, per node (no Python object per entry, so nothing for the cyclic collector to walk):

* ``ms`` / ``seq``: the entries' id halves, in id order: milliseconds as offsets from the
  master id's, sequences as they are, each in an ``array('I')`` (4 bytes an entry) that
  widens to ``array('Q')`` the first time a value needs more than 32 bits;
* ``flags``: one byte per entry: :data:`DELETED`, :data:`SAME_FIELDS`;
* ``offs``: ``array('I')``, where each entry starts in ``data``;
* ``data``: the entries' strings, each preceded by its length as a base-128 varint. An entry
  with the master fields stores only its values; any other entry stores the number of
  fields, then field, value, field, value ... The tail node's ``data`` is a growing
  ``bytearray``; a node is *sealed* (exact-size ``bytes`` and arrays) once a newer node is
  started.

``count`` (live entries), ``deleted`` (tombstones) and ``lp_bytes`` (the byte size Redis's
listpack for the same node would have) are kept exact, because they decide when Redis opens
a new node and therefore what approximate trimming removes.

``packed`` is the node as a compressed snapshot writes it (its master id and listpack as RDB
strings), with its CRC-64 and join factor (``packed_crc``, ``packed_shift``), kept by
:class:`~resplite.store.stream.Stream` (which owns the choice and its memory figure) once a
save has built it, so the next one copies it instead of encoding and compressing again; the
node drops it when an entry is deleted. Nothing is ever appended to a node with a packed
form: the stream keeps none for its last node, the one XADD appends to.

Invariants: ``len(ms) == len(seq) == len(flags) == len(offs) == count + deleted``; ids are
strictly increasing; ``count + deleted >= 1``; ``packed`` is None or was built from the
node's entries, flags and counters as they are now.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Any, Final

from resplite.store.listpack import (
    SMALL_INTS,
    c_same_fields_node,
    c_stream_node,
    encode_int,
    encode_str,
    join,
)
from resplite.store.listpack_size import (
    LISTPACK_EMPTY,
    as_int64,
    delta_size,
    entry_size,
    int_size,
    str_size,
)

# The largest listpack Redis builds: a node never grows past it, whatever the config says.
LISTPACK_MAX_SIZE: Final = 1 << 30

DELETED: Final = 1
SAME_FIELDS: Final = 2
_U64: Final = (1 << 64) - 1
# What each entry costs beyond its packed data: a 4-byte item in each of the ms, seq and
# offs arrays and a flags byte.
ENTRY_ARRAYS: Final = 13
# Counts after which a listpack integer needs one more byte (127 -> 128 and so on).
_SIZE_STEPS: Final = frozenset({127, 4095, 32767, 8388607, 2147483647})
# What a same-fields entry with small id deltas and one short non-numeric value of n bytes
# adds, less n: the listpack-size helper's own figure, so push's inline case cannot drift.
_SMALL_TEXT_ENTRY: Final = entry_size(0, 0, True, 1, [b"x"]) - 1
# The extra bytes of a delta element in the 13-bit integer range, as the helper sizes it.
_DELTA_13BIT: Final = delta_size(-4096) - 2
# A short text value's listpack element is its head byte (0x80 | length), the bytes, and its
# back-length (length + 1): the two one-byte pieces for each length, built once.
_STR_HEAD: Final = [bytes((0x80 | n,)) for n in range(64)]
_STR_BACK: Final = [bytes((n + 1,)) for n in range(64)]


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_ONE_BYTE: Final = [bytes((n,)) for n in range(0x80)]
# The flags of an entry with the master fields, live or deleted (from_same_fields).
_SAME_FLAGS: Final = frozenset({SAME_FIELDS, SAME_FIELDS | DELETED})
_INTS: Final = {int}


def _entry_template(fields: tuple[bytes, ...]) -> bytes:
    """The ``%`` template of an entry with the master ``fields``: its id's length and
    text, then each value's length and bytes (field names already encoded in it)."""
    return b"*2\r\n$%%d\r\n%%b\r\n*%d\r\n" % (2 * len(fields)) + b"".join(
        b"$%d\r\n%b\r\n" % (len(f), f.replace(b"%", b"%%")) + b"$%d\r\n%b\r\n"
        for f in fields)


def _same_fields_resp(template: bytes, data: bytes | bytearray, p: int, idb: bytes,
                      nfields: int) -> bytes:
    """A master-fields entry's RESP from its values at ``p`` (the general case of the range
    encoders' loops, which inline the two-short-values one)."""
    args: list[object] = [len(idb), idb]
    for _ in range(nfields):
        ln = data[p]
        if ln < 0x80:
            p += 1
        else:
            ln, p = _read_len(data, p)
        args.append(ln)
        args.append(data[p : p + ln])
        p += ln
    return template % tuple(args)


def _read_len(data: bytes | bytearray, p: int) -> tuple[int, int]:
    """A varint length at ``p``: (value, position after it)."""
    n = data[p]
    if n < 0x80:
        return n, p + 1
    value = n & 0x7F
    shift = 7
    p += 1
    while True:
        b = data[p]
        p += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, p
        shift += 7


class StreamNode:
    __slots__ = (
        "count",
        "data",
        "deleted",
        "fields",
        "flags",
        "lp_bytes",
        "master",
        "master_ms",
        "master_seq",
        "ms",
        "offs",
        "packed",
        "packed_crc",
        "packed_shift",
        "resp_fields",
        "seq",
    )

    def __init__(self, master: int, fields: tuple[bytes, ...]) -> None:
        self.master = master
        self.master_ms = master >> 64
        self.master_seq = master & _U64
        self.fields = fields
        # The master fields as RESP bulk strings, built on the first read (see entry_resp).
        self.resp_fields: list[bytes] | None = None
        self.packed: bytes | None = None
        self.packed_crc = 0  # the packed form's CRC-64 and its length's join factor
        self.packed_shift = 0
        self.ms = array("I")  # millisecond offsets from master_ms
        self.seq = array("I")
        self.flags = bytearray()
        self.offs = array("I")
        self.data: bytes | bytearray = bytearray()
        self.count = 0
        self.deleted = 0
        # Redis's master entry: count, deleted, number of fields, the fields, a terminator.
        self.lp_bytes = (
            LISTPACK_EMPTY + int_size(0) + int_size(0) + int_size(len(fields))
            + sum(str_size(f) for f in fields) + int_size(0)
        )

    def __len__(self) -> int:
        return len(self.flags)

    # -- building ---------------------------------------------------------------------------

    def push(
        self, sid: int, argv: list[bytes], start: int, max_entries: int, max_bytes: int
    ) -> bool:
        """Add an entry (pairs ``argv[start:]``) if Redis would put it in this node.

        Returns False, changing nothing, when Redis would open a new node instead: the node
        holds ``max_entries`` entries (tombstones included, 0 for no limit) or its listpack
        size plus the entry's raw length reaches ``max_bytes``. XADD's inner loop: the common
        entry, one field named as the master field, is added inline, without
        :meth:`append`'s general bookkeeping; both size it with the same
        :func:`~resplite.store.listpack_size.entry_size`.
        """
        nargs = len(argv) - start
        flags = self.flags
        if nargs == 2:
            value = argv[start + 1]
            n = len(value)
            raw = len(argv[start]) + n
        else:
            raw = sum(map(len, argv[start:]))
        if not 0 < max_bytes <= LISTPACK_MAX_SIZE:
            max_bytes = LISTPACK_MAX_SIZE
        lp = self.lp_bytes
        if lp + raw >= max_bytes or (max_entries and len(flags) >= max_entries):
            return False
        fields = self.fields
        if nargs != 2 or len(fields) != 1 or argv[start] != fields[0]:
            self.append(sid, argv, start, self.same_fields(argv, start))
            return True
        data = self.data
        if data.__class__ is not bytearray:
            data = self.data = bytearray(data)
        count = self.count
        dms = (sid >> 64) - self.master_ms
        seq = sid & _U64
        dseq = seq - self.master_seq
        c = value[0] if n else 0
        if n < 64 and (c > 57 or (c < 48 and c != 45)):
            # The hottest case: a short text value, sized by the figure entry_size gives for
            # it with small deltas, and the deltas' elements as entry_size sizes them.
            lp += _SMALL_TEXT_ENTRY + n
            if not 0 <= dms <= 127:
                lp += delta_size(dms) - 2
            if not 0 <= dseq <= 127:
                # A later millisecond's sequence below the master's: a small negative delta.
                lp += _DELTA_13BIT if -4096 <= dseq <= 4095 else delta_size(dseq) - 2
        else:
            lp += entry_size(dms, dseq, True, 1, [value])
        if count in _SIZE_STEPS:
            lp += 1  # the master entry's count takes one more byte from here on
        self.offs.append(len(data))
        if n < 0x80:
            data.append(n)
        else:
            data += _varint(n)
        data += value
        flags.append(SAME_FIELDS)
        try:
            self.ms.append(dms)
        except OverflowError:
            self.ms = array("Q", self.ms)
            self.ms.append(dms)
        try:
            self.seq.append(seq)
        except OverflowError:
            self.seq = array("Q", self.seq)
            self.seq.append(seq)
        self.count = count + 1
        self.lp_bytes = lp
        return True

    def append(self, sid: int, argv: list[bytes], start: int, same: bool) -> None:
        """Add an entry whose field/value pairs are ``argv[start:]``.

        Sizes come from :func:`~resplite.store.listpack_size.entry_size`, as for :meth:`push`.
        """
        ms = sid >> 64
        seq = sid & _U64
        data = self.data
        if data.__class__ is not bytearray:
            data = self.data = bytearray(data)
        old_count = self.count
        dms = ms - self.master_ms
        nvalues = (len(argv) - start) >> 1
        self.offs.append(len(data))
        if same:
            strings = argv[start + 1 :: 2]
        else:
            data += _varint(nvalues)
            strings = argv[start:]
        lp = self.lp_bytes + entry_size(dms, seq - self.master_seq, same, nvalues, strings)
        if old_count in _SIZE_STEPS:
            lp += 1  # the master entry's count takes one more byte from here on
        for v in strings:
            n = len(v)
            if n < 0x80:
                data.append(n)
            else:
                data += _varint(n)
            data += v
        self.flags.append(SAME_FIELDS if same else 0)
        if dms <= 0xFFFFFFFF:
            self.ms.append(dms)
        else:
            if self.ms.typecode == "I":
                self.ms = array("Q", self.ms)
            self.ms.append(dms)
        if seq <= 0xFFFFFFFF:
            self.seq.append(seq)
        else:
            if self.seq.typecode == "I":
                self.seq = array("Q", self.seq)
            self.seq.append(seq)
        self.count = old_count + 1
        self.lp_bytes = lp

    @classmethod
    def from_listpack(cls, master: int, items: list[Any], lp_bytes: int) -> StreamNode:
        """A sealed node rebuilt from the elements of its listpack (``lp_bytes`` long;
        integers as ``int``, strings as ``bytes``), laid out as :meth:`listpack` writes
        them; ValueError when they do not describe a node.

        The load path (RDB, RESTORE): entries go straight into the node's arrays and one
        ``data`` join, without :meth:`append`'s per-entry sizing (the listpack's size is
        known). The common node, every entry with the master fields and short values, is
        read column by column (:meth:`from_same_fields`); any other goes entry by entry
        (:meth:`from_listpack_general`), which also words every error."""
        node = cls.from_same_fields(master, items, lp_bytes)
        if node is not None:
            return node
        return cls.from_listpack_general(master, items, lp_bytes)

    @classmethod
    def from_blob(cls, master: int, blob: bytes) -> StreamNode | None:
        """:meth:`from_same_fields`'s node read straight from the listpack ``blob`` in C
        (no Python object per element), or None: where the extension is not built, or
        where :meth:`from_same_fields` would answer None or the listpack does not decode
        (the caller then decodes it and takes :meth:`from_listpack`). A test holds the
        nodes equal."""
        fast = c_same_fields_node
        if fast is None:
            return None
        got = fast(blob, master & _U64)
        if got is None:
            return None
        fields, ms, ms_wide, seq, seq_wide, offs, flags, data, count, deleted = got
        node = cls(master, fields)
        node.ms = array("Q" if ms_wide else "I")
        node.ms.frombytes(ms)
        node.seq = array("Q" if seq_wide else "I")
        node.seq.frombytes(seq)
        node.offs = array("I")
        node.offs.frombytes(offs)
        node.flags = bytearray(flags)
        node.data = data
        node.count = count
        node.deleted = deleted
        node.lp_bytes = len(blob)
        return node

    @classmethod
    def from_same_fields(cls, master: int, items: list[Any], lp_bytes: int) -> StreamNode | None:
        """:meth:`from_listpack_general`'s node for a listpack whose entries all have the
        master fields, with values shorter than 128 bytes (one varint byte each), built from
        slices of ``items`` (each column of the entries at once) instead of a loop step per
        element; None for any other listpack, well-formed or not (the general path then
        decides). A test holds the two equal."""
        count, deleted, nfields = items[0], items[1], items[2]
        if not (count.__class__ is int and deleted.__class__ is int
                and nfields.__class__ is int) or nfields < 1:
            return None
        p = 4 + nfields  # past the master entry and its terminator
        stride = nfields + 4  # flags, ms, seq, the values, lp-count
        body = len(items) - p
        if body <= 0 or body % stride or items[p - 1].__class__ is not int \
                or items[p - 1] != 0:
            return None
        flag_list = items[p::stride]
        if not set(flag_list) <= _SAME_FLAGS:
            return None
        tails = set(items[p + stride - 1::stride])
        if len(tails) != 1 or tails.pop() != nfields + 3:
            return None
        ms_list = items[p + 1::stride]
        dseq_list = items[p + 2::stride]
        if {x.__class__ for x in ms_list} != _INTS or {x.__class__ for x in dseq_list} != _INTS:
            return None
        master_seq = master & _U64
        seq_list = [(master_seq + d) & _U64 for d in dseq_list]
        last_ms = last_seq = -1
        for dms, seq in zip(ms_list, seq_list, strict=True):
            if dms < last_ms or (dms == last_ms and seq <= last_seq):
                return None
            last_ms = dms
            last_seq = seq
        if ms_list[0] < 0:
            return None
        dead = flag_list.count(SAME_FIELDS | DELETED)
        if dead != deleted or len(flag_list) - dead != count:
            return None
        columns = []
        for k in range(nfields):
            column = items[p + 3 + k::stride]
            if int in {x.__class__ for x in column}:
                column = [b"%d" % x if x.__class__ is int else x for x in column]
            columns.append(column)
        flat = columns[0] if nfields == 1 else [v for vs in zip(*columns, strict=True) for v in vs]
        lens = list(map(len, flat))
        if max(lens) >= 0x80:
            return None
        one_byte = _ONE_BYTE
        parts: list[bytes] = [b""] * (2 * len(flat))
        parts[::2] = [one_byte[n] for n in lens]
        parts[1::2] = flat
        if nfields == 1:
            sizes = [n + 1 for n in lens]
        elif nfields == 2:
            sizes = [a + b + 2 for a, b in zip(lens[::2], lens[1::2], strict=True)]
        else:
            sizes = [nfields + sum(t)
                     for t in zip(*(lens[k::nfields] for k in range(nfields)), strict=True)]
        node = cls(master, tuple(b"%d" % x if x.__class__ is int else x
                                 for x in items[3:3 + nfields]))
        offs = array("I", accumulate(sizes, initial=0))
        offs.pop()
        node.ms = array("I" if last_ms <= 0xFFFFFFFF else "Q", ms_list)
        node.seq = array("I" if max(seq_list) <= 0xFFFFFFFF else "Q", seq_list)
        node.offs = offs
        node.flags = bytearray(flag_list)
        node.data = b"".join(parts)
        node.count = count
        node.deleted = dead
        node.lp_bytes = lp_bytes
        return node

    @classmethod
    def from_listpack_general(cls, master: int, items: list[Any], lp_bytes: int) -> StreamNode:
        """:meth:`from_listpack` entry by entry, for any listpack."""
        count, deleted, nfields = items[0], items[1], items[2]
        if not (count.__class__ is int and deleted.__class__ is int
                and nfields.__class__ is int) or nfields < 0:
            raise ValueError("master entry counters are not integers")
        fields = tuple(b"%d" % x if x.__class__ is int else x for x in items[3:3 + nfields])
        p = 3 + nfields
        n = len(items)
        if p >= n or items[p] != 0:
            raise ValueError("master entry not terminated")
        p += 1
        node = cls(master, fields)
        master_seq = node.master_seq
        one_byte = _ONE_BYTE
        ms_list: list[int] = []
        seq_list: list[int] = []
        offs_list: list[int] = []
        flags = bytearray()
        parts: list[bytes] = []
        append = parts.append
        size = 0
        live = dead = 0
        last_ms = last_seq = -1
        same_count = nfields + 3
        while p < n:
            if p + 3 > n:
                raise ValueError("entry cut short")
            flag, dms, dseq = items[p], items[p + 1], items[p + 2]
            if not (flag.__class__ is int and dms.__class__ is int and dseq.__class__ is int):
                raise ValueError("entry header is not integers")
            p += 3
            offs_list.append(size)
            if flag & SAME_FIELDS:
                k = nfields
                expect = same_count
            else:
                k = items[p] if p < n else -1
                if k.__class__ is not int or k < 0:
                    raise ValueError("entry field count is not an integer")
                head = _varint(k)
                append(head)
                size += len(head)
                p += 1
                expect = 2 * k + 4
                k *= 2
            if p + k >= n:
                raise ValueError("entry cut short")
            for x in items[p:p + k]:
                if x.__class__ is int:
                    x = b"%d" % x
                ln = len(x)
                if ln < 0x80:
                    append(one_byte[ln])
                    size += 1 + ln
                else:
                    head = _varint(ln)
                    append(head)
                    size += len(head) + ln
                append(x)
            p += k
            if items[p] != expect:
                raise ValueError("entry lp-count does not match")
            p += 1
            seq = (master_seq + dseq) & _U64
            # Both deltas are added as Redis adds them, modulo 2^64: a millisecond delta of
            # 2^63 or more is written as a negative integer (as_int64). An offset that takes
            # the id past 64 bits is the stream's to refuse (Stream.check_loaded).
            dms &= _U64
            if dms < last_ms or (dms == last_ms and seq <= last_seq):
                raise ValueError("entry ids out of order")
            last_ms = dms
            last_seq = seq
            ms_list.append(dms)
            seq_list.append(seq)
            if flag & DELETED:
                flags.append(flag & (DELETED | SAME_FIELDS))
                dead += 1
            else:
                flags.append(flag & SAME_FIELDS)
                live += 1
        if live != count or dead != deleted:
            raise ValueError("master entry counters disagree with the entries")
        if not live and not dead:
            raise ValueError("empty listpack inside stream")
        node.ms = array("I" if last_ms <= 0xFFFFFFFF else "Q", ms_list)
        node.seq = array("I" if max(seq_list) <= 0xFFFFFFFF else "Q", seq_list)
        node.offs = array("I", offs_list)
        node.flags = flags
        node.data = b"".join(parts)
        node.count = live
        node.deleted = dead
        node.lp_bytes = lp_bytes
        return node

    def seal(self) -> None:
        """Shrink to exact-size storage: no more appends are expected."""
        if self.data.__class__ is bytearray:
            self.data = bytes(self.data)
        self.ms = array(self.ms.typecode, self.ms)
        self.seq = array(self.seq.typecode, self.seq)
        self.offs = array("I", self.offs)
        self.flags = bytearray(self.flags)

    def same_fields(self, argv: list[bytes], start: int) -> bool:
        fields = self.fields
        if (len(argv) - start) >> 1 != len(fields):
            return False
        j = start
        for f in fields:
            if argv[j] != f:
                return False
            j += 2
        return True

    # -- reading ----------------------------------------------------------------------------

    def id_at(self, i: int) -> int:
        return ((self.master_ms + self.ms[i]) << 64) | self.seq[i]

    def last_id(self) -> int:
        """The id of the node's last entry, tombstone or not."""
        return ((self.master_ms + self.ms[-1]) << 64) | self.seq[-1]

    def lower_bound(self, sid: int) -> int:
        """Position of the first entry with an id >= ``sid``."""
        ms = (sid >> 64) - self.master_ms
        if ms < 0:
            return 0
        lo = bisect_left(self.ms, ms)
        hi = bisect_right(self.ms, ms, lo)
        if lo == hi:
            return lo
        return bisect_left(self.seq, sid & _U64, lo, hi)

    def upper_bound(self, sid: int) -> int:
        """Position of the first entry with an id > ``sid``."""
        ms = (sid >> 64) - self.master_ms
        if ms < 0:
            return 0
        lo = bisect_left(self.ms, ms)
        hi = bisect_right(self.ms, ms, lo)
        if lo == hi:
            return lo
        return bisect_right(self.seq, sid & _U64, lo, hi)

    def find(self, sid: int) -> int:
        """Position of the live entry ``sid``, or -1."""
        # lower_bound, inline: the entry can only be among those of sid's millisecond.
        ms = (sid >> 64) - self.master_ms
        if ms < 0:
            return -1
        lo = bisect_left(self.ms, ms)
        hi = bisect_right(self.ms, ms, lo)
        if lo == hi:
            return -1
        seq = sid & _U64
        i = bisect_left(self.seq, seq, lo, hi)
        if i < hi and self.seq[i] == seq and not self.flags[i] & DELETED:
            return i
        return -1

    def fields_at(self, i: int) -> list[bytes]:
        """The entry's field/value pairs, flattened."""
        data = self.data
        p = self.offs[i]
        out: list[bytes] = []
        append = out.append
        if data.__class__ is bytearray:
            data = bytes(data[p : self.offs[i + 1] if i + 1 < len(self.offs) else len(data)])
            p = 0
        if self.flags[i] & SAME_FIELDS:
            for f in self.fields:
                n = data[p]
                if n < 0x80:
                    p += 1
                else:
                    n, p = _read_len(data, p)
                append(f)
                append(data[p : p + n])  # type: ignore[arg-type]
                p += n
        else:
            nvalues, p = _read_len(data, p)
            for _ in range(2 * nvalues):
                n = data[p]
                if n < 0x80:
                    p += 1
                else:
                    n, p = _read_len(data, p)
                append(data[p : p + n])  # type: ignore[arg-type]
                p += n
        return out

    def entry_resp(self, i: int, sid: int, out: list[bytes]) -> None:
        """Append the wire form of entry ``i`` (id ``sid``), ``[id, [field, value ...]]``.

        The same bytes in RESP2 and RESP3. Read replies are built this way, straight from the
        packed data, so no list or bytes object per field is made on the way to the socket.
        """
        data = self.data
        p = self.offs[i]
        idb = b"%d-%d" % (sid >> 64, sid & _U64)
        if self.flags[i] & SAME_FIELDS:
            heads = self.resp_fields
            if heads is None:
                heads = self.resp_fields = [b"$%d\r\n%b\r\n" % (len(f), f) for f in self.fields]
            out.append(b"*2\r\n$%d\r\n%b\r\n*%d\r\n" % (len(idb), idb, 2 * len(heads)))
            for head in heads:
                n = data[p]
                if n < 0x80:
                    p += 1
                else:
                    n, p = _read_len(data, p)
                out.append(b"%b$%d\r\n%b\r\n" % (head, n, data[p : p + n]))  # type: ignore[str-format]
                p += n
        else:
            nvalues, p = _read_len(data, p)
            out.append(b"*2\r\n$%d\r\n%b\r\n*%d\r\n" % (len(idb), idb, 2 * nvalues))
            for _ in range(2 * nvalues):
                n = data[p]
                if n < 0x80:
                    p += 1
                else:
                    n, p = _read_len(data, p)
                out.append(b"$%d\r\n%b\r\n" % (n, data[p : p + n]))  # type: ignore[str-format]
                p += n

    def resp_from(self, i: int, end: int, limit: int, out: list[bytes]) -> tuple[int, bool]:
        """Append the wire form (as :meth:`entry_resp`) of the live entries from index
        ``i`` on whose ids are at most ``end``, at most ``limit`` of them (0: no limit);
        returns (how many, whether an id past ``end`` or the limit stopped it).

        XRANGE's inner loop, run here so that an entry costs no generator step or method
        call: an entry with the master fields is one ``%`` format of a template built once
        per call (the field names already encoded in it) with its id and values, and ids
        are compared as (ms, seq) pairs of small integers."""
        flags = self.flags
        data = self.data
        offs = self.offs
        ms = self.ms
        seq = self.seq
        base = self.master_ms
        nfields = len(self.fields)
        template = _entry_template(self.fields)
        end_ms = end >> 64
        end_seq = end & _U64
        two = nfields == 2
        n = len(flags)
        taken = 0
        append = out.append
        while i < n:
            flag = flags[i]
            if flag & DELETED:
                i += 1
                continue
            m = base + ms[i]
            sq = seq[i]
            if m >= end_ms and (m > end_ms or sq > end_seq):
                return taken, True
            if flag & SAME_FIELDS:
                idb = b"%d-%d" % (m, sq)
                p = offs[i]
                a = data[p]
                if two and a < 0x80:
                    q = p + 1 + a
                    b = data[q]
                    if b < 0x80:
                        # Two fields with short values, the common entry.
                        append(template % (len(idb), idb, a, data[p + 1 : q], b,
                                           data[q + 1 : q + 1 + b]))
                        taken += 1
                        if taken == limit:
                            return taken, True
                        i += 1
                        continue
                append(_same_fields_resp(template, data, p, idb, nfields))
            else:
                self.entry_resp(i, (m << 64) | sq, out)
            taken += 1
            if taken == limit:
                return taken, True
            i += 1
        return taken, False

    def resp_back(self, i: int, start: int, limit: int, out: list[bytes]) -> tuple[int, bool]:
        """:meth:`resp_from` in reverse (XREVRANGE's loop): the live entries from index
        ``i`` down whose ids are at least ``start``, at most ``limit`` of them (0: no
        limit), newest first; returns (how many, whether an id below ``start`` or the
        limit stopped it)."""
        flags = self.flags
        data = self.data
        offs = self.offs
        ms = self.ms
        seq = self.seq
        base = self.master_ms
        nfields = len(self.fields)
        template = _entry_template(self.fields)
        start_ms = start >> 64
        start_seq = start & _U64
        two = nfields == 2
        taken = 0
        append = out.append
        while i >= 0:
            flag = flags[i]
            if flag & DELETED:
                i -= 1
                continue
            m = base + ms[i]
            sq = seq[i]
            if m <= start_ms and (m < start_ms or sq < start_seq):
                return taken, True
            if flag & SAME_FIELDS:
                idb = b"%d-%d" % (m, sq)
                p = offs[i]
                a = data[p]
                if two and a < 0x80:
                    q = p + 1 + a
                    b = data[q]
                    if b < 0x80:
                        append(template % (len(idb), idb, a, data[p + 1 : q], b,
                                           data[q + 1 : q + 1 + b]))
                        taken += 1
                        if taken == limit:
                            return taken, True
                        i -= 1
                        continue
                append(_same_fields_resp(template, data, p, idb, nfields))
            else:
                self.entry_resp(i, (m << 64) | sq, out)
            taken += 1
            if taken == limit:
                return taken, True
            i -= 1
        return taken, False

    def listpack(self) -> bytes:
        """The listpack Redis holds for this node, tombstones included (RDB, DUMP).

        Redis's layout: the master entry (live count, tombstone count, number of master
        fields, the fields, a 0 terminator), then per entry its flags, the id's millisecond
        and sequence differences from the master id, the values (an entry with the master
        fields) or the field count and the pairs (any other), and ``lp-count``, the number
        of elements the entry used before it. Written in one pass over ``data`` (entries are
        stored in order, so no offsets are read): a short value that cannot read as an
        integer is copied with a head and back-length byte from tables, the common id
        header is one ``%`` format; anything else takes :func:`encode_str` /
        :func:`encode_int`. :func:`resplite.formats.rdb_values.node_listpack_general`
        builds the same bytes element by element (a test holds them equal). Built in C
        where the extension is (:func:`resplite.store.listpack.c_stream_node`), else by
        :meth:`listpack_py`."""
        fast = c_stream_node
        if fast is not None:
            return fast(self.count, self.deleted, self.fields, self.flags, self.ms, self.seq,
                        self.master_seq, self.data)
        return self.listpack_py()

    def listpack_py(self) -> bytes:
        """:meth:`listpack` in pure Python."""
        fields = self.fields
        nfields = len(fields)
        parts = [encode_int(self.count), encode_int(self.deleted), encode_int(nfields)]
        parts += [encode_str(name) for name in fields]
        parts.append(SMALL_INTS[0])
        same_tail = encode_int(nfields + 3)
        append = parts.append
        heads = _STR_HEAD
        backs = _STR_BACK
        flags = self.flags
        ms = self.ms
        seq = self.seq
        data = self.data
        master_seq = self.master_seq
        elements = 4 + nfields
        p = 0
        for i in range(len(flags)):
            flag = flags[i]
            dms = ms[i]
            dseq = seq[i] - master_seq
            if dms < 128 and 0 <= dseq < 128:
                append(b"%c\x01%c\x01%c\x01" % (flag, dms, dseq))
            else:
                append(SMALL_INTS[flag])
                append(encode_int(as_int64(dms)))
                append(encode_int(as_int64(dseq)))
            if flag & SAME_FIELDS:
                k = nfields
                elements += nfields + 4
            else:
                k, p = _read_len(data, p)
                append(encode_int(k))
                elements += 2 * k + 5
                k *= 2
            for _ in range(k):
                n = data[p]
                if n < 64:
                    p += 1
                    c = data[p] if n else 0
                    if c > 57 or (c < 48 and c != 45) or (c == 48 and n > 1):
                        # Text (a leading zero too): a string element.
                        append(heads[n])
                        append(data[p:p + n])  # type: ignore[arg-type]
                        append(backs[n])
                        p += n
                        continue
                    if c != 45 and n < 19:
                        # 1 to 18 characters from a digit 1-9: an integer if all are digits.
                        value = data[p:p + n]
                        append(encode_int(int(value)) if value.isdigit()
                               else encode_str(value))  # type: ignore[arg-type]
                        p += n
                        continue
                else:
                    n, p = _read_len(data, p)
                append(encode_str(data[p:p + n]))  # type: ignore[arg-type]
                p += n
            if flag & SAME_FIELDS:
                append(same_tail)
            else:
                append(encode_int(k + 4))
        return join(parts, elements)

    def live_between(self, i: int, j: int) -> int:
        """How many entries with index in ``[i, j)`` are live (no tombstone)."""
        if self.deleted == 0:
            return max(j - i, 0)
        flags = self.flags[i:j]
        return flags.count(0) + flags.count(SAME_FIELDS)

    # -- tombstones ---------------------------------------------------------------------------

    def mark_deleted(self, i: int) -> None:
        """Turn entry ``i`` into a tombstone (the caller adjusts the stream's length)."""
        self.flags[i] |= DELETED
        self.packed = None
        self.set_counters(self.count - 1, self.deleted + 1)

    def set_counters(self, count: int, deleted: int) -> None:
        """Set the live and tombstone counts (after flags were set by the caller)."""
        self.packed = None
        self.lp_bytes += (
            int_size(count) - int_size(self.count) + int_size(deleted) - int_size(self.deleted)
        )
        self.count = count
        self.deleted = deleted

    def copy(self) -> StreamNode:
        node = StreamNode(self.master, self.fields)
        node.ms = array(self.ms.typecode, self.ms)
        node.seq = array(self.seq.typecode, self.seq)
        node.flags = bytearray(self.flags)
        node.offs = array("I", self.offs)
        node.data = bytes(self.data) if self.data.__class__ is bytearray else self.data
        node.count = self.count
        node.deleted = self.deleted
        node.lp_bytes = self.lp_bytes
        return node

    def memory(self) -> int:
        """Approximate bytes held by this node, in O(number of master fields): its packed
        data, :data:`ENTRY_ARRAYS` per entry (tombstones included), and the node's own
        objects and master fields. It changes only as entries are appended (an id array
        widened to 64 bits is still counted at 4 bytes an item), so a stream may keep the
        sum for its sealed nodes."""
        return (len(self.data) + ENTRY_ARRAYS * len(self.flags) + 400
                + sum(len(f) + 40 for f in self.fields))
