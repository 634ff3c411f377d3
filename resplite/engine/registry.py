"""Binding of command handlers to their spec names.

Handlers only bind a name here; everything else about a command (arity, flags, key specs,
arguments, docs) lives in its spec file under ``specs/`` and is joined to the handler when
the table is built (:mod:`resplite.engine.table`), which refuses a handler without a spec
and a spec without a handler.

A handler takes the calling client and the full argument vector (``argv[0]`` is the command
name, ``argv[1]`` the subcommand for container commands) and returns a reply value (see
:mod:`resplite.protocol.replies`), raises :class:`~resplite.engine.errors.CommandError`,
or returns a :class:`~resplite.engine.blocking.BlockRequest` to park the client.

The dispatcher adds one to the server's change counter (``rdb_changes_since_last_save``)
for every write command that does not fail. A handler registered with
``counts_changes=True`` adds to ``client.server.dirty`` itself instead, as Redis's
commands do, by the number of changes it made (XDEL counts the entries it deleted, a
read that changes nothing counts none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from resplite.engine.client import Client

Handler = Callable[["Client", list[bytes]], Any]
H = TypeVar("H", bound=Handler)

HANDLERS: dict[str, Handler] = {}
# Full names of the handlers that count their own changes (see the module docstring).
COUNTS_CHANGES: set[str] = set()


def command(fullname: str, *, counts_changes: bool = False) -> Callable[[H], H]:
    """Register ``fn`` as the handler of ``fullname`` (``"get"``, ``"xgroup|create"``)."""
    key = fullname.lower()

    def bind(fn: H) -> H:
        if key in HANDLERS:
            raise RuntimeError(f"two handlers for command {key!r}")
        HANDLERS[key] = fn
        if counts_changes:
            COUNTS_CHANGES.add(key)
        return fn

    return bind
