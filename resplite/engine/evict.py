"""Eviction under ``maxmemory``: Redis's policies and approximations, on the running figure.

Theory of operation. Before every command, while ``maxmemory`` is set and the server's
``used_memory`` (:meth:`ServerState.used_memory`: the keyspace's running total, client
buffers, scripts and the startup allowance) is above it, the dispatcher calls
:meth:`Evictor.perform`, as Redis's ``processCommand`` calls ``performEvictions``. It deletes
keys chosen by ``maxmemory-policy`` until the figure is back under the limit, and answers

* :data:`EVICT_OK`: memory is under the limit (or nothing is allowed to run: a CLIENT PAUSE
  keeps the data set still, as in Redis);
* :data:`EVICT_RUNNING`: the time limit ran out first; eviction goes on from the event loop
  (a zero-delay timer, Redis's eviction time proc) and the command runs;
* :data:`EVICT_FAIL`: ``noeviction``, or nothing left that the policy may evict; a
  ``denyoom`` command is then refused with ``-OOM``.

How a key is chosen, as Redis does:

* ``*-lru``, ``*-lrm``, ``*-lfu`` and ``volatile-ttl`` keep an *eviction pool* of the 16 best
  candidates seen so far, ordered by score (idle milliseconds for LRU, 255 minus the decayed
  LFU counter for LFU, the inverse of the expiry time for TTL; higher is evicted first).
  Each round samples ``maxmemory-samples`` keys from every database (any key for
  ``allkeys-*``, keys with an expiry for ``volatile-*``), merges them into the pool (a full
  pool drops its lowest entry to take a better one, and refuses a candidate worse than all
  it holds), then evicts the pool's best entry that still exists; entries whose key went
  meanwhile are dropped as they are met. The pool lasts from one call to the next.
* ``*-random`` takes one random key from the next database that has one, visiting the
  databases in turn.

An evicted key is deleted, signalled as a change made by no client (WATCH, blocked clients,
client-side caching: a NOLOOP tracking client is told too), then reported as the
``evicted`` keyspace event, in Redis's order (:meth:`ServerState.evict`).

The time limit follows ``maxmemory-eviction-tenacity`` (0..100) with Redis's formula: 50 µs
per step up to 10 (500 µs, the default), then 15 % more per step, no limit at 100; it is
checked after every 16 keys. ``INFO stats`` reports ``evicted_keys`` and how long memory has
been over the limit (``total_eviction_exceeded_time``, ``current_eviction_exceeded_time``).

Sampling is the keyspace's own (:meth:`resplite.store.keyspace.Database.sample_access`, O(1)
expected a key, each key drawn with its idle time, LFU counter or expiry read by the same
lookup that finds it live); this module only scores, pools and deletes. A round
visits only the databases that hold keys (the keyspace meter's list), so evicting a key
costs O(samples x databases in use), whatever the size of the data set.
"""

from __future__ import annotations

import bisect
import logging
import random
import time
from typing import TYPE_CHECKING

from resplite.store.keyspace import SAMPLE_EXPIRY, SAMPLE_FREQUENCY, SAMPLE_IDLE, Database

if TYPE_CHECKING:
    from resplite.engine.scheduler import TimerHandle
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.evict")

EVICT_OK = 0
EVICT_RUNNING = 1
EVICT_FAIL = 2

POOL_SIZE = 16
_SCORE_MAX = (1 << 64) - 1
_now_ns = time.perf_counter_ns
# A round whose samples all vanished is retried; this many fruitless rounds in a row means
# there is nothing to take (it never happens while the keyspace holds a key to sample).
_MAX_EMPTY_ROUNDS = 64


def time_limit_us(tenacity: int) -> float:
    """How long one call may evict before handing over to the event loop (Redis's
    ``evictionTimeLimitUs``); infinite at 100."""
    if tenacity <= 10:
        return 50.0 * tenacity
    if tenacity < 100:
        return 500.0 * 1.15 ** (tenacity - 10)
    return float("inf")


