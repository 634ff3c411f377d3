"""The append-only file, in Redis 7's multi-part layout: a manifest, a base and incr files.

Theory of operation
-------------------
With ``appendonly yes`` the folder ``dir``/``appenddirname`` holds

* ``<appendfilename>.manifest``, one line per file, exactly as Redis writes it:
  ``file <name> seq <n> type b|h|i`` (base, history, incr), the base first, then the incr
  files in the order they are replayed (lines Redis 8 extends with more ``key value``
  pairs are read, the pairs ignored);
* the base, ``<appendfilename>.<seq>.base.rdb``: an RDB snapshot of the data set when the log
  was last rewritten (the RDB preamble, with the ``aof-base`` aux field set), or with
  ``aof-use-rdb-preamble no`` ``.base.aof``, commands (:meth:`Aof.base_chunks`); either
  form is read, Redis's included;
* incr files ``<appendfilename>.<seq>.incr.aof``: the writes since, as RESP arrays of
  the commands as Redis propagates them (each write's handler records the form it is
  logged as, :meth:`resplite.engine.client.Client.propagate_as`), with a
  ``SELECT`` whenever the database changes and MULTI/EXEC around a transaction's writes.

Writes are appended to an in-memory buffer as they happen (:meth:`Aof.feed`); the shell calls
:meth:`Aof.before_reply` before any reply leaves for a client, which writes the buffer to the
incr file and, with ``appendfsync always``, fsyncs it first: a write is on disk before its
client hears it succeeded. With ``everysec`` the buffer is written at the same point and a
timer through the engine's scheduler fsyncs it about once a second; with ``no`` the
operating system decides when the data reaches the disk. The fsync runs on the event loop
(Redis uses a background thread for ``everysec``).

Rewriting (BGREWRITEAOF, or the automatic rule ``auto-aof-rewrite-percentage`` /
``auto-aof-rewrite-min-size``) first opens a new incr file and records it in the manifest
(new writes go there from now on), then forks: the child writes a new base from the data set
as it was at the fork into a temporary file and fsyncs it. When it has succeeded the parent
renames it to the next base name and swaps in a manifest listing only the new base and the
new incr file (temporary file, fsync, rename, directory fsync), then deletes the files the
old manifest listed. A crash at any point leaves a manifest whose files are all complete.

Loading (:meth:`Aof.load`) replays the base and the incr files through the dispatcher as a
client with no connection, whose writes are not logged again. A command torn off at the end
of the last file (a crash mid-write) is cut off with a warning when ``aof-load-truncated``
is yes (the file is truncated to its last complete command, as Redis does); anywhere else,
or with ``aof-load-truncated no``, the start is refused naming the file and offset.

The same bytes are the replication stream: while a replication backlog exists they also go
to :meth:`resplite.engine.replication.Replication.feed` (``_out``), which sends them to the
replicas and advances ``offset`` by their length.

WAITAOF's offsets (Redis 7.2+): without a backlog, every write logged advances ``offset`` by
one (Redis's ``master_repl_offset``, which grows with an AOF even without replicas); with
one, by the stream's bytes. The client whose write it was remembers it (``Client.woff``).
``written_offset`` is the offset of the last write handed to the file, ``fsynced_offset``
of the last one known fsynced: it advances when an
fsync follows the write under ``appendfsync always`` or ``everysec`` (never under ``no``,
where Redis does not know when the data reaches the disk), is 0 when the log opens and -1
while it is off. Clients parked by WAITAOF (``fsync_waiters``) are re-run when it moves.

Invariants: ``buffer`` holds only complete commands; ``fsynced_offset <= written_offset <=
offset`` while the log is on; every file the manifest on disk names
exists and is complete; the incr file open for writing is the manifest's last.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from resplite.engine.monitor import repr_arg
from resplite.engine.persistence import (
    LoadError,
    child_outcome,
    debug_delay,
    fsync_dir,
    stop_child,
    write_file,
)
from resplite.protocol.reader import split_inline
from resplite.store.stream import Stream
from resplite.store.stream_ids import format_id

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.scheduler import TimerHandle
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.aof")

BASE, HISTORY, INCR = "b", "h", "i"
MANIFEST_MAX_LINE = 1024  # Redis reads a manifest line into a buffer of this size


class AofFile:
    """One file the manifest lists (a value: equal when name, sequence and kind are)."""

    __slots__ = ("kind", "name", "seq")

    def __init__(self, name: str, seq: int, kind: str) -> None:
        self.name = name
        self.seq = seq
        self.kind = kind  # BASE, HISTORY or INCR

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AofFile) and self.name == other.name
                and self.seq == other.seq and self.kind == other.kind)

    def __hash__(self) -> int:
        return hash((self.name, self.seq, self.kind))

    def __repr__(self) -> str:
        return f"AofFile({self.name!r}, {self.seq}, {self.kind!r})"


class _RewriteChild:
    __slots__ = ("base_name", "base_seq", "incr_seq", "pid", "started", "temp")

    def __init__(self, pid: int, started: float, temp: str, base_seq: int, incr_seq: int,
                 base_name: str) -> None:
        self.pid = pid
        self.started = started
        self.temp = temp
        self.base_seq = base_seq
        self.incr_seq = incr_seq
        self.base_name = base_name


class AofTruncated(Exception):
    """A command torn off: ``offset`` is the end of the last complete one, ``commands``
    the complete commands before it."""

    def __init__(self, offset: int, commands: list[list[bytes]]) -> None:
        super().__init__(offset)
        self.offset = offset
        self.commands = commands


class AofCorrupt(Exception):
    def __init__(self, offset: int, expected: str) -> None:
        super().__init__(f"at offset {offset}: expected {expected}")
        self.offset = offset


def encode_command(argv: list[bytes]) -> bytes:
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        parts.append(b"$%d\r\n" % len(arg))
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)


def parse_commands(data: bytes) -> list[list[bytes]]:
    """The commands in ``data``. AofTruncated (carrying the offset where the last complete
    command ends and the commands before it) when the data ends inside a command;
    AofCorrupt when something other than a RESP array of bulk strings is found."""
    commands: list[list[bytes]] = []
    pos = 0
    n = len(data)
    find = data.find
    while pos < n:
        begin = pos
        if data[pos] != 0x2A:  # '*'
            raise AofCorrupt(pos, "'*' starting a command")
        end = find(b"\r\n", pos)
        if end < 0:
            raise AofTruncated(begin, commands)
        count = _number(data, pos + 1, end)
        pos = end + 2
        argv: list[bytes] = []
        for _ in range(count):
            if pos >= n:
                raise AofTruncated(begin, commands)
            if data[pos] != 0x24:  # '$'
                raise AofCorrupt(pos, "'$' starting an argument")
            end = find(b"\r\n", pos)
            if end < 0:
                raise AofTruncated(begin, commands)
            size = _number(data, pos + 1, end)
            pos = end + 2
            if pos + size + 2 > n:
                raise AofTruncated(begin, commands)
            if data[pos + size:pos + size + 2] != b"\r\n":
                raise AofCorrupt(pos + size, "CRLF after an argument")
            argv.append(data[pos:pos + size])
            pos += size + 2
        commands.append(argv)
    return commands


def _number(data: bytes, start: int, end: int) -> int:
    text = data[start:end]
    if not text.isdigit():
        raise AofCorrupt(start, "a length")
    return int(text)


class ManifestError(LoadError):
    """A manifest Redis refuses at start: ``lines`` are what Redis logs for it."""

    def __init__(self, reason: str, number: int = 0, line: bytes | None = None) -> None:
        lines = ["\n*** FATAL AOF MANIFEST FILE ERROR ***\n"]
        if line is not None:
            text = line.decode("utf-8", "replace")
            lines += [f"Reading the manifest file, at line {number}\n", f">>> '{text}'\n"]
        lines.append(f"{reason}\n")
        super().__init__(reason if line is None else f"{reason} (manifest line {number})",
                         lines)
        self.reason = reason


def parse_manifest(data: bytes) -> list[AofFile]:
    """The files a manifest names, read by Redis's rules (``aofLoadManifestFromFile``):
    lines of at most 1024 bytes, each ending with a newline; ``#`` starts a comment; other
    lines are ``key value`` pairs split as ``sdssplitargs`` splits (keys in any case, ``file``,
    ``seq`` and ``type`` required, others ignored); a file name is a bare name, never a path;
    at most one base; incr sequence numbers only grow. Anything else, and an empty file,
    raises ManifestError with Redis's reason."""
    if not data:
        raise ManifestError("Found an empty AOF manifest")
    files: list[AofFile] = []
    has_base = False
    max_seq = 0
    pos = number = 0
    while pos < len(data):
        # fgets with Redis's buffer: a line longer than the limit comes back in pieces.
        limit = min(pos + MANIFEST_MAX_LINE, len(data))
        newline = data.find(b"\n", pos, limit)
        chunk = data[pos:limit if newline < 0 else newline + 1]
        pos += len(chunk)
        number += 1
        if chunk[:1] == b"#":
            continue
        chunk = chunk.split(b"\0", 1)[0]  # the C string ends at a NUL byte
        if not chunk.endswith(b"\n"):
            raise ManifestError("The AOF manifest file contains too long line")
        line = chunk.strip(b" \t\r\n")
        words = split_inline(line) if line else None
        if words is None or len(words) < 6 or len(words) % 2:
            raise ManifestError("Invalid AOF manifest file format", number, line)
        name: bytes | None = None
        seq = 0
        kind = b""
        for key, value in zip(words[::2], words[1::2], strict=True):
            key = key.lower()
            if key == b"file":
                name = value.split(b"\0", 1)[0]
                if b"/" in name or b"\\" in name:
                    raise ManifestError("File can't be a path, just a filename", number, line)
            elif key == b"seq":
                seq = _atoll(value)
            elif key == b"type":
                kind = value[:1]
        if name is None or not seq or kind in (b"", b"\0"):
            raise ManifestError("Invalid AOF manifest file format", number, line)
        if kind == BASE.encode():
            if has_base:
                raise ManifestError("Found duplicate base file information", number, line)
            has_base = True
        elif kind == INCR.encode():
            if seq <= max_seq:
                raise ManifestError("Found a non-monotonic sequence number", number, line)
            max_seq = seq
        elif kind != HISTORY.encode():
            raise ManifestError("Unknown AOF file type", number, line)
        files.append(AofFile(name.decode("utf-8", "surrogateescape"), seq, kind.decode()))
    return files


