"""Whole RDB files: the snapshot a SAVE writes and a start-up loads, without any I/O.

Layout written (Redis 8.0's ``rdbSaveRio``, version 12): ``REDIS0012``; AUX fields
(``redis-ver``, ``redis-bits``, ``ctime``, ``used-mem``, ``aof-base``); for each non-empty
database, SELECTDB and RESIZEDB (keys, keys with an expiry), then per key an optional
EXPIRETIME_MS, an IDLE (LRU policies) or FREQ (LFU policies), the value type, the key and the
value; then resplite's own AUX fields for state newer than RDB 12 (see
:func:`~resplite.formats.rdb_values.stream_extras`); EOF; and the CRC-64 of everything before
it, little-endian (eight zero bytes when checksums are off, which loaders then skip).

:func:`write_snapshot` is a generator of byte chunks, so the caller streams a large data set
to disk without holding the whole file; it also checksums as it goes. :func:`read_snapshot`
parses a file held in memory and reports each key to a callback, with progress every so many
bytes; every problem raises :class:`~resplite.formats.rdb_format.RdbError` with the file offset
and what was expected there, or :class:`~resplite.formats.rdb_values.UnsupportedValue` naming
the key whose value resplite cannot hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from resplite.algorithms.crc64 import RunningCrc
from resplite.formats import rdb_format as f
from resplite.formats import rdb_values as v

# One snapshot record: (key, value, absolute expiry ms or None, idle seconds or None,
# LFU counter or None).
Record = tuple[bytes, Any, int | None, int | None, int | None]
# resplite's AUX field for a stream's state beyond RDB 12: value = db, key, extras.
STREAM_EXTRAS_AUX: Final = b"resplite-stream-extras"
_CHUNK: Final = 1 << 20


@dataclass(slots=True)
class DbSnapshot:
    """What one database contributes: its index, key counts and records."""

    index: int
    size: int
    expires: int
    records: Iterable[Record]


def write_snapshot(
    dbs: Iterable[DbSnapshot],
    aux: list[tuple[bytes, bytes]],
    *,
    compress: bool = True,
    checksum: bool = True,
    functions: Iterable[bytes] = (),
    keep: bool = False,
) -> Iterator[bytes]:
    """The bytes of an RDB file, in chunks of about a megabyte. ``keep``: streams keep
    their nodes' compressed forms for the next snapshot (see
    :func:`~resplite.formats.rdb_values.write_value`); a record's value is written before
    the next record is asked for, so the caller can charge its new size then."""
    crc = RunningCrc() if checksum else None
    out = bytearray(b"REDIS%04d" % f.RDB_VERSION)
    for key, value in aux:
        f.write_aux(out, key, value)
    for code in functions:
        out.append(f.OPCODE_FUNCTION2)
        f.write_string(out, code, compress)
    extras: list[tuple[int, bytes, bytes]] = []
    write_value = v.write_value
    value_type = v.value_type
    write_string = f.write_string
    write_millis = f.write_millis
    stream_cls = v.Stream
    for db in dbs:
        if not db.size:
            continue
        out.append(f.OPCODE_SELECTDB)
        f.write_len(out, db.index)
        out.append(f.OPCODE_RESIZEDB)
        f.write_len(out, db.size)
        f.write_len(out, db.expires)
        for key, value, expire, idle, freq in db.records:
            if expire is not None:
                out.append(f.OPCODE_EXPIRETIME_MS)
                write_millis(out, expire)
            if idle is not None:
                out.append(f.OPCODE_IDLE)
                f.write_len(out, idle)
            if freq is not None:
                out.append(f.OPCODE_FREQ)
                out.append(freq)
            if value.__class__ is bytes:  # the commonest value, without two calls
                out.append(f.TYPE_STRING)
                write_string(out, key, compress)
                write_string(out, value, compress)
            else:
                out.append(value_type(value))
                write_string(out, key, compress)
                write_value(out, value, compress, keep, crc)
                if value.__class__ is stream_cls:
                    more = v.stream_extras(value)
                    if more is not None:
                        extras.append((db.index, key, more))
            if len(out) >= _CHUNK:
                if crc is not None:
                    crc.update(out)
                    crc.done = 0  # of the next buffer
                yield bytes(out)
                out = bytearray()
    for index, key, more in extras:
        body = bytearray()
        f.write_len(body, index)
        f.write_string(body, key, False)
        body += more
        f.write_aux(out, STREAM_EXTRAS_AUX, bytes(body))
    out.append(f.OPCODE_EOF)
    out += (crc.update(out) if crc is not None else 0).to_bytes(8, "little")
    yield bytes(out)


@dataclass(slots=True)
class LoadReport:
    """What a load found besides the keys."""

    version: int = 0
    aux: dict[bytes, bytes] = field(default_factory=dict)
    keys_loaded: int = 0
    keys_expired: int = 0
    empty_keys_skipped: int = 0
    functions: int = 0
    libraries: list[bytes] = field(default_factory=list)  # the function libraries' code
    checked: int = 0  # packed blobs validated (see Reader.checked)


# Takes (db, key, value, expire, idle, freq); returns False when the key is already there.
KeySink = Callable[[int, bytes, Any, int | None, int | None, int | None], bool]
# Takes (db, keys, values): string keys without expiry; False when it stored none of them.
StringsSink = Callable[[int, list[bytes], list[bytes]], bool]


def read_snapshot(
    data: bytes | memoryview,
    on_key: KeySink,
    *,
    databases: int,
    limits: v.Limits = v.DEFAULT_LIMITS,
    now_ms: int | None = None,
    progress: Callable[[int], None] | None = None,
    progress_every: int = _CHUNK,
    base: int = 0,
    on_strings: StringsSink | None = None,
) -> tuple[LoadReport, int]:
    """Parse an RDB file (or an AOF's RDB preamble) and hand each key to ``on_key(db, key,
    value, expire, idle, freq)``, which answers False for a key already loaded. Keys whose
    expiry is before ``now_ms`` are counted and dropped (pass None to keep them, as an AOF
    base does). ``progress(offset)`` is called about every ``progress_every`` bytes. Returns
    the report and the offset just past the file (checksum included).

    ``on_strings(db, keys, values)``, where given, may store a run of string keys without
    expiry at once (read in C, where built): it answers False, storing nothing, when it
    will not (a key already there, a key twice), and each key then goes to ``on_key``."""
    view = memoryview(data)
    r = f.Reader(view, 0, base)
    r.checksum = RunningCrc()
    magic = r.take(9, "the RDB signature")
    if magic[:5] != b"REDIS":
        raise r.error("wrong signature: not an RDB file (it does not start with REDIS)", 0)
    try:
        version = int(magic[5:])
    except ValueError:
        raise r.error("unreadable RDB version in the signature", 5) from None
    if version < f.OLDEST_READABLE or version > f.NEWEST_READABLE:
        raise r.error(f"can't handle RDB format version {version}", 5)
    report = LoadReport(version=version)
    db = 0
    expire: int | None = None
    idle: int | None = None
    freq: int | None = None
    extras: list[tuple[int, bytes, bytes]] = []
    streams: dict[tuple[int, bytes], Any] = {}
    next_progress = progress_every
    size = len(view)
    scan = f.scan_strings
    while True:
        if progress is not None and r.pos >= next_progress:
            # The checksum is brought up to date as the file is read, so the end of a large
            # load does not pause for seconds to checksum it all at once.
            r.checksum.update(view, r.pos)
            progress(r.pos)
            next_progress = r.pos + progress_every
        at = r.pos
        if at >= size:
            raise r.error("expected a type or opcode, found the end of the input")
        kind = view[at]
        if (kind == f.TYPE_STRING or kind == f.OPCODE_EXPIRETIME_MS) and scan is not None \
                and expire is None and idle is None and freq is None:
            # A run of string keys read in C; whatever it stops at is read below.
            keys, values, whens, starts, end = scan(
                view, at, size if progress is None else next_progress, 4096)
            if keys:
                r.pos = end
                if whens is None and on_strings is not None and on_strings(db, keys, values):
                    report.keys_loaded += len(keys)
                    continue
                for i, key in enumerate(keys):
                    when = whens[i] if whens is not None else None
                    if when is not None and now_ms is not None and when < now_ms:
                        report.keys_expired += 1
                    elif on_key(db, key, values[i], when, None, None):
                        report.keys_loaded += 1
                    else:
                        raise r.error(f"duplicated key {key!r} in database {db}", starts[i])
                continue
        r.pos = at + 1
        if kind <= f.TYPE_STREAM_LISTPACKS_4:
            # A key and its value (opcodes are 244 and up): tested first, as most records
            # are keys.
            if kind == 8:
                raise r.error(f"unknown type or opcode {kind}", at)
            key = r.string("a key")
            try:
                value = r.string("a string value") if kind == f.TYPE_STRING \
                    else v.read_value(r, kind, key, limits)
            except v.EmptyValue:
                report.empty_keys_skipped += 1
                expire = idle = freq = None
                continue
            if expire is not None and now_ms is not None and expire < now_ms:
                report.keys_expired += 1
            else:
                if value.__class__ is v.Stream:
                    streams[(db, key)] = value
                if not on_key(db, key, value, expire, idle, freq):
                    raise r.error(f"duplicated key {key!r} in database {db}", at)
                report.keys_loaded += 1
            expire = idle = freq = None
            continue
        if kind == f.OPCODE_EXPIRETIME:
            expire = r.seconds() * 1000
            continue
        if kind == f.OPCODE_EXPIRETIME_MS:
            expire = r.millis("an expiry time")
            continue
        if kind == f.OPCODE_FREQ:
            freq = r.byte("an LFU counter")
            continue
        if kind == f.OPCODE_IDLE:
            idle = r.length("an idle time")
            continue
        if kind == f.OPCODE_EOF:
            break
        if kind == f.OPCODE_SELECTDB:
            db = r.length("a database number")
            if db >= databases:
                raise r.error(f"the file holds database {db}, this server is configured with "
                              f"{databases} databases", at)
            continue
        if kind == f.OPCODE_RESIZEDB:
            r.length("a database size")
            r.length("an expires size")
            continue
        if kind == f.OPCODE_SLOT_INFO:
            r.length("a slot id")
            r.length("a slot size")
            r.length("a slot expires size")
            continue
        if kind == f.OPCODE_AUX:
            key = r.string("an AUX field name")
            value = r.string("an AUX field value")
            if key == STREAM_EXTRAS_AUX:
                er = f.Reader(value)
                extras.append((er.length(), er.string(), value[er.pos:]))
            else:
                report.aux[key] = value
            continue
        if kind == f.OPCODE_MODULE_AUX:
            module_id = r.length("a module id")
            raise r.error("the file contains AUX module data resplite can't load: no "
                          f"matching module '{v.module_type_name(module_id)}'", at)
        if kind == f.OPCODE_FUNCTION_PRE_GA:
            raise r.error("pre-release function format not supported", at)
        if kind == f.OPCODE_FUNCTION2:
            report.libraries.append(r.string("a function library"))
            report.functions += 1
            continue
        raise r.error(f"unknown type or opcode {kind}", at)
    if version >= 5:
        stored = r.take(8, "the CRC-64 checksum")
        expected = int.from_bytes(stored, "little")
        if expected:
            actual = r.checksum.update(view[:r.pos - 8])
            if actual != expected:
                raise r.error(f"wrong RDB checksum: the file says {expected:016x}, its content "
                              f"gives {actual:016x}", r.pos - 8)
    report.checked = r.checked
    for db_index, key, more in extras:
        stream = streams.get((db_index, key))
        if stream is not None:
            v.apply_stream_extras(stream, more)
    return report, r.pos
