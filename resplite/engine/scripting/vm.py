"""One Lua 5.1 state (lupa's ``lua51``) dressed as Redis's scripting environment.

Redis keeps two states: one for EVAL scripts and one for function libraries; SCRIPT FLUSH
and FUNCTION FLUSH replace theirs with a fresh one, which is the fresh-state guarantee. A
:class:`LuaVM` is one of them: the lupa runtime, created with Python's eval and builtins
unregistered and an attribute filter that refuses every attribute, then given the
environment of ``lua/sandbox.lua`` (Redis's globals, read-only tables, the ``redis`` API and
the cjson, cmsgpack, bit and struct libraries). The Python helpers the Lua side needs are
passed in once, as upvalues: no Python object is reachable from a script.

Memory is bounded by lupa's ``max_memory``: an allocation past ``lua-max-memory`` fails as
Lua's "not enough memory" error, after which a full collection (with the bound lifted for
its duration) returns the garbage.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import resources
from typing import Any

from lupa import lua51

from resplite.engine.scripting import natives

_LUA_FILES = ("sandbox", "reply", "cjson", "cmsgpack")


def _lua_source(name: str) -> str:
    return resources.files("resplite.engine.scripting").joinpath(f"lua/{name}.lua").read_text(
        encoding="utf-8"
    )


_SOURCES: dict[str, str] = {}


def _source(name: str) -> str:
    source = _SOURCES.get(name)
    if source is None:
        source = _SOURCES[name] = _lua_source(name)
    return source


def reply_encoder(runtime: Any) -> Any:
    """The C writer of a script's array replies (``_reply.c``) as a function of
    ``runtime``'s Lua state, or None where it is not built or lupa's Lua 5.1 does not export
    its C API (lua/reply.lua then writes every element in Lua, the same bytes more slowly).

    Lua's own ``package.loadlib`` loads it, before the sandbox is made: scripts never see
    ``package``, nor this function but through the reply writer."""
    try:
        from resplite.engine.scripting import _reply  # type: ignore[attr-defined]
    except ImportError:
        return None
    if not _reply.bind(lua51.__file__):
        return None
    loaded = runtime.eval("package.loadlib")(
        os.fsencode(_reply.__file__), b"resplite_encode_array"
    )
    return loaded if lua51.lua_type(loaded) == "function" else None


def _refuse_attributes(obj: object, name: object, is_setting: bool) -> object:
    raise AttributeError("Python objects are not reachable from scripts")


class LuaVM:
    """A Lua state for EVAL scripts (``mode="eval"``) or function libraries (``"function"``).

    ``helpers`` maps the names sandbox.lua reads from its ``py`` table to Python callables
    (redis.call, the hook, logging...); the natives of :mod:`natives` are added here.
    """

    # What an allocation past max_memory raises; the engine names it through its state, so
    # that lupa is imported only when the first state is made.
    memory_error: type[Exception] = lua51.LuaMemoryError
    # Whether arrays are written by the C writer where it is built (tests turn it off to
    # hold the Lua writer's bytes equal to it).
    native_replies = True

    def __init__(self, mode: str, helpers: dict[str, Any], max_memory: int) -> None:
        self.mode = mode
        self.max_memory = max_memory
        runtime = lua51.LuaRuntime(
            encoding=None,
            register_eval=False,
            register_builtins=False,
            unpack_returned_tuples=True,
            attribute_filter=_refuse_attributes,
            max_memory=max_memory or None,
        )
        self.runtime = runtime
        py: dict[bytes, Any] = {name.encode(): value for name, value in helpers.items()}
        for name, fn in natives.BIT_FUNCTIONS.items():
            py[b"bit_" + name.encode()] = fn
        for name, fn in natives.STRUCT_FUNCTIONS.items():
            py[b"struct_" + name.encode()] = fn
        py[b"mp_number"] = natives.mp_number
        py[b"mp_decode_number"] = natives.mp_decode_number
        py[b"without_tail_calls"] = natives.without_tail_calls
        if self.native_replies:
            encode_array = reply_encoder(runtime)
            if encode_array is not None:
                py[b"encode_array"] = encode_array
        libs = {
            name.encode(): runtime.execute(_source(name), name="=resplite")
            for name in ("reply", "cjson", "cmsgpack")
        }
        entry = runtime.execute(
            _source("sandbox"), mode.encode(), runtime.table_from(py),
            runtime.table_from(libs), name="=resplite",
        )
        self.entry = entry
        self.run: Callable[..., Any] = entry[b"run"]
        self.compile: Callable[..., Any] | None = entry[b"compile"]
        self.load: Callable[..., Any] | None = entry[b"load"]
        self.register_args: Callable[..., Any] | None = entry[b"register_args"]
        self._gc = entry[b"gc"]

    def memory(self) -> int:
        """Bytes the Lua state holds (INFO's used_memory_vm_*)."""
        return int(self.runtime.get_memory_used())

    def collect(self) -> None:
        """A full garbage collection, with the memory bound lifted while it runs."""
        if self.max_memory:
            self.runtime.set_max_memory(0)
        try:
            self._gc()
        finally:
            if self.max_memory:
                self.runtime.set_max_memory(self.max_memory)

    def set_max_memory(self, limit: int) -> None:
        self.max_memory = limit
        self.runtime.set_max_memory(limit)
