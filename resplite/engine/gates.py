"""The gates: every reason a request leaves the dispatcher's fast path.

The fast path (:meth:`resplite.engine.dispatch.Dispatcher.execute`) is one table lookup,
one arity test and one test of ``client.gates | server.gates``: while both are 0 nothing
stands between a plain command and its handler, and nothing is owed after it but the
statistics. Each bit below names one condition that asks for more: checks before the call
(the general path), or work after it (:meth:`~resplite.engine.dispatch.Dispatcher.call`
tests the same figure once after the handler).

Invariant: a bit is set exactly while its condition holds. The attributes behind them
change only through setters that keep the bit current (properties of
:class:`~resplite.engine.client.Client`, :class:`~resplite.engine.state.ServerState` and
:class:`~resplite.engine.pause.ClientPause`, and :meth:`ServerState.set_monitor`); the
figures are never written directly.

The bits are ``Final``: the compiled build folds them into the code that tests them, where
a module attribute would be looked up at every test.

Keyspace notifications, client-side caching's invalidations and HOTKEYS are not gates:
the first two happen inside the handlers (the keyspace's hooks) and the dispatcher never
looks at them; HOTKEYS lowers the threshold a call's duration is compared with (see
``Dispatcher.watch_ns``), a comparison every call makes anyway.
"""

from __future__ import annotations

from typing import Final

# -- a client's own (Client.gates) ------------------------------------------------------------

NOAUTH: Final = 1 << 0
"""Not authenticated: only the ``no_auth`` commands run."""
ACL: Final = 1 << 1
"""Logged in as a restricted user: every command is checked against its rules."""
MULTI: Final = 1 << 2
"""Inside MULTI: commands are queued, ``no-multi`` ones refused."""
CONTEXT: Final = 1 << 3
"""In RESP2 Pub/Sub mode or a MONITOR: only some commands may run."""
TRACKING: Final = 1 << 4
"""Client-side caching is on: the keys a read touched are remembered after the call."""

# -- the server's (ServerState.gates) ---------------------------------------------------------

PAUSE: Final = 1 << 8
"""CLIENT PAUSE is on: commands it covers are held back."""
WRITES_REFUSED: Final = 1 << 9
"""A failed save (stop-writes-on-bgsave-error) or AOF write: writes answer -MISCONF."""
MEMORY: Final = 1 << 10
"""``maxmemory`` or ``maxmemory-clients`` is set: memory is looked at before a command."""
FAULTS: Final = 1 << 11
"""RESPLITE.FAULT rules are set: they are consulted before a command."""
CLUSTER: Final = 1 << 12
"""A cluster node: commands are routed by key slot."""
MONITORS: Final = 1 << 13
"""Some client is a MONITOR: each command is shown to it after the call."""
AOF: Final = 1 << 14
"""The append-only file is open: a call that changed the data set is logged after it."""

NAMES = {
    NOAUTH: "noauth", ACL: "acl", MULTI: "multi", CONTEXT: "context", TRACKING: "tracking",
    PAUSE: "pause", WRITES_REFUSED: "writes-refused", MEMORY: "memory", FAULTS: "faults",
    CLUSTER: "cluster", MONITORS: "monitors", AOF: "aof",
}


def with_bit(gates: int, bit: int, on: bool) -> int:
    """``gates`` with ``bit`` set when ``on``, cleared otherwise."""
    return gates | bit if on else gates & ~bit
