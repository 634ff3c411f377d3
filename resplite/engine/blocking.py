"""Clients parked by blocking commands, woken by key changes or timeouts.

A handler that has nothing to serve yet returns a :class:`BlockRequest`: the keys to wait on,
a timeout, a ``retry`` that re-runs the command, and the reply to give on timeout. The client
is parked, in order, on each key. Whenever a key that clients wait on is modified (written,
deleted, flushed, expired, its type changed), the key is marked ready; after the current
command finishes the server re-runs ``retry`` for the waiting clients of each ready key in
the order they blocked (as Redis 7.2+ re-executes blocked commands). A retry that returns
another BlockRequest keeps the client parked with its original deadline and place; anything
else is the client's reply.

Two refinements serve the stream commands. A request may carry ``wakes_on``, a test of the
modified key: a blocked XREAD is re-run only when its key holds a stream again (it stays
blocked across DEL or a change of type, as in Redis), while a blocked XREADGROUP, which has
none, is re-run on any change and answers NOGROUP or WRONGTYPE when its stream or group is
gone. A request may also carry ``recheck_ms``, a clock time at which the command is re-run
even if no key changed (XREADGROUP CLAIM waits for a pending entry to become idle enough);
a re-run that blocks again may set a new one.

A client may also wait on something that is not a key (WAITAOF waits for the append-only
file's fsync): it blocks on no key and whatever it waits on re-runs it with :meth:`rerun`.

Deadlines are in clock milliseconds, so freezing or advancing the clock governs timeouts. A
timer from the shell's scheduler (:mod:`resplite.engine.scheduler`) is aimed at the earliest
deadline or recheck; a clock jump re-checks at once.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from time import perf_counter_ns as _now_ns
from typing import TYPE_CHECKING, Any

from resplite.engine.scheduler import NO_TIMERS, DeadlineTimer, Scheduler
from resplite.protocol.replies import NULL_ARRAY, ErrorReply

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.clock import Clock


class BlockRequest:
    """What a handler returns to park its client."""

    __slots__ = (
        "argv",
        "keys",
        "recheck_ms",
        "retry",
        "spec",
        "spent_ns",
        "timeout_ms",
        "timeout_reply",
        "wakes_on",
    )

    def __init__(self, keys: list[bytes], timeout_ms: int, retry: Callable[[], Any],
                 timeout_reply: Any = NULL_ARRAY,
                 wakes_on: Callable[[bytes], bool] | None = None,
                 recheck_ms: int | None = None, argv: list[bytes] | None = None) -> None:
        self.keys = keys
        self.timeout_ms = timeout_ms  # relative; 0 waits for ever
        self.retry = retry
        self.timeout_reply = timeout_reply
        # Re-run only when this returns true for the modified key (None: on any change).
        self.wakes_on = wakes_on
        # Absolute clock ms at which to re-run even without a key change (None: never).
        self.recheck_ms = recheck_ms
        # The command as sent (set by the dispatcher): logged in its non-blocking form when
        # the retry changes the data set.
        self.argv: list[bytes] = [] if argv is None else argv
        # The command's spec and the time its runs took so far, set by the dispatcher when
        # a handler parks its client: the call is accounted (statistics, slow log) once it
        # ends, as Redis's updateStatsOnUnblock does. None for a client a pause holds.
        self.spec: Any = None
        self.spent_ns = 0


class BlockedState:
    """A parked client: its request, the database it blocked in and its deadline."""

    __slots__ = ("command", "db_index", "deadline_ms", "keys", "request", "seq")

    def __init__(self, request: BlockRequest, db_index: int, deadline_ms: int | None,
                 seq: int, command: str = "NULL",
                 keys: list[tuple[int, bytes]] | None = None) -> None:
        self.request = request
        self.db_index = db_index
        self.deadline_ms = deadline_ms
        self.seq = seq
        self.command = command  # the blocked command's full name, for its statistics
        self.keys: list[tuple[int, bytes]] = [] if keys is None else keys


class BlockingManager:
    def __init__(self, clock: Clock, scheduler: Scheduler = NO_TIMERS) -> None:
        self.clock = clock
        # (db, key) -> clients in the order they blocked (dict as an ordered set).
        self.waiting: dict[tuple[int, bytes], dict[Client, None]] = {}
        self.ready: dict[tuple[int, bytes], None] = {}
        self._deadlines: list[tuple[int, int, Client]] = []
        self._rechecks: list[tuple[int, int, Client]] = []
        self._seq = itertools.count()
        self._timer = DeadlineTimer(clock, scheduler, self.check_timeouts)
        self.count = 0
        # Set by the server: makes a client the one acting, returns the one acting before.
        self.acting_as: Callable[[Client | None], Client | None] | None = None
        # Runs a blocked command's retry in the server's place, so that what it changes is
        # logged (the append-only file); None runs it as is.
        self.run_retry: Callable[[Client, BlockedState, bytes | None], Any] | None = None
        # Accounts for a parked command once it has its reply (set by the server; whether
        # the reply is an error the retry did not already count).
        self.on_done: Callable[[Client, BlockRequest, bool], None] | None = None
        clock.add_listener(self.check_timeouts)

    # -- parking --------------------------------------------------------------------------

    def block(self, client: Client, request: BlockRequest) -> None:
        now = self.clock.time_ms()
        deadline = now + request.timeout_ms if request.timeout_ms > 0 else None
        seq = next(self._seq)
        state = BlockedState(request, client.db_index, deadline, seq, client.last_command)
        for key in request.keys:
            slot = (client.db_index, key)
            if slot not in state.keys:
                state.keys.append(slot)
                self.waiting.setdefault(slot, {})[client] = None
        client.blocked = state
        self.count += 1
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, seq, client))
        if request.recheck_ms is not None:
            heapq.heappush(self._rechecks, (request.recheck_ms, seq, client))
        if deadline is not None or request.recheck_ms is not None:
            self._arm()

    def unblock(self, client: Client) -> None:
        """Remove ``client`` from every wait list (served, timed out, unblocked, gone)."""
        state = client.blocked
        if state is None:
            return
        client.blocked = None
        self.count -= 1
        for slot in state.keys:
            waiters = self.waiting.get(slot)
            if waiters is not None:
                waiters.pop(client, None)
                if not waiters:
                    del self.waiting[slot]

    # -- waking ---------------------------------------------------------------------------

    def signal(self, db: int, key: bytes) -> None:
        if (db, key) in self.waiting:
            self.ready[(db, key)] = None

    def signal_db(self, db: int) -> None:
        """Mark every waited-on key of ``db`` ready (FLUSHDB, SWAPDB)."""
        for slot in self.waiting:
            if slot[0] == db:
                self.ready[slot] = None

    def serve_ready(self) -> None:
        """Re-run the commands of clients waiting on ready keys, in blocking order."""
        while self.ready:
            slot = next(iter(self.ready))
            del self.ready[slot]
            waiters = self.waiting.get(slot)
            if not waiters:
                continue
            for client in list(waiters):
                state = client.blocked
                if state is None or client not in waiters:
                    continue
                wakes_on = state.request.wakes_on
                if wakes_on is not None and not wakes_on(slot[1]):
                    continue
                queued = len(client.outbox)
                result = self._retry(client, state, slot[1])
                if isinstance(result, BlockRequest):
                    if result.recheck_ms is not None:
                        heapq.heappush(self._rechecks, (result.recheck_ms, state.seq, client))
                        self._arm()
                    continue
                self.unblock(client)
                self._done(client, state.request)
                if client.conn is not None:
                    # What the served command pushed to its own client (an invalidation of
                    # the key it wrote) follows its reply, as after any command.
                    client.pushes_first = queued
                    client.conn.deliver(result)

    def _retry(self, client: Client, state: BlockedState, key: bytes | None = None) -> Any:
        from resplite.engine.errors import CommandError
        from resplite.protocol.replies import ErrorReply

        # The re-run command is this client's: what it changes is reported as its doing
        # (NOLOOP tracking), so the server is told who acts for the time of the call.
        acting = self.acting_as
        previous = acting(client) if acting is not None else None
        started = _now_ns()
        try:
            run = self.run_retry
            return state.request.retry() if run is None else run(client, state, key)
        except CommandError as exc:
            # The command ends in an error reply after all: a failed call, as Redis
            # counts a re-executed command that fails (INFO commandstats failed_calls).
            server = client.server
            server.stats_for(state.command).failed_calls += 1
            server.count_error(exc.message)
            return ErrorReply(exc.message)
        finally:
            state.request.spent_ns += _now_ns() - started
            if acting is not None:
                acting(previous)

    def _done(self, client: Client, request: BlockRequest, failed: bool = False) -> None:
        done = self.on_done
        if done is not None:
            done(client, request, failed)

    def rerun(self, clients: list[Client]) -> None:
        """Re-run the blocked commands of ``clients`` now, in the order given: what they
        wait for is not a key (WAITAOF waits on the append-only file's fsync). A re-run that
        blocks again keeps its place and deadline; anything else is the client's reply."""
        for client in clients:
            state = client.blocked
            if state is None:
                continue
            queued = len(client.outbox)
            result = self._retry(client, state)
            if isinstance(result, BlockRequest):
                continue
            self.unblock(client)
            self._done(client, state.request)
            if client.conn is not None:
                client.pushes_first = queued
                client.conn.deliver(result)

    def wake(self, client: Client, reply: Any) -> bool:
        """Unblock ``client`` now with ``reply`` (CLIENT UNBLOCK)."""
        state = client.blocked
        if state is None:
            return False
        self.unblock(client)
        self._done(client, state.request, isinstance(reply, ErrorReply))
        if client.conn is not None:
            client.pushes_first = len(client.outbox)
            client.conn.deliver(reply)
        return True

    # -- timeouts -------------------------------------------------------------------------

    def check_timeouts(self) -> None:
        now = self.clock.time_ms()
        rechecks = self._rechecks
        due = False
        while rechecks and rechecks[0][0] <= now:
            _, seq, client = heapq.heappop(rechecks)
            state = client.blocked
            if state is None or state.seq != seq:
                continue
            # As Redis signals the stream key: every client waiting on it is re-run.
            for slot in state.keys:
                self.ready[slot] = None
            due = True
        if due:
            self.serve_ready()
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            _, seq, client = heapq.heappop(heap)
            state = client.blocked
            if state is None or state.seq != seq:
                continue  # served or re-blocked since
            self.unblock(client)
            self._done(client, state.request)
            if client.conn is not None:
                client.pushes_first = len(client.outbox)
                client.conn.deliver(state.request.timeout_reply)
        self._arm()

    def next_deadline_ms(self) -> int | None:
        """The earliest deadline or recheck of a client still blocked, in clock ms (or None)."""
        times = [heap[0][0] for heap in (self._deadlines, self._rechecks) if _prune(heap)]
        return min(times) if times else None

    def _arm(self) -> None:
        self._timer.aim(self.next_deadline_ms())


def _prune(heap: list[tuple[int, int, Client]]) -> bool:
    """Drop entries of clients served or re-blocked since; whether any entry is left."""
    while heap and (heap[0][2].blocked is None or heap[0][2].blocked.seq != heap[0][1]):
        heapq.heappop(heap)
    return bool(heap)
