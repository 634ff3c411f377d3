"""Running scripts and functions: the script cache, the libraries, and one run at a time.

Theory of operation
-------------------

EVAL compiles a script once into the EVAL Lua state and caches it by SHA1; EVALSHA finds it
again; FCALL finds a function registered by a library in the functions' Lua state. Either
way a :class:`ScriptRun` is prepared (Redis's checks of the script's flags against the
command and the server: ``*_RO`` commands, ``no-writes``, ``allow-oom``, ``no-cluster``) and
the Lua code runs synchronously on the caller's turn, so nothing else interleaves with it:
the connection answers blocked clients woken by the script's writes only after the EVAL
returns, as Redis serves them after the command.

``redis.call`` arrives in :meth:`Scripting._command`: the arguments become an argv, the
command is looked up in the server's table, Redis's script checks apply (unknown command,
arity, ``noscript``, writes from read-only scripts, ``denyoom`` commands when memory was
over ``maxmemory`` at the start and nothing was written yet), then the engine's dispatcher
runs it for the script client, which never blocks (a blocking command answers as on
timeout). The reply is converted by :mod:`convert`.

Time is pinned at the script's start: every reading of the server clock during the script
(expiry decisions, ``*`` ids, TIME) is that instant, as Redis 7 uses the script's start time.

Long scripts: a Lua count hook calls :meth:`Scripting._hook` every 100,000 instructions of
the script's main thread or of any coroutine it made. Once a script has run past
``busy-reply-threshold`` milliseconds (real time) it is *timed out*: from then on the hook
hands control to the shell's :class:`BusyPump` on every call,
which serves other clients meanwhile (they get ``-BUSY`` except for SCRIPT KILL, FUNCTION
KILL, SHUTDOWN NOSAVE and the other ``allow-busy`` commands). SCRIPT/FUNCTION KILL sets the
run's kill flag, which the next hook call turns into an error the script cannot catch;
a script that has written is ``UNKILLABLE``. SHUTDOWN NOSAVE ends it regardless. The writing
of the script's value as its reply (``lua/reply.lua``, in Lua) is part of the run: the hook
goes on meanwhile, so a huge table's writing serves other clients once busy, and a kill
ends it with the kill's error in place of the data.

Invariants: at most one run exists (``running``); the clock is unpinned and the run cleared
whatever way the script ends; no Python object is ever handed to Lua (only bytes, numbers,
booleans, None and Lua tables built for the purpose).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from resplite.algorithms.keyslot import key_slot
from resplite.algorithms.numbers import parse_int
from resplite.algorithms.scores import d2string
from resplite.engine import acl, compat, errors
from resplite.engine.cluster import CROSSSLOT, TRYAGAIN
from resplite.engine.errors import CommandError
from resplite.engine.info import bytes_to_human
from resplite.engine.keyspecs import command_keys
from resplite.engine.scripting import NO_PUMP, BusyPump, convert, functions
from resplite.engine.scripting.functions import FunctionInfo, Library, LibraryContext
from resplite.protocol.replies import ErrorReply, Raw, Status

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.cluster import ClusterNode
    from resplite.engine.scripting.natives import Lrand48
    from resplite.engine.scripting.vm import LuaVM
    from resplite.engine.state import ServerState
    from resplite.engine.table import CommandSpec

log = logging.getLogger("resplite.scripting")

SCRIPT_FLAGS = ("no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys")
KILL_TEXT = b"ERR Script killed by user with SCRIPT KILL..."
LOAD_TIMEOUT_TEXT = b"ERR FUNCTION LOAD timeout"
LOAD_TIMEOUT_MS = 500
# Redis 7.4 keeps at most this many scripts that EVAL (not SCRIPT LOAD) brought in.
EVAL_SCRIPTS_KEPT = 500

_HOOK_FAIL, _FAIL_RAW, _ERROR, _STATUS, _ENCODED, _BOOLEAN = 1, 2, 3, 4, 5, 6
_NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
_BUSY_EVAL = (
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
)
_BUSY_FUNCTION = (
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)
_INT64_MIN = -(1 << 63)
_LOG_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.WARNING}
_VERBOSITY = {"debug": 0, "verbose": 1, "notice": 2, "warning": 3, "nothing": 4}


def _command_argv(args: tuple[Any, ...]) -> list[bytes] | None:
    """A redis.call argument list as a command's argv (numbers as Lua prints them), or None
    when an argument is neither a string nor a number."""
    argv: list[bytes] = []
    for arg in args:
        cls = arg.__class__
        if cls is bytes:
            argv.append(arg)
        elif cls is int or cls is float:
            from resplite.engine.scripting import natives

            argv.append(natives.argument_bytes(arg))
        else:
            return None
    return argv


class Script:
    """A script in the cache, compiled."""

    __slots__ = ("body", "evicted_by_lru", "flags", "function", "sha")

    def __init__(self, sha: bytes, body: bytes, flags: frozenset[str] | None, function: Any,
                 evicted_by_lru: bool) -> None:
        self.sha = sha
        self.body = body
        self.flags = flags  # None: no shebang (Redis's compatibility mode)
        self.function = function  # the compiled Lua chunk
        self.evicted_by_lru = evicted_by_lru  # brought in by EVAL: the 500-script limit


class ScriptRun:
    """One script or function on its way: who called, what it may do, what it did.

    The engine keeps one and refills it for every run (runs never nest)."""

    __slots__ = (
        "allow_oom", "argv", "caller", "cross_slot", "eval_mode", "killed", "name",
        "oom_at_start", "read_only", "resp", "slot", "start_ns", "timed_out", "write_dirty",
    )

    def __init__(self, caller: Client, argv: list[bytes], name: bytes, eval_mode: bool,
                 read_only: bool, allow_oom: bool, oom_at_start: bool, start_ns: int) -> None:
        self.caller = caller
        self.argv = argv
        self.name = name  # the SHA1 of a script, the name of a function
        self.eval_mode = eval_mode
        self.read_only = read_only
        self.allow_oom = allow_oom
        self.oom_at_start = oom_at_start
        self.start_ns = start_ns
        self.resp = 2
        self.timed_out = False
        self.killed = False
        self.write_dirty = False
        # Cluster nodes: whether keys of several slots may be used (scripts without a
        # shebang, or allow-cross-slot-keys) and the slot used so far (-1: none; the
        # declared keys' slot to begin with).
        self.cross_slot = True
        self.slot = -1


def parse_shebang(body: bytes) -> tuple[frozenset[str] | None, int]:
    """(flags or None without a shebang, shebang length) or CommandError, as Redis checks."""
    if not body.startswith(b"#!"):
        return None, 0
    end = body.find(b"\n")
    if end < 0:
        raise CommandError("ERR Invalid script shebang")
    parts = functions._split_args(body[:end])
    if not parts:
        raise CommandError("ERR Invalid engine in script shebang")
    if parts[0] != b"#!lua":
        raise CommandError("ERR Unexpected engine in script shebang: " + _text(parts[0]))
    flags: set[str] = set()
    for part in parts[1:]:
        if not part.startswith(b"flags="):
            raise CommandError("ERR Unknown lua shebang option: " + _text(part))
        spec = part[6:]
        if not spec:
            continue
        for flag in spec.split(b","):
            name = flag.decode("latin-1")
            if name not in SCRIPT_FLAGS:
                raise CommandError("ERR Unexpected flag in script shebang: " + _text(flag))
            flags.add(name)
    return frozenset(flags), end


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _flat(raw: bytes) -> bytes:
    return raw.replace(b"\r", b" ").replace(b"\n", b" ")


class Scripting:
    """Scripts, functions and the run in progress, for one server."""

    def __init__(self, state: ServerState, pump: BusyPump = NO_PUMP) -> None:
        self.state = state
        self.pump = pump
        # DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call the commands flagged noscript
        # (Redis's own tests use it to reach DEBUG and CLIENT from a script).
        self.allow_noscript = False
        self.scripts: dict[bytes, Script] = {}
        self._lru: OrderedDict[bytes, None] = OrderedDict()
        self.scripts_bytes = 0
        self.evicted_scripts = 0
        self.libraries = LibraryContext()
        self.running: ScriptRun | None = None
        self._run: ScriptRun | None = None  # made on the first run, refilled for each
        # math.random's generator, made with the first Lua state (lupa is imported then).
        self.rand: Lrand48 | None = None
        self._eval_vm: LuaVM | None = None
        self._function_vm: LuaVM | None = None
        self._client: Client | None = None
        self.reply_had_errors = False  # the reply being made holds an error (see _reply)
        self._parser_eval: convert.ReplyParser | None = None
        self._parser_function: convert.ReplyParser | None = None
        self._parser: convert.ReplyParser | None = None
        # FUNCTION LOAD in progress: (library being filled, start ns, timeout ms)
        self._loading: tuple[Library, int, int] | None = None
        # A cluster node: whether the script command's caller sent ASKING just before (the
        # dispatcher sets it before the run; its redis.calls route as the caller would).
        self.asking = False
        state.config.on_change("lua-max-memory", self._set_max_memory)

    # -- the two Lua states ------------------------------------------------------------------

    def _helpers(self) -> dict[str, Any]:
        if self.rand is None:
            from resplite.engine.scripting.natives import Lrand48

            self.rand = Lrand48()
        version = compat.reported(self.state.config["redis-compat-version"])
        return {
            "command": self._command,
            "command_packed": self._command_packed,
            "setresp": self._setresp,
            "set_repl": self._set_repl,
            "log": self._log,
            "sha1hex": lambda s: hashlib.sha1(s).hexdigest().encode(),
            "acl_check": self._acl_check,
            "rand": self.rand.random,
            "srand": self.rand.seed,
            "hook": self._hook,
            "register_function": self._register_function,
            "version": version.encode(),
            "version_num": compat.version_num(version),
            "cjson_array_mt": compat.follows(
                self.state.config["redis-compat-version"], "cjson-array-mt"),
            "os_clock": time.process_time if compat.follows(
                self.state.config["redis-compat-version"], "lua-os-clock") else None,
            # Lua hands an integral number over as a Python int.
            "d2string": (lambda d: d2string(float(d))) if compat.follows(
                self.state.config["redis-compat-version"], "double-d2string") else None,
        }

    @property
    def eval_vm(self) -> LuaVM:
        vm = self._eval_vm
        if vm is None:
            from resplite.engine.scripting.vm import LuaVM

            vm = self._eval_vm = LuaVM("eval", self._helpers(), self._max_memory())
            self._parser_eval = convert.ReplyParser(vm.runtime)
        return vm

    @property
    def function_vm(self) -> LuaVM:
        vm = self._function_vm
        if vm is None:
            from resplite.engine.scripting.vm import LuaVM

            vm = self._function_vm = LuaVM("function", self._helpers(), self._max_memory())
            self._parser_function = convert.ReplyParser(vm.runtime)
        return vm

    def _max_memory(self) -> int:
        return int(self.state.config["lua-max-memory"])

    def _set_max_memory(self, name: str, value: int) -> None:
        for vm in (self._eval_vm, self._function_vm):
            if vm is not None:
                vm.set_max_memory(value)

    @property
    def client(self) -> Client:
        """The client scripts run their commands as (never blocks, never listed)."""
        found = self._client
        if found is None:
            from resplite.engine.client import Client

            found = self._client = Client(self.state, 0, None)
            found.is_script = True
            found.set_authenticated(True)
            found.name = b""
        return found

    # -- the EVAL script cache ---------------------------------------------------------------

    def find_script(self, sha: bytes) -> Script | None:
        return self.scripts.get(sha.lower())

    def create_script(self, body: bytes, *, from_eval: bool) -> Script:
        """The cached script for ``body``, compiling it if needed (Redis's luaCreateFunction)."""
        sha = hashlib.sha1(body).hexdigest().encode()
        found = self.scripts.get(sha)
        if found is not None:
            return found
        flags, shebang_len = parse_shebang(body)
        vm = self.eval_vm
        compile_ = vm.compile
        assert compile_ is not None
        try:
            compiled = compile_(body[shebang_len:])
        except vm.memory_error:
            vm.collect()
            raise CommandError(self._memory_error(b"(new function)")) from None
        fn, problem = (compiled if isinstance(compiled, tuple) else (compiled, None))
        if fn is None:
            text = _flat(problem or b"").strip()
            raise CommandError("ERR Error compiling script (new function): " + _text(text))
        script = Script(sha, body, flags, fn, from_eval)
        if from_eval:
            while len(self._lru) >= EVAL_SCRIPTS_KEPT:
                oldest, _ = self._lru.popitem(last=False)
                self._forget(oldest)
                self.evicted_scripts += 1
            self._lru[sha] = None
        self.scripts[sha] = script
        self.scripts_bytes += len(sha) + len(body)
        return script

    def _forget(self, sha: bytes) -> None:
        script = self.scripts.pop(sha, None)
        if script is not None:
            self.scripts_bytes -= len(sha) + len(script.body)

    def script_exists(self, shas: list[bytes]) -> list[int]:
        return [1 if sha.lower() in self.scripts else 0 for sha in shas]

    def flush_scripts(self) -> None:
        """SCRIPT FLUSH: every script forgotten and a fresh Lua state for the next one."""
        self.scripts.clear()
        self._lru.clear()
        self.scripts_bytes = 0
        self._eval_vm = None
        self._parser_eval = None

    # -- EVAL / EVALSHA / FCALL ----------------------------------------------------------------

    def evalsha(self, client: Client, argv: list[bytes]) -> Any:
        """EVALSHA: the common case (a cached script without a shebang, a one-digit numkeys,
        no maxmemory to check) goes straight to the run; anything else through eval()."""
        script = self.scripts.get(argv[1])
        if script is not None and script.flags is None and not self.state.maxmemory:
            nk = argv[2]
            if len(nk) == 1 and 48 <= nk[0] <= 57 and nk[0] - 48 <= len(argv) - 3:
                if script.evicted_by_lru and script.sha in self._lru:
                    self._lru.move_to_end(script.sha)
                run = self._run or self._new_run(client)
                run.caller = client
                run.argv = argv
                run.name = script.sha
                run.eval_mode = True
                run.read_only = run.allow_oom = run.oom_at_start = False
                run.start_ns = time.monotonic_ns()
                run.resp = 2
                run.timed_out = run.killed = run.write_dirty = False
                run.cross_slot = True
                return self._execute(self._eval_vm or self.eval_vm, script.function, run,
                                     nk[0] - 48, argv)
        return self.eval(client, argv, by_sha=True, read_only=False)

    def eval(self, client: Client, argv: list[bytes], *, by_sha: bool, read_only: bool) -> Any:
        source = argv[1]
        if by_sha and len(source) != 40:
            raise CommandError(_NOSCRIPT)
        nkeys = self._numkeys(argv, errors.NOT_INTEGER)
        if by_sha:
            script = self.scripts.get(source) or self.scripts.get(source.lower())
            if script is None:
                raise CommandError(_NOSCRIPT)
        else:
            script = self.create_script(source, from_eval=True)
        if script.evicted_by_lru and script.sha in self._lru:
            self._lru.move_to_end(script.sha)
        run = self._prepare(client, argv, script.flags, read_only, script.sha, eval_mode=True,
                            nkeys=nkeys)
        return self._execute(self.eval_vm, script.function, run, nkeys, argv)

    def fcall(self, client: Client, argv: list[bytes], *, read_only: bool) -> Any:
        fn = self.libraries.functions.get(argv[1].lower())
        if fn is None:
            raise CommandError("ERR Function not found")
        nkeys = self._numkeys(argv, "ERR Bad number of keys provided")
        run = self._prepare(client, argv, frozenset(fn.flags), read_only, fn.name,
                            eval_mode=False, nkeys=nkeys)
        return self._execute(self.function_vm, fn.callback, run, nkeys, argv)

    @staticmethod
    def _numkeys(argv: list[bytes], not_a_number: str) -> int:
        arg = argv[2]
        if len(arg) == 1 and 48 <= arg[0] <= 57 and arg[0] - 48 <= len(argv) - 3:
            return arg[0] - 48  # the common case: a digit, and that many arguments at least
        nkeys = parse_int(arg)
        if nkeys is None:
            raise CommandError(not_a_number)
        if nkeys > len(argv) - 3:
            raise CommandError(errors.NUMKEYS_TOO_MANY)
        if nkeys < 0:
            raise CommandError("ERR Number of keys can't be negative")
        return nkeys

    def _prepare(
        self,
        client: Client,
        argv: list[bytes],
        flags: frozenset[str] | None,
        read_only: bool,
        name: bytes,
        *,
        eval_mode: bool,
        nkeys: int,
    ) -> ScriptRun:
        """scriptPrepareForRun: refuse what the flags forbid, else describe the run."""
        state = self.state
        oom = bool(state.maxmemory) and state.over_maxmemory()
        if flags is not None:
            if "no-cluster" in flags and (state.cluster is not None
                                          or state.config["cluster-enabled"]):
                raise CommandError("ERR Can not run script on cluster, 'no-cluster' flag is set.")
            if "no-writes" not in flags and read_only:
                raise CommandError(
                    "ERR Can not execute a script with write flag using *_ro command."
                )
            if oom and not ({"allow-oom", "no-writes"} & flags):
                raise CommandError(
                    "OOM allow-oom flag is not set on the script, can not run it when used "
                    "memory > 'maxmemory'"
                )
            read_only = read_only or "no-writes" in flags
        run = self._run or self._new_run(client)
        run.caller = client
        run.argv = argv
        run.name = name
        run.eval_mode = eval_mode
        run.read_only = read_only
        run.allow_oom = flags is not None and "allow-oom" in flags
        run.oom_at_start = oom
        run.start_ns = time.monotonic_ns()
        run.resp = 2
        run.timed_out = run.killed = run.write_dirty = False
        run.cross_slot = flags is None or "allow-cross-slot-keys" in flags
        # The dispatcher refused declared keys of several slots (CROSSSLOT) already.
        run.slot = key_slot(argv[3]) if nkeys and state.cluster is not None else -1
        return run

    def _new_run(self, client: Client) -> ScriptRun:
        run = self._run = ScriptRun(client, [], b"", True, False, False, False, 0)
        return run

    def _execute(self, vm: LuaVM, fn: Any, run: ScriptRun, nkeys: int, argv: list[bytes]) -> Any:
        state = self.state
        caller = run.caller
        script_client = self._client or self.client
        if script_client.db_index != caller.db_index:
            script_client.select(caller.db_index)
        script_client.set_resp(2)
        # Commands run as the caller's user, as Redis's script client does: what a command
        # checks itself (SORT's BY and GET patterns) sees the caller's permissions.
        script_client.user, script_client.acl = caller.user, caller.acl
        self._parser = self._parser_eval if run.eval_mode else self._parser_function
        self.running = run
        clock = state.clock
        pinned = clock.pin()
        aof = state.aof if state.propagating else None
        if aof is not None:
            aof.hold()
        try:
            result = vm.run(fn, caller.resp, nkeys, *argv[3:])
        except vm.memory_error:
            vm.collect()
            raise CommandError(self._memory_error(run.name)) from None
        finally:
            if pinned:
                clock.unpin()
            self.running = None
            if aof is not None:
                aof.release(caller)
            if run.timed_out:
                self.pump.busy_ended()
        cls = result.__class__
        if cls is not bytes and cls is not int:
            self.reply_had_errors = False
            result = self._reply(result, run, vm)
            # The EVAL failed when its reply is an error or holds some, as Redis counts it;
            # an error its script caught with redis.pcall and did not return is only the
            # failure of the command that made it.
            if result.__class__ is ErrorReply or self.reply_had_errors:
                state.stats_for(caller.last_command).failed_calls += 1
        return result

    def _memory_error(self, name: bytes) -> str:
        return (
            f"ERR Error running script {_text(name)}, not enough memory: the script reached "
            f"lua-max-memory ({self._max_memory()} bytes)"
        )

    def _reply(self, result: Any, run: ScriptRun, vm: LuaVM) -> Any:
        cls = result.__class__
        if cls is bytes or cls is int or result is None:
            return result
        if cls is float:
            from resplite.engine.scripting import natives

            return natives.c_int64(result)
        kind = result[0]
        if kind == _ENCODED:
            if result[2] is not None:
                self.reply_had_errors = True
                for text in result[2].values():
                    if text is not False:  # (False: an error counted already)
                        self.state.count_error(_text(_flat(text)))
            return Raw(result[1])
        if kind == _STATUS:
            return Status(_text(_flat(result[1])))
        if kind == _BOOLEAN:
            value, script_resp = result[1], result[2]
            if script_resp == 2:
                return 1 if value else None
            return bool(value)
        if kind == _ERROR:
            returned = _text(_flat(result[1]))
            if result[2]:
                return ErrorReply(returned)
            raise CommandError(returned)
        if kind == _FAIL_RAW:
            detail = result[1] if result.__class__ is tuple and len(result) > 1 else None
            if detail == b"not enough memory":
                vm.collect()
                raise CommandError(self._memory_error(run.name))
            cause = detail if isinstance(detail, bytes) else b"execution failure"
            raise CommandError(
                "ERR Error running script " + _text(run.name) + ", " + _text(_flat(cause[:100]))
            )
        # A raised error: {err=..., source=..., line=...}. (Redis 7.0 crashes on an error
        # table without err; an error reply is kinder.)
        _, msg, source, line, ignore = result
        message = _as_bytes(msg) if msg is not None else b"ERR unknown error"
        if source is not None and line is not None:
            message += (
                b" script: " + run.name + b", on " + _as_bytes(source) + b":" + _as_bytes(line)
                + b"."
            )
        final = _text(_flat(message))
        if ignore:
            return ErrorReply(final)
        raise CommandError(final)

    # -- what scripts call ---------------------------------------------------------------------

    def _command_packed(self, count: Any, packed: Any) -> Any:
        """redis.call / redis.pcall with more arguments than a call from Lua into Python
        can carry (lupa's stops short of Lua's 8000 C-stack slots): ``count`` of them, in
        the table ``packed``."""
        return self._command(*[packed[i] for i in range(1, int(count) + 1)])

    def _command(self, *args: Any) -> Any:
        """redis.call / redis.pcall: answers the Lua value, or (value, kind) for the Lua side."""
        run = self.running
        if not args:
            return b"ERR Please specify at least one argument for this redis lib call", \
                convert.PLAIN_ERROR_KIND
        argv = _command_argv(args)
        if argv is None:
            return b"ERR Lua redis lib command arguments must be strings or integers", \
                convert.PLAIN_ERROR_KIND
        if run is None:
            return b"ERR redis.call/pcall can only be called inside a script invocation", \
                convert.PLAIN_ERROR_KIND
        state = self.state
        dispatcher = state.dispatcher
        spec = dispatcher.fast.get(argv[0]) or state.table.get(argv[0].lower())
        if spec is None:
            return self._refuse(None, "ERR Unknown Redis command called from script")
        if spec.subcommands:
            if len(argv) < 2:
                return self._refuse(spec, "ERR Wrong number of args calling Redis command from "
                                          "script")
            sub = spec.subcommands.get(argv[1].lower())
            if sub is None:
                return self._refuse(None, "ERR Unknown Redis command called from script")
            spec = sub
        arity = spec.arity
        n = len(argv)
        if (arity > 0 and n != arity) or n < -arity:
            return self._refuse(spec, "ERR Wrong number of args calling Redis command from script")
        flags = spec.flags
        if "noscript" in flags and not self.allow_noscript:
            return self._refuse(spec, "ERR This Redis command is not allowed from script")
        user = run.caller.acl
        if user is not None:
            result, pos = acl.check_command(user, spec, argv)
            if result != acl.OK:
                denied = spec.fullname.encode() if result == acl.DENIED_CMD else argv[pos]
                state.log_acl_denial(run.caller, result, denied, context="lua")
                return self._refuse(spec, errors.ACL_SCRIPT_FAILURE
                                    + acl.denial_message(result, user, spec, denied))
        if run.read_only and (spec.is_write or "may_replicate" in flags):
            return self._refuse(spec, "ERR Write commands are not allowed from read-only scripts.")
        if spec.is_write and not run.write_dirty and state.writes_refused:
            refusal = state.persistence.refusal(run.caller)
            if refusal is not None:
                return self._refuse(spec, refusal)
        if (
            spec.is_denyoom
            and run.oom_at_start
            and not run.allow_oom
            and not run.write_dirty
            and state.maxmemory
        ):
            return self._refuse(spec, errors.OOM)
        if spec.is_write:
            run.write_dirty = True
        node = state.cluster
        if node is not None:
            refused = self._cluster_refusal(run, spec, argv, node)
            if refused is not None:
                return self._refuse(spec, refused)
        reply = dispatcher.call(self._client or self.client, spec, argv)
        run.caller.commands_processed += 1  # a script's call is its caller's (tot-cmds)
        if run.caller.tracking is not None and "readonly" in flags:
            # Client-side caching: the keys a script reads are the caller's reads.
            state.tracking.remember(run.caller, spec, argv)
        cls = reply.__class__
        if cls is bytes or cls is int:
            return reply
        return convert.to_lua(reply, run.resp, self._parser)

    def _cluster_refusal(self, run: ScriptRun, spec: CommandSpec, argv: list[bytes],
                         node: ClusterNode) -> str | None:
        """scriptVerifyClusterState: a command on keys this node does not serve, or (unless
        the script allows it) on another slot than the script used before."""
        keys = [argv[ref.pos] for ref in command_keys(spec, argv)]
        if not keys:
            return None
        db = (self._client or self.client).db
        route = node.route(keys, [db.peek(key) is not None for key in keys], self.asking)
        if route is not None:
            if route == CROSSSLOT:
                return (f"ERR Command '{spec.fullname}' in script attempted to access keys "
                        "that don't hash to the same slot")
            if route == TRYAGAIN:
                return (f"ERR Unable to execute command '{spec.fullname}' in script because "
                        "undeclared keys were accessed during rehashing of the slot")
            return "ERR Script attempted to access a non local key in a cluster node"
        if not run.cross_slot:
            slot = key_slot(keys[0])
            if run.slot == -1:
                run.slot = slot
            elif run.slot != slot:
                return "ERR Script attempted to access keys that do not hash to the same slot"
        return None

    def _refuse(self, spec: CommandSpec | None, message: str) -> tuple[bytes, int]:
        """A command refused by the script checks: counted as Redis counts a rejection."""
        state = self.state
        state.count_error(message)
        if spec is not None:
            state.stats_for(spec.fullname).rejected_calls += 1
        return convert.error_text(message), convert.ERROR_KIND

    def _setresp(self, resp: int) -> None:
        run = self.running
        if run is not None:
            run.resp = resp
            self.client.set_resp(resp)

    def _set_repl(self, flags: int) -> None:
        """redis.set_repl: whether the script's next writes reach the append-only file
        (REPL_AOF; there are no replicas)."""
        if self.running is not None:
            self.state.aof.dropping = not flags & 1

    def _log(self, level: int, message: bytes) -> None:
        if level < _VERBOSITY.get(self.state.config["loglevel"], 2):
            return
        log.log(_LOG_LEVELS[level], "%s", _text(message))

    def _acl_check(self, *args: Any) -> Any:
        if not args:
            return b"Please specify at least one argument for this redis lib call", 1
        argv = _command_argv(args)
        if argv is None:
            return b"Lua redis lib command arguments must be strings or integers", 1
        dispatcher = self.state.dispatcher
        found = dispatcher.lookup(argv)
        if isinstance(found, str):
            if len(argv) == 1 and argv[0].lower() in dispatcher.table:
                # A container named alone: Redis finds it, and its arity refuses it.
                return b"Wrong number of args for redis.acl_check_cmd()", 1
            return b"Invalid command passed to redis.acl_check_cmd()", 1
        arity, n = found.arity, len(argv)
        if (arity > 0 and n != arity) or n < -arity:
            return b"Wrong number of args for redis.acl_check_cmd()", 1
        run = self.running
        user = run.caller.acl if run is not None else None
        if user is None:
            return True  # a user without restrictions
        return acl.check_command(user, found, argv)[0] == acl.OK

    def _hook(self) -> bytes | None:
        """Called from Lua every 100,000 instructions: the kill verdict, or None to go on."""
        run = self.running
        if run is None:
            loading = self._loading
            if loading is not None and loading[2] > 0:
                elapsed_ms = (time.monotonic_ns() - loading[1]) // 1_000_000
                if elapsed_ms > loading[2]:
                    return LOAD_TIMEOUT_TEXT
            return None
        if run.killed:
            return KILL_TEXT
        if not run.timed_out:
            threshold = self.state.config["busy-reply-threshold"]
            if threshold <= 0:
                return None
            elapsed_ms = (time.monotonic_ns() - run.start_ns) // 1_000_000
            if elapsed_ms < threshold:
                return None
            run.timed_out = True
            log.warning(
                "Slow script detected: still in execution after %d milliseconds. You can try "
                "killing the script using the %s command. Script name is: %s.",
                elapsed_ms, "SCRIPT KILL" if run.eval_mode else "FUNCTION KILL", _text(run.name),
            )
        self.pump.serve_while_busy(run.caller)
        # Read the flag anew, through self.running: a SCRIPT KILL served just now may have
        # set it, but type checkers (and mypyc, which checks the result) still take
        # run.killed for the False tested above, and this expression for None.
        running = self.running
        return KILL_TEXT if running is not None and running.killed else None

    # -- while a script runs -------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether a script has run past busy-reply-threshold (other clients get -BUSY)."""
        run = self.running
        return run is not None and run.timed_out

    def busy_error(self) -> str:
        run = self.running
        return _BUSY_EVAL if run is None or run.eval_mode else _BUSY_FUNCTION

    def kill(self, *, from_eval: bool) -> None:
        """SCRIPT KILL (``from_eval``) or FUNCTION KILL; raises Redis's refusals."""
        run = self.running
        if run is None:
            raise CommandError("NOTBUSY No scripts in execution right now.")
        if run.write_dirty:
            raise CommandError(
                "UNKILLABLE Sorry the script already executed write commands against the "
                "dataset. You can either wait the script termination or kill the server in a "
                "hard way using the SHUTDOWN NOSAVE command."
            )
        if from_eval and not run.eval_mode:
            raise CommandError(_BUSY_FUNCTION)
        if not from_eval and run.eval_mode:
            raise CommandError(_BUSY_EVAL)
        run.killed = True

    def abort(self) -> None:
        """End the running script at its next hook call, whatever it wrote (SHUTDOWN NOSAVE)."""
        if self.running is not None:
            self.running.killed = True

    def command_flags(self, spec: CommandSpec, argv: list[bytes]) -> tuple[bool, bool, bool]:
        """(write, denyoom, may_replicate) of a script command as its script declares them
        (Redis's evalGetCommandFlags / fcallGetCommandFlags); the spec's own otherwise."""
        # EVAL, EVALSHA and FCALL are may-replicate (their _RO forms are not); a script's
        # declared flags say otherwise.
        base = (spec.is_write, spec.is_denyoom, "may_replicate" in spec.flags)
        name = spec.fullname
        flags: frozenset[str] | None
        if name in ("fcall", "fcall_ro"):
            if len(argv) < 2:
                return base
            fn = self.libraries.functions.get(argv[1].lower())
            if fn is None:
                return base
            flags = frozenset(fn.flags)
        else:
            if len(argv) < 2:
                return base
            if name.startswith("evalsha"):
                if len(argv[1]) != 40:
                    return base
                script = self.find_script(argv[1])
                if script is None:
                    return base
                flags = script.flags
            else:
                script = self.scripts.get(hashlib.sha1(argv[1]).hexdigest().encode())
                if script is not None:
                    flags = script.flags
                else:
                    try:
                        flags, _ = parse_shebang(argv[1])
                    except CommandError:
                        return base
            if flags is None:
                return base
        no_writes = "no-writes" in flags
        return (not no_writes, not (no_writes or "allow-oom" in flags), False)

    # -- function libraries ----------------------------------------------------------------------

    def load_library(self, code: bytes, *, replace: bool, into: LibraryContext | None = None,
                     timeout_ms: int = LOAD_TIMEOUT_MS) -> bytes:
        """Compile and register a library (FUNCTION LOAD); answers its name."""
        ctx = self.libraries if into is None else into
        engine, name, body = functions.extract_metadata(code)
        if not functions.valid_name(name):
            raise CommandError(functions.NAME_RULES)
        if engine.lower() != b"lua":
            raise CommandError(f"ERR Engine '{_text(engine)}' not found")
        old = ctx.libraries.get(name)
        if old is not None and not replace:
            raise CommandError(f"ERR Library '{_text(name)}' already exists")
        if old is not None:
            ctx.unlink(old)
        library = Library(name, code)
        try:
            self._run_library(library, body, timeout_ms)
            if not library.functions:
                raise CommandError("ERR No functions registered")
            for fn in library.functions.values():
                if fn.name.lower() in ctx.functions:
                    raise CommandError(f"ERR Function {_text(fn.name)} already exists")
        except CommandError:
            if old is not None:
                ctx.link(old)
            raise
        ctx.link(library)
        return name

    def _run_library(self, library: Library, body: bytes, timeout_ms: int) -> None:
        vm = self.function_vm
        load = vm.load
        assert load is not None
        self._loading = (library, time.monotonic_ns(), timeout_ms)
        try:
            outcome = load(body)
        except vm.memory_error:
            vm.collect()
            raise CommandError(self._memory_error(library.name)) from None
        finally:
            self._loading = None
        if outcome is True:
            return
        compile_error = outcome[1] if len(outcome) > 1 else None
        run_error = outcome[2] if len(outcome) > 2 else None
        if compile_error is not None:
            raise CommandError("ERR Error compiling function: " + _text(_flat(compile_error)))
        if run_error == b"not enough memory":
            vm.collect()
            raise CommandError(self._memory_error(library.name))
        detail = run_error if isinstance(run_error, bytes) else (
            b"%d" % run_error if run_error is not None else b"(null)"
        )
        raise CommandError("ERR Error registering functions: " + _text(_flat(detail)))

    def _register_function(self, name: bytes, callback: Any, description: bytes | None,
                           *flags: bytes) -> bytes | None:
        """redis.register_function, arguments already checked: None, or the error text."""
        loading = self._loading
        if loading is None:
            return b"redis.register_function can only be called on FUNCTION LOAD command"
        library = loading[0]
        if not functions.valid_name(name):
            return functions.NAME_RULES[4:].encode()
        if name in library.functions:
            return b"Function already exists in the library"
        library.functions[name] = FunctionInfo(
            name, callback, description, tuple(flag.decode() for flag in flags), library
        )
        return None

    def delete_library(self, name: bytes) -> None:
        lib = self.libraries.libraries.get(name)
        if lib is None:
            raise CommandError("ERR Library not found")
        self.libraries.unlink(lib)

    def flush_functions(self) -> None:
        """FUNCTION FLUSH: every library gone and a fresh Lua state (Redis 7.4 rebuilds it)."""
        self.libraries.clear()
        self._function_vm = None
        self._parser_function = None

    def library_codes(self) -> list[bytes]:
        """The code of every library, as an RDB file stores them."""
        return [lib.code for lib in self.libraries.libraries.values()]

    def load_snapshot_libraries(self, codes: list[bytes], replace: bool = False) -> None:
        """Libraries read from an RDB file, added to the current ones; CommandError (and
        nothing added) if one fails to load or one of its names is taken, as Redis's load
        fails, unless ``replace`` (DEBUG RELOAD ... MERGE), where the file's library of a
        name replaces the current one."""
        scratch = LibraryContext()
        for code in codes:
            self.load_library(code, replace=False, into=scratch, timeout_ms=0)
        self._join(scratch, "replace" if replace else "append")

    def _rdb_version(self) -> int:
        return compat.rdb_version(self.state.config["redis-compat-version"])

    def dump_functions(self) -> bytes:
        return functions.dump_payload(list(self.libraries.libraries.values()), self._rdb_version())

    def restore_functions(self, payload: bytes, policy: str) -> None:
        zero_crc = compat.follows(self.state.config["redis-compat-version"], "payload-crc-zero")
        if not functions.verify_payload(payload, self._rdb_version(), zero_crc):
            raise CommandError(errors.BAD_DUMP_PAYLOAD)
        codes = functions.read_payload(payload)
        scratch = LibraryContext()
        for code in codes:
            self.load_library(code, replace=False, into=scratch, timeout_ms=0)
        self._join(scratch, policy)

    def _join(self, scratch: LibraryContext, policy: str) -> None:
        """Add the libraries of ``scratch`` to the server's (RESTORE's policies: ``flush``,
        ``replace`` or ``append``), all or none."""
        current = self.libraries
        if policy == "flush":
            self.libraries = scratch
            return
        replaced: list[Library] = []
        for lib in scratch.libraries.values():
            old = current.libraries.get(lib.name)
            if old is not None:
                if policy != "replace":
                    for back in replaced:
                        current.link(back)
                    raise CommandError(f"ERR Library {_text(lib.name)} already exists")
                current.unlink(old)
                replaced.append(old)
        for fn in scratch.functions.values():
            if fn.name.lower() in current.functions:
                for back in replaced:
                    current.link(back)
                raise CommandError(f"ERR Function {_text(fn.name)} already exists")
        for lib in scratch.libraries.values():
            current.link(lib)

    def function_stats(self) -> dict[bytes, Any]:
        run = self.running
        running: Any = None
        if run is not None:
            running = {
                b"name": run.name,
                b"command": list(run.argv),
                b"duration_ms": (time.monotonic_ns() - run.start_ns) // 1_000_000,
            }
        ctx = self.libraries
        return {
            b"running_script": running,
            b"engines": {
                b"LUA": {
                    b"libraries_count": len(ctx.libraries),
                    b"functions_count": sum(len(lib.functions) for lib in ctx.libraries.values()),
                }
            },
        }

    # -- INFO ----------------------------------------------------------------------------------

    def memory_used(self) -> int:
        """What scripts hold, as used_memory counts it: both Lua VMs, the cached scripts'
        and the libraries' code (the figures INFO memory lists one by one)."""
        eval_vm = self._eval_vm.memory() if self._eval_vm is not None else 0
        function_vm = self._function_vm.memory() if self._function_vm is not None else 0
        return (eval_vm + function_vm + self.scripts_bytes + len(self.scripts) * 64
                + self.libraries.code_bytes + len(self.libraries.functions) * 64)

    def memory_lines(self) -> list[tuple[str, object]]:
        """The scripting fields of INFO memory, in Redis 7.4's order."""
        eval_vm = self._eval_vm.memory() if self._eval_vm is not None else 0
        function_vm = self._function_vm.memory() if self._function_vm is not None else 0
        scripts = self.scripts_bytes + len(self.scripts) * 64
        libs = self.libraries.code_bytes + len(self.libraries.functions) * 64
        return [
            ("used_memory_lua", eval_vm),
            ("used_memory_vm_eval", eval_vm),
            ("used_memory_lua_human", bytes_to_human(eval_vm)),
            ("used_memory_scripts_eval", scripts),
            ("number_of_cached_scripts", len(self.scripts)),
            ("number_of_functions", len(self.libraries.functions)),
            ("number_of_libraries", len(self.libraries.libraries)),
            ("used_memory_vm_functions", function_vm),
            ("used_memory_vm_total", eval_vm + function_vm),
            ("used_memory_vm_total_human", bytes_to_human(eval_vm + function_vm)),
            ("used_memory_functions", libs),
            ("used_memory_scripts", scripts + libs),
            ("used_memory_scripts_human", bytes_to_human(scripts + libs)),
        ]


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, float):
        from resplite.engine.scripting import natives

        return natives.number_text(value)
    return str(value).encode()
