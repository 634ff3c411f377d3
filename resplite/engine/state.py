"""State shared by every connection of one server: config, clock, keyspace, clients, stats.

The keyspace's modification hook lands here: it invalidates WATCHes on the key, marks the
key ready for blocked clients and invalidates client-side caches. Statistics that INFO
reports (commandstats, errorstats, counters) are kept here too, updated by the dispatcher.

The push half of Redis hangs off this state too: the Pub/Sub registry (:attr:`pubsub`), the
keyspace notifications command modules report through :meth:`ServerState.notify`, the
client-side caching table (:attr:`tracking`), the MONITOR clients, and the per-client
outboxes all of those write into (:attr:`output`). :attr:`current_client` is the client whose
request is running (None in the cron and on timers): NOLOOP tracking needs to know who caused
a change.

Memory: :meth:`ServerState.used_memory` is Redis's ``used_memory`` for resplite, the sum of
what the data set holds (the keyspace's running :class:`~resplite.store.keyspace.Meter`,
current after every command), what clients hold (query and output buffers, queued MULTI
commands; re-measured after each batch of a client's requests while ``maxmemory`` is set,
by the cron, and whenever it is reported), what scripts hold (:attr:`script_memory`, asked
of the scripting engine when the clients are measured) and a fixed allowance for the
server's own structures (``used_memory_startup``). The process's resident size is reported apart, as
``used_memory_rss``. ``maxmemory`` is checked against this figure before every command and
eviction (:mod:`resplite.engine.evict`) brings it back under the limit.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resplite.engine import gates, notify
from resplite.engine.acl import Acl, User
from resplite.engine.aof import Aof
from resplite.engine.blocking import BlockedState, BlockingManager
from resplite.engine.client import REPLY_OFF
from resplite.engine.client_eviction import evict_clients, eviction_limit
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.dispatch import Dispatcher
from resplite.engine.evict import EVICT_FAIL, Evictor
from resplite.engine.expire import ActiveExpire
from resplite.engine.faults import Faults
from resplite.engine.hotkeys import Hotkeys
from resplite.engine.info import InfoState
from resplite.engine.latency import DIRECT_US, CommandHistogram, LatencyMonitor
from resplite.engine.lazyfree import LazyFree
from resplite.engine.migrate import NO_TRANSPORT, MigrateSockets, MigrateTransport
from resplite.engine.monitor import monitor_line, redact
from resplite.engine.output import Output
from resplite.engine.pause import ClientPause
from resplite.engine.persistence import Persistence
from resplite.engine.pubsub import PubSub
from resplite.engine.replication import Replication
from resplite.engine.scheduler import NO_TIMERS, Scheduler
from resplite.engine.scripting import NO_PUMP, BusyPump
from resplite.engine.slowlog import SlowLog
from resplite.engine.tracking import Tracking
from resplite.store.keyspace import Keyspace

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.cluster import ClusterNode
    from resplite.engine.scripting.engine import Scripting
    from resplite.engine.table import CommandSpec


def _short_client_info(client: Client) -> bytes:
    return f"id={client.id} addr={client.addr} user={client.user.name}".encode(
        "utf-8", "surrogateescape")


log = logging.getLogger("resplite.state")

# What used_memory counts for the server's own structures (command table, empty databases,
# configuration). Redis 8.6 reports used_memory_startup 705 KB and about 800 KB once a client
# is connected (7.0: 856 and 941 KB), so a fresh server at maxmemory 1mb takes a few hundred
# KB of writes before -OOM; resplite counts 800 KB, leaving that room too (a whole 1 MB
# refused the first write at maxmemory 1mb).
STARTUP_MEMORY = 800 << 10


class CommandStats:
    """One command's INFO commandstats counters and its latency histogram.

    Invariant: every call the dispatcher completes is counted once in ``hist``, at its
    duration in whole microseconds, or (past the list's end) by :meth:`record_long`.
    ``hist`` is the histogram's ``direct`` list while ``latency-tracking`` is on and a list
    of this object's own while it is off (see :mod:`resplite.engine.latency`), so the
    number of calls is not kept apart: :attr:`calls` sums what was counted.
    """

    __slots__ = ("failed_calls", "hist", "histogram", "ns", "rejected_calls", "untracked",
                 "untracked_long")

    def __init__(self, tracking: bool = True) -> None:
        # Summed in nanoseconds: a command shorter than a microsecond still adds up, as
        # Redis's sum of microsecond-clock differences does.
        self.ns = 0
        self.rejected_calls = 0
        self.failed_calls = 0
        self.histogram = CommandHistogram()
        # Calls while tracking was off (created on the first switch off).
        self.untracked: list[int] | None = None
        self.untracked_long = 0
        self.hist = self.histogram.direct
        if not tracking:
            self.track(False)

    @property
    def calls(self) -> int:
        untracked = self.untracked
        return (self.histogram.calls() + self.untracked_long
                + (sum(untracked) if untracked is not None else 0))

    @property
    def usec(self) -> int:
        return self.ns // 1000

    def track(self, on: bool) -> None:
        if on:
            self.hist = self.histogram.direct
        else:
            if self.untracked is None:
                self.untracked = [0] * DIRECT_US
            self.hist = self.untracked

    def record_long(self, us: int) -> None:
        """Count a call of ``us`` microseconds, too long for ``hist``."""
        if self.hist is self.histogram.direct:
            self.histogram.record_us(us)
        else:
            self.untracked_long += 1


class ServerState:
    def __init__(
        self,
        config: Config,
        clock: Clock | None = None,
        *,
        table: dict[bytes, CommandSpec],
        scheduler: Scheduler = NO_TIMERS,
        client_info: Callable[[Client], bytes] | None = None,
        busy_pump: BusyPump = NO_PUMP,
        migrate_transport: MigrateTransport = NO_TRANSPORT,
    ) -> None:
        self.config = config
        # Why every request leaves the dispatcher's fast path (resplite.engine.gates): kept
        # current by set_gate, called only by the setters of what each bit stands for.
        self.gates = 0
        # The shell's timers (blocked-client timeouts, the end of a CLIENT PAUSE).
        self.scheduler = scheduler
        self._aof_on = False  # the append-only file is open (see self.aof below)
        # Writes are propagated (to the append-only file or the replication stream): read
        # on every write, kept by update_propagation.
        self.propagating = False
        self.clock = clock or Clock()
        self.keyspace = Keyspace(config["databases"], self.clock, self._on_modified)
        # A clock jump refreshes the keyspace's cached access clock at once.
        self.clock.add_listener(self.keyspace.tick)
        self._configure_access()
        for name in ("maxmemory-policy", "lfu-log-factor", "lfu-decay-time"):
            config.on_change(name, self._configure_access)
        self.blocking = BlockingManager(self.clock, scheduler)
        self.blocking.acting_as = self._acting_as
        self.blocking.run_retry = self._run_retry
        self.pause = ClientPause(self)
        self.lazyfree = LazyFree(scheduler)
        # The active expire cycle (the cron runs its slow cycles, it schedules fast ones).
        self.expiry = ActiveExpire(self)
        self._set_lazy_release()
        for name in ("lazyfree-lazy-expire", "lazyfree-lazy-server-del"):
            config.on_change(name, self._set_lazy_release)
        # RESPLITE.FAULT's rules: while any is set, commands take the general path.
        self.faults = Faults()
        self.faults.on_change = self._faults_changed
        # This server's place in an in-process cluster (None: standalone); see join_cluster.
        self._cluster: ClusterNode | None = None
        # MIGRATE's cached links to other servers, opened through the shell's transport.
        self.migrate = MigrateSockets(migrate_transport, self.clock)
        self.slowlog = SlowLog(config, self.clock)
        self.latency = LatencyMonitor(config, self.clock)
        self.hotkeys = Hotkeys(self.clock)
        # Per-command latency histograms are kept while this is on (CommandStats).
        self.latency_tracking: bool = config["latency-tracking"]
        config.on_change("latency-tracking", self._set_latency_tracking)
        self.table = table
        self.clients: dict[int, Client] = {}
        self.current_client: Client | None = None
        self.output = Output(self.clock, config["client-output-buffer-limit"], scheduler)
        config.on_change("client-output-buffer-limit", self._set_output_limits)
        self.pubsub = PubSub(self.output)
        self.tracking = Tracking(self.output, self.clients)
        self.tracking.max_keys = config["tracking-table-max-keys"]
        config.on_change("tracking-table-max-keys", self.tracking.set_max_keys)
        self.output.before_flush = self.tracking.broadcast
        # Set once tracking is first enabled (Redis creates its table then): until that
        # moment a write costs the tracking code nothing.
        self.tracking_used = False
        # DEBUG PAUSE-CRON 1: the server's periodic work (its cron ticks) is skipped.
        self.cron_paused = False
        # The MONITOR clients (changed only by set_monitor).
        self.monitors: dict[Client, None] = {}
        self.notify_flags = 0
        self._set_notify_flags("notify-keyspace-events", config["notify-keyspace-events"])
        config.on_change("notify-keyspace-events", self._set_notify_flags)
        self.next_client_id = 1
        # (db, key) -> clients watching it
        self.watched_keys: dict[tuple[int, bytes], set[Client]] = {}
        self.run_id = os.urandom(20).hex()
        self.start_time_ms = self.clock.time_ms()
        self.start_monotonic_ms = self.clock.monotonic_ms()
        self.process_start = time.process_time()
        self.tcp_port = 0
        self.unix_socket = ""
        self.executable = ""
        # statistics (INFO)
        self.command_stats: dict[str, CommandStats] = {}
        self.error_stats: dict[str, int] = {}
        self.total_error_replies = 0
        self.total_connections = 0
        self.rejected_connections = 0
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        # Socket reads and writes (total_reads_processed / total_writes_processed), clients
        # closed for their query buffer or MULTI queue (client_query_buffer_limit_
        # disconnections), forks for BGSAVE / BGREWRITEAOF and the last one's duration.
        self.reads_processed = 0
        self.writes_processed = 0
        self.qbuf_limit_disconnections = 0
        self.total_forks = 0
        self.latest_fork_usec = 0
        self.dirty = 0  # changes since the last save (rdb_changes_since_last_save)
        self.last_save_time = self.start_time_ms // 1000
        self.shutdown_requested: Callable[[], None] | None = None
        # SHUTDOWN already saved (or was told not to): the shell's stop does not save again.
        self.shutdown_saved = False
        self._writes_refused = False  # see writes_refused
        self.unexpected_errors = 0
        # Packed blobs of RESTORE payloads (and, with sanitize-dump-payload yes, of loaded
        # files) validated while sanitize-dump-payload asked for it (INFO's
        # dump_payload_sanitizations). resplite validates every payload deeply whatever the
        # setting; the setting decides only what is counted, as Redis counts.
        self.dump_payload_sanitizations = 0
        # Memory (see the module docstring): the keyspace's meter, what clients hold (the sum
        # of their mem_charged), what scripts hold, and the startup allowance.
        self.maxmemory = config["maxmemory"]
        self.meter = self.keyspace.meter
        self.clients_memory = 0
        self.script_memory = 0  # re-measured with the clients (see measure_clients)
        self.startup_memory = STARTUP_MEMORY
        self.peak_memory = STARTUP_MEMORY
        # When the peak was reached (Unix seconds; INFO's used_memory_peak_time).
        self.peak_memory_time = self.clock.time_ms() // 1000
        self.evictor = Evictor(self)
        # maxmemory-clients in bytes (see resplite.engine.client_eviction), and whether
        # either limit asks the dispatcher to look at memory before a command.
        self.client_eviction_limit = 0
        self.evicted_clients = 0
        self._compute_client_eviction_limit()
        config.on_change("maxmemory", self._set_maxmemory)
        config.on_change("maxmemory-clients", self._set_client_eviction_limit)
        config.on_change("proto-max-bulk-len", self._set_max_bulk_len)
        # Read on every client read (Connection.data_received) and MULTI queueing.
        self.query_buffer_limit: int = config["client-query-buffer-limit"]
        config.on_change("client-query-buffer-limit", self._set_query_buffer_limit)
        # Users: requirepass is the default user's password; "user" lines of the config
        # file, then the ACL file, define the others (a bad one stops the start).
        self.acl = Acl(table, config["acl-pubsub-default"], config["redis-compat-version"])
        self.acl.set_default_password(config["requirepass"])
        config.on_change("requirepass", self._set_requirepass)
        config.on_change("acl-pubsub-default", self._set_pubsub_default)
        if config.user_lines or config["aclfile"]:
            from resplite.engine.acl_file import load_configured_users

            load_configured_users(self.acl, config.user_lines, config["aclfile"])
        # How the ACL log describes a client (the shell passes CLIENT LIST's line).
        self.client_info: Callable[[Client], bytes] = client_info or _short_client_info
        # Snapshots (SAVE, BGSAVE, save rules) and the start-up load.
        self.persistence = Persistence(self)
        # The append-only file (appendonly yes); aof_on is read on every write.
        self.aof = Aof(self)
        # Replicas, the backlog, this server's primary (resplite.engine.replication).
        self.replication = Replication(self)
        config.on_change("appendonly", self._set_appendonly)
        # Last: these read the table, the slow log, the memory figures and the stats above.
        self.info = InfoState(self)
        # Scripts and functions (made on first use, see ``scripting``); ``busy_pump`` lets
        # the shell serve other clients while a script runs past busy-reply-threshold.
        self._busy_pump = busy_pump
        self._scripting: Scripting | None = None
        self.dispatcher = Dispatcher(self)
        self.blocking.on_done = self.dispatcher.account_unblocked

    # -- the gates (see resplite.engine.gates) ----------------------------------------------

    def set_gate(self, bit: int, on: bool) -> None:
        """Set or clear one of the server's gates (by the setters of what it stands for)."""
        self.gates = gates.with_bit(self.gates, bit, on)

    @property
    def aof_on(self) -> bool:
        """The append-only file is open: writes are logged (read on every write)."""
        return self._aof_on

    @aof_on.setter
    def aof_on(self, value: bool) -> None:
        self._aof_on = value
        self.update_propagation()

    def update_propagation(self) -> None:
        """Writes are propagated while the append-only file is open or the replication
        stream is active (the AOF gate stands for both)."""
        self.propagating = self._aof_on or self.replication.active
        self.set_gate(gates.AOF, self.propagating)
        self._set_notify_flags("", self.notify_flags)

    @property
    def writes_refused(self) -> bool:
        """A failed background save with stop-writes-on-bgsave-error (or a failed AOF
        write): writes answer -MISCONF (kept up to date by the persistence code)."""
        return self._writes_refused

    @writes_refused.setter
    def writes_refused(self, value: bool) -> None:
        self._writes_refused = value
        self.set_gate(gates.WRITES_REFUSED, value)

    @property
    def memory_gate(self) -> bool:
        """Whether ``maxmemory`` or ``maxmemory-clients`` asks the dispatcher to look at
        memory before a command."""
        return bool(self.gates & gates.MEMORY)

    @property
    def cluster(self) -> ClusterNode | None:
        """This server's node in an in-process cluster (None: standalone); see
        :meth:`join_cluster`."""
        return self._cluster

    def _faults_changed(self, active: bool) -> None:
        self.set_gate(gates.FAULTS, active)

    def set_monitor(self, client: Client, on: bool) -> None:
        """Make ``client`` a MONITOR (MONITOR) or no longer one (RESET, disconnection)."""
        client.monitor = on
        if on:
            self.monitors[client] = None
        else:
            self.monitors.pop(client, None)
        self.set_gate(gates.MONITORS, bool(self.monitors))

    @property
    def scripting(self) -> Scripting:
        """The scripting engine, imported and made on first use: a server that runs no
        script command never loads it (nor lupa, which the first Lua state loads)."""
        engine = self._scripting
        if engine is None:
            from resplite.engine.scripting.engine import Scripting

            engine = self._scripting = Scripting(self, self._busy_pump)
        return engine

    @property
    def script_busy(self) -> bool:
        """Whether a script runs past busy-reply-threshold (without making the engine)."""
        return self._scripting is not None and self._scripting.busy

    def _configure_access(self, name: str = "", value: object = None) -> None:
        # OBJECT IDLETIME / FREQ: what each key's access field records follows the policy.
        config = self.config
        self.keyspace.configure_access(
            config["maxmemory-policy"], config["lfu-log-factor"], config["lfu-decay-time"]
        )

    def _set_lazy_release(self, name: str = "", value: object = None) -> None:
        # Expired values and those a command deletes as a side effect are freed after the
        # replies when the settings ask, as Redis frees them in its lazy-free thread.
        defer = self.lazyfree.maybe_defer
        config = self.config
        self.keyspace.set_release(
            expired=defer if config["lazyfree-lazy-expire"] else None,
            replaced=defer if config["lazyfree-lazy-server-del"] else None)

    def _set_output_limits(self, name: str, value: Any) -> None:
        self.output.limits = value

    def _set_notify_flags(self, name: str, value: int) -> None:
        self.notify_flags = value
        publishing = bool(value & (notify.KEYSPACE | notify.KEYEVENT))
        wanted = value if publishing else 0
        self.keyspace.set_hooks(
            on_expired=(self._on_expired if wanted & notify.EXPIRED or self.propagating
                        else None),
            on_new=self._on_new if wanted & notify.NEW else None,
            on_miss=self._on_miss if wanted & notify.KEY_MISS else None,
            on_fields_expired=(
                self._on_fields_expired if wanted & (notify.HASH | notify.GENERIC) else None
            ),
        )

    def start_aof(self) -> None:
        """Open the append-only file after the start-up load (appendonly yes)."""
        self.aof.start()
        self._set_notify_flags("", self.notify_flags)

    def _set_appendonly(self, name: str, value: bool) -> None:
        if value:
            self.aof.enable()
        else:
            self.aof.disable()
        self._set_notify_flags("", self.notify_flags)

    def _set_max_bulk_len(self, name: str, value: int) -> None:
        # New connections read the directive; open ones get it on their request reader.
        for client in self.clients.values():
            if client.conn is not None:
                client.conn.set_max_bulk_len(value)

    def _set_requirepass(self, name: str, value: str) -> None:
        self.acl.set_default_password(value)
        self.users_changed(self.acl.default)

    def _set_pubsub_default(self, name: str, value: str) -> None:
        self.acl.pubsub_default = value

    def users_changed(self, *users: User) -> None:
        """Rules of ``users`` changed: refresh what their clients' dispatch reads."""
        for client in self.clients.values():
            if client.user in users:
                client.acl = None if client.user.unrestricted else client.user

    def log_acl_denial(self, client: Client, reason: int, obj: bytes,
                       username: str | None = None, context: str | None = None) -> None:
        """An ACL LOG entry for ``client`` (context ``multi`` inside a transaction, unless
        ``context`` says otherwise: ``lua`` for a script's call)."""
        if context is None:
            context = ("multi" if client.multi is not None or client.executing_multi
                       else "toplevel")
        self.acl.add_log(
            reason, context, obj, username if username is not None else client.user.name,
            self.clock.time_ms(), self.client_info(client), self.config["acllog-max-len"])

    def _set_query_buffer_limit(self, name: str, value: int) -> None:
        self.query_buffer_limit = value

    def _compute_client_eviction_limit(self) -> None:
        self.client_eviction_limit = eviction_limit(self.config["maxmemory-clients"],
                                                    self.maxmemory)
        self.set_gate(gates.MEMORY, bool(self.maxmemory or self.client_eviction_limit))

    def _set_client_eviction_limit(self, name: str = "", value: object = None) -> None:
        # As Redis's CONFIG SET maxmemory-clients: the limit applies at once.
        self._compute_client_eviction_limit()
        if self.client_eviction_limit:
            self.measure_clients()
            evict_clients(self)

    def evict_clients(self) -> None:
        """Close the largest clients while all clients hold more than maxmemory-clients."""
        if self.client_eviction_limit and self.clients_memory >= self.client_eviction_limit:
            evict_clients(self)

    def _set_maxmemory(self, name: str, value: int) -> None:
        self.maxmemory = value
        self._set_client_eviction_limit()
        if not value:
            return
        # As Redis's CONFIG SET maxmemory: warn when already over, and start evicting.
        used = self.measure_clients()
        if value < used:
            log.warning(
                "WARNING: the new maxmemory value set via CONFIG SET (%d) is smaller than the "
                "current memory usage (%d). This will result in key eviction and/or the "
                "inability to accept new write commands depending on the maxmemory-policy.",
                value, used)
        self.evictor.start_background()

    # -- memory ---------------------------------------------------------------------------

    def used_memory(self) -> int:
        """Redis's ``used_memory``: data set, clients, scripts and the startup allowance."""
        return (self.startup_memory + self.meter.used() + self.clients_memory
                + self.script_memory)

    def over_maxmemory(self) -> bool:
        """Whether ``used_memory`` is over ``maxmemory`` (never when it is 0)."""
        maxmemory = self.maxmemory
        return bool(maxmemory) and (self.startup_memory + self.meter.used()
                                    + self.clients_memory + self.script_memory) > maxmemory

    def out_of_memory(self) -> bool:
        """Called while over ``maxmemory``: evict as the policy allows (Redis's
        performEvictions); whether memory is still over with nothing left to evict, so
        that a ``denyoom`` command is refused."""
        return self.evictor.perform() == EVICT_FAIL

    def charge_client(self, client: Client) -> None:
        """Re-measure what ``client`` holds into :attr:`clients_memory`."""
        figure = client.memory_figure()
        self.clients_memory += figure - client.mem_charged
        client.mem_charged = figure

    def net_bytes(self) -> int:
        """Bytes read and written on client sockets since the start (what HOTKEYS' NET
        figures are measured against)."""
        return self.net_input_bytes + self.net_output_bytes

    def note_peak(self) -> None:
        """Raise ``used_memory_peak`` to the current figure if it is higher."""
        used = self.used_memory()
        if used > self.peak_memory:
            self.peak_memory = used
            self.peak_memory_time = self.clock.time_ms() // 1000

    def measure_clients(self) -> int:
        """Re-measure every client (for a report, or when ``maxmemory`` is set), note the
        peak, and answer ``used_memory``."""
        for client in self.clients.values():
            self.charge_client(client)
        engine = self._scripting
        self.script_memory = engine.memory_used() if engine is not None else 0
        used = self.used_memory()
        if used > self.peak_memory:
            self.peak_memory = used
            self.peak_memory_time = self.clock.time_ms() // 1000
        return used

    def default_user_nopass(self) -> bool:
        """Whether the default user needs no password (protected mode then applies)."""
        return self.acl.default.nopass

    # -- hooks ----------------------------------------------------------------------------

    def _on_modified(self, db: int, key: bytes) -> None:
        # Runs after every write: with no WATCH and no blocked client anywhere (the usual
        # case) it builds no (db, key) pair at all.
        if self.watched_keys:
            slot = (db, key)
            watchers = self.watched_keys.get(slot)
            if watchers:
                gone = key not in self.keyspace.dbs[db].data
                for client in watchers:
                    if gone and client.watched.get(slot):
                        # Already expired when WATCHed: its deletion changes nothing (Redis 7).
                        client.watched[slot] = False
                        continue
                    client.watch_dirty = True
        waiting = self.blocking.waiting
        if waiting and (db, key) in waiting:
            self.blocking.ready[(db, key)] = None
        if self.tracking_used:
            self.tracking.invalidate(key, self.current_client)

    def _run_retry(self, client: Client, blocked: BlockedState, key: bytes | None) -> Any:
        """Re-run a blocked command; a change it makes is logged in the append-only file
        as the non-blocking command it amounts to, as Redis propagates it: the blocking
        commands' handlers record that form (``client.propagate_as``) whenever they serve."""
        dirty = self.dirty
        result = blocked.request.retry()
        forms = client.propagated
        client.propagated = None
        if self.propagating and self.dirty != dirty:
            self.aof.feed_all(client, blocked.db_index,
                              forms if forms is not None else [blocked.request.argv])
        return result

    def _acting_as(self, client: Client | None) -> Client | None:
        previous = self.current_client
        self.current_client = client
        return previous

    def _on_expired(self, db: int, key: bytes) -> None:
        if self.propagating:
            # As Redis propagates an expiry: a DEL (UNLINK when expired keys are freed
            # lazily), logged before the command that found it.
            lazy = self.config["lazyfree-lazy-expire"]
            self.aof.feed(None, db, [b"UNLINK" if lazy else b"DEL", key])
        self.notify(notify.EXPIRED, b"expired", key, db)

    def _on_new(self, db: int, key: bytes) -> None:
        self.notify(notify.NEW, b"new", key, db)

    def _on_fields_expired(self, db: int, key: bytes) -> None:
        # Redis 7.4: fields expired (lazily or by the active cycle) report hexpired, then del
        # when they were the hash's last.
        self.notify(notify.HASH, b"hexpired", key, db)
        if key not in self.keyspace[db].data:
            self.notify(notify.GENERIC, b"del", key, db)

    def _on_miss(self, db: int, key: bytes) -> None:
        # Only read lookups (Redis's lookupKeyRead) report a miss; writes' lookups do not.
        self.notify(notify.KEY_MISS, b"keymiss", key, db)

    # -- the push half: notifications, Pub/Sub, MONITOR -----------------------------------

    def notify(self, cls: int, event: bytes, key: bytes, db: int) -> None:
        """Report keyspace event ``event`` of class ``cls`` (see :mod:`resplite.engine.notify`).

        The one call command modules make after a change, with Redis's event name; it
        publishes on the keyspace and keyevent channels the configuration enables.
        """
        flags = self.notify_flags
        if not flags & cls:
            return
        if flags & notify.KEYSPACE:
            self.pubsub.publish(notify.keyspace_channel(db, key), event)
        if flags & notify.KEYEVENT:
            self.pubsub.publish(notify.keyevent_channel(db, event), key)

    def evict(self, db: int, key: bytes) -> bool:
        """Delete ``key`` as an eviction under ``maxmemory`` does, in Redis's order: the
        modification (WATCH, blocked clients, caches), made by no client so that a NOLOOP
        tracking client is told too, then the ``evicted`` event. Whether the key existed
        (an expired one is deleted as expired instead)."""
        database = self.keyspace[db]
        value = database.pop(key)
        if value is None:
            return False
        if self.config["lazyfree-lazy-eviction"]:
            # Freed after the replies; used_memory has already dropped (it counts what
            # the keyspace holds), so the eviction loop stops as soon as enough is out.
            self.lazyfree.maybe_defer(value)
        del value
        previous = self.current_client
        self.current_client = None
        try:
            database.signal_modified(key)
        finally:
            self.current_client = previous
        self.notify(notify.EVICTED, b"evicted", key, db)
        if self.propagating:
            # Replicas and the AOF delete it too (UNLINK when evictions free lazily).
            lazy = self.config["lazyfree-lazy-eviction"]
            self.aof.feed(None, db, [b"UNLINK" if lazy else b"DEL", key])
        return True

    def feed_monitors(self, client: Client, fullname: str, argv: list[bytes]) -> None:
        """Show a command that ran to every MONITOR client (Redis's replicationFeedMonitors);
        a script's commands show ``lua`` for the peer."""
        if client.is_script:
            peer = "lua"
        elif client.local and self.unix_socket and client.laddr.startswith(self.unix_socket):
            peer = "unix:" + self.unix_socket
        else:
            peer = client.addr
        line = monitor_line(self.clock.time_us(), client.db_index, peer,
                            redact(fullname, argv))
        push = self.output.push
        for monitor in self.monitors:
            # Unlike Pub/Sub messages, MONITOR lines are ordinary replies: CLIENT REPLY OFF
            # silences them.
            if monitor.reply_mode != REPLY_OFF:
                push(monitor, line)

    def push(self, client: Client, data: bytes) -> None:
        """Queue bytes encoded for ``client`` (see :mod:`resplite.engine.output`)."""
        self.output.push(client, data)

    def signal_flush(self, db: int | None, swapped_with: int | None = None) -> None:
        """Call just before a database (all of them when ``db`` is None) is emptied, or is
        swapped with ``swapped_with``.

        As Redis's touchAllWatchedKeysInDb, a WATCH fails only if its key exists in the
        emptied database (or in the one swapped in), and only if that is a logical change:
        a key already expired when WATCHed may go, or be replaced by another expired one,
        and a missing key may be replaced by an expired one (the WATCH then counts it as
        expired). Every waited-on key of the databases is made ready so blocked commands
        re-check what they wait for.
        """
        dbs = list(range(len(self.keyspace))) if db is None else [db]
        if swapped_with is not None:
            dbs.append(swapped_with)
        targets = set(dbs)
        for slot, watchers in self.watched_keys.items():
            wdb, key = slot
            if wdb not in targets:
                continue
            emptied = key in self.keyspace[wdb].data
            replacement = None
            if swapped_with is not None and db is not None:
                replacement = self.keyspace[swapped_with if wdb == db else db]
                if key not in replacement.data:
                    replacement = None
            if not emptied and replacement is None:
                continue
            for client in watchers:
                if client.watched.get(slot):  # expired when WATCHed
                    if replacement is None:
                        client.watched[slot] = False  # now deleted: no logical change
                        continue
                    if replacement.is_expired(key):
                        continue
                elif not emptied and replacement is not None and replacement.is_expired(key):
                    client.watched[slot] = True
                    continue
                client.watch_dirty = True
        for index in targets:
            self.blocking.signal_db(index)
        if swapped_with is None and self.tracking_used:
            self.tracking.invalidate_all()

    # -- clients --------------------------------------------------------------------------

    def new_client_id(self) -> int:
        cid = self.next_client_id
        self.next_client_id += 1
        return cid

    def watch(self, client: Client, key: bytes) -> None:
        slot = (client.db_index, key)
        if slot in client.watched:
            return
        client.watched[slot] = client.db.is_expired(key)
        self.watched_keys.setdefault(slot, set()).add(client)

    def watched_key_expired(self, client: Client) -> bool:
        """Whether a key that was live when WATCHed has logically expired since (Redis 7)."""
        for (db, key), was_expired in client.watched.items():
            if not was_expired and self.keyspace[db].is_expired(key):
                return True
        return False

    def unwatch_all(self, client: Client) -> None:
        for slot in client.watched:
            watchers = self.watched_keys.get(slot)
            if watchers is not None:
                watchers.discard(client)
                if not watchers:
                    del self.watched_keys[slot]
        client.watched.clear()
        client.watch_dirty = False

    def forget_client(self, client: Client) -> None:
        self.blocking.unblock(client)
        self.unwatch_all(client)
        self.pubsub.forget(client)
        self.tracking.forget(client)
        if client.monitor:
            self.set_monitor(client, False)
        self.output.forget(client)
        if client.repl_kind or self.replication.by_client:
            self.replication.forget(client)
        self.clients_memory -= client.mem_charged
        client.mem_charged = 0
        if self.current_client is client:
            self.current_client = None
        self.clients.pop(client.id, None)

    # -- statistics -----------------------------------------------------------------------

    @property
    def total_commands(self) -> int:
        """Commands run since the start or the last RESETSTAT (INFO total_commands_processed):
        the sum of the commandstats calls, which count exactly the same runs."""
        return sum(stats.calls for stats in self.command_stats.values())

    @property
    def keyspace_hits(self) -> int:
        """Read lookups that found a live key (Redis's lookupKeyRead; write lookups do not
        count), summed over the databases: INFO keyspace_hits."""
        return sum(db.hits for db in self.keyspace.dbs)

    @property
    def keyspace_misses(self) -> int:
        """Read lookups that found no live key: INFO keyspace_misses."""
        return sum(db.misses for db in self.keyspace.dbs)

    def stats_for(self, fullname: str) -> CommandStats:
        stats = self.command_stats.get(fullname)
        if stats is None:
            stats = self.command_stats[fullname] = CommandStats(self.latency_tracking)
        return stats

    def _set_latency_tracking(self, name: str, value: object) -> None:
        self.latency_tracking = bool(value)
        for stats in self.command_stats.values():
            stats.track(self.latency_tracking)

    def count_error(self, message: str) -> None:
        # The code is what comes before a space within the reply's first 32 bytes (its
        # "-" included), else ERR, as Redis's afterErrorReply reads it: an error a script
        # made up ({err='boom'}) counts as ERR.
        space = message.find(" ", 0, 31)
        code = message[:space] if space >= 0 else "ERR"
        self.error_stats[code] = self.error_stats.get(code, 0) + 1
        self.total_error_replies += 1

    def join_cluster(self, node: ClusterNode) -> None:
        """Serve as one node of an in-process cluster (see resplite.engine.cluster): every
        command then takes the dispatcher's general path, which routes by key slot."""
        self._cluster = node
        self.set_gate(gates.CLUSTER, True)

    def current_hz(self) -> int:
        """The cron's frequency: ``hz`` (1..500), doubled while each tick would serve more
        than 200 clients when ``dynamic-hz`` is on, as Redis scales it (INFO's ``hz``)."""
        config = self.config
        hz = max(1, min(config["hz"], 500))
        if config["dynamic-hz"]:
            clients = len(self.clients)
            while clients / hz > 200 and hz < 500:
                hz = min(hz * 2, 500)
        return hz

    def forked(self, elapsed_ns: int) -> None:
        """A child was forked (BGSAVE, BGREWRITEAOF) in ``elapsed_ns``: INFO's fork
        statistics and the latency monitor's ``fork`` event."""
        self.total_forks += 1
        self.latest_fork_usec = elapsed_ns // 1000
        self.latency.sample_ns("fork", elapsed_ns)

    def reset_stats(self) -> None:
        self.dump_payload_sanitizations = 0
        replication = self.replication
        replication.sync_full = replication.sync_partial_ok = replication.sync_partial_err = 0
        self.lazyfree.freed = 0
        self.evicted_clients = 0
        self.evictor.reset_stats()
        self.command_stats.clear()
        self.error_stats.clear()
        self.total_error_replies = 0
        self.total_connections = 0
        self.rejected_connections = 0
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        self.reads_processed = self.writes_processed = 0
        self.qbuf_limit_disconnections = 0
        self.total_forks = self.latest_fork_usec = 0
        self.expiry.reset_stats()
        self.output.disconnections = 0
        self.persistence.consecutive_failures = 0
        for db in self.keyspace.dbs:
            db.hits = db.misses = 0
            db.expired_keys = db.expired_keys_active = 0
            db.expired_fields = db.expired_fields_active = 0
        if self._scripting is not None:
            self._scripting.evicted_scripts = 0
