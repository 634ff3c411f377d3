"""Moving the server's clock the way a real passage of time would.

The :class:`~resplite.engine.clock.Clock` only keeps readings; this module decides what the
server does when the reading jumps. It is the one place that freezes, resumes, advances and
sets time for a running server: the RESPLITE.CLOCK command and the embedding API's
``handle.clock`` both come here, and must run on the server's event loop.

Theory of operation:

* After every jump (:func:`on_clock_jump`, installed as the clock's listener in place of the
  blocking manager's own) what has become due fires in the order time would have fired it:
  keys whose time has passed expire first, clients waiting on the keys those expirations
  touched are re-run (a blocked XREADGROUP whose stream expired answers NOGROUP, as in
  Redis 7), and only then do blocked clients whose deadline passed get their timeout reply.
* :func:`advance` walks forward in steps, stopping at every blocked-client deadline and at
  the expiry of every key a blocked client waits on, so that a key expiring at +2 s wakes
  its waiter at +2 s, before a client blocked until +3 s times out, while a client blocked
  until +1 s times out before that key expires.
* A key or hash field lives while ``now <= when``, as in Redis: an advance that lands exactly
  on a key's time leaves it readable (PTTL answers 0), and one more millisecond expires it.
* Time never moves backwards except through :func:`set_time`, which is explicit. Stream ids
  stay monotonic across a backward step because the stream code never issues an id below the
  stream's last one, as Redis does when the system clock steps back.

Invariant: every reading stays within 0 .. :data:`MAX_TIME_MS` (the end of year 9999), so
ids, TTLs and TIME replies stay in the ranges clients can parse.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from resplite.engine.state import ServerState

# 9999-12-31T23:59:59.999Z: the last millisecond date libraries agree on.
MAX_TIME_MS = 253_402_300_799_999


class ClockRangeError(ValueError):
    """The requested time is outside 0 .. MAX_TIME_MS."""


class ClockDirectionError(ValueError):
    """ADVANCE was asked to move time backwards."""


def install(state: ServerState) -> Callable[[], None]:
    """Make clock jumps fire due work in real-time order; returns the listener to uninstall."""
    clock = state.clock
    clock.remove_listener(state.blocking.check_timeouts)

    def listener() -> None:
        on_clock_jump(state)

    clock.add_listener(listener)
    return listener


def on_clock_jump(state: ServerState) -> None:
    """Fire what the clock's new reading has made due: expirations, wake-ups, timeouts."""
    expire_due(state)
    blocking = state.blocking
    if blocking.ready:
        blocking.serve_ready()
    blocking.check_timeouts()


def expire_due(state: ServerState) -> int:
    """Delete every key and hash field whose time has passed (unless active expiry is
    switched off)."""
    if not state.config["active-expire-enabled"]:
        return 0
    deleted = 0
    budget = 10_000
    for db in state.keyspace.dbs:
        while db.has_timers:
            n = db.active_expire(budget)
            deleted += n
            if n < budget:
                break
    return deleted


def now_ms(state: ServerState) -> int:
    return state.clock.time_ms()


def freeze(state: ServerState) -> None:
    state.clock.freeze()


def resume(state: ServerState) -> None:
    state.clock.resume()


def advance(state: ServerState, ms: int) -> int:
    """Move time forward by ``ms``, stopping at each blocked-client deadline on the way.

    Returns the new reading in Unix milliseconds.
    """
    if ms < 0:
        raise ClockDirectionError(ms)
    clock = state.clock
    target = clock.time_ms() + ms
    if target > MAX_TIME_MS:
        raise ClockRangeError(target)
    # Whatever was already due (a running clock's timer not yet fired) goes first.
    on_clock_jump(state)
    while True:
        now = clock.time_ms()
        if now >= target:
            break
        stop = min((t for t in _next_events(state) if now < t < target), default=target)
        clock.advance(stop - now)  # the listener fires what this step made due
    return clock.time_ms()


def _next_events(state: ServerState) -> list[int]:
    """Times at which something a blocked client can observe happens next.

    That is its own deadline and the expiry of a key it waits on; other keys may expire
    anywhere inside a step, since nobody can tell when they did.
    """
    blocking = state.blocking
    events: list[int] = []
    deadline = blocking.next_deadline_ms()
    if deadline is not None:
        events.append(deadline)
    dbs = state.keyspace.dbs
    for db_index, key in blocking.waiting:
        when = dbs[db_index].expires.get(key)
        if when is not None:
            # A key lives through its own millisecond and is gone at the next one.
            events.append(when + 1)
    return events


def set_time(state: ServerState, unix_ms: int) -> int:
    """Set the wall clock to ``unix_ms``, forwards (as :func:`advance`) or backwards."""
    if not 0 <= unix_ms <= MAX_TIME_MS:
        raise ClockRangeError(unix_ms)
    clock = state.clock
    now = clock.time_ms()
    if unix_ms > now:
        advance(state, unix_ms - now)
    # Land exactly on the requested millisecond (advance works on whole readings).
    clock.set(unix_ms)
    return clock.time_ms()


def reset(state: ServerState) -> None:
    """Let time run again at the system's wall-clock reading (between tests)."""
    clock = state.clock
    clock.resume()
    clock.set(time.time_ns() // 1_000_000)
