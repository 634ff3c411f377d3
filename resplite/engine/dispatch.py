"""Dispatch: one request argv in, one reply value out, in Redis's order of checks.

1. existence: unknown command, then unknown subcommand of a container;
2. arity, with the full name (``'xgroup|create'``);
3. protected commands (DEBUG) refused unless ``enable-debug-command`` allows them, before
   authentication as in Redis;
4. authentication (``noauth`` commands pass before AUTH), then, for a client whose user is
   restricted, ``no-multi`` inside MULTI and the ACL: command, keys (read or write, from the
   key specs) and channels, refused with Redis's ``NOPERM`` texts and logged in ACL LOG; a
   user allowed everything (the default user's ``+@all ~* &*``) skips the check for one
   attribute test;
5. on a cluster node, the redirections (-MOVED, -ASK, -CROSSSLOT);
   then memory: ``maxmemory-clients`` closes the largest clients while all clients hold
   more (:mod:`resplite.engine.client_eviction`; a client that evicts itself runs nothing),
   and while ``used_memory`` is over ``maxmemory`` keys are evicted as the policy allows
   (:mod:`resplite.engine.evict`, for every command, as Redis's processCommand does); if
   memory stays over with nothing left to evict a ``denyoom`` command is refused with
   ``-OOM`` (inside MULTI, for Redis 7.0, every queued command counts as one);
6. a RESP2 client in Pub/Sub mode may run only (P|S)(UN)SUBSCRIBE, PING, QUIT and RESET; a
   MONITOR client may not touch the keyspace;
7. CLIENT PAUSE: a command the pause covers is held back (before MULTI queueing, as Redis);
8. MULTI: ``no-multi`` commands are refused, others are queued (nothing is kept once the
   transaction cannot run, and the queue's bytes are bounded by
   ``client-query-buffer-limit``: past it the client is told and closed);
9. the handler runs; a :class:`CommandError` becomes one error reply, and any other exception
   is logged with its traceback and answered with one error reply, never more. Commands at
   least ``slowlog-log-slower-than`` long enter the slow log, those of at least
   ``latency-monitor-threshold`` ms the latency monitor (``command`` / ``fast-command``),
   and every duration goes into the command's latency histogram. Then, as in Redis's ``call()``,
   a write that changed the data set is logged in the append-only file (as the forms its
   handler recorded with ``client.propagate_as``, else as received), a tracking client's
   read keys are remembered and MONITOR clients are shown the command.

The fast path: while ``client.gates | server.gates`` is 0 (:mod:`resplite.engine.gates`),
a plain command in a common spelling with the right arity goes from step 2 straight to the
handler, and owes nothing after it but the statistics; every gate is set by the setter of
what it stands for, so this one test decides.

A refusal inside MULTI marks the transaction so that EXEC answers EXECABORT, as Redis does.
Per-command statistics (INFO commandstats / errorstats / latencystats) are kept here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resplite.engine import acl, compat, errors, gates
from resplite.engine.blocking import BlockRequest
from resplite.engine.config import protected_action_allowed
from resplite.engine.errors import CommandError
from resplite.engine.keyspecs import command_keys
from resplite.engine.replication import MASTERDOWN
from resplite.engine.scripting import SCRIPT_COMMANDS
from resplite.protocol.replies import NO_REPLY, QUEUED, ErrorReply

if TYPE_CHECKING:
    from resplite.engine.acl import User
    from resplite.engine.client import Client
    from resplite.engine.cluster import ClusterNode
    from resplite.engine.faults import Fault
    from resplite.engine.state import ServerState
    from resplite.engine.table import CommandSpec

log = logging.getLogger("resplite.dispatch")

_NOT_IN_MULTI = "ERR Command not allowed inside a transaction"
_SUBSCRIBED_CONTEXT = frozenset({
    "ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe",
    "punsubscribe", "quit", "reset",
})
_SUBSCRIBED_ONLY = (
    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
    "are allowed in this context"
)
_REPLICA_KEYSPACE = "ERR Replica can't interact with the keyspace"
# Commands MONITOR does not show (besides those flagged admin or skip_monitor).
_NOT_MONITORED = frozenset({"admin", "skip_monitor"})
_MULTI_TOO_BIG = (
    "ERR Transaction discarded: the queued commands exceed client-query-buffer-limit"
)
_POINTER = 8  # what Redis counts per queued argument beyond its bytes
_EXEMPT_FROM_OOM_IN_MULTI = frozenset({"exec", "discard", "quit", "reset"})
# Commands Redis marks "protected": the name its refusal shows and the directive that
# allows them.
_PROTECTED = {
    "debug": ("DEBUG", "enable-debug-command"),
    "module|load": ("MODULE", "enable-module-command"),
    "module|loadex": ("MODULE", "enable-module-command"),
    "module|unload": ("MODULE", "enable-module-command"),
}
_PROTECTED_REFUSED = (
    'ERR {name} command not allowed. If the {option} option is set to "local", you can run it '
    "from a local connection, otherwise you need to set this option in the configuration "
    "file, and then restart the server."
)


class Dispatcher:
    """Runs commands for clients of one server."""

    def __init__(self, server: ServerState) -> None:
        self.server = server
        # The clock a call is timed by (an attribute: the compiled build reads it directly,
        # where a module global is looked up in the module's dict, twice a call).
        self.now_ns: Callable[[], int] = time.perf_counter_ns
        self.slowlog = server.slowlog
        self.table = server.table
        # Clients send names in either case; matching the common spellings first saves a
        # lower() per request on the hot path.
        self.fast: dict[bytes, CommandSpec] = {}
        for name, spec in self.table.items():
            self.fast[name] = spec
            self.fast[name.upper()] = spec
        # The specs execute() may take straight on: no container, not protected.
        self.plain: dict[bytes, CommandSpec] = {
            name: spec for name, spec in self.fast.items()
            if not spec.subcommands and spec.fullname not in _PROTECTED
        }
        # The shortest duration the slow log or the latency monitor wants to see: one
        # comparison per request covers both (kept current after their own hooks ran).
        self.latency = server.latency
        self.watch_ns = 0
        self._set_watch()
        server.hotkeys.on_change = self._set_watch
        server.config.on_change("slowlog-log-slower-than", self._set_watch)
        server.config.on_change("latency-monitor-threshold", self._set_watch)

    def _set_watch(self, name: str = "", value: object = None) -> None:
        # A HOTKEYS session watches every call: the threshold drops to 0 while it runs.
        self.watch_ns = 0 if self.server.hotkeys.active else min(
            self.slowlog.trigger_ns, self.latency.trigger_ns)

    def _slow(self, client: Client, spec: CommandSpec, argv: list[bytes],
              elapsed: int) -> None:
        """A call at least as long as the slow log's or the latency monitor's threshold (or
        any call while HOTKEYS tracks)."""
        if elapsed >= self.slowlog.trigger_ns and "skip_slowlog" not in spec.flags:
            self.slowlog.record(client, argv, elapsed // 1000)
        self.latency.sample_ns("fast-command" if "fast" in spec.flags else "command", elapsed)
        hotkeys = self.server.hotkeys
        if hotkeys.active:
            hotkeys.on_call(spec, argv, elapsed, self.server.net_bytes())
            if not hotkeys.active:  # its DURATION ran out
                self._set_watch()

    def lookup(self, argv: list[bytes]) -> CommandSpec | str:
        """The spec ``argv`` names, or the error text Redis gives when it names none."""
        spec = self.fast.get(argv[0])
        if spec is None:
            spec = self.table.get(argv[0].lower())
            if spec is None:
                return errors.unknown_command(argv[0], argv[1:], compat.follows(
                    self.server.config["redis-compat-version"], "unknown-command-bare"))
        if spec.subcommands:
            if len(argv) < 2:
                # Alone, a container is a command of its own: COMMAND runs, the others
                # fail their arity check as in Redis.
                return spec if spec.handler is not None else errors.wrong_arity(spec.fullname)
            sub = spec.subcommands.get(argv[1].lower())
            if sub is None:
                return errors.unknown_subcommand(argv[1], spec.fullname)
            spec = sub
        return spec

    def execute(self, client: Client, argv: list[bytes],
                checked: CommandSpec | None = None) -> Any:
        """Run one request and account for it: the reply value (a BlockRequest parks the
        client). With ``checked``, the spec of a command whose checks have passed (see
        :meth:`call`), run it without them.

        A request takes the fast path, one lookup (a plain command in a common spelling), one
        arity test and one test of the gates (:mod:`resplite.engine.gates`), or the general
        path, which makes every check in Redis's order and comes back here with
        ``checked``. Every call ends here, so every call is accounted the one way below.

        The handler alone is timed, as Redis's call() times the command's proc: its
        duration goes into the command's statistics and latency histogram, and to the slow
        log, the latency monitor and HOTKEYS at their thresholds. What else a call may owe
        (the append-only file, client-side caching, MONITOR) is owed only while a gate says
        so, tested once after the handler (which may have set one).
        """
        # (One function for both: in CPython a second frame on the fast path would cost more
        # than all of its tests.)
        if checked is None:
            try:
                spec = self.plain[argv[0]]
            except KeyError:
                return self._execute_general(client, argv)
            # As Redis's lastcmd: set once the command is known, before any check or queueing.
            client.last_command = spec.fullname
            arity = spec.arity
            n = len(argv)
            if (arity > 0 and n != arity) or n < -arity:
                return self._reject(client, spec, errors.wrong_arity(spec.fullname))
            if client.gates or self.server.gates:
                return self._checks(client, spec, argv, False)
        else:
            spec = checked
        server = self.server
        dirty = server.dirty
        # Loaded as an attribute, then called: calling spec.handler(...) directly would take
        # CPython's unspecialised method-lookup path on every request.
        handler = spec.handler
        now_ns = self.now_ns
        start = now_ns()
        try:
            reply = handler(client, argv)  # type: ignore[misc]
        except Exception as exc:
            reply = self._failed(spec, exc)
        else:
            if type(reply) is BlockRequest:
                if client.may_block:
                    reply.argv = argv
                    return self._parked(client, spec, argv, reply, start, dirty)
                reply = reply.timeout_reply
            elif spec.dirties:
                server.dirty += 1
        elapsed = now_ns() - start
        client.commands_processed += 1  # (CLIENT LIST tot-cmds: every call, a script's too)
        try:
            stats = server.command_stats[spec.fullname]
        except KeyError:
            stats = server.stats_for(spec.fullname)
        stats.ns += elapsed
        # (This count is also the call count: see CommandStats.)
        try:
            stats.hist[elapsed // 1000] += 1
        except IndexError:
            stats.record_long(elapsed // 1000)
        if elapsed >= self.watch_ns:
            self._slow(client, spec, argv, elapsed)
        if client.gates or server.gates:
            self._after_call(client, spec, argv, reply, dirty)
        return reply

    def _parked(self, client: Client, spec: CommandSpec, argv: list[bytes],
                request: BlockRequest, start: int, dirty: int) -> BlockRequest:
        """A handler parked its client: the call is not counted yet (statistics, slow log,
        tot-cmds: :meth:`account_unblocked` does it when it ends, as Redis's
        updateStatsOnUnblock); what else a call owes is owed now."""
        elapsed = self.now_ns() - start
        request.spec = spec
        request.spent_ns = elapsed
        if elapsed >= self.latency.trigger_ns:
            self.latency.sample_ns("fast-command" if "fast" in spec.flags else "command",
                                   elapsed)
        if client.gates or self.server.gates:
            self._after_call(client, spec, argv, request, dirty)
        return request

    def account_unblocked(self, client: Client, request: BlockRequest, failed: bool) -> None:
        """A parked command got its reply (served, timed out, CLIENT UNBLOCK): one call of
        the time all its runs took, in the statistics and, past its threshold, the slow log
        (with the command as sent)."""
        spec: CommandSpec | None = request.spec
        if spec is None:
            return  # held by a pause: its re-run is an ordinary call
        total = request.spent_ns
        stats = self.server.stats_for(spec.fullname)
        stats.ns += total
        try:
            stats.hist[total // 1000] += 1
        except IndexError:
            stats.record_long(total // 1000)
        if failed:
            stats.failed_calls += 1
        if total >= self.slowlog.trigger_ns and "skip_slowlog" not in spec.flags:
            self.slowlog.record(client, request.argv, total // 1000)
        client.commands_processed += 1

    def _execute_general(self, client: Client, argv: list[bytes], busy: bool = False) -> Any:
        """:meth:`execute` for containers, protected commands, other spellings, unknowns
        (and, ``busy``, for every request while a script runs past busy-reply-threshold)."""
        found = self.lookup(argv)
        if type(found) is str:
            client.last_command = "NULL"
            return self._reject(client, None, found)  # type: ignore[arg-type]
        spec: CommandSpec = found  # type: ignore[assignment]
        client.last_command = spec.fullname
        arity = spec.arity
        n = len(argv)
        if (arity > 0 and n != arity) or n < -arity:
            return self._reject(client, spec, errors.wrong_arity(spec.fullname))
        protected = _PROTECTED.get(spec.fullname)
        if protected is not None and not protected_action_allowed(
                self.server.config[protected[1]], client.local):
            return self._reject(client, spec, _PROTECTED_REFUSED.format(
                name=protected[0], option=protected[1]))
        return self._checks(client, spec, argv, busy)

    def _checks(self, client: Client, spec: CommandSpec, argv: list[bytes], busy: bool) -> Any:
        """The checks after the lookup, arity and protection, in Redis's order, then the
        call (see the module docstring)."""
        if not client.authenticated and not spec.is_noauth:
            return self._reject(client, spec, errors.NOAUTH)
        if client.multi is not None and spec.is_no_multi and not spec.is_transaction_control:
            return self._reject(client, spec, _NOT_IN_MULTI)
        user = client.acl
        if user is not None:
            denied = self.permission_error(client, user, spec, argv)
            if denied is not None:
                return self._reject(client, spec, denied)
        server = self.server
        node = server.cluster
        if node is not None:
            if spec.fullname in SCRIPT_COMMANDS:
                server.scripting.asking = client.cluster_asking
            redirect = self._route(client, spec, argv, node)
            if redirect is not None:
                return self._reject(client, spec, redirect)
        if not busy and server.memory_gate:
            refused = self._memory_refusal(client, spec, argv)
            if refused is not None:
                return refused
        if busy:
            # During a load, a command without the "loading" flag is refused before a busy
            # script is looked at (processCommand's order).
            if server.persistence.loading and "loading" not in spec.flags:
                refusal = errors.LOADING
            elif server.script_busy and "allow_busy" not in spec.flags:
                refusal = server.scripting.busy_error()
            else:
                return self._gate(client, spec, argv)
            refused = self._context_refusal(client, spec, argv)
            if refused is not None:
                return refused
            return self._reject(client, spec, refusal)
        if server.faults.rules:
            fault = server.faults.take(spec.fullname, spec.container, client.name)
            if fault is not None:
                return self._misbehave(client, spec, argv, fault)
        return self._gate(client, spec, argv)

    @staticmethod
    def _route(client: Client, spec: CommandSpec, argv: list[bytes],
               node: ClusterNode) -> str | None:
        """Where a cluster node sends a command on keys it does not serve (-MOVED, -ASK,
        -CROSSSLOT, -TRYAGAIN), or None to run it here."""
        # RESTORE-ASKING's "asking" flag stands for an ASKING sent before it.
        asking = client.cluster_asking or "asking" in spec.flags
        if spec.fullname != "asking" and client.multi is None:
            client.cluster_asking = False  # the flag covers one command, as in Redis
        if spec.first_key == 0 and not spec.key_specs:
            return None
        keys = [argv[ref.pos] for ref in command_keys(spec, argv)]
        if not keys:
            return None
        db = client.db
        return node.route(keys, [db.peek(key) is not None for key in keys], asking)

    def _misbehave(self, client: Client, spec: CommandSpec, argv: list[bytes],
                   fault: Fault) -> Any:
        """What a fault makes of this call (see resplite.engine.faults for each action)."""
        action = fault.action
        if action == "error":
            return self._reject(client, spec, fault.error)
        if action == "close-before":
            client.close_after_reply = True
            return NO_REPLY
        reply = self._gate(client, spec, argv)
        if type(reply) is BlockRequest or reply is QUEUED:
            return reply  # a blocking or queued command keeps its own timing
        if action == "close-after":
            client.close_after_reply = True
            return NO_REPLY
        if action == "drop":
            return NO_REPLY
        if fault.delay_ms > 0 and client.may_block:
            # Parked on no key: the reply comes when the delay runs out on the server clock.
            return BlockRequest([], fault.delay_ms, lambda: reply, reply)
        return reply

    def permission_error(self, client: Client, user: User, spec: CommandSpec,
                         argv: list[bytes]) -> str | None:
        """None when ``user`` may run the line, else Redis's NOPERM text (the denial is
        written to the ACL log)."""
        result, pos = acl.check_command(user, spec, argv)
        if result == acl.OK:
            return None
        obj = spec.fullname.encode() if result == acl.DENIED_CMD else argv[pos]
        self.server.log_acl_denial(client, result, obj)
        return errors.NOPERM + acl.denial_message(result, user, spec, obj)

    def execute_while_busy(self, client: Client, argv: list[bytes]) -> Any:
        """A request that arrived while a script runs past busy-reply-threshold, or while
        the start-up load runs (then the ``loading`` commands run and the others are
        answered -LOADING, in place of the ``allow_busy`` rule below).

        Redis's order: unknown command, arity, protected commands, authentication, no-multi
        and ACL refusals come first, then a failed snapshot's and a subscribed context's
        (no OOM check: Redis skips it while busy); then everything but the ``allow_busy``
        commands (SCRIPT KILL, FUNCTION KILL, FUNCTION STATS, SHUTDOWN, AUTH, HELLO,
        MULTI...) is answered -BUSY.
        """
        return self._execute_general(client, argv, busy=True)

    def _gate(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> Any:
        """The last gates (failed snapshot, subscribed context, CLIENT PAUSE, MULTI
        queueing), then the call."""
        if client.gates & gates.CONTEXT or self.server.writes_refused:
            refused = self._context_refusal(client, spec, argv)
            if refused is not None:
                return refused
        pause = self.server.pause
        if pause.active and pause.covers(client, spec, argv):
            return pause.hold(client, argv)
        if client.multi is not None and not spec.is_transaction_control:
            if spec.is_no_multi:
                return self._reject(client, spec, _NOT_IN_MULTI)
            if client.multi_dirty or client.watch_dirty:
                # EXEC will not run them: as Redis, answer QUEUED but keep nothing.
                return QUEUED
            size = client.multi_bytes + _POINTER * len(argv)
            for arg in argv:
                size += len(arg)
            if size > self.server.query_buffer_limit:
                # Queued commands are input the server holds for the client: the same
                # bound as the query buffer applies, and the same remedy (closing it).
                log.warning("Closing client that reached max query buffer length with "
                            "queued MULTI commands: id=%d addr=%s (%d bytes queued)",
                            client.id, client.addr, size)
                client.multi = None
                client.multi_bytes = 0
                client.close_after_reply = True
                self.server.qbuf_limit_disconnections += 1
                return self._reject(client, spec, _MULTI_TOO_BIG)
            client.multi_bytes = size
            client.multi.append((spec, argv))
            return QUEUED
        return self.execute(client, argv, spec)

    def _context_refusal(self, client: Client, spec: CommandSpec,
                         argv: list[bytes]) -> ErrorReply | None:
        """A failed snapshot's refusal of writes (or a read-only replica's, or too few
        replicas'), a subscribed context's or a monitor's."""
        server = self.server
        if server.writes_refused and (
            spec.is_write or spec.fullname == "ping"
            # a script that declares it may write (a shebang without no-writes, FCALL's
            # flags) counts as a write, as Redis's getCommandFlags says
            or (spec.fullname in SCRIPT_COMMANDS and server.scripting.command_flags(spec, argv)[0])
            # EXEC counts as a write when a write is queued (Redis's mstate.cmd_flags)
            or (spec.fullname == "exec" and client.multi is not None
                and any(queued.is_write for queued, _ in client.multi))
        ):
            refusal = server.persistence.refusal(client, spec.fullname == "ping")
            if refusal is not None:
                return self._reject(client, spec, refusal)
        if server.writes_refused and server.replication.master_down and (
                "stale" not in spec.flags
                # EXEC is refused for any queued command without the flag
                or (spec.fullname == "exec" and client.multi is not None
                    and any("stale" not in queued.flags for queued, _ in client.multi))):
            return self._reject(client, spec, MASTERDOWN)
        if client.gates & gates.CONTEXT:
            if client.pubsub and client.resp == 2 and spec.fullname not in _SUBSCRIBED_CONTEXT:
                return self._reject(client, spec, _SUBSCRIBED_ONLY.format(spec.fullname))
            if client.monitor and (spec.is_write or "readonly" in spec.flags
                                   or "may_replicate" in spec.flags):
                return self._reject(client, spec, _REPLICA_KEYSPACE)
        return None

    def call(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> Any:
        """Run a command whose checks have passed (EXEC's queued commands, scripts' calls),
        accounted as every call is (see :meth:`execute`)."""
        return self.execute(client, argv, spec)

    def _after_call(self, client: Client, spec: CommandSpec, argv: list[bytes], reply: Any,
                    dirty: int) -> None:
        """What a call owes while a gate is set, in Redis's order (its call()): the
        append-only file, a tracking client's reads, the MONITOR clients."""
        server = self.server
        if server.propagating:
            if server.dirty != dirty and spec.is_write:
                self._log_write(client, argv, reply)
            elif spec.fullname == "exec":
                server.aof.end_exec(client)
        if client.propagated is not None:
            client.propagated = None  # recorded by a call that changed nothing after all
        tracking = client.tracking
        if tracking is not None:
            # (A script's reads are remembered for its caller as they run, not the
            # keys EVAL_RO / FCALL_RO declare.)
            if "readonly" in spec.flags and spec.fullname not in SCRIPT_COMMANDS:
                server.tracking.remember(client, spec, argv)
            # CLIENT CACHING lasts for one command (or the whole MULTI), then lapses.
            if client.multi is None and not client.executing_multi and spec.container != "client":
                tracking.caching = False
        if server.monitors and not (spec.flags & _NOT_MONITORED):
            server.feed_monitors(client, spec.fullname, argv)

    def _log_write(self, client: Client, argv: list[bytes], reply: Any) -> None:
        """Log a write that changed the data set in the append-only file: as the forms the
        command recorded (:meth:`Client.propagate_as`, logged whatever the reply, since they
        describe what was done), else as it was received unless it failed (an error reply
        changed nothing, though it may have been counted as a change)."""
        forms = client.propagated
        if forms is not None:
            client.propagated = None
            self.server.aof.feed_all(client, client.db_index, forms)
        elif not isinstance(reply, ErrorReply):
            self.server.aof.feed(client, client.db_index, argv)

    def _failed(self, spec: CommandSpec, exc: Exception) -> ErrorReply:
        """The one error reply for a command that raised, counted in the statistics."""
        server = self.server
        if isinstance(exc, CommandError):
            message = exc.message
        else:
            log.error("unexpected error in %s", spec.fullname, exc_info=exc)
            server.unexpected_errors += 1
            message = f"ERR internal error while running '{spec.fullname}'"
        server.stats_for(spec.fullname).failed_calls += 1
        server.count_error(message)
        return ErrorReply(message)

    def _memory_refusal(self, client: Client, spec: CommandSpec,
                        argv: list[bytes]) -> Any:
        """Redis's memory checks before a command, in its order: client eviction
        (maxmemory-clients; a client that evicts itself runs nothing), then key eviction
        and ``-OOM`` for a ``denyoom`` command while memory stays over ``maxmemory``.
        None lets the command run."""
        server = self.server
        if server.client_eviction_limit:
            server.evict_clients()
            if client.close_after_reply:
                return NO_REPLY
        if server.maxmemory and server.over_maxmemory() and server.out_of_memory() \
                and self._refused_on_oom(client, spec, argv):
            return self._reject(client, spec, errors.OOM)
        if client.outbox:
            # (Invalidations of the keys just evicted: sent before this command's reply.)
            client.pushes_first = len(client.outbox)
        return None

    def _denyoom(self, spec: CommandSpec, argv: list[bytes]) -> bool:
        # A script command is denyoom as its script's flags say (shebang flags, FCALL's).
        if spec.fullname in SCRIPT_COMMANDS:
            return self.server.scripting.command_flags(spec, argv)[1]
        return spec.is_denyoom

    def _refused_on_oom(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> bool:
        """Whether ``spec`` is refused while memory is over ``maxmemory`` (Redis's rules)."""
        if self._denyoom(spec, argv):
            return True
        queued = client.multi
        if queued is None:
            return False
        if spec.fullname == "exec":
            # EXEC counts as a write of the worst command it would run.
            return any(self._denyoom(q, args) for q, args in queued)
        # Redis 7.0 refuses every queued command (its queue grows memory); 7.4 and later
        # only the denyoom ones (compat DIFFERENCES "multi-oom-denyoom-only").
        if compat.follows(self.server.config["redis-compat-version"], "multi-oom-denyoom-only"):
            return False
        return spec.fullname not in _EXEMPT_FROM_OOM_IN_MULTI

    def _reject(self, client: Client, spec: CommandSpec | None, message: str) -> ErrorReply:
        if spec is not None and spec.fullname == "exec":
            # A refused EXEC discards the transaction and says why, as Redis's
            # execCommandAbort does, whether or not a MULTI was open.
            client.multi = None
            client.multi_dirty = False
            self.server.unwatch_all(client)
            reason = message[4:] if message.startswith("ERR ") else message
            message = "EXECABORT Transaction discarded because of: " + reason
        elif client.multi is not None:
            client.multi_dirty = True
        if spec is not None:
            self.server.stats_for(spec.fullname).rejected_calls += 1
        self.server.count_error(message)
        return ErrorReply(message)