class Evictor:
    """Chooses and deletes keys while memory is over ``maxmemory`` (one per server)."""

    __slots__ = ("evicted_keys", "exceeded_since_ns", "next_db", "pool", "pooled", "rng",
                 "server", "timer", "total_exceeded_ns")

    def __init__(self, server: ServerState) -> None:
        self.server = server
        # (score, db index, key), ascending: the best candidate is last.
        self.pool: list[tuple[int, int, bytes]] = []
        # The (db index, key) pairs of ``pool``: a sampled key already pooled is found in
        # O(1) (sampling may draw a key twice, or again in a later round).
        self.pooled: set[tuple[int, bytes]] = set()
        self.next_db = 0
        self.rng = random.Random()
        self.evicted_keys = 0
        # Since when memory has stayed over the limit (0: it is not), and the total of the
        # spells that ended (INFO's *_eviction_exceeded_time).
        self.exceeded_since_ns = 0
        self.total_exceeded_ns = 0
        self.timer: TimerHandle | None = None

    # -- the entry points -------------------------------------------------------------------

    def perform(self) -> int:
        """Evict until memory is under ``maxmemory``, the policy forbids or finds nothing, or
        the time limit passes; returns EVICT_OK, EVICT_RUNNING or EVICT_FAIL."""
        server = self.server
        if server.pause.active:
            return EVICT_OK  # a pause keeps the data set still: as if nothing were over
        result = self._evict()
        if result == EVICT_OK:
            if self.exceeded_since_ns:
                self.total_exceeded_ns += _now_ns() - self.exceeded_since_ns
                self.exceeded_since_ns = 0
        elif not self.exceeded_since_ns:
            self.exceeded_since_ns = _now_ns()
        return result

    def start_background(self) -> None:
        """Go on evicting from the event loop (Redis's eviction time proc), if it is not
        already: after ``maxmemory`` is lowered, or when a call ran out of time."""
        if self.timer is None:
            self.timer = self.server.scheduler.call_later(0, self._time_proc)

    def exceeded_ms(self) -> tuple[int, int]:
        """(total, current) milliseconds memory has been over the limit."""
        now = _now_ns()
        if self.exceeded_since_ns and not self.server.over_maxmemory():
            self.total_exceeded_ns += now - self.exceeded_since_ns
            self.exceeded_since_ns = 0
        current = now - self.exceeded_since_ns if self.exceeded_since_ns else 0
        return (self.total_exceeded_ns + current) // 1_000_000, current // 1_000_000

    def reset_stats(self) -> None:
        self.evicted_keys = 0
        self.total_exceeded_ns = 0

    # -- the work ---------------------------------------------------------------------------

    def _time_proc(self) -> None:
        self.timer = None
        if self.perform() == EVICT_RUNNING:
            self.start_background()

    def _evict(self) -> int:
        server = self.server
        maxmemory = server.maxmemory
        if not maxmemory:
            return EVICT_OK
        used = server.used_memory()
        if used <= maxmemory:
            return EVICT_OK
        config = server.config
        policy = config["maxmemory-policy"]
        if policy == "noeviction":
            return EVICT_FAIL
        to_free = used - maxmemory
        limit_ns = time_limit_us(config["maxmemory-eviction-tenacity"]) * 1000
        samples = config["maxmemory-samples"]
        volatile = policy.startswith("volatile-")
        dbs = server.keyspace.dbs
        latency = server.latency
        # Each deletion is timed only for the latency monitor, when it is on.
        timed = latency.threshold_ms > 0
        started = _now_ns()
        freed = 0
        keys_freed = 0
        try:
            while freed < to_free:
                if policy.endswith("-random"):
                    chosen = self._random_key(volatile)
                else:
                    chosen = self._best_key(policy, volatile, samples)
                if chosen is None:
                    return EVICT_FAIL
                db = dbs[chosen[0]]
                before = db.used
                if timed:
                    deleting = _now_ns()
                    if server.evict(chosen[0], chosen[1]):
                        self.evicted_keys += 1
                    latency.sample_ns("eviction-del", _now_ns() - deleting)
                elif server.evict(chosen[0], chosen[1]):
                    self.evicted_keys += 1
                freed += before - db.used
                keys_freed += 1
                if keys_freed % 16 == 0 and _now_ns() - started > limit_ns:
                    self.start_background()
                    if self.timer is not None:
                        return EVICT_RUNNING
                    # Nothing can call back later (a server without timers): finish now.
            return EVICT_OK
        finally:
            # The latency monitor's eviction-cycle: one run, however it ended.
            latency.sample_ns("eviction-cycle", _now_ns() - started)

    def _random_key(self, volatile: bool) -> tuple[int, bytes] | None:
        dbs = self.server.keyspace.dbs
        if not dbs:
            return None
        # The next database after the last one used, in index order, among those that
        # hold a key (all in the meter's list of databases in use).
        last = self.next_db
        chosen: Database | None = None
        first: Database | None = None
        for db in self.server.keyspace.meter.dbs:
            if not (db.expires if volatile else db.data):
                continue
            index = db.index
            if index > last and (chosen is None or index < chosen.index):
                chosen = db
            if first is None or index < first.index:
                first = db
        if chosen is None:
            chosen = first
        if chosen is None:
            return None
        self.next_db = chosen.index
        keys = chosen.sample_keys(1, volatile, self.rng)
        return (chosen.index, keys[0]) if keys else None

    def _best_key(self, policy: str, volatile: bool, samples: int) -> tuple[int, bytes] | None:
        dbs = self.server.keyspace.dbs
        pool = self.pool
        pooled = self.pooled
        rng = self.rng
        insort = bisect.insort
        # The figure sampled with each key, and how it becomes a score (higher is evicted
        # first): idle time as it is, 255 minus the LFU counter, the sooner expiry first.
        if policy.endswith(("-lru", "-lrm")):  # the clock LRM stamps on modifications only
            field = SAMPLE_IDLE
        elif policy.endswith("-lfu"):
            field = SAMPLE_FREQUENCY
        else:
            field = SAMPLE_EXPIRY
        # Only the databases that hold a key are in the meter's list (usually one or two):
        # a round costs O(samples) per database in use, not a visit to every database.
        in_use = self.server.keyspace.meter.dbs
        for _ in range(_MAX_EMPTY_ROUNDS):
            sampled = False
            for db in in_use:
                if not (db.expires if volatile else db.data):
                    continue
                sampled = True
                # Merge the samples into the pool (Redis's evictionPoolPopulate): a full
                # pool refuses a candidate no better than its worst and otherwise drops its
                # worst; a key already pooled is not added twice.
                index = db.index
                keys, figures = db.sample_access(samples, volatile, field, rng)
                if field == SAMPLE_FREQUENCY:
                    figures = [255 - f for f in figures]
                elif field == SAMPLE_EXPIRY:
                    figures = [_SCORE_MAX - when for when in figures]
                for key, value in zip(keys, figures, strict=True):
                    if len(pool) >= POOL_SIZE and value <= pool[0][0]:
                        continue
                    slot = (index, key)
                    if slot in pooled:
                        continue
                    insort(pool, (value, index, key))
                    pooled.add(slot)
                    if len(pool) > POOL_SIZE:
                        _, gone_index, gone_key = pool.pop(0)
                        pooled.discard((gone_index, gone_key))
            if not sampled:
                return None
            while pool:
                _, index, key = pool.pop()
                pooled.discard((index, key))
                db = dbs[index]
                if key in (db.expires if volatile else db.data):
                    return index, key
                # A ghost: the key went since it was pooled.
        return None
