"""Client-side caching: which client may hold which key, and the invalidations they get.

Theory of operation (Redis's ``tracking.c``, in our own structure):

* Default mode. After a read-only command of a tracking client, the keys the command named
  (found from its key specs, :mod:`resplite.engine.keyspecs`) are remembered in one table,
  key -> ids of the clients that read it; the table ignores the database, as Redis's does.
  OPTIN remembers only after ``CLIENT CACHING YES``, OPTOUT skips after ``CLIENT CACHING
  NO``; either lasts for the next command only (or the whole MULTI).
* When a key is modified (every write goes through the keyspace's modification hook, expiry
  and eviction included) its entry is removed and each remembered client still tracking in
  default mode gets ``invalidate [key]``, unless it set NOLOOP and made the change itself.
  A key is reported once per read: reading it again re-arms it.
* BCAST mode. Nothing is remembered; a client registers key prefixes ("" for all keys). A
  modified key is noted under every matching prefix with the client that changed it, and
  once per event-loop turn each prefix (in byte order) sends its keys, in byte order, in one
  message to each of its clients (leaving out, for a NOLOOP client, the keys it changed itself).
* FLUSHDB / FLUSHALL send every tracking client ``invalidate`` with a null and empty the
  table.
* ``tracking-table-max-keys`` (0: no limit) bounds the table: past it, the keys remembered
  longest are invalidated (as if changed) until it holds that many again, at once when the
  limit is lowered and after each read that grows the table past it. (Redis picks them by
  a random walk of its table, before the next command or in its cron.)
* Delivery. A RESP3 client gets a push ``>2 invalidate <keys>``. With REDIRECT the message
  goes to the other client instead: as a push if it speaks RESP3, or as a Pub/Sub message on
  ``__redis__:invalidate`` if it is a RESP2 client in Pub/Sub mode. If the redirect target is
  gone, the tracking client is marked ``broken_redirect`` and, under RESP3, told once per
  message with ``tracking-redir-broken <id>``. A RESP2 client without REDIRECT gets nothing.

All messages go through the Output's per-client outboxes, so a client that changed a key it
reads itself gets the invalidation after its command's reply, as in Redis 7.2+.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resplite.engine.errors import CommandError
from resplite.engine.keyspecs import command_keys

if TYPE_CHECKING:
    from collections.abc import Sequence

    from resplite.engine.client import Client
    from resplite.engine.output import Output
    from resplite.engine.table import CommandSpec

_INVALIDATE3 = b">2\r\n$10\r\ninvalidate\r\n"
_INVALIDATE2 = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
_NULLS = {2: b"$-1\r\n", 3: b"_\r\n"}


class TrackingState:
    """One client's CLIENT TRACKING settings."""

    __slots__ = ("bcast", "broken_redirect", "caching", "noloop", "optin", "optout",
                 "prefixes", "redirect")

    def __init__(self) -> None:
        self.redirect = 0
        self.bcast = False
        self.optin = False
        self.optout = False
        self.noloop = False
        self.caching = False  # CLIENT CACHING given for the next command
        self.broken_redirect = False
        self.prefixes: set[bytes] = set()


class _Prefix:
    """A BCAST prefix: its clients and the keys changed since the last broadcast."""

    __slots__ = ("clients", "keys")

    def __init__(self) -> None:
        self.clients: dict[Client, None] = {}
        # key -> the client whose command changed it last (None: expiry, eviction)
        self.keys: dict[bytes, Client | None] = {}


def _keys_array(keys: Sequence[bytes]) -> bytes:
    return b"*%d\r\n" % len(keys) + b"".join(b"$%d\r\n%s\r\n" % (len(k), k) for k in keys)


