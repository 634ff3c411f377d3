"""CLIENT PAUSE: holding clients' commands back until a moment on the server's clock.

While a pause is on, a command that the pause covers is not run: the client is parked with
an empty-keyed :class:`~resplite.engine.blocking.BlockRequest` (so its later input stays
buffered, unparsed, as for any blocked client) and the command is run through the
dispatcher again when the pause ends, by timeout or CLIENT UNPAUSE. As in Redis:

* ``ALL`` covers every command, the pausing client's own included (so a CLIENT UNPAUSE sent
  during an ``ALL`` pause waits for the pause to end); ``WRITE`` covers write commands, the
  commands that may replicate (PFCOUNT, which can rewrite its key, PUBLISH, ...) and an
  EXEC whose transaction holds either; MULTI queueing is held too, because the check comes
  before queueing;
* a second pause keeps the later end and the stricter mode;
* held clients count in INFO's ``blocked_clients`` (Redis blocks them, as postponed), but
  CLIENT UNBLOCK does not release them;
* expiry is paused as well: a key past its time reads as missing but is not deleted (nor
  counted in ``expired_keys``) until the pause ends, and RANDOMKEY may answer it (the
  active cycle and eviction skip their work meanwhile).

Invariants: ``active`` is true exactly while ``end_ms`` lies in the future of the clock (it is
re-checked whenever asked, on a timer, and after every clock jump); ``held`` keeps the
clients in the order they were held, each with the request that parks it, so a client that
has since disconnected or been released otherwise is recognised and skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.engine import gates
from resplite.engine.blocking import BlockRequest
from resplite.engine.scheduler import DeadlineTimer
from resplite.engine.scripting import SCRIPT_COMMANDS

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState
    from resplite.engine.table import CommandSpec


class ClientPause:
    __slots__ = ("_active", "_timer", "all", "end_ms", "held", "state")

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self._active = False
        self.all = False
        self.end_ms = 0
        self.held: dict[Client, BlockRequest] = {}
        self._timer = DeadlineTimer(state.clock, state.scheduler, self.check)
        state.clock.add_listener(self.check)

    @property
    def active(self) -> bool:
        return self._active

    @active.setter
    def active(self, value: bool) -> None:
        # Commands take the dispatcher's general path, which holds them, while it is on.
        self._active = value
        self.state.set_gate(gates.PAUSE, value)
        # Either mode pauses expiry too: keys past their time read as missing, not deleted.
        for db in self.state.keyspace.dbs:
            db.expire_paused = value

    # -- starting and ending ----------------------------------------------------------------

    def pause(self, end_ms: int, pause_all: bool) -> None:
        """Pause until ``end_ms`` (clock ms); an ongoing pause keeps a later end / ALL mode."""
        if self.active:
            self.end_ms = max(self.end_ms, end_ms)
            self.all = self.all or pause_all
        else:
            self.end_ms = end_ms
            self.all = pause_all
        self.active = self.end_ms > self.state.clock.time_ms()
        self._arm()

    def unpause(self) -> None:
        self.active = False
        self.all = False
        self.end_ms = 0
        self._arm()
        self._release()

    def check(self) -> None:
        """End the pause if its time has come (timer, clock jump, or any query)."""
        if self.active and self.state.clock.time_ms() >= self.end_ms:
            self.unpause()
        elif self.active:
            self._arm()

    # -- holding commands -------------------------------------------------------------------

    def covers(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> bool:
        """Whether ``spec`` run by ``client`` must wait for the pause to end."""
        if self.state.clock.time_ms() >= self.end_ms:
            self.unpause()
            return False
        if self.all:
            return True
        if self._writes(spec, argv):
            return True
        if spec.fullname == "exec" and client.multi:
            return any(self._writes(queued, args) for queued, args in client.multi)
        return False

    def _writes(self, spec: CommandSpec, argv: list[bytes]) -> bool:
        # A script command writes (or may replicate) as its script's flags say.
        if spec.fullname in SCRIPT_COMMANDS:
            write, _, may_replicate = self.state.scripting.command_flags(spec, argv)
            return write or may_replicate
        return spec.is_write or "may_replicate" in spec.flags

    def hold(self, client: Client, argv: list[bytes]) -> BlockRequest:
        """Park ``client``; its command runs again through the dispatcher when released."""
        dispatcher = self.state.dispatcher

        def rerun() -> Any:
            return dispatcher.execute(client, argv)

        request = BlockRequest(keys=[], timeout_ms=0, retry=rerun, timeout_reply=None)
        self.held[client] = request
        return request

    def is_holding(self, client: Client) -> bool:
        request = self.held.get(client)
        return (
            request is not None
            and client.blocked is not None
            and client.blocked.request is request
        )

    def _release(self) -> None:
        held, self.held = self.held, {}
        blocking = self.state.blocking
        for client, request in held.items():
            state = client.blocked
            if state is None or state.request is not request:
                continue  # gone, or released some other way
            blocking.unblock(client)
            queued = len(client.outbox)
            reply = request.retry()
            if isinstance(reply, BlockRequest):
                blocking.block(client, reply)  # a blocking command, or held again
            elif client.conn is not None:
                client.pushes_first = queued  # (what it pushed itself follows the reply)
                client.conn.deliver(reply)
        if blocking.ready:
            blocking.serve_ready()

    def _arm(self) -> None:
        self._timer.aim(self.end_ms if self.active else None)
