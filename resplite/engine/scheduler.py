"""The seam through which the engine asks for a wake-up later: the shell provides the timers.

The engine does no I/O and owns no event loop. Two of its parts need to be called back when a
clock deadline passes with nothing else happening: blocked clients' timeouts
(:mod:`resplite.engine.blocking`) and the end of a CLIENT PAUSE (:mod:`resplite.engine.pause`).
Each keeps a :class:`DeadlineTimer`, which asks the server's :class:`Scheduler` for one
callback at its earliest deadline and re-aims it whenever that deadline changes.

The asyncio shell passes a scheduler backed by its event loop; tests pass a
:class:`ManualScheduler` and run the due callbacks themselves; a state built with
:data:`NO_TIMERS` fires deadlines only when something checks them (a command, the cron or a
clock jump), which is all a sans-IO unit test needs.

Invariants: a timer holds at most one pending callback; nothing is scheduled while the clock
is frozen (a frozen clock reaches deadlines only by jumps, which the clock's listeners
handle); delays are never negative.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from resplite.engine.clock import Clock


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle | None:
        """Call ``callback`` once, about ``delay_s`` seconds from now; None if it cannot."""


class _NoTimers:
    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle | None:
        return None


NO_TIMERS: Scheduler = _NoTimers()


class _ManualHandle:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualScheduler:
    """A scheduler driven by hand: :meth:`run_due` calls what is due after ``elapsed_s``."""

    def __init__(self) -> None:
        self.now_s = 0.0
        self.pending: list[tuple[float, _ManualHandle, Callable[[], None]]] = []

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle | None:
        handle = _ManualHandle()
        self.pending.append((self.now_s + delay_s, handle, callback))
        return handle

    def run_due(self, elapsed_s: float) -> int:
        """Move this scheduler's time on and run the callbacks now due; how many ran."""
        self.now_s += elapsed_s
        due = sorted((e for e in self.pending if e[0] <= self.now_s), key=lambda e: e[0])
        self.pending = [e for e in self.pending if e[0] > self.now_s]
        ran = 0
        for _, handle, callback in due:
            if not handle.cancelled:
                callback()
                ran += 1
        return ran

    @property
    def armed(self) -> int:
        return sum(1 for _, handle, _ in self.pending if not handle.cancelled)


class DeadlineTimer:
    """One callback aimed at a clock deadline (ms), re-aimed as the deadline changes."""

    __slots__ = ("_callback", "_clock", "_handle", "scheduler")

    def __init__(self, clock: Clock, scheduler: Scheduler, callback: Callable[[], None]) -> None:
        self._clock = clock
        self.scheduler = scheduler
        self._callback = callback
        self._handle: TimerHandle | None = None

    def aim(self, when_ms: int | None) -> None:
        """Fire at ``when_ms`` (clock ms) instead of any earlier aim; None: do not fire."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if when_ms is None or self._clock.frozen:
            return
        delay = max(when_ms - self._clock.time_ms(), 0) / 1000
        self._handle = self.scheduler.call_later(delay, self._callback)
