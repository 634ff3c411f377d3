"""Push delivery and output buffer limits: what the server sends that nobody asked for.

Theory of operation: Pub/Sub messages, client-side caching invalidations and MONITOR lines
are encoded once per protocol version where they arise and appended, as bytes, to each
receiving client's ``outbox`` (:meth:`Output.push`). Nothing is written then. A client with
something in its outbox is *pending*; the pending clients are written out by
:meth:`Output.flush`, one ``send`` per client whatever the number of messages, which runs

* at the end of the batch of requests the shell is processing (so a pipeline of 100 PUBLISH
  costs each subscriber one write), and
* in the next turn of the event loop when the pushes came from elsewhere (the cron's expiry
  cycle, a clock jump, a timer), through the shell's scheduler
  (:mod:`resplite.engine.scheduler`); without one (a sans-IO test) the caller flushes.

Ordering follows Redis 7.2+: a client's own connection drains its outbox before it runs a
request (messages published earlier come first) and after each reply (pushes caused by its own
command, such as a keyspace notification or an invalidation of a key it just wrote, follow
the reply; inside MULTI they follow the whole EXEC reply). What was pushed to it before its
command began, such as the invalidation of a key evicted to make room for the command, goes
before the reply (:meth:`Output.take_first`).

Output buffer limits (``client-output-buffer-limit``): after every write, what the client's
transport still holds unsent (with any replies made but not yet written) is compared with
the limits of its class (``normal``, ``pubsub`` for a client in Pub/Sub mode, ``replica``):
past the hard limit, or past the soft limit continuously for longer than its seconds, the
client is dropped at once (its unsent data discarded), the event is logged and counted
(INFO ``client_output_buffer_limit_disconnections``), as Redis frees such a client; the
publisher and every other client carry on. A limit of 0 is no limit. The server's cron
checks again the clients over a soft limit, since a client that reads nothing is not
written to again (Redis's clientsCron does the same).

A client that is not authenticated (while the default user needs a password) may hold at
most :data:`UNAUTH_OUTPUT_LIMIT` bytes of unsent replies, whatever its class's limits:
Redis (7.4.3 and 8; Debian's 7.0.15 has it too) drops it once more than 1 KB of replies
spills past its 16 KB reply buffer, so a client that has not logged in and pipelines
without reading cannot make the server hold, nor answer, more than that. RESET or ACL
changes that make a client unauthenticated again put it back under this cap.

Invariants: a client is in :attr:`Output.pending` exactly when its outbox is not empty, or
it was flushed away as it left; :meth:`flush` never writes to a client that is gone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from resplite.engine.client import Client
    from resplite.engine.clock import Clock
    from resplite.engine.config import Limits
    from resplite.engine.scheduler import Scheduler

log = logging.getLogger("resplite.output")

# Unsent reply bytes a client that is not authenticated may hold: Redis's 16 KB reply
# buffer (PROTO_REPLY_CHUNK_BYTES); the first reply that does not fit in it goes to a reply
# list node of at least 16 KB, past Redis's 1 KB cap for such clients.
UNAUTH_OUTPUT_LIMIT = 16 * 1024


def limit_class(client: Client) -> str:
    """The class whose limits apply: Redis's client type (a MONITOR counts as normal)."""
    return "pubsub" if client.pubsub else "normal"


