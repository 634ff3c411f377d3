"""MODULE LIST / LOAD / LOADEX / UNLOAD / HELP: resplite loads no server extensions.

LOAD, LOADEX and UNLOAD are *protected* commands: the dispatcher refuses them unless
``enable-module-command`` allows the client (``yes``, or ``local`` for a local connection),
with Redis's wording, before anything else is checked. When allowed they fail the way Redis
fails to load a library it cannot open, and UNLOAD finds no module of that name; LIST is
always empty.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.engine.errors import CommandError
from resplite.engine.registry import command

if TYPE_CHECKING:
    from resplite.engine.client import Client

log = logging.getLogger("resplite.module")

_LOAD_FAILED = "ERR Error loading the extension. Please check the server logs."
_NO_SUCH_MODULE = "ERR Error unloading module: no such module with that name"

_HELP = help_reply("MODULE", [
    ("LIST", ["List the loaded modules (resplite loads none)."]),
    ("LOAD <path> [<arg> ...]", [
        "Load a module library from <path>; resplite cannot load native extensions.",
    ]),
    ("LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]", [
        "Load a module library with configuration and arguments; not supported either.",
    ]),
    ("UNLOAD <name>", ["Unload the module called <name>."]),
])


@command("module|list")
def module_list(client: Client, argv: list[bytes]) -> Any:
    return []


@command("module|load")
def module_load(client: Client, argv: list[bytes]) -> Any:
    log.warning("Module %s failed to load: resplite does not load native modules",
                argv[2].decode("utf-8", "replace"))
    raise CommandError(_LOAD_FAILED)


@command("module|loadex")
def module_loadex(client: Client, argv: list[bytes]) -> Any:
    return module_load(client, argv)


@command("module|unload")
def module_unload(client: Client, argv: list[bytes]) -> Any:
    raise CommandError(_NO_SUCH_MODULE)


@command("module|help")
def module_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP
