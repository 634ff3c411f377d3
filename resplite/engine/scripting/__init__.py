"""Lua scripting and functions: EVAL, EVALSHA, SCRIPT, FUNCTION and FCALL's engine.

:mod:`engine` runs scripts (the cache, the libraries, the run in progress, BUSY and KILL);
:mod:`vm` is one Lua 5.1 state with Redis's environment (``lua/sandbox.lua``);
:mod:`convert` turns command replies into Lua values; :mod:`natives` holds the machine
arithmetic of the ``bit``, ``struct`` and ``cmsgpack`` libraries and ``math.random``;
:mod:`functions` the function libraries and FUNCTION DUMP's payload.
"""

from resplite.engine.scripting.engine import (
    NO_PUMP,
    SCRIPT_COMMANDS,
    BusyPump,
    Scripting,
    ScriptRun,
)

__all__ = ["NO_PUMP", "SCRIPT_COMMANDS", "BusyPump", "ScriptRun", "Scripting"]