class Output:
    """Pending pushes of every client of one server, and the limits their output obeys."""

    __slots__ = ("_scheduled", "before_flush", "clock", "describe", "disconnections", "limits",
                 "pending", "scheduler")

    def __init__(self, clock: Clock, limits: Limits, scheduler: Scheduler) -> None:
        self.clock = clock
        self.scheduler = scheduler
        self.limits = limits
        self.pending: dict[Client, None] = {}
        self._scheduled = False
        # Work that must run just before pending clients are written (BCAST invalidations,
        # which Redis sends once per event-loop turn). Set by the server state.
        self.before_flush: Callable[[], None] | None = None
        # CLIENT LIST's line for a client, for the log line of a client dropped at its limit.
        self.describe: Callable[[Client], str] = lambda c: f"id={c.id} addr={c.addr}"
        # Clients dropped for their output (INFO client_output_buffer_limit_disconnections).
        self.disconnections = 0

    def push(self, client: Client, data: bytes) -> None:
        """Queue bytes encoded for ``client``; they go out with its next write."""
        box = client.outbox
        if not box:
            self.pending[client] = None
            if not self._scheduled:
                self.schedule()
        box.append(data)

    def schedule(self) -> None:
        """Make sure :meth:`flush` runs in the next turn of the event loop."""
        if self._scheduled:
            return
        self._scheduled = self.scheduler.call_later(0, self._scheduled_flush) is not None

    def _scheduled_flush(self) -> None:
        self._scheduled = False
        self.flush()

    def take(self, client: Client) -> list[bytes]:
        """Remove and return ``client``'s queued pushes (its own connection writes them)."""
        box = client.outbox
        if not box:
            return box
        client.outbox = []
        self.pending.pop(client, None)
        return box

    def take_first(self, client: Client) -> list[bytes]:
        """Remove and return the pushes queued for ``client`` before its running command
        began (``client.pushes_first`` of them), which go before that command's reply."""
        n = client.pushes_first
        client.pushes_first = 0
        box = client.outbox
        first = box[:n]
        del box[:n]
        if not box:
            self.pending.pop(client, None)
        return first

    def flush(self) -> None:
        """Write every pending client's outbox with one send each, then check its limits."""
        before = self.before_flush
        if before is not None:
            before()
        pending = self.pending
        while pending:
            self.pending = {}
            for client in pending:
                box = client.outbox
                if not box:
                    continue
                client.outbox = []
                conn = client.conn
                if conn is None:
                    continue
                conn.send(b"".join(box) if len(box) > 1 else box[0])
                self.check_limits(client)
            pending = self.pending

    def forget(self, client: Client) -> None:
        client.outbox = []
        self.pending.pop(client, None)

    # -- limits -----------------------------------------------------------------------------

    def check_limits(self, client: Client, unwritten: int = 0, *, cron: bool = False) -> bool:
        """Drop ``client`` if its unsent output (what its connection holds, plus
        ``unwritten`` bytes of replies made and not yet written) is past its limits; whether
        it was. ``cron``: the periodic check (Redis's log line then says closed, not
        scheduled to be closed)."""
        conn = client.conn
        if conn is None:
            return False
        used = conn.output_buffer_size() + unwritten
        if not used and not client.obuf_soft_since:
            return False  # all sent: the common case, nothing to compare
        if not client.authenticated and used > UNAUTH_OUTPUT_LIMIT:
            return self._drop(client, cron)
        limit = self.limits[limit_class(client)]
        hard = bool(limit.hard) and used >= limit.hard
        soft = False
        if limit.soft and used >= limit.soft:
            now = self.clock.monotonic_ms()
            if not client.obuf_soft_since:
                client.obuf_soft_since = now or 1
            elif now - client.obuf_soft_since > limit.soft_seconds * 1000:
                soft = True
        else:
            client.obuf_soft_since = 0
        if not (hard or soft):
            return False
        return self._drop(client, cron)

    def _drop(self, client: Client, cron: bool) -> bool:
        conn = client.conn
        assert conn is not None
        if cron:
            log.warning("Client %s closed for overcoming of output buffer limits.",
                        self.describe(client))
        else:
            log.warning("Client %s scheduled to be closed ASAP for overcoming of output "
                        "buffer limits.", self.describe(client))
        self.disconnections += 1
        self.forget(client)
        conn.abort()
        return True

    def check_soft_limits(self, clients: Iterable[Client]) -> None:
        """The cron's pass: clients over a soft limit may have been over it long enough by
        now, although nothing was written to them since (they do not read)."""
        for client in [c for c in clients if c.obuf_soft_since]:
            self.check_limits(client, cron=True)
