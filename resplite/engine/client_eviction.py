"""Client eviction: ``maxmemory-clients`` (Redis 7.0) closes the clients holding the most
memory once all clients together hold more than the limit.

The figure each client holds is its ``mem_charged`` (query buffer, queued MULTI commands,
unsent output and a fixed overhead; see :meth:`Client.memory_figure`), and the total is
:attr:`ServerState.clients_memory`, the same figures ``used_memory`` counts. As in Redis:

* the limit is ``maxmemory-clients`` bytes, or a percentage of ``maxmemory`` (none while
  ``maxmemory`` is 0), never below 128 KB so that a bad setting cannot lock everyone out;
* every client counts towards the total, but only those with a connection and without
  CLIENT NO-EVICT may be evicted;
* victims are taken from the largest power-of-two size class first (Redis's memory-usage
  buckets: up to 32 KB, then one per doubling up to 4 GB and above), and within a class
  in the order the clients joined it (approximated by client id), until the total is
  under the limit; each is logged and counted in INFO ``evicted_clients``;
* the check runs before every command (after the ACL and cluster checks, before key
  eviction) and after every batch of replies (Redis's beforeSleep); a client that evicts
  itself does not run the command.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.state")

MIN_LIMIT = 128 * 1024
_BUCKET_MIN_LOG = 15
_BUCKET_MAX_LOG = 33


def eviction_limit(maxmemory_clients: int, maxmemory: int) -> int:
    """The limit in bytes (0: no client eviction). ``maxmemory_clients`` holds -N for N %."""
    if maxmemory_clients < 0 and maxmemory > 0:
        limit = int(maxmemory * -maxmemory_clients / 100)
    elif maxmemory_clients > 0:
        limit = maxmemory_clients
    else:
        return 0
    return max(limit, MIN_LIMIT)


def size_class(memory: int) -> int:
    """Redis's memory-usage bucket of a client holding ``memory`` bytes (0 is the smallest)."""
    return min(max(memory.bit_length(), _BUCKET_MIN_LOG), _BUCKET_MAX_LOG) - _BUCKET_MIN_LOG


def evict_clients(server: ServerState) -> None:
    """Close clients, largest first, while all clients together hold ``limit`` or more."""
    limit = server.client_eviction_limit
    if not limit or server.clients_memory < limit:
        return
    candidates = sorted(
        (c for c in server.clients.values() if c.conn is not None and not c.no_evict),
        key=lambda c: (-size_class(c.mem_charged), c.id))
    for victim in candidates:
        if server.clients_memory < limit:
            return
        _evict(server, victim)
    if server.clients_memory >= limit:
        log.warning("Over client maxmemory after evicting all evictable clients")


def _evict(server: ServerState, victim: Client) -> None:
    log.info("Evicting client: %s", server.client_info(victim).decode("utf-8", "replace"))
    server.evicted_clients += 1
    if victim is server.current_client:
        # Closed once this batch's earlier replies are out; the command it was about to
        # run does not run (see Dispatcher).
        victim.close_after_reply = True
        server.clients_memory -= victim.mem_charged
        victim.mem_charged = 0
        return
    conn = victim.conn
    server.forget_client(victim)
    if conn is not None:
        conn.abort()  # its unsent output is dropped, as Redis frees it with the client