def _atoll(text: bytes) -> int:
    """C's atoll: leading blanks, a sign, the digits up to the first other byte (0 if none),
    clamped to a long long."""
    match = _LEADING_NUMBER.match(text)
    value = int(match.group(1)) if match else 0
    return max(min(value, (1 << 63) - 1), -(1 << 63))


_LEADING_NUMBER = re.compile(rb"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _idmp_commands(key: bytes, stream: Stream, config: Any) -> Iterator[list[bytes]]:
    """The commands that give a restored stream its idempotent-producer state back, as
    Redis 8.6's rewrite writes them: XCFGSET if the settings differ from the server's
    (``stream-idmp-duration`` / ``stream-idmp-maxsize``), then XIDMPRECORD for each
    producer (in byte order) and each of its iids (oldest first) whose entry still exists
    (XIDMPRECORD refuses an id the stream lacks)."""
    state = stream.idmp
    assert state is not None
    if (state.duration, state.maxsize) != (config["stream-idmp-duration"],
                                           config["stream-idmp-maxsize"]):
        yield [b"XCFGSET", key, b"IDMP-DURATION", b"%d" % state.duration,
               b"IDMP-MAXSIZE", b"%d" % state.maxsize]
    for pid in sorted(state.producers):
        for iid, sid in state.producers[pid].items():
            if stream.exists(sid):
                yield [b"XIDMPRECORD", key, pid, iid, format_id(sid)]


def _manifest_name(name: str) -> bytes:
    """A file name as Redis writes it in a manifest: bare, or quoted (``sdscatrepr``) when
    it holds a blank, a quote or a byte that is not printable."""
    raw = name.encode("utf-8", "surrogateescape")
    if raw and all(33 <= b < 127 and b not in (0x22, 0x27, 0x5C) for b in raw):
        return raw
    return repr_arg(raw)


class Aof:
    """The append-only file of one server: the files, the buffer, rewrites, INFO's figures."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.buffer: list[bytes] = []
        self.fd = -1
        self.files: list[AofFile] = []
        self.selected_db = -1
        self.multi_open = False
        # A script's writes, held until it ends (then logged inside MULTI/EXEC when there are
        # several, as Redis's propagatePendingCommands); ``dropping``: redis.set_repl
        # without REPL_AOF, the script's writes are not logged.
        self.held: list[tuple[int, list[bytes]]] | None = None
        # A transaction's writes, held until its EXEC ends (end_exec).
        self.transaction: list[tuple[int, list[bytes]]] = []
        self.dropping = False
        self.loading = False
        self.unsynced = False
        self.timer: TimerHandle | None = None
        self.child: _RewriteChild | None = None
        self.rewrite_scheduled = False
        self.last_rewrite_ok = True
        self.last_write_ok = True
        self.last_rewrite_time_s = -1
        self.rewrites = 0
        self.consecutive_failures = 0
        self.current_size = 0
        self.base_size = 0
        self.last_failure = 0.0  # monotonic seconds of the last failed rewrite
        self.write_error = ""  # strerror of a failed write, while writes are refused
        self.offset = 0
        self.written_offset = 0
        self.fsynced_offset = -1
        self.fsync_waiters: dict[Client, None] = {}

    # -- names ------------------------------------------------------------------------------

    @property
    def folder(self) -> str:
        config = self.state.config
        return os.path.join(config["dir"], config["appenddirname"])

    @property
    def filename(self) -> str:
        return str(self.state.config["appendfilename"])

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.folder, self.filename + ".manifest")

    def _path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def _in_dir(self, name: str) -> str:
        """A temporary file's path: in ``dir`` itself, where Redis writes them."""
        return os.path.join(self.state.config["dir"], name)

    def _base_name(self, seq: int) -> str:
        kind = "rdb" if self.state.config["aof-use-rdb-preamble"] else "aof"
        return f"{self.filename}.{seq}.base.{kind}"

    def base_chunks(self) -> Iterator[bytes]:
        """The base file's contents for the data set as it is now: an RDB snapshot (the
        preamble, ``aof-use-rdb-preamble yes``), else commands: ``FUNCTION LOAD`` of each
        function library, then one ``RESTORE key ttl payload ABSTTL`` per key after a SELECT
        per database (any Redis replays it; the payload is DUMP's). A stream's
        idempotent-producer state follows its RESTORE as Redis 8.6 rewrites it: XCFGSET
        when its settings are not the server's, and one XIDMPRECORD per iid whose entry is
        still there (:func:`_idmp_commands`), so the payload stays one an older Redis
        reads."""
        state = self.state
        if state.config["aof-use-rdb-preamble"]:
            yield from state.persistence.snapshot(aof_base=True)
            return
        from resplite.formats import rdb_values  # DUMP's payloads, loaded on first use

        compress = state.config["rdbcompression"]
        for code in state.scripting.library_codes():
            yield encode_command([b"FUNCTION", b"LOAD", code])  # first, as Redis writes them
        delay = state.config["rdb-key-save-delay"]
        for db in state.keyspace.dbs:
            if not db.data:
                continue
            yield encode_command([b"SELECT", b"%d" % db.index])
            expires = db.expires
            for key, value in db.data.items():
                if delay:
                    debug_delay(delay)
                when = expires.get(key)
                yield encode_command([b"RESTORE", key, b"%d" % (when or 0),
                                      rdb_values.dump_payload(value, compress, idmp=False),
                                      b"ABSTTL"])
                if value.__class__ is Stream and value.idmp is not None:
                    for argv in _idmp_commands(key, value, state.config):
                        yield encode_command(argv)

    def _incr_name(self, seq: int) -> str:
        return f"{self.filename}.{seq}.incr.aof"

    # -- manifest ---------------------------------------------------------------------------

    def read_manifest(self) -> list[AofFile]:
        """The files the manifest on disk names; LoadError (Redis's words) when it cannot
        be read or Redis would refuse it."""
        path = self.manifest_path
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            message = (f"Fatal error: can't open the AOF manifest file {path} for reading: "
                       f"{exc.strerror}")
            raise LoadError(message, [message]) from exc
        return parse_manifest(data)

    def _manifest_text(self, files: list[AofFile]) -> bytes:
        ordered = [f for f in files if f.kind == BASE] + [f for f in files if f.kind != BASE]
        return b"".join(b"file %s seq %d type %s\n" % (_manifest_name(f.name), f.seq,
                                                       f.kind.encode())
                        for f in ordered)

    def _persist_manifest(self, files: list[AofFile]) -> None:
        write_file(self.manifest_path, [self._manifest_text(files)],
                   temp=self._path(f"temp-{self.filename}.manifest"))
        self.files = files

    # -- turning on and off -----------------------------------------------------------------

    def start(self) -> None:
        """Open the log at server start (after loading): create it when it does not exist,
        else open a new incr file after the ones there. Then, with the log on or off, delete
        the history files the manifest still names (a rewrite that finished just before a
        stop), as Redis's ``aofDelHistoryFiles``."""
        self._drop_history()
        if self.state.config["appendonly"]:
            self._open_at_start()

    def _drop_history(self) -> None:
        history = [f for f in self.files if f.kind == HISTORY]
        if not history:
            return
        for f in history:
            log.info("Removing the history file %s in the background", f.name)
            with contextlib.suppress(OSError):
                os.unlink(self._path(f.name))
        kept = [f for f in self.files if f.kind != HISTORY]
        if kept:
            self._persist_manifest(kept)
        else:
            # Nothing left to list: the manifest is rewritten once a base exists (an empty
            # manifest would stop the next start).
            self.files = []

    def _open_at_start(self) -> None:
        os.makedirs(self.folder, exist_ok=True)
        if not self.files:
            # As Redis on a first start with appendonly yes: a base from the data set.
            base = self._base_name(1)
            write_file(self._path(base), self.base_chunks(),
                       temp=self._in_dir(f"temp-rewriteaof-{os.getpid()}.aof"))
            log.info("Creating AOF base file %s on server start", base)
            self.files = [AofFile(base, 1, BASE)]
            self._open_new_incr()
        else:
            incr = [f for f in self.files if f.kind == INCR]
            if incr:
                self._open(incr[-1].name)
            else:
                self._open_new_incr()
        self._refresh_sizes(base=True)
        self.state.aof_on = True
        self.written_offset = self.fsynced_offset = self.offset

    def enable(self) -> None:
        """CONFIG SET appendonly yes: the log starts from a base of the current data set."""
        if self.state.aof_on:
            return
        os.makedirs(self.folder, exist_ok=True)
        # ``files`` is the manifest as read at start and kept since (as Redis keeps it in
        # memory): a manifest changed on disk meanwhile is not read again here.
        self.state.aof_on = True
        self.selected_db = -1
        self.written_offset = self.fsynced_offset = self.offset
        if not self.files:
            self.start()
        else:
            self._open_new_incr()
            self.rewrite()

    def disable(self) -> None:
        self.before_reply()
        self._fsync()
        self.kill_child()
        self._close()
        self.state.aof_on = False
        self.fsynced_offset = -1
        self._wake_fsync_waiters()

    def shutdown(self) -> None:
        if self.state.aof_on:
            self.before_reply()
            self._fsync()
        self.kill_child()
        self._close()

    def _open(self, name: str) -> None:
        self._close()
        self.fd = os.open(self._path(name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.selected_db = -1

    def _close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1

    def _open_new_incr(self) -> None:
        seq = max((f.seq for f in self.files if f.kind == INCR), default=0) + 1
        name = self._incr_name(seq)
        self._open(name)
        os.fsync(self.fd)
        self._persist_manifest([*self.files, AofFile(name, seq, INCR)])

    # -- logging writes ---------------------------------------------------------------------

    def _out(self, data: bytes) -> None:
        """Bytes of the propagated stream: to the file while it is open, and to the
        replication stream while it is active (which counts the offset in bytes)."""
        if self.state.aof_on:
            self.buffer.append(data)
        replication = self.state.replication
        if replication.active:
            replication.feed(data)

    def feed(self, client: Client | None, db: int, argv: list[bytes]) -> None:
        """Propagate one write (already in its logged form) made in database ``db``: to
        the append-only file and the replication stream."""
        if self.loading:
            return
        held = self.held
        if held is not None:
            if not self.dropping:
                held.append((db, argv))
            return
        if client is not None and client.executing_multi and not self.multi_open:
            # A transaction's writes wait for its end, as Redis 7's: one alone is
            # propagated as it is, several inside MULTI/EXEC (end_exec).
            self.transaction.append((db, argv))
            return
        out = self._out
        if db != self.selected_db:
            index = b"%d" % db
            out(b"*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n" % (len(index), index))
            self.selected_db = db
        out(encode_command(argv))
        if self.state.replication.backlog is None:
            self.offset += 1  # (with a backlog the stream's bytes count instead)
        if client is not None:
            client.woff = self.offset

    def feed_all(self, client: Client | None, db: int, forms: list[list[bytes]]) -> None:
        """Log the forms one command recorded (:meth:`Client.propagate_as`): several are
        wrapped in MULTI/EXEC, as Redis's propagatePendingCommands does, unless a
        transaction or a script already wraps them."""
        if len(forms) < 2 or self.held is not None or self.loading or (
                client is not None and client.executing_multi and not self.multi_open):
            for argv in forms:
                self.feed(client, db, argv)
            return
        # (SELECT, when due, goes inside the MULTI, as Redis propagates it.)
        self._out(b"*1\r\n$5\r\nMULTI\r\n")
        self.multi_open = True
        for argv in forms:
            self.feed(client, db, argv)
        self._out(b"*1\r\n$4\r\nEXEC\r\n")
        self.multi_open = False
        if client is not None:
            client.woff = self.offset

    def hold(self) -> None:
        """A script starts: its writes wait for :meth:`release`."""
        self.held = []
        self.dropping = False

    def release(self, caller: Client) -> None:
        """The script of ``caller`` ended: log its writes, wrapped in MULTI/EXEC when there
        are several (inside the caller's EXEC, that transaction's MULTI wraps them)."""
        held, self.held = self.held, None
        self.dropping = False
        if not held:
            return
        if len(held) == 1 or caller.executing_multi:
            for db, argv in held:
                self.feed(caller, db, argv)
            return
        # (SELECT, when due, goes inside the MULTI, as Redis propagates it.)
        self._out(b"*1\r\n$5\r\nMULTI\r\n")
        self.multi_open = True
        try:
            for db, argv in held:
                self.feed(None, db, argv)
        finally:
            self.multi_open = False
        self._out(b"*1\r\n$4\r\nEXEC\r\n")
        caller.woff = self.offset

    def end_exec(self, client: Client | None = None) -> None:
        """EXEC finished: propagate its writes, inside MULTI/EXEC when there are several."""
        writes, self.transaction = self.transaction, []
        if not writes:
            return
        if len(writes) == 1:
            self.multi_open = True  # (feeds it as it is: the transaction is over)
            try:
                self.feed(client, writes[0][0], writes[0][1])
            finally:
                self.multi_open = False
            return
        # (SELECT, when due, goes inside the MULTI, as Redis propagates it.)
        self._out(b"*1\r\n$5\r\nMULTI\r\n")
        self.multi_open = True
        try:
            for db, argv in writes:
                self.feed(client, db, argv)
        finally:
            self.multi_open = False
        self._out(b"*1\r\n$4\r\nEXEC\r\n")
        if client is not None:
            client.woff = self.offset

    def before_reply(self) -> None:
        """Called by the shell before a reply leaves: write what was logged, and with
        ``appendfsync always`` make it durable first."""
        if not self.buffer or self.multi_open:
            return
        data = b"".join(self.buffer)
        self.buffer = []
        if self.fd < 0:
            return
        offset = self.offset  # everything logged so far is in ``data``
        view = memoryview(data)
        started = time.perf_counter_ns()
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
            self._sample_write(time.perf_counter_ns() - started)
        except OSError as exc:
            # Kept, and retried with what follows (the cron tries again); meanwhile writes
            # are refused with MISCONF, as Redis does.
            self.buffer = [bytes(view)]
            self._failed_write(exc)
            return
        if not self.last_write_ok:
            log.warning("AOF write error looks solved, Redis can write again.")
            self.last_write_ok = True
            self.write_error = ""
            self.state.persistence.misconf()
        self.current_size += len(data)
        self.written_offset = offset
        policy = self.state.config["appendfsync"]
        if policy == "always":
            started = time.perf_counter_ns()
            self._fsync()
            self.state.latency.sample_ns("aof-fsync-always", time.perf_counter_ns() - started)
        elif policy == "everysec":
            self.unsynced = True
            if self.timer is None:
                self.timer = self.state.scheduler.call_later(1.0, self._everysec)

    def _sample_write(self, elapsed_ns: int) -> None:
        """The latency monitor's aof-write, and which of Redis's kinds of write it was (no
        fsync runs in the background here, so never aof-write-pending-fsync)."""
        latency = self.state.latency
        if elapsed_ns < latency.trigger_ns:
            return
        busy = self.child is not None or self.state.persistence.child is not None
        latency.sample_ns("aof-write-active-child" if busy else "aof-write-alone", elapsed_ns)
        latency.sample_ns("aof-write", elapsed_ns)

    def _failed_write(self, exc: OSError) -> None:
        message = exc.strerror or str(exc)
        log.warning("Error writing to the AOF file: %s", message)
        if self.state.config["appendfsync"] == "always":
            # The replies waiting for this write would claim a durability it lacks: as
            # Redis, the server stops rather than acknowledge them.
            log.warning("Can't recover from AOF write error when the AOF fsync policy is "
                        "'always'. Exiting...")
            os._exit(1)
        self.last_write_ok = False
        self.write_error = message
        self.state.persistence.misconf()

    def _everysec(self) -> None:
        self.timer = None
        self.before_reply()
        self._fsync()

    def _fsync(self) -> None:
        if self.fd >= 0:
            try:
                os.fsync(self.fd)
            except OSError as exc:
                self._failed_write(exc)
                return
        self.unsynced = False
        if (self.state.aof_on and self.state.config["appendfsync"] != "no"
                and self.fsynced_offset != self.written_offset):
            self.fsynced_offset = self.written_offset
            self._wake_fsync_waiters()

    def prune_fsync_waiters(self) -> None:
        """Forget the clients no longer blocked in WAITAOF (served, timed out, gone)."""
        waiters = self.fsync_waiters
        for client in list(waiters):
            blocked = client.blocked
            if blocked is None or blocked.command != "waitaof":
                del waiters[client]

    def _wake_fsync_waiters(self) -> None:
        """Re-run the WAITAOF commands waiting on the fsynced offset."""
        if not self.fsync_waiters:
            return
        self.prune_fsync_waiters()
        self.state.blocking.rerun(list(self.fsync_waiters))

    # -- rewriting --------------------------------------------------------------------------

    @property
    def in_progress(self) -> bool:
        return self.child is not None

    def rewrite(self) -> bool:
        """Start a background rewrite; False if it could not start (the reason is logged)."""
        if self.child is not None:
            return False
        if not self.state.aof_on:
            return self._rewrite_without_log()
        self.before_reply()
        self._fsync()
        base_seq = max((f.seq for f in self.files if f.kind == BASE), default=0) + 1
        # New writes go to a new incr file from now on; the manifest says so before the fork.
        self._open_new_incr()
        incr_seq = self.files[-1].seq
        started = time.perf_counter_ns()
        try:
            pid = os.fork()
        except OSError as exc:
            log.warning("Can't rewrite append only file in background: fork: %s", exc)
            self._rewrite_failed()
            return False
        if pid:
            self.state.forked(time.perf_counter_ns() - started)
        # Named by the child's pid, as Redis names it: the parent finds it, and removes it
        # when the child fails or is killed.
        temp = self._in_dir(f"temp-rewriteaof-bg-{pid or os.getpid()}.aof")
        if pid == 0:  # pragma: no cover - runs in the child, which exits
            code = 1
            try:
                write_file(temp, self.base_chunks(), temp=temp,
                           rename=False)
                code = 0
            finally:
                os._exit(code)
        self.child = _RewriteChild(pid, time.monotonic(), temp, base_seq, incr_seq,
                                   self._base_name(base_seq))
        log.info("Background append only file rewriting started by pid %d", pid)
        return True

    def _rewrite_without_log(self) -> bool:
        # BGREWRITEAOF with appendonly no: Redis writes a log anyway (a base and an empty
        # incr file); here it is written in the foreground.
        os.makedirs(self.folder, exist_ok=True)
        files = self.files
        base_seq = max((f.seq for f in files if f.kind == BASE), default=0) + 1
        incr_seq = max((f.seq for f in files if f.kind == INCR), default=0) + 1
        base = self._base_name(base_seq)
        try:
            write_file(self._path(base), self.base_chunks(),
                       temp=self._in_dir(f"temp-rewriteaof-{os.getpid()}.aof"))
            incr = self._incr_name(incr_seq)
            with open(self._path(incr), "wb") as f:
                os.fsync(f.fileno())
            self._persist_manifest([AofFile(base, base_seq, BASE), AofFile(incr, incr_seq, INCR)])
        except OSError as exc:
            log.warning("Error rewriting the append only file: %s", exc)
            self._rewrite_failed()
            return False
        for old in files:
            with contextlib.suppress(OSError):
                os.unlink(self._path(old.name))
        self._rewrite_done(0.0)
        return True

    def _rewrite_failed(self) -> None:
        self.last_rewrite_ok = False
        self.consecutive_failures += 1
        self.last_failure = time.monotonic()

    def _rewrite_done(self, started: float) -> None:
        self.last_rewrite_ok = True
        self.consecutive_failures = 0
        self.rewrites += 1
        self.last_rewrite_time_s = int(time.monotonic() - started) if started else 0

    def reap(self, block: bool = False) -> None:
        child = self.child
        if child is None:
            return
        outcome = child_outcome(child.pid, block)
        if outcome is None:
            return
        self.child = None
        if not outcome.ok:
            if outcome.signal:
                log.warning("Background AOF rewrite terminated by signal %d", outcome.signal)
            else:
                log.warning("Background AOF rewrite terminated with error")
            with contextlib.suppress(OSError):
                os.unlink(child.temp)
            if outcome.failed:
                self._rewrite_failed()
            return
        base = child.base_name
        old = [f for f in self.files if f.seq != child.incr_seq or f.kind != INCR]
        current = [f for f in self.files if f.seq == child.incr_seq and f.kind == INCR]
        try:
            started = time.perf_counter_ns()
            os.replace(child.temp, self._path(base))
            self.state.latency.sample_ns("aof-rename", time.perf_counter_ns() - started)
            fsync_dir(self.folder)
            self._persist_manifest([AofFile(base, child.base_seq, BASE), *current])
        except OSError as exc:
            log.warning("Error trying to install the rewritten AOF: %s", exc)
            self._rewrite_failed()
            return
        for f in old:
            with contextlib.suppress(OSError):
                os.unlink(self._path(f.name))
        self._rewrite_done(child.started)
        self._refresh_sizes(base=True)
        log.info("Background AOF rewrite finished successfully")

    def kill_child(self) -> None:
        child = self.child
        if child is None:
            return
        stop_child(child.pid)
        with contextlib.suppress(OSError):
            os.unlink(child.temp)
        self.child = None

    def _refresh_sizes(self, base: bool = False) -> None:
        total = 0
        for f in self.files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(self._path(f.name))
        self.current_size = total
        if base:
            self.base_size = total

    def cron(self) -> None:
        """Reap a finished rewrite; start a scheduled or automatic one; write the buffer
        (expired keys' DELs logged outside any request)."""
        if self.child is not None:
            self.reap()
        if not self.state.aof_on:
            return
        self.before_reply()
        if self.child is not None or self.state.persistence.in_progress:
            return
        if self.rewrite_scheduled:
            self.rewrite_scheduled = False
            self.rewrite()
            return
        config = self.state.config
        if self.consecutive_failures:
            # After failed rewrites the automatic rule waits, longer after each (1 minute,
            # doubling up to an hour), as Redis does, rather than fork on every cron tick.
            wait = min(60 * 2 ** (self.consecutive_failures - 1), 3600)
            if time.monotonic() - self.last_failure < wait:
                return
        percentage = config["auto-aof-rewrite-percentage"]
        if percentage and self.current_size > config["auto-aof-rewrite-min-size"]:
            base = self.base_size or 1
            growth = (self.current_size - base) * 100 // base
            if growth >= percentage:
                log.info("Starting automatic rewriting of AOF on %d%% growth", growth)
                self.rewrite()

    # -- loading ----------------------------------------------------------------------------

    def read_at_start(self) -> None:
        """Read the manifest, if there is one, whether or not ``appendonly`` is on: as
        Redis, a server whose manifest is unreadable or malformed does not start (LoadError),
        and nothing on disk has been touched when it refuses."""
        if os.path.isfile(self.manifest_path):
            self.files = self.read_manifest()

    def load(self) -> bool:
        """Replay the base and incr files the manifest named at start (:meth:`read_at_start`;
        history files are what a finished rewrite left to delete, never replayed); True when
        there was a log. Every file is checked to exist before any is read. LoadError stops
        the start."""
        files = self.files
        ordered = [f for f in files if f.kind == BASE] + [f for f in files if f.kind == INCR]
        if not ordered:
            return False
        total = 0
        for f in ordered:
            try:
                total += os.stat(self._path(f.name)).st_size
            except OSError as exc:
                message = f"Unable to obtain the AOF file {f.name} length. stat: {exc.strerror}"
                raise LoadError(message, [message]) from exc
        start = time.monotonic()
        self.loading = True
        persistence = self.state.persistence
        persistence.start_loading(total)
        try:
            for index, f in enumerate(ordered):
                self._load_one(f, last=index == len(ordered) - 1)
                persistence.loading_file_base = persistence.loading_loaded_bytes
        finally:
            self.loading = False
            persistence.stop_loading()
        self.state.dirty = 0
        log.info("DB loaded from append only file: %.3f seconds", time.monotonic() - start)
        return True

    def _load_one(self, f: AofFile, last: bool) -> None:
        path = self._path(f.name)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise LoadError(f"Can't open the append-only file {path}: {exc.strerror}") \
                from exc
        log.info("Loading %s (%d bytes)", path, len(data))
        persistence = self.state.persistence
        file_base = persistence.loading_file_base
        file_size = len(data)
        if data.startswith(b"REDIS"):
            persistence.load_bytes(data, drop_expired=True, name=path)
            start = persistence.end_offset
            if start < len(data):
                persistence.loading_file_base = file_base + start
                self._replay(path, data[start:], last)
        else:
            self._replay(path, data, last)
        persistence.loading_loaded_bytes = file_base + file_size

    def _replay(self, path: str, data: bytes, last: bool) -> None:
        try:
            commands = parse_commands(data)
        except AofTruncated as torn:
            offset, commands = torn.offset, torn.commands
            if not last or not self.state.config["aof-load-truncated"]:
                raise LoadError(
                    f"Unexpected end of file reading the append only file {path} at offset "
                    f"{offset}. You can: 1) Make a backup of your AOF file, then use "
                    f"./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can "
                    f"set 'aof-load-truncated' to yes and restart the server.") from None
            log.warning("!!! Warning: short read while loading the AOF file %s!!! "
                        "AOF loaded anyway because aof-load-truncated is enabled; the file "
                        "is truncated to its last complete command at offset %d",
                        path, offset)
            with open(path, "r+b") as handle:
                handle.truncate(len_before(handle, data, offset))
                handle.flush()
                os.fsync(handle.fileno())
        except AofCorrupt as exc:
            raise LoadError(f"Bad file format reading the append only file {path} {exc}") \
                from None
        self._run(path, commands, len(data))

    def _run(self, path: str, commands: list[list[bytes]], size: int) -> None:
        from resplite.engine.client import Client

        state = self.state
        client = Client(state, -1, None)
        client.authenticated = True
        client.acl = None
        # A load ignores maxmemory, as Redis's does: the data set was accepted once.
        maxmemory, state.maxmemory = state.maxmemory, 0
        try:
            self._replay_commands(path, client, commands, size)
        finally:
            state.maxmemory = maxmemory
        if client.multi is not None:
            log.warning("Revert incomplete MULTI/EXEC transaction in AOF file %s", path)
        state.unwatch_all(client)

    def _replay_commands(self, path: str, client: Client, commands: list[list[bytes]],
                         size: int) -> None:
        dispatcher = self.state.dispatcher
        persistence = self.state.persistence
        base = persistence.loading_file_base
        total = len(commands)
        for count, argv in enumerate(commands, 1):
            if not argv:
                continue
            found = dispatcher.lookup(argv)
            if isinstance(found, str):
                raise LoadError(f"Unknown command '{argv[0].decode(errors='replace')}' "
                                f"reading the append only file {path}")
            dispatcher.execute(client, argv)
            if not count % 64:
                # Parsed up front: the bytes read are estimated from the commands replayed.
                persistence.loading_loaded_bytes = base + size * count // total
                persistence.loading_turn()

    # -- INFO -------------------------------------------------------------------------------

    def info_lines(self) -> list[tuple[str, object]]:
        child = self.child
        lines: list[tuple[str, object]] = [
            ("aof_enabled", int(self.state.aof_on)),
            ("aof_rewrite_in_progress", int(child is not None)),
            ("aof_rewrite_scheduled", int(self.rewrite_scheduled)),
            ("aof_last_rewrite_time_sec", self.last_rewrite_time_s),
            ("aof_current_rewrite_time_sec",
             int(time.monotonic() - child.started) if child is not None else -1),
            ("aof_last_bgrewrite_status", "ok" if self.last_rewrite_ok else "err"),
            ("aof_rewrites", self.rewrites),
            ("aof_rewrites_consecutive_failures", self.consecutive_failures),
            ("aof_last_write_status", "ok" if self.last_write_ok else "err"),
            ("aof_last_cow_size", 0),
            ("module_fork_in_progress", 0),
            ("module_fork_last_cow_size", 0),
        ]
        if self.state.aof_on:
            lines += [
                ("aof_current_size", self.current_size),
                ("aof_base_size", self.base_size),
                ("aof_pending_rewrite", int(self.rewrite_scheduled)),
                ("aof_buffer_length", sum(len(b) for b in self.buffer)),
                ("aof_pending_bio_fsync", 0),
                ("aof_delayed_fsync", 0),
            ]
        return lines


def len_before(handle: Any, data: bytes, offset: int) -> int:
    """The file length that keeps ``data[:offset]`` (``data`` is the file's tail)."""
    handle.seek(0, os.SEEK_END)
    size: int = handle.tell()
    return size - (len(data) - offset)
