"""Dispatch: one request argv in, one reply value out, in Redis's order of checks.

1. existence: unknown command, then unknown subcommand of a container;
2. arity, with the full name (``'xgroup|create'``);
3. authentication (``noauth`` commands pass before AUTH);
4. ``denyoom`` under ``maxmemory`` (inside MULTI every queued command counts as one);
5. MULTI: ``no-multi`` commands are refused, others are queued;
6. the handler runs; a :class:`CommandError` becomes one error reply, and any other exception
   is logged with its traceback and answered with one error reply, never more.

A refusal inside MULTI marks the transaction so that EXEC answers EXECABORT, as Redis does.
Per-command statistics (INFO commandstats / errorstats) are kept here.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from resplite.commands import errors
from resplite.commands.errors import CommandError
from resplite.protocol.replies import QUEUED, ErrorReply
from resplite.server.blocking import BlockRequest

if TYPE_CHECKING:
    from resplite.commands.table import CommandSpec
    from resplite.server.client import Client
    from resplite.server.state import ServerState

log = logging.getLogger("resplite.dispatch")
_now_ns = time.perf_counter_ns

_NOT_IN_MULTI = "ERR Command not allowed inside a transaction"
_EXEMPT_FROM_OOM_IN_MULTI = frozenset({"exec", "discard", "quit", "reset"})


class Dispatcher:
    """Runs commands for clients of one server."""

    def __init__(self, server: ServerState) -> None:
        self.server = server
        self.table = server.table
        # Clients send names in either case; matching the common spellings first saves a
        # lower() per request on the hot path.
        self.fast: dict[bytes, CommandSpec] = {}
        for name, spec in self.table.items():
            self.fast[name] = spec
            self.fast[name.upper()] = spec

    def lookup(self, argv: list[bytes]) -> CommandSpec | str:
        """The spec ``argv`` names, or the error text Redis gives when it names none."""
        spec = self.fast.get(argv[0])
        if spec is None:
            spec = self.table.get(argv[0].lower())
            if spec is None:
                return errors.unknown_command(argv[0], argv[1:])
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

    def execute(self, client: Client, argv: list[bytes]) -> Any:
        # The common case (a known plain command, right arity, no gates engaged) takes the
        # fewest steps; lookup() handles case, containers and unknown names.
        spec = self.fast.get(argv[0])
        if spec is None or spec.subcommands:
            found = self.lookup(argv)
            if found.__class__ is str:
                return self._reject(client, None, found)  # type: ignore[arg-type]
            spec = found  # type: ignore[assignment]
        arity = spec.arity
        n = len(argv)
        if (arity > 0 and n != arity) or n < -arity:
            return self._reject(client, spec, errors.wrong_arity(spec.fullname))
        if not client.authenticated and not spec.is_noauth:
            return self._reject(client, spec, errors.NOAUTH)
        server = self.server
        if server.maxmemory and (spec.is_denyoom or (
            client.multi is not None and spec.fullname not in _EXEMPT_FROM_OOM_IN_MULTI
        )) and server.over_maxmemory():
            return self._reject(client, spec, errors.OOM)
        if client.multi is not None and not spec.is_transaction_control:
            if spec.is_no_multi:
                return self._reject(client, spec, _NOT_IN_MULTI)
            client.multi.append((spec, argv))
            return QUEUED
        return self.call(client, spec, argv)

    def call(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> Any:
        """Run a command whose checks have passed (also used by EXEC for queued commands)."""
        server = self.server
        start = _now_ns()
        try:
            reply = spec.handler(client, argv)  # type: ignore[misc]
        except CommandError as exc:
            server.stats_for(spec.fullname).failed_calls += 1
            server.count_error(exc.message)
            reply = ErrorReply(exc.message)
        except Exception:
            log.exception("unexpected error in %s", spec.fullname)
            server.unexpected_errors += 1
            server.stats_for(spec.fullname).failed_calls += 1
            message = f"ERR internal error while running '{spec.fullname}'"
            server.count_error(message)
            reply = ErrorReply(message)
        else:
            if reply.__class__ is BlockRequest and not client.may_block:
                reply = reply.timeout_reply
            elif spec.is_write:
                server.dirty += 1
        stats = server.command_stats.get(spec.fullname) or server.stats_for(spec.fullname)
        stats.calls += 1
        stats.usec += (_now_ns() - start) // 1000
        server.total_commands += 1
        client.last_command = spec.fullname
        return reply

    def _reject(self, client: Client, spec: CommandSpec | None, message: str) -> ErrorReply:
        if client.multi is not None:
            client.multi_dirty = True
        if spec is not None:
            self.server.stats_for(spec.fullname).rejected_calls += 1
        self.server.count_error(message)
        return ErrorReply(message)
