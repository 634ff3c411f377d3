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
  the commands as Redis propagates them (:mod:`resplite.engine.propagate`), with a
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

WAITAOF's offsets (Redis 7.2+): every write logged advances ``offset`` by one (Redis's
``master_repl_offset``, which grows with an AOF even without replicas), and the client whose
write it was remembers it (``Client.woff``). ``written_offset`` is the offset of the last write
handed to the file, ``fsynced_offset`` of the last one known fsynced: it advances when an
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
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from resplite.engine.persistence import (
    LoadError,
    child_outcome,
    fsync_dir,
    stop_child,
    write_file,
)

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.scheduler import TimerHandle
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.aof")

BASE, HISTORY, INCR = "b", "h", "i"


@dataclass(slots=True)
class AofFile:
    name: str
    seq: int
    kind: str  # BASE, HISTORY or INCR


@dataclass(slots=True)
class _RewriteChild:
    pid: int
    started: float
    temp: str
    base_seq: int
    incr_seq: int
    base_name: str


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
        self.last_fsync = time.monotonic()
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

    def _base_name(self, seq: int) -> str:
        kind = "rdb" if self.state.config["aof-use-rdb-preamble"] else "aof"
        return f"{self.filename}.{seq}.base.{kind}"

    def base_chunks(self) -> Iterator[bytes]:
        """The base file's contents for the data set as it is now: an RDB snapshot (the
        preamble, ``aof-use-rdb-preamble yes``), else commands: ``FUNCTION LOAD`` of each
        function library, then one ``RESTORE key ttl payload ABSTTL`` per key after a SELECT
        per database (any Redis replays it; the
        payload is DUMP's, so state DUMP leaves out, such as a stream's idempotent-producer
        records, is not in it)."""
        state = self.state
        if state.config["aof-use-rdb-preamble"]:
            yield from state.persistence.snapshot(aof_base=True)
            return
        from resplite.formats import rdb_values  # DUMP's payloads, loaded on first use

        compress = state.config["rdbcompression"]
        for code in state.scripting.library_codes():
            yield encode_command([b"FUNCTION", b"LOAD", code])  # first, as Redis writes them
        for db in state.keyspace.dbs:
            if not db.data:
                continue
            yield encode_command([b"SELECT", b"%d" % db.index])
            expires = db.expires
            for key, value in db.data.items():
                when = expires.get(key)
                yield encode_command([b"RESTORE", key, b"%d" % (when or 0),
                                      rdb_values.dump_payload(value, compress), b"ABSTTL"])

    def _incr_name(self, seq: int) -> str:
        return f"{self.filename}.{seq}.incr.aof"

    # -- manifest ---------------------------------------------------------------------------

    def read_manifest(self) -> list[AofFile]:
        path = self.manifest_path
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "surrogateescape")
        files: list[AofFile] = []
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            fields = dict(zip(words[::2], words[1::2], strict=False))
            try:
                name = fields["file"].strip('"')
                seq = int(fields["seq"])
                kind = fields["type"]
            except (KeyError, ValueError):
                raise LoadError(f"Invalid AOF manifest file format: {path} line {number}") \
                    from None
            if kind not in (BASE, HISTORY, INCR) or len(words) % 2:
                raise LoadError(f"Invalid AOF manifest file format: {path} line {number}")
            files.append(AofFile(name, seq, kind))
        if sum(1 for f in files if f.kind == BASE) > 1:
            raise LoadError(f"Found duplicate base file information in {path}")
        return files

    def _manifest_text(self, files: list[AofFile]) -> bytes:
        ordered = [f for f in files if f.kind == BASE] + [f for f in files if f.kind != BASE]
        return "".join(f"file {f.name} seq {f.seq} type {f.kind}\n"
                       for f in ordered).encode()

    def _persist_manifest(self, files: list[AofFile]) -> None:
        write_file(self.manifest_path, [self._manifest_text(files)],
                   temp=self._path(f"temp-{self.filename}.manifest"))
        self.files = files

    # -- turning on and off -----------------------------------------------------------------

    def start(self) -> None:
        """Open the log at server start (after loading): create it when it does not exist,
        else open a new incr file after the ones there."""
        if not self.state.config["appendonly"]:
            return
        os.makedirs(self.folder, exist_ok=True)
        if not self.files:
            # As Redis on a first start with appendonly yes: a base from the data set.
            base = self._base_name(1)
            write_file(self._path(base), self.base_chunks(),
                       temp=self._path(f"temp-rewriteaof-{os.getpid()}.aof"))
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
        if os.path.exists(self.manifest_path):
            self.files = self.read_manifest()
        else:
            self.files = []
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

    def feed(self, client: Client | None, db: int, argv: list[bytes]) -> None:
        """Log one write (already in its logged form) made in database ``db``."""
        if self.loading:
            return
        held = self.held
        if held is not None:
            if not self.dropping:
                held.append((db, argv))
            return
        buffer = self.buffer
        if client is not None and client.executing_multi and not self.multi_open:
            buffer.append(b"*1\r\n$5\r\nMULTI\r\n")
            self.multi_open = True
        if db != self.selected_db:
            index = b"%d" % db
            buffer.append(b"*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n" % (len(index), index))
            self.selected_db = db
        buffer.append(encode_command(argv))
        self.offset += 1
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
        self.feed(None, held[0][0], [b"MULTI"])
        for db, argv in held:
            self.feed(None, db, argv)
        self.buffer.append(b"*1\r\n$4\r\nEXEC\r\n")
        caller.woff = self.offset

    def end_exec(self) -> None:
        """EXEC finished: close the MULTI its writes opened, if any."""
        if self.multi_open:
            self.buffer.append(b"*1\r\n$4\r\nEXEC\r\n")
            self.multi_open = False

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
        self.last_fsync = time.monotonic()
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
        temp = self._path(f"temp-rewriteaof-bg-{os.getpid()}.aof")
        started = time.perf_counter_ns()
        try:
            pid = os.fork()
        except OSError as exc:
            log.warning("Can't rewrite append only file in background: fork: %s", exc)
            self._rewrite_failed()
            return False
        if pid:
            self.state.forked(time.perf_counter_ns() - started)
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
        files = self.read_manifest() if os.path.exists(self.manifest_path) else []
        base_seq = max((f.seq for f in files if f.kind == BASE), default=0) + 1
        incr_seq = max((f.seq for f in files if f.kind == INCR), default=0) + 1
        base = self._base_name(base_seq)
        try:
            write_file(self._path(base), self.base_chunks(),
                       temp=self._path(f"temp-rewriteaof-{os.getpid()}.aof"))
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
        self.files = []
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
        ok = child_outcome(child.pid, block)
        if ok is None:
            return
        self.child = None
        if not ok:
            log.warning("Background AOF rewrite terminated with error")
            with contextlib.suppress(OSError):
                os.unlink(child.temp)
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

    def load(self) -> bool:
        """Replay the log named by the manifest, if there is one; True when one was loaded.
        LoadError stops the start."""
        if not os.path.exists(self.manifest_path):
            return False
        files = self.read_manifest()
        ordered = [f for f in files if f.kind == BASE] + [f for f in files if f.kind != BASE]
        start = time.monotonic()
        self.loading = True
        persistence = self.state.persistence
        persistence.loading = True
        try:
            for index, f in enumerate(ordered):
                self._load_one(f, last=index == len(ordered) - 1)
        finally:
            self.loading = False
            persistence.loading = False
        self.files = files
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
        if data.startswith(b"REDIS"):
            persistence = self.state.persistence
            persistence.load_bytes(data, drop_expired=True, name=path)
            start = persistence.end_offset
            if start >= len(data):
                return
            data = data[start:]
        self._replay(path, data, last)

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
        self._run(path, commands)

    def _run(self, path: str, commands: list[list[bytes]]) -> None:
        from resplite.engine.client import Client

        state = self.state
        client = Client(state, -1, None)
        client.authenticated = True
        client.acl = None
        # A load ignores maxmemory, as Redis's does: the data set was accepted once.
        maxmemory, state.maxmemory = state.maxmemory, 0
        try:
            self._replay_commands(path, client, commands)
        finally:
            state.maxmemory = maxmemory
        if client.multi is not None:
            log.warning("Revert incomplete MULTI/EXEC transaction in AOF file %s", path)
        state.unwatch_all(client)

    def _replay_commands(self, path: str, client: Client, commands: list[list[bytes]]) -> None:
        dispatcher = self.state.dispatcher
        for argv in commands:
            if not argv:
                continue
            found = dispatcher.lookup(argv)
            if isinstance(found, str):
                raise LoadError(f"Unknown command '{argv[0].decode(errors='replace')}' "
                                f"reading the append only file {path}")
            dispatcher.execute(client, argv)

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
