"""The server's one source of time, injectable and controllable.

Everything time-dependent reads this clock: key expiry, ``*`` stream ids, pending-entry idle
times, consumer seen/active times, BLOCK and idle timeouts, TIME and INFO uptime. Tests (and
the RESPLITE.CLOCK command) can freeze it, advance it, set it, and let it run again.

Both readings (wall and monotonic) move together: a frozen clock stops both, and advancing
adds the same amount to both. The wall reading is never moved backwards by :meth:`advance`;
:meth:`set` may move it backwards, which Redis code must tolerate anyway (a system clock can
step back), and which the stream code handles as Redis does (ids stay monotonic).

Listeners are called after every jump so that timers (blocked clients, expiry) re-evaluate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Listener = Callable[[], None]


class Clock:
    """Wall-clock and monotonic milliseconds with freeze / advance / set."""

    __slots__ = (
        "_frozen_mono", "_frozen_wall", "_listeners", "_mono_offset", "_pinned", "_wall_offset",
    )

    def __init__(self) -> None:
        self._wall_offset = 0  # ns added to the system wall clock
        self._mono_offset = 0  # ns added to the system monotonic clock
        self._frozen_wall: int | None = None  # ns, while frozen
        self._frozen_mono: int | None = None
        self._listeners: list[Listener] = []
        self._pinned = False  # held by pin(): readings stand still, the offsets do not change

    # -- readings -------------------------------------------------------------------------

    def time_ns(self) -> int:
        if self._frozen_wall is not None:
            return self._frozen_wall
        now = time.time_ns() + self._wall_offset
        if self._pinned:
            self._hold(now)
        return now

    def time_ms(self) -> int:
        """Unix time in milliseconds."""
        if self._frozen_wall is not None:
            return self._frozen_wall // 1_000_000
        now = time.time_ns() + self._wall_offset
        if self._pinned:
            self._hold(now)
        return now // 1_000_000

    def time_us(self) -> int:
        return self.time_ns() // 1_000

    def monotonic_ns(self) -> int:
        if self._frozen_mono is not None:
            return self._frozen_mono
        mono = time.monotonic_ns() + self._mono_offset
        if self._pinned:
            self._frozen_wall = time.time_ns() + self._wall_offset
            self._frozen_mono = mono
        return mono

    def monotonic_ms(self) -> int:
        # Spelled out rather than through monotonic_ns: read once per batch of requests.
        if self._frozen_mono is not None:
            return self._frozen_mono // 1_000_000
        if self._pinned:
            return self.monotonic_ns() // 1_000_000
        return (time.monotonic_ns() + self._mono_offset) // 1_000_000

    def _hold(self, wall_ns: int) -> None:
        """The first reading while pinned: both readings stand still from here."""
        self._frozen_wall = wall_ns
        self._frozen_mono = time.monotonic_ns() + self._mono_offset

    @property
    def frozen(self) -> bool:
        return self._frozen_wall is not None and not self._pinned

    def pin(self) -> bool:
        """Hold both readings until :meth:`unpin` (a script's time stands still, as in
        Redis 7): the first reading after pin() is taken and then answered again. Answers
        whether this call pinned the clock: a frozen or already pinned clock is left alone.
        Time keeps running underneath, so after unpin() readings are what they would have
        been. Nothing is read until something asks, so a script that never looks at the
        time pays nothing for it."""
        if self._frozen_wall is not None or self._pinned:
            return False
        self._pinned = True
        return True

    def unpin(self) -> None:
        if self._pinned:
            self._frozen_wall = self._frozen_mono = None
            self._pinned = False

    # -- control --------------------------------------------------------------------------

    def freeze(self) -> None:
        """Stop time at its current reading."""
        if self._pinned:
            self.unpin()
        if self._frozen_wall is None:
            self._frozen_wall = self.time_ns()
            self._frozen_mono = self.monotonic_ns()

    def resume(self) -> None:
        """Let time run again from the current reading (no jump)."""
        if self._frozen_wall is None or self._frozen_mono is None or self._pinned:
            return
        self._wall_offset = self._frozen_wall - time.time_ns()
        self._mono_offset = self._frozen_mono - time.monotonic_ns()
        self._frozen_wall = self._frozen_mono = None
        self._notify()

    def advance(self, ms: int) -> None:
        """Move time forward by ``ms`` milliseconds (frozen or running)."""
        if ms < 0:
            raise ValueError("the clock only advances forwards")
        delta = ms * 1_000_000
        self._jump(delta, delta)

    def set(self, unix_ms: int) -> None:
        """Set the wall clock to ``unix_ms``; monotonic time moves by the same amount if forward."""
        delta = unix_ms * 1_000_000 - self.time_ns()
        self._jump(delta, max(delta, 0))

    def _jump(self, wall_ns: int, mono_ns: int) -> None:
        """Move the readings by these amounts, frozen or running, and tell the listeners."""
        if self._pinned:
            self._wall_offset += wall_ns
            self._mono_offset += mono_ns
        if self._frozen_wall is not None and self._frozen_mono is not None:
            self._frozen_wall += wall_ns
            self._frozen_mono += mono_ns
        else:
            self._wall_offset += wall_ns
            self._mono_offset += mono_ns
        self._notify()

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()
