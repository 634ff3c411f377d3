"""The active expire cycle: reclaiming keys and hash fields whose time passed, unread.

A key past its time is deleted when a command looks it up (lazy expiry, in
:mod:`resplite.store.keyspace`); this cycle frees the ones nobody reads, with the effort of
Redis's ``activeExpireCycle`` (expire.c), whose pacing it follows:

* a *slow* cycle runs at every tick of the server cron (``hz`` per second) and may take
  ``25 + 2 * (effort - 1)`` percent of the tick's period (25 ms at ``hz`` 10 and the default
  ``active-expire-effort`` 1);
* a *fast* cycle of at most ``1000 + 250 * (effort - 1)`` microseconds runs between the
  turns of the event loop (Redis runs it in ``beforeSleep``), only after a cycle stopped on
  its time limit, and never sooner than twice its duration after the previous fast cycle
  started (Redis's condition also names the stale-key estimate, but compares its fraction
  with a percentage, so only the time limit ever starts a fast cycle there): the
  shell's timer (through the engine's :class:`~resplite.engine.scheduler.Scheduler`) calls
  it then, so other clients are served between two fast cycles;
* each cycle visits up to 16 databases (all of them after a cycle that stopped on its time
  limit), starting where the previous cycle stopped; in each one it first lets hash fields
  expire (Redis's ``activeExpireHashFieldCycle``: ``10000 / hz`` fields per call, up to 32
  times more on slow cycles while a database keeps having more than that), then takes keys
  in loops of ``20 + 5 * (effort - 1)``, repeating while more than ``10 - (effort - 1)``
  percent of a loop's keys had expired, and looks at the clock after every loop.

Where Redis samples the expires dict along a scan cursor, resplite walks its timer index
(earliest expiry time first, see the keyspace's module docstring): every key a loop reaches
is due, so a cycle spends its time deleting rather than finding, no expired key is left
behind once a cycle finishes, and a key whose time has not come is never reached. The
loops, their repeat rule, the time limits and the statistics are Redis's:

* ``expired_stale_perc``: a running average (5 % weight per cycle) of the share of keys with
  an expiry that are due but not yet deleted, estimated from ``keys_per_loop`` random times
  of each database's timer index as the cycle starts on it;
* ``expired_time_cap_reached_count``: cycles that stopped on their time limit;
* ``expire_cycle_cpu_milliseconds``: the time spent in cycles (and the latency monitor's
  ``expire-cycle`` event, one sample per cycle).

Like Redis, no cycle runs while clients are paused (CLIENT PAUSE WRITE or ALL): the keys
are reclaimed after the pause. ``active-expire-enabled no`` (DEBUG SET-ACTIVE-EXPIRE 0)
stops the cycle altogether.

Invariants: a cycle deletes only keys and fields whose time is before the clock's reading;
it reaches at most ``keys_per_loop`` timer entries between two looks at its timer, so it
overruns its time limit by at most one loop's work; at most one fast cycle is scheduled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resplite.engine.scheduler import TimerHandle
    from resplite.engine.state import ServerState

KEYS_PER_LOOP = 20
FAST_DURATION_US = 1000
SLOW_TIME_PERC = 25
ACCEPTABLE_STALE = 10
DBS_PER_CALL = 16
HFE_FIELDS_PER_SEC = 10_000
# A database that kept having more due fields than one call takes, for this many fields,
# gets a larger share on slow cycles (a factor of up to 32).
HFE_SEQUENCE_STEP = 1_000_000


class Effort:
    """The cycle's parameters for an ``active-expire-effort`` of 1..10 (Redis's scaling)."""

    __slots__ = ("acceptable_stale", "fast_duration_us", "keys_per_loop", "slow_time_perc")

    def __init__(self, effort: int) -> None:
        step = max(1, min(effort, 10)) - 1
        self.keys_per_loop = KEYS_PER_LOOP + KEYS_PER_LOOP // 4 * step
        self.fast_duration_us = FAST_DURATION_US + FAST_DURATION_US // 4 * step
        self.slow_time_perc = SLOW_TIME_PERC + 2 * step
        self.acceptable_stale = ACCEPTABLE_STALE - step


class ActiveExpire:
    """The cycle's state across calls and its statistics (see the module docstring).

    ``timer`` reads elapsed time in nanoseconds for the time limits (a test passes a fake
    one); which keys are due is decided by the server clock.
    """

    def __init__(self, state: ServerState,
                 timer: Callable[[], int] = time.perf_counter_ns) -> None:
        self.state = state
        self.timer = timer
        self.current_db = 0  # the next database to visit
        self.timelimit_exit = False  # the previous cycle stopped on its time limit
        self.last_fast_start_ns: int | None = None
        self.stale_perc = 0.0  # a fraction, shown as a percentage
        self.time_cap_reached = 0
        self.cycle_time_ns = 0
        self.cycles = 0
        # Hash fields: their own database cursor, and how many fields the current database
        # has given up in a row without running out of due ones.
        self.hfe_db = 0
        self.hfe_sequence = 0
        self._fast_timer: TimerHandle | None = None

    def reset_stats(self) -> None:
        self.stale_perc = 0.0
        self.time_cap_reached = 0
        self.cycle_time_ns = 0

    # -- entry points ---------------------------------------------------------------------

    def slow_cycle(self) -> int:
        """The cron's cycle; returns how many keys and fields it deleted."""
        return self.cycle(fast=False)

    def fast_cycle(self) -> int:
        """A fast cycle, if one is wanted and not too soon after the previous one."""
        return self.cycle(fast=True)

    def _fire_fast(self) -> None:
        self._fast_timer = None
        self.fast_cycle()

    def _schedule_fast(self, effort: Effort) -> None:
        """Ask the shell for a fast cycle at the earliest moment one may run."""
        if self._fast_timer is not None or not self.timelimit_exit:
            return
        gap_ns = 2 * effort.fast_duration_us * 1000
        wait_ns = 0
        if self.last_fast_start_ns is not None:
            wait_ns = max(0, self.last_fast_start_ns + gap_ns - self.timer())
        self._fast_timer = self.state.scheduler.call_later(wait_ns / 1e9, self._fire_fast)

    # -- the cycle ------------------------------------------------------------------------

    def cycle(self, fast: bool) -> int:
        """One slow or fast cycle (see the module docstring); returns how many keys and
        hash fields it deleted."""
        state = self.state
        config = state.config
        if not config["active-expire-enabled"]:
            return 0
        pause = state.pause
        if pause.active and state.clock.time_ms() < pause.end_ms:
            return 0
        effort = Effort(config["active-expire-effort"])
        start = self.timer()
        if fast:
            if not self.timelimit_exit:
                return 0
            gap_ns = 2 * effort.fast_duration_us * 1000
            if self.last_fast_start_ns is not None and start < self.last_fast_start_ns + gap_ns:
                self._schedule_fast(effort)
                return 0
            self.last_fast_start_ns = start
            limit_ns = effort.fast_duration_us * 1000
        else:
            hz = state.current_hz()
            limit_ns = max(1, effort.slow_time_perc * 1_000_000 // hz // 100) * 1000
        dbs = state.keyspace.dbs
        dbs_per_call = len(dbs) if self.timelimit_exit else min(DBS_PER_CALL, len(dbs))
        self.timelimit_exit = False
        per_loop = effort.keys_per_loop
        acceptable = effort.acceptable_stale
        timer = self.timer
        now = state.clock.time_ms()
        total_sampled = total_due = deleted = 0
        performed = 0
        for _ in range(len(dbs)):
            if performed >= dbs_per_call or self.timelimit_exit:
                break
            db = dbs[self.current_db % len(dbs)]
            self.current_db = (self.current_db + 1) % len(dbs)
            deleted += self._fields(fast)
            if not db.expires:
                continue
            performed += 1
            sampled, due = db.due_share(per_loop, now)
            total_sampled += sampled
            total_due += due
            while True:
                reached, expired = db.expire_keys(per_loop, now)
                deleted += expired
                if timer() - start > limit_ns:
                    self.timelimit_exit = True
                    self.time_cap_reached += 1
                    break
                # Done with this database when nothing due is left, or (Redis's rule) when
                # few of the entries reached were still due (stale ones, quick to skip).
                if reached < per_loop or expired * 100 <= acceptable * reached:
                    break
        elapsed = timer() - start
        self.cycles += 1
        self.cycle_time_ns += elapsed
        state.latency.sample_ns("expire-cycle", elapsed)
        current = total_due / total_sampled if total_sampled else 0.0
        self.stale_perc = current * 0.05 + self.stale_perc * 0.95
        self._schedule_fast(effort)
        return deleted

    def _fields(self, fast: bool) -> int:
        """One call of the hash-field part, on its own database cursor (as Redis's)."""
        state = self.state
        dbs = state.keyspace.dbs
        db = dbs[self.hfe_db % len(dbs)]
        if not db.has_field_timers:
            self.hfe_sequence = 0
            self.hfe_db = (self.hfe_db + 1) % len(dbs)
            return 0
        most = max(1, HFE_FIELDS_PER_SEC // state.current_hz())
        if not fast and self.hfe_sequence > HFE_SEQUENCE_STEP:
            most *= min(self.hfe_sequence // HFE_SEQUENCE_STEP, 32)
        done = db.expire_fields_due(most)
        if done >= most:
            self.hfe_sequence += most
        else:
            self.hfe_sequence = 0
            self.hfe_db = (self.hfe_db + 1) % len(dbs)
        return done

    # -- INFO -----------------------------------------------------------------------------

    def info_lines(self) -> list[tuple[str, object]]:
        return [
            ("expired_stale_perc", f"{self.stale_perc * 100:.2f}"),
            ("expired_time_cap_reached_count", self.time_cap_reached),
            ("expire_cycle_cpu_milliseconds", self.cycle_time_ns // 1_000_000),
        ]
