"""MIGRATE's connections to other servers: the seam to the shell, and Redis's socket cache.

The engine does no I/O. MIGRATE (:mod:`resplite.commands.migrate`) talks to its target
through a :class:`MigrateTransport` that the shell provides (``resplite.server.migrate``
opens blocking TCP sockets); a state built without one cannot reach any target, and every
MIGRATE that gets as far as connecting answers Redis's connect error. The protocol spoken on
a link (AUTH, SELECT, pipelined RESTOREs, one reply line each) is the command's business;
a link only moves bytes, each operation bounded by MIGRATE's timeout.

Redis blocks its whole server while MIGRATE runs (it connects, writes and reads with
blocking calls and a timeout), and so does resplite: the transport blocks the event loop's
thread for at most the timeout per operation. A target served by this same event loop (a
node of the in-process cluster) would never answer a blocking read; the command moves keys
to those directly instead of through a link.

:class:`MigrateSockets` is Redis's cache of connected targets (``migrateGetSocket``):
one link per ``host:port`` (as spelled in the command), reused by the next MIGRATE to the
same target, which remembers the last database it selected there so that SELECT is sent
only when the database changes. At most :data:`CACHE_ITEMS` links are kept (a random one is
closed to make room); the cron closes links idle for more than :data:`CACHE_TTL_S` seconds
of the server's clock; the command closes a link after any socket error. Invariants: a
cached link is open; ``last_dbid`` is -1 until a MIGRATE through the link succeeded.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from resplite.engine.clock import Clock

CACHE_ITEMS = 64  # Redis's MIGRATE_SOCKET_CACHE_ITEMS
CACHE_TTL_S = 10  # Redis's MIGRATE_SOCKET_CACHE_TTL
WRITE_CHUNK = 64 * 1024  # Redis writes the pipelined commands in chunks of this size


class LinkError(Exception):
    """A link operation failed; ``timed_out`` when it was the timeout (Redis's ETIMEDOUT,
    which forbids the retry on a fresh connection)."""

    def __init__(self, timed_out: bool, reason: str = "") -> None:
        super().__init__(reason or ("timed out" if timed_out else "connection error"))
        self.timed_out = timed_out


class MigrateLink(Protocol):
    """One connection to a MIGRATE target."""

    def send(self, data: bytes, timeout_ms: int) -> None:
        """Write all of ``data`` within ``timeout_ms``, or raise :class:`LinkError`."""

    def read_line(self, timeout_ms: int) -> bytes:
        """The next line the target sent, without its CR LF; :class:`LinkError` when no
        byte arrives within ``timeout_ms`` or the connection ends or fails."""

    def close(self) -> None: ...


class MigrateTransport(Protocol):
    """How the engine opens links (the shell's blocking sockets)."""

    def connect(self, host: str, port: int, timeout_ms: int) -> MigrateLink:
        """A link connected to ``host:port`` within ``timeout_ms``, or :class:`LinkError`."""


class _NoTransport:
    def connect(self, host: str, port: int, timeout_ms: int) -> MigrateLink:
        raise LinkError(False, "this server cannot open connections")


NO_TRANSPORT: MigrateTransport = _NoTransport()


class CachedLink:
    """An open MIGRATE connection kept for reuse, with the db it last selected."""

    __slots__ = ("last_dbid", "last_use_s", "link")

    def __init__(self, link: MigrateLink, last_dbid: int, last_use_s: int) -> None:
        self.link = link
        self.last_dbid = last_dbid
        self.last_use_s = last_use_s


def atoi(text: bytes) -> int:
    """C's ``atoi`` as Redis applies it to MIGRATE's port: leading blanks, a sign, the
    digits that follow; 0 when there are none (the argument is not otherwise checked)."""
    stripped = text.lstrip(b" \t\n\v\f\r")
    sign = 1
    if stripped[:1] in (b"+", b"-"):
        sign = -1 if stripped[:1] == b"-" else 1
        stripped = stripped[1:]
    digits = 0
    while digits < len(stripped) and 48 <= stripped[digits] <= 57:
        digits += 1
    return sign * int(stripped[:digits]) if digits else 0


class MigrateSockets:
    """The cached links of one server, by the ``host:port`` MIGRATE named."""

    def __init__(self, transport: MigrateTransport, clock: Clock) -> None:
        self.transport = transport
        self.clock = clock
        self.links: dict[bytes, CachedLink] = {}

    def _now_s(self) -> int:
        return self.clock.time_ms() // 1000

    def get(self, host: bytes, port: bytes, timeout_ms: int) -> CachedLink | None:
        """The cached link to ``host:port``, or a new one (None when it cannot connect)."""
        name = host + b":" + port
        cached = self.links.get(name)
        if cached is not None:
            cached.last_use_s = self._now_s()
            return cached
        if len(self.links) >= CACHE_ITEMS:
            victim = random.choice(list(self.links))
            self.links.pop(victim).link.close()
        try:
            link = self.transport.connect(host.decode("utf-8", "replace"), atoi(port),
                                          timeout_ms)
        except LinkError:
            return None
        cached = CachedLink(link, -1, self._now_s())
        self.links[name] = cached
        return cached

    def close(self, host: bytes, port: bytes) -> None:
        cached = self.links.pop(host + b":" + port, None)
        if cached is not None:
            cached.link.close()

    def close_idle(self) -> None:
        """The cron's part (Redis's ``migrateCloseTimedoutSockets``, once a second)."""
        if not self.links:
            return
        now = self._now_s()
        for name, cached in list(self.links.items()):
            if now - cached.last_use_s > CACHE_TTL_S:
                del self.links[name]
                cached.link.close()

    def close_all(self) -> None:
        links, self.links = self.links, {}
        for cached in links.values():
            cached.link.close()

    def __len__(self) -> int:
        return len(self.links)
