"""Lua scripting and functions: EVAL, EVALSHA, SCRIPT, FUNCTION and FCALL's engine.

:mod:`engine` runs scripts (the cache, the libraries, the run in progress, BUSY and KILL);
:mod:`vm` is one Lua 5.1 state with Redis's environment (``lua/sandbox.lua``);
:mod:`convert` turns command replies into Lua values; :mod:`natives` holds the machine
arithmetic of the ``bit``, ``struct`` and ``cmsgpack`` libraries and ``math.random``;
:mod:`functions` the function libraries and FUNCTION DUMP's payload.

This package itself holds only what the dispatcher and the shell name at start; the engine
is imported with the first script command (see ``ServerState.scripting``) and lupa with the
first Lua state, so that a server that runs no script loads neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from resplite.engine.client import Client

__all__ = ["NO_PUMP", "SCRIPT_COMMANDS", "BusyPump"]

# The commands whose flags depend on the script they run.
SCRIPT_COMMANDS = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"})


class BusyPump(Protocol):
    """What the shell provides so that other clients are served while a script runs long."""

    def serve_while_busy(self, caller: Client) -> None:
        """Answer the clients that have sent something (never ``caller``), without blocking."""

    def busy_ended(self) -> None:
        """The long script ended: the event loop serves everyone again."""


class _NoPump:
    def serve_while_busy(self, caller: Client) -> None:
        return None

    def busy_ended(self) -> None:
        return None


NO_PUMP: BusyPump = _NoPump()