class Tracking:
    """The server's tracking table and BCAST prefixes."""

    def __init__(self, output: Output, clients: dict[int, Client]) -> None:
        self.output = output
        self.clients = clients
        self.table: dict[bytes, dict[int, None]] = {}
        self.prefixes: dict[bytes, _Prefix] = {}
        self.tracking_clients = 0
        self.total_items = 0
        self._bcast_due = False
        self.max_keys = 0  # tracking-table-max-keys (0: no limit)

    # -- CLIENT TRACKING ----------------------------------------------------------------------

    def check_prefixes(self, client: Client, prefixes: list[bytes]) -> None:
        """Refuse prefixes that overlap each other or the client's own, in Redis's words."""
        state = client.tracking
        own = sorted(state.prefixes) if state is not None else []
        for i, prefix in enumerate(prefixes):
            for existing in own:
                if _overlap(existing, prefix):
                    raise CommandError(
                        f"ERR Prefix '{_text(prefix)}' overlaps with an existing prefix "
                        f"'{_text(existing)}'. Prefixes for a single client must not overlap."
                    )
            for other in prefixes[i + 1:]:
                if _overlap(prefix, other):
                    raise CommandError(
                        f"ERR Prefix '{_text(prefix)}' overlaps with another provided prefix "
                        f"'{_text(other)}'. Prefixes for a single client must not overlap."
                    )

    def enable(self, client: Client, redirect: int, *, bcast: bool, optin: bool, optout: bool,
               noloop: bool, prefixes: list[bytes]) -> None:
        state = client.tracking
        if state is None:
            state = client.tracking = TrackingState()
            self.tracking_clients += 1
        state.redirect = redirect
        state.broken_redirect = False
        state.bcast = bcast
        state.optin = optin
        state.optout = optout
        state.noloop = noloop
        if bcast:
            for prefix in prefixes or [b""]:
                entry = self.prefixes.get(prefix)
                if entry is None:
                    entry = self.prefixes[prefix] = _Prefix()
                if client not in entry.clients:
                    entry.clients[client] = None
                    state.prefixes.add(prefix)

    def disable(self, client: Client) -> None:
        state = client.tracking
        if state is None:
            return
        for prefix in state.prefixes:
            entry = self.prefixes.get(prefix)
            if entry is not None:
                entry.clients.pop(client, None)
                if not entry.clients:
                    del self.prefixes[prefix]
        client.tracking = None
        self.tracking_clients -= 1

    # -- remembering reads --------------------------------------------------------------------

    def remember(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> None:
        """Note the keys a read-only command of a default-mode tracking client named."""
        state = client.tracking
        if state is None or state.bcast:
            return
        if (state.optin and not state.caching) or (state.optout and state.caching):
            return
        if "pubsub" in spec.flags:
            return  # shard channels are keys for routing only
        table = self.table
        cid = client.id
        for ref in command_keys(spec, argv):
            key = argv[ref.pos]
            ids = table.get(key)
            if ids is None:
                ids = table[key] = {}
            if cid not in ids:
                ids[cid] = None
                self.total_items += 1
        if self.max_keys and len(table) > self.max_keys:
            self._limit()

    def set_max_keys(self, name: str, value: int) -> None:
        """CONFIG SET tracking-table-max-keys: a lower limit applies at once."""
        self.max_keys = value
        if value and len(self.table) > value:
            self._limit()

    def _limit(self) -> None:
        """Invalidate the keys remembered longest until the table is within its limit."""
        table = self.table
        while len(table) > self.max_keys:
            self._tell_readers(next(iter(table)), None)  # (BCAST clients are not told)

    # -- invalidating -------------------------------------------------------------------------

    def invalidate(self, key: bytes, modifier: Client | None) -> None:
        """``key`` changed (by ``modifier``'s command, or by expiry/eviction when None)."""
        if self.prefixes:
            for prefix, entry in self.prefixes.items():
                if key.startswith(prefix):
                    entry.keys[key] = modifier
                    if not self._bcast_due:
                        self._bcast_due = True
                        self.output.schedule()
        self._tell_readers(key, modifier)

    def _tell_readers(self, key: bytes, modifier: Client | None) -> None:
        """Forget ``key`` and invalidate it for the default-mode clients that read it."""
        ids = self.table.pop(key, None)
        if ids is None:
            return
        self.total_items -= len(ids)
        payload = b"*1\r\n$%d\r\n%s\r\n" % (len(key), key)
        clients = self.clients
        for cid in ids:
            target = clients.get(cid)
            if target is None:
                continue
            state = target.tracking
            if state is None or state.bcast:
                continue
            if state.noloop and target is modifier:
                continue
            self.send(target, payload)

    def invalidate_all(self) -> None:
        """FLUSHDB / FLUSHALL: every tracking client is told to drop everything."""
        if self.tracking_clients:
            for client in list(self.clients.values()):
                if client.tracking is not None:
                    self.send(client, _NULLS[client.resp])
        self.table.clear()
        self.total_items = 0

    def broadcast(self) -> None:
        """Send each BCAST prefix's changed keys to its clients (once per loop turn)."""
        if not self._bcast_due:
            return
        self._bcast_due = False
        # Prefixes in byte order, as Redis walks its radix tree of them.
        for _, entry in sorted(self.prefixes.items()):
            if not entry.keys:
                continue
            keys = sorted(entry.keys)
            common = _keys_array(keys)
            for client in entry.clients:
                state = client.tracking
                if state is not None and state.noloop:
                    own = [k for k in keys if entry.keys[k] is not client]
                    if own:
                        self.send(client, _keys_array(own))
                else:
                    self.send(client, common)
            entry.keys = {}

    def send(self, client: Client, payload: bytes) -> None:
        """One invalidation (``payload``: the encoded keys or null) for ``client``."""
        state = client.tracking
        redirected = False
        if state is not None and state.redirect:
            target = self.clients.get(state.redirect)
            if target is None:
                state.broken_redirect = True
                if client.resp > 2:
                    note = b"tracking-redir-broken"
                    self.output.push(client, b">2\r\n$%d\r\n%s\r\n:%d\r\n" % (
                        len(note), note, state.redirect))
                return
            client = target
            redirected = True
        if client.resp > 2:
            self.output.push(client, _INVALIDATE3 + payload)
        elif redirected and client.pubsub:
            self.output.push(client, _INVALIDATE2 + payload)

    def forget(self, client: Client) -> None:
        self.disable(client)

    @property
    def total_keys(self) -> int:
        return len(self.table)


def _overlap(a: bytes, b: bytes) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _text(data: bytes) -> str:
    # Redis prints the prefixes with %s: the bytes up to the first NUL.
    return data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
