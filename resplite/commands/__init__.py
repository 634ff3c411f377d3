"""Command handlers, one module per Redis command group, and the spec data they bind to.

Importing a command module registers its handlers (:mod:`resplite.engine.registry`). A
server does not import them at start: :func:`command_table` builds the frozen table from
the generated catalog (``catalog.json``, see :mod:`resplite.commands.catalog`), in which
each command names the module of its handler; that module is imported on the command's
first call. The engine never imports this package: the shell (``resplite.server``) and the
test kit hand the table to :class:`~resplite.engine.state.ServerState`.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from pathlib import Path

from resplite.engine.registry import HANDLERS, Handler
from resplite.engine.table import CommandSpec, table_from_catalog

SPEC_DIR = Path(__file__).with_name("specs")
CATALOG = Path(__file__).with_name("catalog.json")

# Every module that registers handlers (the catalog names one of these for each command).
MODULES = (
    "admin", "arrays", "bitmaps", "client", "clock", "cluster", "config", "connection", "dump",
    "faults", "functions", "generic", "geo", "hashes", "hashes_expiry", "hashes_import",
    "hotkeys", "hyperloglog", "introspection", "latency", "lists", "migrate", "module",
    "pubsub", "replication", "scripting", "server", "sets", "sort", "sorted_sets", "streams",
    "streams_groups", "streams_info", "streams_read", "strings", "transactions",
)

__all__ = ["CATALOG", "MODULES", "SPEC_DIR", "command_table", "load_module"]


def load_module(name: str) -> Mapping[str, Handler]:
    """Import the command module ``name`` (registering its handlers); the registry."""
    importlib.import_module(f"{__name__}.{name}")
    return HANDLERS


@functools.cache
def command_table() -> dict[bytes, CommandSpec]:
    """The table of every command resplite implements, built once per process.

    Spec objects are frozen (but for each handler's one swap from deferred to real), so
    servers started in one process (the test kit starts many) share them.
    """
    catalog = json.loads(CATALOG.read_text(encoding="utf-8"))
    return table_from_catalog(catalog["commands"], SPEC_DIR, load_module)
