"""Command handlers, one module per Redis command group, and the spec data they bind to.

Importing this package registers every handler (:mod:`resplite.engine.registry`);
:func:`command_table` joins them to the spec files under ``specs/`` into the frozen table a
server runs on. The engine never imports this package: the shell (``resplite.server``) and the
test kit hand the table to :class:`~resplite.engine.state.ServerState`.
"""

from __future__ import annotations

import functools
from pathlib import Path

from resplite.commands import (  # noqa: F401  (imported to register their handlers)
    admin,
    bitmaps,
    client,
    clock,
    cluster,
    config,
    connection,
    dump,
    faults,
    functions,
    generic,
    geo,
    hashes,
    hashes_expiry,
    hashes_import,
    hotkeys,
    hyperloglog,
    introspection,
    latency,
    lists,
    migrate,
    module,
    pubsub,
    scripting,
    server,
    sets,
    sort,
    sorted_sets,
    streams,
    streams_groups,
    streams_info,
    streams_read,
    strings,
    transactions,
)
from resplite.engine.registry import COUNTS_CHANGES, HANDLERS
from resplite.engine.table import CommandSpec, build_table, load_spec_files

SPEC_DIR = Path(__file__).with_name("specs")

__all__ = ["SPEC_DIR", "command_table"]


@functools.cache
def command_table() -> dict[bytes, CommandSpec]:
    """The table of every command resplite implements, built once per process.

    Spec objects are frozen, so servers started in one process (the test kit starts many)
    share them.
    """
    return build_table(load_spec_files(SPEC_DIR), HANDLERS, COUNTS_CHANGES)
