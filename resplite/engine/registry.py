"""Binding of command handlers to their spec names.

Handlers only bind a name here; everything else about a command (arity, flags, key specs,
arguments, docs) lives in its spec file under ``specs/`` and is joined to the handler when
the table is built (:mod:`resplite.engine.table`), which refuses a handler without a spec
and a spec without a handler.

A handler takes the calling client and the full argument vector (``argv[0]`` is the command
name, ``argv[1]`` the subcommand for container commands) and returns a reply value (see
:mod:`resplite.protocol.replies`), raises :class:`~resplite.engine.errors.CommandError`,
or returns a :class:`~resplite.engine.blocking.BlockRequest` to park the client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from resplite.engine.client import Client

Handler = Callable[["Client", list[bytes]], Any]
H = TypeVar("H", bound=Handler)

HANDLERS: dict[str, Handler] = {}


def command(fullname: str) -> Callable[[H], H]:
    """Register ``fn`` as the handler of ``fullname`` (``"get"``, ``"xgroup|create"``)."""
    key = fullname.lower()

    def bind(fn: H) -> H:
        if key in HANDLERS:
            raise RuntimeError(f"two handlers for command {key!r}")
        HANDLERS[key] = fn
        return fn

    return bind
