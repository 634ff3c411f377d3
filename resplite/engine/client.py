"""Per-connection client state: protocol version, selected database, auth, MULTI, WATCH, blocking.

A :class:`Client` is what every command handler receives. It knows its server (the shared
state) and, through ``conn``, how to deliver a reply later (for blocked clients) or close.
It holds no socket logic itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from resplite.engine import gates

if TYPE_CHECKING:
    from resplite.engine.acl import User
    from resplite.engine.blocking import BlockedState
    from resplite.engine.state import ServerState
    from resplite.engine.table import CommandSpec
    from resplite.engine.tracking import TrackingState
    from resplite.store.keyspace import Database


# CLIENT REPLY modes. SKIP_NEXT is set by CLIENT REPLY SKIP and becomes SKIP once that
# command is answered (silently); SKIP silences the next command's reply, then replies resume.
REPLY_ON = 0
REPLY_OFF = 1
REPLY_SKIP = 2
REPLY_SKIP_NEXT = 3


# What tot-mem counts for a connection's own structures, whatever it holds.
CLIENT_OVERHEAD = 1024


class ClientConnection(Protocol):
    """What a client needs from its transport (the shell's connection provides it)."""

    def deliver(self, reply: Any) -> None:
        """Send a reply that is due outside the request's own turn (a blocked client's)."""

    def send(self, data: bytes) -> None:
        """Write bytes already encoded for this client: its push messages (Pub/Sub,
        invalidations, MONITOR lines), one call per batch."""

    def close(self) -> None: ...

    def abort(self) -> None:
        """Close at once, dropping what is unsent (a client past its output buffer limit)."""

    def resume(self) -> None:
        """Run requests that arrived while the client was blocked or held."""

    def set_authenticated(self, authenticated: bool) -> None:
        """Tell the request reader whether the tighter pre-AUTH framing limits apply."""

    def set_max_bulk_len(self, limit: int) -> None:
        """Apply a new ``proto-max-bulk-len`` to the requests still to be read."""

    def output_buffer_size(self) -> int:
        """Bytes of replies written but not yet taken by the peer (CLIENT LIST omem, and
        what ``client-output-buffer-limit`` is checked against)."""

    def query_buffer_size(self) -> int:
        """Bytes received and not yet run (Redis's query buffer: a partial request and
        any complete ones waiting)."""


class Client:
    __slots__ = (
        "_acl",
        "_authenticated",
        "_monitor",
        "_multi",
        "_pubsub",
        "_tracking",
        "addr",
        "blocked",
        "channels",
        "close_after_reply",
        "cluster_asking",
        "cluster_readonly",
        "commands_processed",
        "conn",
        "created_ms",
        "db",
        "db_index",
        "executing_multi",
        "fd",
        "fieldsets",
        "gates",
        "id",
        "is_script",
        "laddr",
        "last_command",
        "last_interaction_ms",
        "lib_name",
        "lib_ver",
        "local",
        "mem_charged",
        "multi_bytes",
        "multi_dirty",
        "name",
        "net_in",
        "net_out",
        "no_evict",
        "no_touch",
        "obuf_soft_since",
        "outbox",
        "parse_batch_cmds",
        "parse_batches",
        "patterns",
        "propagated",
        "pushes_first",
        "read_events",
        "repl_kind",
        "reply_mode",
        "resp",
        "server",
        "shard_channels",
        "sub_bytes",
        "user",
        "watch_dirty",
        "watched",
        "woff",
    )

    def __init__(
        self,
        server: ServerState,
        client_id: int,
        conn: ClientConnection | None,
        addr: str = "",
        laddr: str = "",
        fd: int = -1,
        local: bool = False,
    ) -> None:
        self.server = server
        self.id = client_id
        self.conn = conn
        self.addr = addr
        self.laddr = laddr
        self.fd = fd
        # Connected over a Unix socket or from a loopback address: what "local" means for
        # enable-debug-command and the other protected settings. The shell knows the socket.
        self.local = local
        self.resp = 2
        self.db_index = 0
        self.db: Database = server.keyspace[0]
        # As Redis: a new connection is the default user's, authenticated when that user
        # needs no password and is on.
        self.user: User = server.acl.default
        self._acl: User | None = None if self.user.unrestricted else self.user
        self._authenticated = self.user.nopass and self.user.enabled
        self.name = b""
        self.lib_name = b""
        self.lib_ver = b""
        # None when not in MULTI; otherwise the queued (spec, argv) pairs.
        self._multi: list[tuple[CommandSpec, list[bytes]]] | None = None
        self.multi_dirty = False  # a command failed to queue: EXEC answers EXECABORT
        self.multi_bytes = 0  # argument bytes queued (bounded by client-query-buffer-limit)
        self.executing_multi = False  # inside EXEC: blocking commands must not block
        # The scripts' client: blocking commands never block, MONITOR shows it as lua.
        self.is_script = False
        # (db, key) -> whether the key was already logically expired when WATCHed
        self.watched: dict[tuple[int, bytes], bool] = {}
        self.watch_dirty = False
        self.blocked: BlockedState | None = None
        self.close_after_reply = False
        # Cluster mode: ASKING (served once by a node importing the slot) and READONLY.
        self.cluster_asking = False
        self.cluster_readonly = False
        now = server.clock.monotonic_ms()
        self.created_ms = now
        self.last_interaction_ms = now
        self.last_command = "NULL"
        # The append-only file's offset after this client's last logged write (WAITAOF).
        self.woff = 0
        # What the command running now asked to be logged as (propagate_as): None while it
        # asked nothing, so that it is logged as received. The dispatcher takes it after the
        # call.
        self.propagated: list[list[bytes]] | None = None
        # CLIENT LIST's traffic counters (Redis 8.0 / 8.8), kept by the connection: bytes
        # read and written, commands run, reads, and the commands parsed per read that
        # brought any (sum and count of such reads).
        self.net_in = 0
        self.net_out = 0
        self.commands_processed = 0
        self.read_events = 0
        self.parse_batch_cmds = 0
        self.parse_batches = 0
        # HIMPORT's fieldsets, by name (None until the first HIMPORT PREPARE).
        self.fieldsets: dict[bytes, tuple[bytes, ...]] | None = None
        self.no_evict = False
        self.no_touch = False
        self.reply_mode = REPLY_ON
        # A replica attached here or this server's primary (resplite.engine.replication).
        self.repl_kind = 0
        # Push messages (Pub/Sub, invalidations, MONITOR lines) encoded for this client and
        # not yet handed to its connection: written after the reply of the command running
        # now, or with the next batch (see ServerState.push).
        self.outbox: list[bytes] = []
        # How many of the outbox's pushes were queued before the command running now began
        # (keys evicted to make room for it) or before a blocked command was served: they
        # go before its reply, the rest after it, as in Redis.
        self.pushes_first = 0
        # Subscriptions, in the order they were made (dicts as ordered sets).
        self.channels: dict[bytes, None] = {}
        self.patterns: dict[bytes, None] = {}
        self.shard_channels: dict[bytes, None] = {}
        # What its subscriptions hold (names and entries, PubSub keeps it): counted in
        # used_memory, as Redis counts its Pub/Sub dictionaries.
        self.sub_bytes = 0
        # Redis's CLIENT_PUBSUB: set by a subscription, cleared when the last one goes.
        self._pubsub = False
        self._monitor = False
        self._tracking: TrackingState | None = None
        # Why this client's requests leave the dispatcher's fast path (resplite.engine.gates):
        # kept current by the setters of acl, authenticated, multi, pubsub, monitor, tracking
        # and by set_resp.
        self.gates = (0 if self._authenticated else gates.NOAUTH) | (
            0 if self._acl is None else gates.ACL)
        # Clock ms since which the output has stayed over the soft limit (0: it has not).
        self.obuf_soft_since = 0
        # Input bytes waiting unparsed (the connection sets it as data arrives), and what
        # the server's clients_memory counts for this client (see ServerState.charge_client).
        self.mem_charged = 0

    def propagate_as(self, argv: list[bytes]) -> None:
        """Log the command running now as ``argv`` instead of as it was received, as Redis's
        alsoPropagate: a write whose replay would differ (a relative expiry, a random or
        clock-dependent choice, an id it generated) records what it did, in commands
        that replay to the same data set whatever the clock says then.

        Called more than once, each form is logged in turn (in MULTI/EXEC when there are
        several and no transaction or script already wraps them). Nothing is recorded
        while nothing is propagated (no append-only file, no replication stream).
        """
        if self.server.propagating:
            forms = self.propagated
            if forms is None:
                self.propagated = [argv]
            else:
                forms.append(argv)

    def reply_wanted(self) -> bool:
        """Whether the reply now due is sent, stepping the CLIENT REPLY mode (not ON)."""
        mode = self.reply_mode
        if mode == REPLY_SKIP:
            self.reply_mode = REPLY_ON
        elif mode == REPLY_SKIP_NEXT:
            self.reply_mode = REPLY_SKIP
        return mode == REPLY_ON

    def log_in(self, user: User) -> None:
        """Authenticated as ``user`` (AUTH, HELLO AUTH)."""
        self.user = user
        self.acl = None if user.unrestricted else user
        self.set_authenticated(True)

    def set_authenticated(self, authenticated: bool) -> None:
        """Authenticated or not, the request reader told too (its pre-AUTH limits)."""
        self.authenticated = authenticated
        if self.conn is not None:
            self.conn.set_authenticated(authenticated)

    # -- the attributes behind the gates (see resplite.engine.gates) -------------------------

    @property
    def authenticated(self) -> bool:
        return self._authenticated

    @authenticated.setter
    def authenticated(self, value: bool) -> None:
        self._authenticated = value
        self.gates = gates.with_bit(self.gates, gates.NOAUTH, not value)

    @property
    def acl(self) -> User | None:
        """The user whose rules every command is checked against; None when the user is
        allowed everything (the check is skipped)."""
        return self._acl

    @acl.setter
    def acl(self, user: User | None) -> None:
        self._acl = user
        self.gates = gates.with_bit(self.gates, gates.ACL, user is not None)

    @property
    def multi(self) -> list[tuple[CommandSpec, list[bytes]]] | None:
        return self._multi

    @multi.setter
    def multi(self, queued: list[tuple[CommandSpec, list[bytes]]] | None) -> None:
        self._multi = queued
        self.gates = gates.with_bit(self.gates, gates.MULTI, queued is not None)

    @property
    def pubsub(self) -> bool:
        return self._pubsub

    @pubsub.setter
    def pubsub(self, value: bool) -> None:
        self._pubsub = value
        self._set_context()

    @property
    def monitor(self) -> bool:
        return self._monitor

    @monitor.setter
    def monitor(self, value: bool) -> None:
        """(Through :meth:`ServerState.set_monitor`, which keeps the server's list too.)"""
        self._monitor = value
        self._set_context()

    def set_resp(self, resp: int) -> None:
        """Switch protocol (HELLO, RESET): in RESP3 Pub/Sub mode any command may run."""
        self.resp = resp
        self._set_context()

    def _set_context(self) -> None:
        self.gates = gates.with_bit(self.gates, gates.CONTEXT,
                                    self._monitor or (self._pubsub and self.resp == 2))

    @property
    def tracking(self) -> TrackingState | None:
        return self._tracking

    @tracking.setter
    def tracking(self, state: TrackingState | None) -> None:
        self._tracking = state
        self.gates = gates.with_bit(self.gates, gates.TRACKING, state is not None)

    def select(self, index: int) -> None:
        self.db_index = index
        self.db = self.server.keyspace[index]

    @property
    def subscription_count(self) -> int:
        """Channels plus patterns (what (P)SUBSCRIBE replies count; shard ones apart)."""
        return len(self.channels) + len(self.patterns)

    def output_memory(self) -> int:
        """Redis's ``omem``: reply bytes not yet taken by the peer (the transport's unsent
        data and the pushes still in the outbox)."""
        conn = self.conn
        unsent = conn.output_buffer_size() if conn is not None else 0
        return unsent + sum(len(chunk) for chunk in self.outbox)

    def memory_usage(self, argv_mem: int = 0) -> tuple[int, int]:
        """(``omem``, ``tot-mem``) as CLIENT LIST and INFO report them.

        ``tot-mem`` counts a fixed overhead for the connection's own structures, the command
        in flight (``argv_mem``), the queued MULTI commands and the output.
        """
        omem = self.output_memory()
        multi = self.multi
        multi_mem = sum(sum(len(a) for a in args) for _, args in multi) if multi else 0
        return omem, CLIENT_OVERHEAD + argv_mem + multi_mem + omem

    def memory_figure(self) -> int:
        """What this client holds, as ``used_memory`` counts it: the fixed overhead, the
        unparsed input, the queued MULTI commands, the unsent output and its
        subscriptions."""
        conn = self.conn
        query = conn.query_buffer_size() if conn is not None else 0
        return CLIENT_OVERHEAD + query + self.multi_bytes + self.output_memory() + \
            self.sub_bytes

    @property
    def in_multi(self) -> bool:
        return self.multi is not None

    @property
    def may_block(self) -> bool:
        """Whether a blocking command may park this client (never inside MULTI/EXEC or for
        the client scripts run their commands as)."""
        return not (self.executing_multi or self.is_script)
