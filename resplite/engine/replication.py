"""Replication, sans I/O: the replication ids and offset, the backlog, the replicas attached
to this server and the link to this server's own primary.

Theory of operation
-------------------
**The stream.** Every write is propagated once, through :class:`resplite.engine.aof.Aof`
(the dispatcher's feed: the forms ``client.propagate_as`` recorded, SELECT when the database
changes, MULTI/EXEC around a transaction's or a script's writes). While a replication
backlog exists, the same bytes are handed to :meth:`Replication.feed`: they advance
``offset`` (INFO's ``master_repl_offset``) by their length, go into the backlog and to every
attached replica. Without a backlog the offset advances by one per write logged in the
append-only file, as Redis 7.2+ does for WAITAOF (``Aof.offset`` is the one counter; this
module owns the byte counting).

**Full and partial resynchronisation.** ``PSYNC replid offset`` continues from the backlog
(``+CONTINUE``) when ``replid`` is this server's id (or its previous one, ``replid2``, up
to ``second_offset``) and the backlog still holds ``offset``; otherwise, or for ``SYNC``,
the replica gets ``+FULLRESYNC <replid> <offset>`` (not for SYNC) and, once a forked child
has written an RDB snapshot of the data set at that offset (the BGSAVE path of
:mod:`resplite.engine.persistence`, into its own temporary file), the snapshot as one
``$<len>`` bulk without a trailing CRLF, followed by every byte of the stream since the
fork, which is held for the replica meanwhile. Replicas that arrive while a child is
writing share it, with a copy of what the first one holds. The first replica creates the
backlog (with a new replication id, as Redis does when no history exists); it lives as
long as the server, sized by ``repl-backlog-size``.

**Acknowledgements.** A replica sends ``REPLCONF ACK <offset>`` every second;
``WAIT`` counts the replicas whose acknowledged offset has reached the caller's last write
(``Client.woff``), and asks them for one at once with ``REPLCONF GETACK *`` (sent once per
batch of waiting clients). ``min-replicas-to-write`` / ``min-replicas-max-lag`` refuse
writes with ``-NOREPLICAS`` while too few replicas have acknowledged recently.

**This server as a replica.** ``REPLICAOF host port`` asks the shell's
:class:`MasterConnector` for a link (``resplite.server.replica``); the link does the
handshake, loads the snapshot, then hands each command of the stream to
:meth:`Replication.apply` (run by the master client, whose replies are discarded, its
writes allowed on a read-only replica) and proxies the raw stream to this server's own
replicas and backlog unchanged, so every server of a chain has the same offsets and ids
(PSYNC2). ``REPLICAOF NO ONE`` promotes: a new id, the old one kept as ``replid2`` up to
the offset reached, so former siblings can continue from us.

Invariants: ``backlog_first + len(backlog) == offset + 1`` while the backlog exists;
``len(backlog) <= backlog_size``; a replica is in ``replicas`` from its SYNC/PSYNC until its
connection closes; ``role == "slave"`` exactly while ``master_host`` is set.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import TYPE_CHECKING, Any, Protocol

from resplite.engine.persistence import child_outcome, stop_child, write_file

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.scheduler import TimerHandle
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.replication")

# A replica's states (INFO's state= field).
WAIT_BGSAVE = "wait_bgsave"
SEND_BULK = "send_bulk"
ONLINE = "online"

# The client kinds Client.repl_kind holds.
NOT_REPLICATION = 0
REPLICA = 1  # a replica attached to this server
MASTER = 2  # this server's link to its primary

NOREPLICAS = "NOREPLICAS Not enough good replicas to write."
MASTERDOWN = ("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to "
              "'no'.")
READONLY = "READONLY You can't write against a read only replica."
GETACK = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"
PING = b"*1\r\n$4\r\nPING\r\n"


def new_replid() -> str:
    return os.urandom(20).hex()


class MasterConnector(Protocol):
    """The shell's side of this server's link to a primary."""

    def connect(self, host: str, port: int) -> None:
        """Open a link to ``host``:``port`` (dropping any link there is), and keep it open:
        reconnect after a failure, resynchronise (partially when it can) after a drop."""

    def disconnect(self) -> None:
        """Close the link and stop reconnecting."""


class _NoConnector:
    def connect(self, host: str, port: int) -> None:
        log.warning("No replication link can be opened by this server")

    def disconnect(self) -> None:
        pass


class Replica:
    """A replica attached to this server (its client has ``repl_kind == REPLICA``)."""

    __slots__ = ("ack_ms", "ack_offset", "aof_offset", "capa_eof", "capa_psync2", "client",
                 "ip", "listening_port", "pending", "rdb_data", "rdb_functions", "rdb_only",
                 "state", "sync_offset")

    def __init__(self, client: Client) -> None:
        self.client = client
        self.state = WAIT_BGSAVE
        self.listening_port = 0
        self.ip = ""
        self.capa_eof = False
        self.capa_psync2 = False
        self.rdb_only = False
        # What its snapshot holds (REPLCONF rdb-filter-only narrows it).
        self.rdb_data = True
        self.rdb_functions = True
        self.ack_offset = 0
        self.aof_offset = 0
        self.ack_ms = 0
        self.sync_offset = 0  # the offset its snapshot stands for
        self.pending: list[bytes] = []  # stream bytes not yet sent


class _SyncChild:
    __slots__ = ("path", "pid")

    def __init__(self, pid: int, path: str) -> None:
        self.pid = pid
        self.path = path


class Replication:
    """This server's place in replication: ids, offsets, backlog, replicas, its primary."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.replid = new_replid()
        self.replid2 = "0" * 40
        self.second_offset = -1
        self.backlog: bytearray | None = None
        self.backlog_first = 0  # offset of the backlog's first byte (Redis's backlog->offset)
        self.replicas: list[Replica] = []
        self.by_client: dict[Client, Replica] = {}  # from a client's first REPLCONF or SYNC
        self.child: _SyncChild | None = None
        self.flush_due = False
        self.getack_due = False
        self.wait_clients: dict[Client, None] = {}
        self.refusing = False  # min-replicas-to-write not met (read by Persistence.misconf)
        self.good_replicas = 0
        self.last_ping_ms = 0
        self.sync_full = 0
        self.sync_partial_ok = 0
        self.sync_partial_err = 0
        self.timer: TimerHandle | None = None
        # This server as a replica (master_host empty: a primary).
        self.connector: MasterConnector = _NoConnector()
        self.master_host = ""
        self.master_port = 0
        self.master_client: Client | None = None  # set while the link is up
        self.link_status = "down"
        self.sync_in_progress = False
        self.last_io_ms = 0
        self.down_since_ms = 0
        self.read_offset = 0  # stream bytes read from the primary (slave_read_repl_offset)
        self.sync_total = 0  # bytes of the snapshot being received, -1 when unknown (EOF)
        self.sync_read = 0
        self.current_attempts = 0  # sync attempts since the link was last up
        self.total_attempts = 0
        self.up_since_ms = 0
        self.disconnected_ms = 0  # time the link spent down before its current state
        # Whether writes (or, with stale data not served, most commands) are refused is
        # kept in the server's writes_refused gate (Persistence.misconf).
        for name in ("replica-read-only", "replica-serve-stale-data", "min-replicas-to-write",
                     "min-replicas-max-lag"):
            state.config.on_change(name, self._refusals_changed)

    # -- figures ----------------------------------------------------------------------------

    @property
    def offset(self) -> int:
        return self.state.aof.offset

    @property
    def role(self) -> str:
        return "slave" if self.master_host else "master"

    @property
    def backlog_size(self) -> int:
        return int(self.state.config["repl-backlog-size"])

    @property
    def backlog_memory(self) -> int:
        """INFO's mem_replication_backlog: the bytes the backlog holds."""
        return len(self.backlog) if self.backlog is not None else 0

    def _now_ms(self) -> int:
        return self.state.clock.monotonic_ms()

    def info_lines(self) -> list[tuple[str, object]]:
        """INFO replication, in Redis 8.6's order."""
        lines: list[tuple[str, object]] = [("role", self.role)]
        if self.master_host:
            now = self._now_ms()
            up = self.link_status == "up"
            linked = up or self.backlog is not None
            lines += [
                ("master_host", self.master_host),
                ("master_port", self.master_port),
                ("master_link_status", self.link_status),
                ("master_last_io_seconds_ago",
                 (now - self.last_io_ms) // 1000 if up else -1),
                ("master_sync_in_progress", int(self.sync_in_progress)),
                ("slave_read_repl_offset", self.read_offset if linked else 1),
                ("slave_repl_offset", self.offset if linked else 1),
                ("replica_full_sync_buffer_size", 0),
                ("replica_full_sync_buffer_peak", 0),
                ("master_current_sync_attempts", self.current_attempts),
                ("master_total_sync_attempts", self.total_attempts),
            ]
            if self.sync_in_progress:
                lines += [
                    ("master_sync_total_bytes", self.sync_total),
                    ("master_sync_read_bytes", self.sync_read),
                    ("master_sync_left_bytes", self.sync_total - self.sync_read),
                    ("master_sync_perc",
                     f"{self.sync_read * 100 / self.sync_total:.2f}"
                     if self.sync_total > 0 else "0.00"),
                    ("master_sync_last_io_seconds_ago", (now - self.last_io_ms) // 1000),
                ]
            down_for = (now - self.down_since_ms) // 1000 if self.down_since_ms else 0
            if not up:
                lines.append(("master_link_down_since_seconds",
                              down_for if self.down_since_ms else -1))
            else:
                lines += [("master_link_up_since_seconds", (now - self.up_since_ms) // 1000),
                          ("master_client_io_thread", 0)]
            lines.append(("total_disconnect_time_sec",
                          self.disconnected_ms // 1000 + (0 if up else down_for)))
            config = self.state.config
            lines += [
                ("slave_priority", config["replica-priority"]),
                ("slave_read_only", int(config["replica-read-only"])),
                ("replica_announced", int(config["replica-announced"])),
            ]
        lines.append(("connected_slaves", len(self.replicas)))
        if not self.master_host and self.state.config["min-replicas-to-write"] and \
                self.state.config["min-replicas-max-lag"]:
            lines.append(("min_slaves_good_slaves", self.good_replicas))
        now_s = self._now_ms() // 1000
        for i, replica in enumerate(self.replicas):
            ip = replica.ip or replica.client.addr.rsplit(":", 1)[0]
            lag = now_s - replica.ack_ms // 1000 if replica.state == ONLINE else 0
            lines.append((f"slave{i}",
                          f"ip={ip},port={replica.listening_port},state={replica.state},"
                          f"offset={replica.ack_offset},lag={max(lag, 0)},io-thread=0"))
        backlog = self.backlog
        lines += [
            ("master_failover_state", "no-failover"),
            ("master_replid", self.replid),
            ("master_replid2", self.replid2),
            ("master_repl_offset", self.offset),
            ("second_repl_offset", self.second_offset),
            ("repl_backlog_active", int(backlog is not None)),
            ("repl_backlog_size", self.backlog_size),
            ("repl_backlog_first_byte_offset",
             self.backlog_first if backlog is not None else 0),
            ("repl_backlog_histlen", len(backlog) if backlog is not None else 0),
        ]
        return lines

    def role_reply(self) -> list[Any]:
        """ROLE's reply."""
        if self.master_host:
            state = ("connected" if self.link_status == "up"
                     else "sync" if self.sync_in_progress else "connect")
            return [b"slave", self.master_host.encode(), self.master_port, state.encode(),
                    self.offset if self.link_status == "up" else -1]
        listed = [[(r.ip or r.client.addr.rsplit(":", 1)[0]).encode(),
                   b"%d" % r.listening_port, b"%d" % r.ack_offset]
                  for r in self.replicas if r.state == ONLINE]
        return [b"master", self.offset, listed]

    # -- the stream -------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Writes go into the replication stream (a backlog exists and this is a primary)."""
        return self.backlog is not None and not self.master_host

    def create_backlog(self) -> None:
        """The first replica's arrival: a backlog, with a new id (no history exists)."""
        if self.backlog is not None:
            return
        self.replid = new_replid()
        self.replid2 = "0" * 40
        self.second_offset = -1
        self._make_backlog()

    def _make_backlog(self) -> None:
        self.backlog = bytearray()
        self.backlog_first = self.offset + 1
        self.state.update_propagation()

    def feed(self, data: bytes) -> None:
        """Bytes of the stream: into the backlog and to every replica; the offset moves."""
        aof = self.state.aof
        aof.offset += len(data)
        backlog = self.backlog
        if backlog is None:
            return
        backlog += data
        excess = len(backlog) - self.backlog_size
        if excess > 0:
            del backlog[:excess]  # (a bytearray drops its head without moving the rest)
            self.backlog_first += excess
        for replica in self.replicas:
            if not replica.rdb_only:
                replica.pending.append(data)
        if self.replicas and not self.flush_due:
            self.flush_due = True
            self.state.scheduler.call_later(0.0, self.flush)

    def flush(self) -> None:
        """Send what the online replicas are owed (once per turn of the event loop)."""
        self.flush_due = False
        if self.getack_due:
            self.getack_due = False
            if any(r.state == ONLINE for r in self.replicas):
                self.feed_stream(GETACK)
                self.flush_due = False
        for replica in self.replicas:
            if replica.state == ONLINE and replica.pending:
                data = b"".join(replica.pending)
                replica.pending = []
                conn = replica.client.conn
                if conn is not None:
                    conn.send(data)

    def feed_stream(self, data: bytes) -> None:
        """Bytes this server adds to the stream itself (PING, GETACK): SELECT is not due
        for them; on a replica nothing is added (its stream is its primary's)."""
        if self.master_host or self.backlog is None:
            return
        self.feed(data)

    # -- replicas attaching -----------------------------------------------------------------

    def replica_of(self, client: Client) -> Replica:
        """The replica record of a client (made by its first REPLCONF)."""
        replica = self.by_client.get(client)
        if replica is None:
            replica = self.by_client[client] = Replica(client)
        return replica

    def forget(self, client: Client) -> None:
        """A client closed: a replica leaves the list."""
        replica = self.by_client.pop(client, None)
        self.wait_clients.pop(client, None)
        if replica is not None and replica in self.replicas:
            self.replicas.remove(replica)
            log.info("Connection with replica %s lost.", client.addr)
            self.refresh_good()
            if self.child is not None and not any(r.state == WAIT_BGSAVE
                                                   for r in self.replicas):
                self.kill_child()

    def try_partial(self, client: Client, replid: str, psync_offset: int) -> bytes | None:
        """PSYNC's partial resynchronisation: the bytes to answer (``+CONTINUE`` and the
        backlog from ``psync_offset``), or None when a full one is needed."""
        if self.master_host and self.link_status != "up":
            return None
        if replid != self.replid and (replid != self.replid2
                                      or psync_offset > self.second_offset):
            if replid != "?":
                self.sync_partial_err += 1
            return None
        backlog = self.backlog
        if backlog is None or not (self.backlog_first <= psync_offset
                                   <= self.backlog_first + len(backlog)):
            self.sync_partial_err += 1
            log.info("Unable to partial resync with replica %s for lack of backlog "
                     "(Replica request was: %d).", client.addr, psync_offset)
            return None
        replica = self.replica_of(client)
        start = psync_offset - self.backlog_first
        head = (b"+CONTINUE %s\r\n" % self.replid.encode() if replica.capa_psync2
                else b"+CONTINUE\r\n")
        missing = bytes(backlog[start:])
        replica.ack_ms = self._now_ms()  # (counts as a good replica at once)
        self._attach(replica, ONLINE)
        self.sync_partial_ok += 1
        log.info("Partial resynchronization request from %s accepted. Sending %d bytes of "
                 "backlog starting from offset %d.", client.addr, len(missing), psync_offset)
        return head + missing

    def _attach(self, replica: Replica, state: str) -> None:
        replica.state = state
        client = replica.client
        client.repl_kind = REPLICA
        if replica not in self.replicas:
            self.replicas.append(replica)
        self.refresh_good()

    def full_sync(self, client: Client, psync: bool) -> bytes:
        """SYNC, or a PSYNC that cannot continue: the line to answer now; the snapshot
        follows when the child has written it (:meth:`cron`)."""
        replica = self.replica_of(client)
        self.sync_full += 1
        self.create_backlog()
        if not (replica.rdb_data and replica.rdb_functions):
            return self._filtered_sync(replica, psync)
        if self.child is None:
            self._start_child()
            replica.sync_offset = self.offset
        else:
            # Shares the snapshot being written, and what a replica waiting for it holds.
            fellow = next((r for r in self.replicas if r.state == WAIT_BGSAVE
                           and not r.rdb_only), None)
            if fellow is None and not replica.rdb_only:
                # Nobody held the stream since that fork: a snapshot of its own, later.
                replica.sync_offset = -1
            else:
                replica.sync_offset = (fellow.sync_offset if fellow is not None
                                       else self.offset)
                if fellow is not None:
                    replica.pending = list(fellow.pending)
        self._attach(replica, WAIT_BGSAVE)
        if replica.rdb_only:
            replica.pending = []
        if not psync:
            return b""
        offset = replica.sync_offset if replica.sync_offset >= 0 else self.offset
        return b"+FULLRESYNC %s %d\r\n" % (self.replid.encode(), offset)

    def _filtered_sync(self, replica: Replica, psync: bool) -> bytes:
        """A snapshot without the keys (REPLCONF rdb-filter-only): no key to copy, so it
        is made at once, here, and sent after the line answered now."""
        payload = b"".join(self.state.persistence.snapshot(
            data=replica.rdb_data, functions=replica.rdb_functions))
        replica.ack_ms = self._now_ms()
        self._attach(replica, ONLINE)
        replica.pending = [b"$%d\r\n" % len(payload), payload]
        self.state.aof.selected_db = -1
        if not self.flush_due:
            self.flush_due = True
            self.state.scheduler.call_later(0.0, self.flush)
        line = b"+FULLRESYNC %s %d\r\n" % (self.replid.encode(), self.offset) if psync else b""
        return line

    def _start_child(self) -> None:
        state = self.state
        # The stream after the snapshot starts with a SELECT, whatever was selected before.
        state.aof.selected_db = -1
        directory = state.config["dir"]
        try:
            pid = os.fork()
        except OSError as exc:
            log.warning("Can't start the snapshot for replication: fork: %s", exc)
            return
        if pid == 0:  # pragma: no cover - runs in the child, which exits
            code = 1
            try:
                path = os.path.join(directory, f"temp-repl-{os.getpid()}.rdb")
                write_file(path, state.persistence.snapshot(), rename=False, temp=path)
                code = 0
            finally:
                os._exit(code)
        self.child = _SyncChild(pid, os.path.join(directory, f"temp-repl-{pid}.rdb"))
        log.info("Starting BGSAVE for SYNC with target: replicas sockets (pid %d)", pid)

    def kill_child(self) -> None:
        """Stop a snapshot being written for replicas (shutdown)."""
        if self.child is not None:
            stop_child(self.child.pid)
            self._drop_child_file()

    def _drop_child_file(self) -> None:
        if self.child is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.child.path)
            self.child = None

    def _child_done(self) -> None:
        """The snapshot child ended: send it to the replicas waiting for it."""
        child = self.child
        if child is None:
            return
        outcome = child_outcome(child.pid)
        if outcome is None:
            return
        data = b""
        if outcome.ok:
            try:
                with open(child.path, "rb") as f:
                    data = f.read()
            except OSError as exc:
                log.warning("Can't read the snapshot for replication: %s", exc)
                outcome = None
        self._drop_child_file()
        waiting = [r for r in self.replicas if r.state == WAIT_BGSAVE]
        later = [r for r in waiting if r.sync_offset < 0]
        for replica in waiting:
            if replica.sync_offset < 0:
                continue
            conn = replica.client.conn
            if outcome is None or not outcome.ok:
                log.warning("SYNC failed. BGSAVE child returned an error")
                if conn is not None:
                    conn.close()
                continue
            replica.state = ONLINE
            replica.ack_ms = self._now_ms()
            payload = [b"$%d\r\n" % len(data), data, *replica.pending]
            replica.pending = []
            log.info("Synchronization with replica %s succeeded", replica.client.addr)
            if conn is not None:
                conn.send(b"".join(payload))
                if replica.rdb_only:
                    conn.close()
        if later:
            self._start_child()
            for replica in later:
                replica.sync_offset = self.offset
                replica.pending = []
        self.refresh_good()

    # -- acknowledgements, WAIT, min-replicas ------------------------------------------------

    def ack(self, client: Client, offset: int, aof_offset: int | None) -> None:
        replica = self.by_client.get(client)
        if replica is None or replica not in self.replicas:
            return
        if offset > replica.ack_offset:
            replica.ack_offset = offset
        if aof_offset is not None and aof_offset > replica.aof_offset:
            replica.aof_offset = aof_offset
        replica.ack_ms = self._now_ms()
        if self.child is not None:
            self._child_done()
        self.refresh_good()
        self.wake_waiters()

    def acked(self, offset: int, aof: bool = False) -> int:
        """Replicas whose acknowledged (``aof``: fsynced) offset has reached ``offset``."""
        if aof:
            return sum(1 for r in self.replicas if r.state == ONLINE and r.aof_offset >= offset)
        return sum(1 for r in self.replicas if r.state == ONLINE and r.ack_offset >= offset)

    def ask_acks(self, client: Client) -> None:
        """A client waits for acknowledgements: ask the replicas at the end of the batch."""
        self.wait_clients[client] = None
        if not self.getack_due:
            self.getack_due = True
            if not self.flush_due:
                self.flush_due = True
                self.state.scheduler.call_later(0.0, self.flush)

    def wake_waiters(self) -> None:
        if not self.wait_clients:
            return
        waiting = [c for c in self.wait_clients if c.blocked is not None]
        self.wait_clients = dict.fromkeys(waiting)
        self.state.blocking.rerun(waiting)
        for client in waiting:
            if client.blocked is None:
                self.wait_clients.pop(client, None)

    def refresh_good(self) -> None:
        """Count the replicas that acknowledged within ``min-replicas-max-lag`` and decide
        whether writes are refused (-NOREPLICAS)."""
        config = self.state.config
        max_lag = config["min-replicas-max-lag"]
        now_s = self._now_ms() // 1000
        self.good_replicas = sum(1 for r in self.replicas
                                 if r.state == ONLINE and now_s - r.ack_ms // 1000 <= max_lag)
        wanted = config["min-replicas-to-write"]
        refusing = bool(not self.master_host and wanted and max_lag
                        and self.good_replicas < wanted)
        if refusing != self.refusing:
            self.refusing = refusing
            self.state.persistence.misconf()

    def write_refusal(self, client: Client) -> str | None:
        """The error a write gets from the replication side, None when it may run."""
        if client.repl_kind == MASTER:
            return None
        if self.master_host:
            if self.state.config["replica-read-only"]:
                return READONLY
            return None
        if self.refusing:
            return NOREPLICAS
        return None

    def _refusals_changed(self, name: str, value: object) -> None:
        self.refresh_good()
        self.state.persistence.misconf()

    @property
    def master_down(self) -> bool:
        """A replica whose link is down, told not to serve stale data: -MASTERDOWN."""
        return (bool(self.master_host) and self.link_status != "up"
                and not self.state.config["replica-serve-stale-data"])

    @property
    def read_only(self) -> bool:
        return bool(self.master_host) and bool(self.state.config["replica-read-only"])

    def cron(self) -> None:
        """From the server cron: the snapshot child, min-replicas, PINGs to replicas."""
        if self.child is not None:
            self._child_done()
        if self.replicas or self.refusing or self.state.config["min-replicas-to-write"]:
            self.refresh_good()
        if self.replicas and not self.master_host:
            now = self._now_ms()
            period = self.state.config["repl-ping-replica-period"] * 1000
            if not self.last_ping_ms:
                self.last_ping_ms = now  # the first one a period after replicas came
            elif now - self.last_ping_ms >= period:
                self.last_ping_ms = now
                if any(r.state == ONLINE for r in self.replicas):
                    self.feed_stream(PING)

    def disconnect_replicas(self) -> None:
        for replica in list(self.replicas):
            conn = replica.client.conn
            if conn is not None:
                conn.close()

    # -- this server as a replica -----------------------------------------------------------

    def set_master(self, host: str, port: int, cached: bool = True) -> None:
        """REPLICAOF host port: become a replica (the data set is replaced at the sync,
        unless the primary can continue our history: ``cached``, not at start)."""
        was_master = not self.master_host
        self.master_host = host
        self.master_port = port
        self.link_status = "down"
        self.down_since_ms = self.disconnected_ms = 0
        self.current_attempts = 0
        self.refusing = False
        self.state.update_propagation()
        self.state.persistence.misconf()
        # Our replicas resynchronise with us (they may continue: the id is kept).
        self.disconnect_replicas()
        if was_master and cached and self.backlog is None:
            self._make_backlog()
        self.connector.connect(host, port)
        log.info("Connecting to MASTER %s:%d", host, port)

    def unset_master(self) -> None:
        """REPLICAOF NO ONE on a replica: a primary with a new id; the old one stays
        valid up to the offset reached (PSYNC2), so former siblings may continue."""
        if not self.master_host:
            return
        self.connector.disconnect()
        self.master_host = ""
        self.master_port = 0
        self.link_status = "down"
        self.sync_in_progress = False
        self.replid2 = self.replid
        self.second_offset = self.offset + 1
        self.replid = new_replid()
        if self.backlog is None:
            self._make_backlog()
        self.state.update_propagation()
        self.state.persistence.misconf()
        self.disconnect_replicas()
        # A new id: as Redis, the next write says which database it is for.
        self.state.aof.selected_db = -1
        log.info("MASTER MODE enabled")

    def link_attempt(self) -> None:
        """The link tries to connect and synchronise."""
        self.current_attempts += 1
        self.total_attempts += 1

    def link_up(self, client: Client) -> None:
        """The stream from the primary starts, applied by ``client`` (the master client)."""
        now = self._now_ms()
        self.master_client = client
        self.link_status = "up"
        self.sync_in_progress = False
        self.up_since_ms = self.last_io_ms = now
        if self.down_since_ms:
            self.disconnected_ms += now - self.down_since_ms
            self.down_since_ms = 0
        self.state.persistence.misconf()

    def link_down(self) -> Client | None:
        """The link dropped: the master client it had, to forget."""
        client, self.master_client = self.master_client, None
        if self.link_status == "up":
            self.down_since_ms = self._now_ms()
        self.link_status = "down"
        self.sync_in_progress = False
        self.state.persistence.misconf()
        return client

    def send_ack(self) -> None:
        """REPLCONF ACK to the primary (every second, and at its GETACK)."""
        client = self.master_client
        if client is None or client.conn is None:
            return
        offset = b"%d" % self.offset
        aof = self.state.aof
        if self.state.aof_on:
            fack = b"%d" % aof.fsynced_offset
            data = (b"*5\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n"
                    b"$4\r\nFACK\r\n$%d\r\n%s\r\n" % (len(offset), offset, len(fack), fack))
        else:
            data = b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n" % (
                len(offset), offset)
        client.conn.send(data)

    def master_synced(self, replid: str, offset: int) -> None:
        """A full resynchronisation with the primary loaded its snapshot."""
        self.replid = replid
        self.replid2 = "0" * 40
        self.second_offset = -1
        self.state.aof.offset = offset
        self.read_offset = offset
        self.backlog = None
        self._make_backlog()
        self.disconnect_replicas()  # theirs is another history now

    def master_continued(self, replid: str) -> None:
        """A partial resynchronisation was accepted, maybe under a new id (PSYNC2)."""
        if replid and replid != self.replid:
            self.replid2 = self.replid
            self.second_offset = self.offset + 1
            self.replid = replid
            self.disconnect_replicas()

    def apply(self, argv: list[bytes]) -> None:
        """Run one command of the primary's stream as the master client (its reply is
        dropped: a primary reads none but REPLCONF ACK, which GETACK sends itself)."""
        client = self.master_client
        if client is None:
            return
        state = self.state
        previous = state.current_client
        state.current_client = client
        try:
            state.dispatcher.execute(client, argv)
            client.commands_processed += 1
            if state.blocking.ready:
                state.blocking.serve_ready()
        finally:
            state.current_client = previous
        self.last_io_ms = self._now_ms()

    def proxy(self, data: bytes) -> None:
        """Stream bytes from the primary, applied here: on to this server's replicas."""
        if self.backlog is None:
            self._make_backlog()
        self.feed(data)


class StreamParser:
    """The commands of a primary's stream as they arrive (RESP arrays of bulk strings),
    each with its size in bytes, which is what the replication offset counts."""

    __slots__ = ("buffer", "pos")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.pos = 0

    def feed(self, data: bytes) -> None:
        if self.pos:
            del self.buffer[:self.pos]
            self.pos = 0
        self.buffer += data

    def next(self) -> tuple[list[bytes], bytes] | None:
        """The next complete command and its bytes, None until more data comes;
        ValueError when the bytes are no command (the link is then dropped)."""
        buf = self.buffer
        pos = self.pos
        n = len(buf)
        while pos < n and buf[pos] in (0x0A, 0x0D):  # a primary's keep-alive newlines
            pos += 1
        if pos >= n:
            self.pos = pos
            return None
        start = pos
        if buf[pos] != 0x2A:  # '*'
            end = buf.find(b"\n", pos)
            if end < 0:
                return None
            line = bytes(buf[pos:end]).strip()
            self.pos = end + 1
            return line.split(), bytes(buf[start:end + 1])
        end = buf.find(b"\r\n", pos)
        if end < 0:
            return None
        count = int(buf[pos + 1:end])
        pos = end + 2
        argv: list[bytes] = []
        for _ in range(count):
            end = buf.find(b"\r\n", pos)
            if end < 0:
                return None
            if buf[pos] != 0x24:  # '$'
                raise ValueError("expected '$' in the replication stream")
            size = int(buf[pos + 1:end])
            pos = end + 2
            if pos + size + 2 > n:
                return None
            argv.append(bytes(buf[pos:pos + size]))
            pos += size + 2
        self.pos = pos
        return argv, bytes(buf[start:pos])
