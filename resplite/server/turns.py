"""Sharing each turn of the event loop among the connections that have work left.

Theory of operation: a connection runs the requests it has read in *slices* of at most
about :data:`~resplite.server.connection.SLICE_NS` of work. What remains after a slice
waits in the connection's reader, and the connection waits here, in one queue per event
loop, for a later turn. Once per turn of the loop (a ``call_soon`` callback, so between two
polls for I/O) :meth:`Turns.next_turn` gives every waiting connection one slice, in the
order they came, until :data:`TURN_NS` of work is done; those not reached keep their place
at the head of the queue for the next turn, and a connection that still has work after its
slice goes to the back. However many clients pipeline at once, a turn of the loop does
about :data:`TURN_NS` of their work plus one slice, so the loop polls for I/O (accepts new
connections, reads their requests) that often, where one slice per client per turn would
make a turn as long as the number of busy clients times a slice (a fifth of a second with
100 of them).

Input that arrives between two turns is run at once (:meth:`Turns.admit`) while the turn
has budget left, and a small read always is (a request or a few: putting it off would cost
more than running it); past the budget, the connection waits at the *head* of the queue: a
client that had nothing waiting is served in the next turn at the latest rather than after
every busy client. The work done at once counts towards the turn (:meth:`Turns.charge`).

Invariants: a connection is in the queue at most once (its ``waiting`` flag says so; one
that closed meanwhile does nothing when its turn comes); a turn serves each waiting
connection at most once; a callback for the next turn is scheduled whenever the queue is
not empty or work was charged since the last one, so the budget is renewed once per turn of
the loop while there is work, and nothing runs while there is none.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from typing import Protocol

# The work one turn of the loop does for clients with input before it polls for I/O again.
TURN_NS = 5_000_000
_now_ns = time.perf_counter_ns


class Waiting(Protocol):
    """A connection with work left (the shell's Connection)."""

    waiting: bool

    def take_turn(self) -> None:
        """Run one slice of the work left (and wait again if some still remains)."""


class Turns:
    """The queue of connections waiting for a slice, for one event loop."""

    __slots__ = ("loop", "queue", "scheduled", "spent")

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        # None: a connection driven by hand, with no loop to share (sans-IO tests); its
        # input always runs at once and it can never wait for a turn. Held weakly: the
        # loop's entry in the registry below must not keep the loop alive.
        self.loop = None if loop is None else weakref.ref(loop)
        self.queue: deque[Waiting] = deque()
        # Work done in the current turn, in ns (renewed by next_turn).
        self.spent = 0
        self.scheduled = False

    def admit(self) -> bool:
        """Whether input that has just arrived may run now, within this turn's budget."""
        return self.spent < TURN_NS

    def charge(self, ns: int) -> None:
        """Count work done at once (see :meth:`admit`) towards this turn."""
        if self.loop is None:
            return
        self.spent += ns
        if not self.scheduled:
            self._schedule()

    def wait(self, conn: Waiting, first: bool = False) -> None:
        """Queue ``conn`` for a slice in a later turn: at the back, or at the head for a
        client whose new input this turn had no budget left for."""
        if conn.waiting:
            return
        if self.loop is None:
            raise RuntimeError("no running event loop to wait for a turn of")
        conn.waiting = True
        if first:
            self.queue.appendleft(conn)
        else:
            self.queue.append(conn)
        if not self.scheduled:
            self._schedule()

    def _schedule(self) -> None:
        loop = self.loop() if self.loop is not None else None
        if loop is not None:
            self.scheduled = True
            loop.call_soon(self.next_turn)

    def next_turn(self) -> None:
        """One turn's work: a slice for each waiting connection, in order, within budget."""
        # Still "scheduled" while it runs: connections sent to the back schedule nothing.
        self.spent = 0
        queue = self.queue
        started = _now_ns()
        try:
            # Only those waiting now: a connection sent to the back goes again next turn.
            for _ in range(len(queue)):
                if not queue:
                    break
                conn = queue.popleft()
                conn.waiting = False
                conn.take_turn()
                if _now_ns() - started >= TURN_NS:
                    break
        finally:
            # Whatever one connection's slice raised (the loop logs it), the others keep
            # their turns. The input that arrives before the next turn has what is left
            # of the budget.
            self.spent = _now_ns() - started
            self.scheduled = False
            if queue:
                self._schedule()


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Turns] = (
    weakref.WeakKeyDictionary())


# For connections driven outside any event loop.
UNSHARED = Turns(None)


def turns_of(loop: asyncio.AbstractEventLoop) -> Turns:
    """The queue of ``loop`` (every server on one loop shares it: they share its time)."""
    turns = _by_loop.get(loop)
    if turns is None:
        turns = _by_loop[loop] = Turns(loop)
    return turns
