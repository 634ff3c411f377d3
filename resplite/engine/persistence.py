"""RDB persistence: SAVE, BGSAVE, save rules, the snapshot loaded at start, INFO's figures.

Theory of operation
-------------------
A snapshot is written by :func:`resplite.formats.rdb_file.write_snapshot` from the keyspace
as it stands, into ``temp-<pid>.rdb`` in ``dir``; the file is flushed, fsynced and renamed
over ``dbfilename``, and the directory fsynced, so the previous snapshot stays whole until
the new one is complete (a crash mid-write leaves only a stray temporary file).

BGSAVE forks, as Redis does. The child process owns a copy-on-write image of the data set at
the instant of the fork, so the snapshot is consistent without copying anything or stopping
writers, and it runs on another core, so the server keeps answering at full speed (a thread
would share the interpreter lock with the event loop and slow every command down for the
length of the save). The child writes the file and exits with 0 or 1; the server cron reaps
it (:meth:`Persistence.cron`) and records the outcome. Where ``fork`` is unavailable the
save runs in the foreground. A fork's cost is the page-table copy (milliseconds for
gigabytes) plus the pages later written to (copy-on-write), which CPython's reference
counting makes more frequent than in C: memory can approach twice the data set while a
save runs under heavy writes, as in Redis under the same load.

``dirty`` (INFO ``rdb_changes_since_last_save``) counts writes; a successful BGSAVE removes
the changes that were in the snapshot (those counted before the fork). Save rules
(``save <seconds> <changes>``) start a BGSAVE from the cron when enough changes are that old,
and after a failed one wait 5 seconds before trying again (Redis's
``CONFIG_BGSAVE_RETRY_DELAY``). With ``stop-writes-on-bgsave-error`` and save rules set, a
failed BGSAVE makes writes answer MISCONF until a save succeeds (:meth:`Persistence.misconf`).

Loading (:meth:`Persistence.load_file`) reads the whole file, parses it with the loaded
directives' encoding limits, and refuses to go on at the first problem with the offset and
what was expected: a server with an unreadable snapshot does not start (empty is not safe).

While a load runs, ``loading`` is set (INFO's ``loading:1`` and its ``loading_*`` progress
fields) and the start-up load lets clients in, as Redis's ``processEventsWhileBlocked``
does: the server listens before it loads, and the shell installs ``serve_while_loading``,
which the load calls at least every :data:`LOADING_SERVE_INTERVAL_NS` of its work (and
after every key while ``key-load-delay`` slows it down on purpose). The requests it reads
go through the dispatcher's busy path, which answers ``-LOADING`` to every command without
the ``loading`` flag. The hook may raise :class:`LoadingStopped` (a SHUTDOWN sent during the
load): the load stops there and the exception reaches the shell.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from resplite.engine import compat
from resplite.engine.errors import CommandError

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState
    from resplite.formats import rdb_file, rdb_values
    from resplite.store.keyspace import Database

# The RDB codecs (resplite.formats) are imported by the functions that read or write a
# snapshot, on first use: a server that starts without a data file and never saves does
# not load them.

log = logging.getLogger("resplite.persistence")

BGSAVE_RETRY_DELAY_S: Final = 5
# The start-up load serves clients at least this often (Redis does every 2 MB it reads,
# loading-process-events-interval-bytes; resplite reads far fewer bytes in that time).
LOADING_SERVE_INTERVAL_NS: Final = 5_000_000
# How often a load updates INFO's loading_loaded_bytes (and considers serving clients).
PROGRESS_EVERY: Final = 1 << 16
MISCONF: Final = (
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist "
    "to disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error."
)


class LoadingStopped(Exception):
    """The shell stopped the start-up load (SHUTDOWN during it): the server exits."""


class LoadError(Exception):
    """A data set that cannot be loaded; the message names the file, the offset and why.
    ``lines`` are what the server logs before it exits where Redis logs its own words for
    the case (a bad AOF manifest); empty for the general ``Fatal error loading the DB``."""

    def __init__(self, message: str, lines: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.lines = tuple(lines)


class _Child:
    __slots__ = ("dirty_before", "path", "pid", "started")

    def __init__(self, pid: int, started: float, dirty_before: int, path: str) -> None:
        self.pid = pid
        self.started = started  # monotonic seconds
        self.dirty_before = dirty_before
        self.path = path


def load_limits(config: Any) -> rdb_values.Limits:
    """The encoding limits a load converts values by, from the current directives."""
    from resplite.formats import rdb_values
    from resplite.store.set import Limits as SetLimits

    return rdb_values.Limits(
        hash_entries=config["hash-max-listpack-entries"],
        hash_value=config["hash-max-listpack-value"],
        set_limits=SetLimits(config["set-max-intset-entries"],
                             config["set-max-listpack-entries"],
                             config["set-max-listpack-value"]),
        zset_entries=config["zset-max-listpack-entries"],
        zset_value=config["zset-max-listpack-value"],
        list_fill=config["list-max-listpack-size"],
        # With a memory limit, the data set comes first: see keep_stream_forms.
        keep_stream_forms=not config["maxmemory"],
    )


def keep_stream_forms(state: ServerState) -> bool:
    """Whether a snapshot made now (SAVE, DUMP) may leave streams holding their nodes'
    compressed forms for the next one: they are a cache, counted in ``used_memory``, so
    they are kept without a ``maxmemory``, or while less than half of it is used (and a
    load keeps the forms it reads only without one)."""
    maxmemory = state.maxmemory
    return not maxmemory or state.used_memory() < maxmemory // 2


def debug_delay(usec: int) -> None:
    """Redis's ``debugDelay``, the pause ``rdb-key-save-delay`` puts after each key a
    snapshot or rewrite writes (for tests that need a save to last): ``usec``
    microseconds, or for a negative value 1 µs with a chance of one in ``-usec``."""
    if usec < 0:
        import random

        usec = 1 if random.randrange(-usec) == 0 else 0
    if usec:
        time.sleep(usec / 1_000_000)


def _used_mem_aux(data: bytes) -> int:
    """The ``used-mem`` AUX field of an RDB file's header (0 when it has none): what the
    server that wrote it used, INFO's ``loading_rdb_used_mem``."""
    from resplite.formats import rdb_format
    from resplite.formats.rdb_format import RdbError

    reader = rdb_format.Reader(memoryview(data), 9)
    try:
        while reader.pos < len(data) and data[reader.pos] == rdb_format.OPCODE_AUX:
            reader.pos += 1
            name = reader.string("an AUX field name")
            value = reader.string("an AUX field value")
            if name == b"used-mem":
                return int(value) if value.isdigit() else 0
    except RdbError:
        pass  # the load proper reports it
    return 0


def fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class ChildExit:
    """How a forked child (BGSAVE, BGREWRITEAOF) ended: its exit ``code``, or the
    ``signal`` that killed it (0 when none did)."""

    __slots__ = ("code", "signal")

    def __init__(self, code: int, signal: int = 0) -> None:
        self.code = code
        self.signal = signal

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ChildExit) and self.code == other.code
                and self.signal == other.signal)

    def __hash__(self) -> int:
        return hash((self.code, self.signal))

    def __repr__(self) -> str:
        return f"ChildExit({self.code}, {self.signal})"

    @property
    def ok(self) -> bool:
        return not self.signal and self.code == 0

    @property
    def failed(self) -> bool:
        """Whether the ending counts as a failure in INFO: SIGUSR1 is Redis's way of
        stopping a child without one."""
        return not self.ok and self.signal != signal.SIGUSR1


def child_outcome(pid: int, block: bool = False) -> ChildExit | None:
    """How a forked child ended (one already reaped elsewhere counts as failed), None
    while it still runs (``block`` waits for it instead)."""
    try:
        done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return ChildExit(1)
    if done == 0:
        return None
    if os.WIFSIGNALED(status):
        return ChildExit(0, os.WTERMSIG(status))
    return ChildExit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def stop_child(pid: int) -> None:
    """Kill a forked child and reap it (its work is not wanted)."""
    with contextlib.suppress(OSError):
        os.kill(pid, 9)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def write_file(path: str, chunks: Iterable[bytes], *, temp: str | None = None,
               rename: bool = True) -> int:
    """Write ``chunks`` to a temporary file beside ``path`` (``temp``, by default
    ``temp-<pid>.rdb``), fsync it and rename it over ``path`` (then fsync the directory);
    with ``rename`` false the temporary file is left for the caller to rename. Returns the
    bytes written; OSError on failure (the temporary file is removed)."""
    directory = os.path.dirname(path) or "."
    if temp is None:
        temp = os.path.join(directory, f"temp-{os.getpid()}.rdb")
    size = 0
    try:
        with open(temp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
                size += len(chunk)
            f.flush()
            os.fsync(f.fileno())
        if rename:
            os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if rename:
        fsync_dir(directory)
    return size


class Persistence:
    """The RDB side of one server: snapshots, the background child, the figures INFO shows."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.child: _Child | None = None
        self.last_bgsave_ok = True
        # Background saves that failed since the last one that did not (Redis counts only
        # a child's outcome).
        self.consecutive_failures = 0
        self.last_bgsave_time_s = -1
        self.last_bgsave_try = 0.0  # monotonic seconds of the last attempt
        self.bgsave_scheduled = False
        self.saves = 0
        self.keys_loaded = 0
        self.keys_expired = 0
        self.loading = False
        # The load in progress (INFO's loading_* fields): when it started (Unix seconds),
        # the bytes to read, the memory the file says its server used, the bytes read.
        self.loading_start_time = 0
        self.loading_total_bytes = 0
        self.loading_rdb_used_mem = 0
        self.loading_loaded_bytes = 0
        self.loading_file_base = 0  # where the file being read starts in the total
        # Installed by the shell for the start-up load: serves clients (see the module
        # docstring); None: nobody is served until the load ends.
        self.serve_while_loading: Callable[[], None] | None = None
        self._served_ns = 0
        self.last_save_bytes = 0
        self.end_offset = 0  # where the last RDB loaded ended (an AOF base's commands follow)

    # -- paths and snapshots ----------------------------------------------------------------

    @property
    def path(self) -> str:
        config = self.state.config
        return os.path.join(config["dir"], config["dbfilename"])

    def _records(self, db: Database, lru: bool, lfu: bool,
                 keep: bool) -> Iterator[rdb_file.Record]:
        from resplite.store.stream import Stream

        expires = db.expires
        stream = Stream
        delay = self.state.config["rdb-key-save-delay"]
        for key, value in db.data.items():
            if delay:
                debug_delay(delay)
            idle = db.idle_ms(key) // 1000 if lru else None
            freq = db.frequency(key) if lfu else None
            yield key, value, expires.get(key), idle, freq
            if keep and value.__class__ is stream:
                db.recharge(key)  # it may have kept its nodes' compressed forms

    def snapshot(self, aof_base: bool = False, keep: bool = False, data: bool = True,
                 functions: bool = True) -> Iterator[bytes]:
        """The chunks of an RDB file of the whole data set as it is now. ``keep`` (a save
        in the foreground): streams keep their nodes' compressed forms, so the next
        snapshot copies the nodes that did not change; a forked child would only
        throw them away with its copy of the memory. Without ``data`` (``functions``) the
        keys (the function libraries) are left out, as REPLCONF rdb-filter-only asks."""
        from resplite.formats import rdb_file

        state = self.state
        config = state.config
        policy = config["maxmemory-policy"]
        lru = policy.endswith("-lru")
        lfu = policy.endswith("-lfu")
        aux = [
            (b"redis-ver", compat.reported(config["redis-compat-version"]).encode()),
            (b"redis-bits", b"64"),
            (b"ctime", b"%d" % (state.clock.time_ms() // 1000)),
            (b"used-mem", b"%d" % state.used_memory()),
            (b"aof-base", b"1" if aof_base else b"0"),
        ]
        dbs = [
            rdb_file.DbSnapshot(db.index, len(db.data), len(db.expires),
                                self._records(db, lru, lfu, keep))
            for db in state.keyspace.dbs if db.data and data
        ]
        return rdb_file.write_snapshot(dbs, aux, compress=config["rdbcompression"],
                                       checksum=config["rdbchecksum"],
                                       functions=state.scripting.library_codes()
                                       if functions else [],
                                       keep=keep)

    # -- SAVE -----------------------------------------------------------------------------

    def save(self) -> bool:
        """Write the snapshot in the foreground (SAVE, SHUTDOWN, DEBUG RELOAD)."""
        path = self.path
        start = time.monotonic()
        try:
            self.last_save_bytes = write_file(
                path, self.snapshot(keep=keep_stream_forms(self.state)))
        except OSError as exc:
            log.warning("Failed opening the temp RDB file temp-%d.rdb (in server root dir %s) "
                        "for saving: %s", os.getpid(), self.state.config["dir"], exc)
            return False
        log.info("DB saved on disk (%d bytes, %.3f s)", self.last_save_bytes,
                 time.monotonic() - start)
        state = self.state
        state.dirty = 0
        state.last_save_time = state.clock.time_ms() // 1000
        self.last_bgsave_ok = True
        self.saves += 1
        self.misconf()
        return True

    # -- BGSAVE -----------------------------------------------------------------------------

    @property
    def in_progress(self) -> bool:
        return self.child is not None

    def bgsave(self) -> bool:
        """Start a background save; False if it could not start (the reason is logged)."""
        state = self.state
        self.last_bgsave_try = time.monotonic()
        if os.name != "posix":
            ok = self.save()
            self.last_bgsave_ok = ok
            return ok
        path = self.path
        dirty = state.dirty
        started = time.perf_counter_ns()
        try:
            pid = os.fork()
        except OSError as exc:
            log.warning("Can't save in background: fork: %s", exc)
            self.last_bgsave_ok = False
            return False
        if pid:
            state.forked(time.perf_counter_ns() - started)
        if pid == 0:  # pragma: no cover - runs in the child, which exits
            code = 1
            try:
                write_file(path, self.snapshot())
                code = 0
            finally:
                os._exit(code)
        self.child = _Child(pid, time.monotonic(), dirty, path)
        log.info("Background saving started by pid %d", pid)
        return True

    def reap(self, block: bool = False) -> None:
        """Collect the background child once it has exited, and record how it went."""
        child = self.child
        if child is None:
            return
        outcome = child_outcome(child.pid, block)
        if outcome is None:
            return
        self.child = None
        state = self.state
        self.last_bgsave_time_s = int(time.monotonic() - child.started)
        if outcome.ok:
            log.info("Background saving terminated with success")
            state.dirty = max(state.dirty - child.dirty_before, 0)
            state.last_save_time = state.clock.time_ms() // 1000
            self.last_bgsave_ok = True
            self.consecutive_failures = 0
            self.saves += 1
            with contextlib.suppress(OSError):
                self.last_save_bytes = os.path.getsize(child.path)
        else:
            if outcome.signal:
                log.warning("Background saving terminated by signal %d", outcome.signal)
            else:
                log.warning("Background saving error")
            # A child that was killed could not remove its unfinished file: as Redis's
            # rdbRemoveTempFile, the parent does (and after any failure, in case).
            self._remove_temp(child)
            if outcome.failed:
                self.last_bgsave_ok = False
                self.consecutive_failures += 1
        self.misconf()

    def kill_child(self) -> None:
        """Stop a background save (FLUSHALL, shutdown): its file is not wanted."""
        child = self.child
        if child is None:
            return
        stop_child(child.pid)
        self._remove_temp(child)
        self.child = None

    @staticmethod
    def _remove_temp(child: _Child) -> None:
        """Remove the file a background save was writing (``temp-<child pid>.rdb``)."""
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(os.path.dirname(child.path) or ".",
                                   f"temp-{child.pid}.rdb"))

    def cron(self) -> None:
        """Reap a finished child; start a scheduled BGSAVE or one a save rule asks for."""
        self.state.aof.cron()
        self.misconf()
        if self.child is not None:
            self.reap()
            return
        if self.state.aof.in_progress:
            return  # one child at a time, as Redis
        if self.bgsave_scheduled:
            self.bgsave_scheduled = False
            self.bgsave()
            return
        state = self.state
        rules = state.config["save"]
        if not rules or not state.dirty:
            return
        now_s = state.clock.time_ms() // 1000
        elapsed = now_s - state.last_save_time
        for seconds, changes in rules:
            if state.dirty >= changes and elapsed >= seconds and (
                self.last_bgsave_ok
                or time.monotonic() - self.last_bgsave_try > BGSAVE_RETRY_DELAY_S
            ):
                log.info("%d changes in %d seconds. Saving...", changes, seconds)
                self.bgsave()
                return

    def misconf(self) -> bool:
        """Whether writes are refused because the last background save failed; also sets
        the server's flag the dispatcher reads."""
        config = self.state.config
        refused = (not self.last_bgsave_ok and config["stop-writes-on-bgsave-error"]
                   and bool(config["save"]))
        replication = self.state.replication
        self.state.writes_refused = (refused or bool(self.state.aof.write_error)
                                     or replication.refusing or replication.read_only
                                     or replication.master_down)
        return refused

    def refusal(self, client: Client, ping: bool = False) -> str | None:
        """The error a refused write gets: the snapshot's MISCONF first, as Redis, then the
        AOF's, then replication's (-NOREPLICAS, -READONLY: not for PING); None when the
        write may run after all."""
        if self.misconf():
            return MISCONF
        if self.state.aof.write_error:
            return "MISCONF Errors writing to the AOF file: " + self.state.aof.write_error
        if ping:
            return None
        return self.state.replication.write_refusal(client)

    # -- loading ----------------------------------------------------------------------------

    def start_loading(self, total_bytes: int) -> None:
        """A load begins (Redis's ``startLoading``): INFO shows it from now on."""
        self.loading = True
        self.loading_start_time = int(time.time())
        self.loading_total_bytes = total_bytes
        self.loading_rdb_used_mem = 0
        self.loading_loaded_bytes = 0
        self.loading_file_base = 0
        self.keys_loaded = 0
        self.keys_expired = 0
        self._served_ns = time.perf_counter_ns()

    def stop_loading(self) -> None:
        self.loading = False

    def loading_turn(self) -> None:
        """Called as a load goes: serve clients if it is time to (see the module
        docstring). May raise LoadingStopped."""
        serve = self.serve_while_loading
        if serve is None:
            return
        now = time.perf_counter_ns()
        if now - self._served_ns >= LOADING_SERVE_INTERVAL_NS:
            serve()
            self._served_ns = time.perf_counter_ns()

    def load_file(self, path: str, merge: bool = False) -> rdb_file.LoadReport:
        """Load the snapshot at ``path`` into the (empty) keyspace; LoadError if it cannot
        be, naming the offset. ``merge`` (DEBUG RELOAD NOFLUSH MERGE): a key or function
        library already there is replaced by the file's instead."""
        state = self.state
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise LoadError(f"Can't open the snapshot {path}: {exc.strerror}") from exc
        log.info("Loading RDB %s (%d bytes)", path, len(data))
        start = time.monotonic()
        self.start_loading(len(data))
        try:
            report = self.load_bytes(data, drop_expired=True, name=path, merge=merge)
        finally:
            self.stop_loading()
        log.info("DB loaded from disk: %.3f seconds, %d keys loaded, %d expired keys skipped",
                 time.monotonic() - start, report.keys_loaded, report.keys_expired)
        state.last_save_time = state.clock.time_ms() // 1000
        return report

    def load_bytes(self, data: bytes, *, drop_expired: bool, name: str,
                   base: int = 0, merge: bool = False) -> rdb_file.LoadReport:
        """Load RDB bytes (a file or an AOF base) into the keyspace; LoadError on failure."""
        from resplite.formats import rdb_file, rdb_values
        from resplite.formats.rdb_format import RdbError

        state = self.state
        dbs = state.keyspace.dbs
        delay = state.config["key-load-delay"]
        turn = self.loading_turn
        # Only keys can hold a load up: a turn is due every so many of them, or after each
        # one that key-load-delay slows down.
        every = 1 if delay else 64
        self.loading_rdb_used_mem = _used_mem_aux(data)
        loaded_before = self.keys_loaded

        def on_key(db: int, key: bytes, value: Any, expire: int | None, idle: int | None,
                   freq: int | None) -> bool:
            database = dbs[db]
            if key in database.data:
                if not merge:
                    return False
                database.pop(key)
            database.put(key, value, expire, None)
            if idle is not None or freq is not None:
                database.restore_access(key, idle, freq)
            self.keys_loaded += 1
            if delay:
                debug_delay(delay)
            if not self.keys_loaded % every:
                turn()
            return True

        def on_strings(db: int, keys: list[bytes], values: list[bytes]) -> bool:
            if delay or merge:  # (merge: key by key, replacing those already there)
                return False  # key-load-delay: one key at a time, each followed by its pause
            if not dbs[db].add_strings(keys, values):
                return False
            before = self.keys_loaded
            self.keys_loaded += len(keys)
            if self.keys_loaded // every > before // every:
                turn()
            return True

        def progress(offset: int) -> None:
            before = self.loading_loaded_bytes - self.loading_file_base
            self.loading_loaded_bytes = self.loading_file_base + offset
            if offset >> 20 > before >> 20:
                log.info("Loading %s: %d of %d bytes (%d%%)", name, offset, len(data),
                         offset * 100 // max(len(data), 1))
            turn()

        try:
            report, self.end_offset = rdb_file.read_snapshot(
                data, on_key, databases=len(dbs), limits=load_limits(state.config),
                now_ms=state.clock.time_ms() if drop_expired else None,
                progress=progress, progress_every=PROGRESS_EVERY, base=base,
                on_strings=on_strings)
        except RdbError as exc:
            # Redis's rdbReportError line (without its source line number), then the stop.
            log.warning("Internal error in RDB reading offset %d -> %s", exc.offset,
                        exc.reason)
            raise LoadError(f"{name}: short read or corrupt RDB at {exc}") from exc
        except rdb_values.UnsupportedValue as exc:
            raise LoadError(f"{name}: {exc}") from exc
        if state.config["sanitize-dump-payload"] == "yes":
            # As Redis: "yes" sanitizes a load too; "clients" only what clients send.
            state.dump_payload_sanitizations += report.checked
        if report.libraries:
            try:
                state.scripting.load_snapshot_libraries(report.libraries, replace=merge)
            except CommandError as exc:
                raise LoadError(f"{name}: Failed loading library: {exc.message}") from exc
        self.keys_loaded = loaded_before + report.keys_loaded
        self.keys_expired += report.keys_expired
        self.loading_loaded_bytes = self.loading_file_base + self.end_offset
        return report

    def load_at_start(self) -> None:
        """Read the AOF manifest if there is one (a bad one stops the start even with
        ``appendonly no``, as in Redis); load the append-only file when ``appendonly`` is
        yes (as Redis, the RDB file is then not read), else ``dir``/``dbfilename`` if it
        exists (LoadError stops the start)."""
        aof = self.state.aof
        aof.read_at_start()
        if self.state.config["appendonly"]:
            aof.load()
            return
        path = self.path
        if os.path.exists(path):
            self.load_file(path)

    # -- INFO -------------------------------------------------------------------------------

    def loading_info_lines(self) -> list[tuple[str, object]]:
        """The progress of the load in progress (none when none is): Redis's fields, after
        the AOF ones."""
        if not self.loading:
            return []
        loaded = self.loading_loaded_bytes
        if self.loading_total_bytes:
            perc = loaded / self.loading_total_bytes * 100
            remaining = self.loading_total_bytes - loaded
        elif self.loading_rdb_used_mem:
            perc = min(loaded / self.loading_rdb_used_mem * 100, 99.99)
            remaining = max(self.loading_rdb_used_mem - loaded, 1)
        else:
            perc, remaining = 0.0, 1
        elapsed = int(time.time()) - self.loading_start_time
        # As Redis: a made-up second until a second has passed.
        eta = elapsed * remaining // (loaded + 1) if elapsed else 1
        return [
            ("loading_start_time", self.loading_start_time),
            ("loading_total_bytes", self.loading_total_bytes),
            ("loading_rdb_used_mem", self.loading_rdb_used_mem),
            ("loading_loaded_bytes", loaded),
            ("loading_loaded_perc", f"{perc:.2f}"),
            ("loading_eta_seconds", eta),
        ]

    def info_lines(self) -> list[tuple[str, object]]:
        state = self.state
        child = self.child
        return [
            ("loading", int(self.loading)),
            ("async_loading", 0),
            ("current_cow_peak", 0),
            ("current_cow_size", 0),
            ("current_cow_size_age", 0),
            ("current_fork_perc", "0.00"),
            ("current_save_keys_processed", 0),
            ("current_save_keys_total", 0),
            ("rdb_changes_since_last_save", state.dirty),
            ("rdb_bgsave_in_progress", int(child is not None)),
            ("rdb_last_save_time", state.last_save_time),
            ("rdb_last_bgsave_status", "ok" if self.last_bgsave_ok else "err"),
            ("rdb_last_bgsave_time_sec", self.last_bgsave_time_s),
            ("rdb_current_bgsave_time_sec",
             int(time.monotonic() - child.started) if child is not None else -1),
            ("rdb_saves", self.saves),
            *([("rdb_saves_consecutive_failures", self.consecutive_failures)]
              if compat.follows(state.config["redis-compat-version"],
                                "info-fields-8.6") else []),
            ("rdb_last_cow_size", 0),
            ("rdb_last_load_keys_expired", self.keys_expired),
            ("rdb_last_load_keys_loaded", self.keys_loaded),
        ]
