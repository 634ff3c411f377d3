"""Functions: FUNCTION LOAD / DELETE / FLUSH / LIST / DUMP / RESTORE / STATS / KILL / HELP,
FCALL and FCALL_RO.

Libraries live in the scripting engine (:mod:`resplite.engine.scripting.functions`); these
handlers parse arguments as Redis does and shape the replies: FUNCTION LIST answers one map
per library (``library_name``, ``engine``, ``functions``, and ``library_code`` with
WITHCODE), each function a map of ``name``, ``description`` and ``flags`` (a set).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.lazyfree import LAZYFREE_THRESHOLD
from resplite.engine.registry import command
from resplite.protocol.replies import OK, OrderedSet, Status
from resplite.store.glob import glob_match

if TYPE_CHECKING:
    from resplite.engine.client import Client

_HELP = help_reply("FUNCTION", [
    ("LOAD [REPLACE] <FUNCTION CODE>", [
        "Load a library from its code (which starts with '#!lua name=<library>'); with",
        "REPLACE an existing library of that name is replaced.",
    ]),
    ("DELETE <LIBRARY NAME>", ["Remove the library and all its functions."]),
    ("LIST [LIBRARYNAME PATTERN] [WITHCODE]", [
        "Describe every library (or those whose name matches PATTERN): engine, functions",
        "with their descriptions and flags, and the code with WITHCODE.",
    ]),
    ("STATS", [
        "Report the script or function running now (name, command, duration), if any, and",
        "how many libraries and functions each engine holds.",
    ]),
    ("KILL", ["Stop the function that is running, if it has not written anything yet."]),
    ("FLUSH [ASYNC|SYNC]", ["Remove every library (both modes do it at once here)."]),
    ("DUMP", ["Answer a payload holding every library, for FUNCTION RESTORE."]),
    ("RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]", [
        "Load the libraries of a DUMP payload. APPEND (the default) fails on a library",
        "name already loaded, REPLACE replaces such libraries, FLUSH removes all others.",
    ]),
])


@command("function|load")
def function_load(client: Client, argv: list[bytes]) -> Any:
    replace = False
    pos = 2
    while pos < len(argv) - 1:
        arg = argv[pos]
        pos += 1
        if arg.lower() == b"replace":
            replace = True
            continue
        raise CommandError("ERR Unknown option given: " + errors.user_text(arg, 1 << 20))
    if pos >= len(argv):
        raise CommandError("ERR Function code is missing")
    return client.server.scripting.load_library(argv[pos], replace=replace)


@command("function|delete")
def function_delete(client: Client, argv: list[bytes]) -> Any:
    client.server.scripting.delete_library(argv[2])
    return OK


@command("function|flush")
def function_flush(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    if len(argv) == 3 and argv[2].lower() not in (b"sync", b"async"):
        raise CommandError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    server = client.server
    lazy = argv[2].lower() == b"async" if len(argv) == 3 else \
        bool(server.config["lazyfree-lazy-user-flush"])
    scripting = server.scripting
    functions = list(scripting.libraries.functions.values())
    scripting.flush_functions()
    if lazy and len(functions) > LAZYFREE_THRESHOLD:
        # As Redis frees them in the background: each function and the Lua engine count
        # in lazyfreed_objects.
        server.lazyfree.defer(functions, objects=len(functions) + 1)
    return OK


@command("function|list")
def function_list(client: Client, argv: list[bytes]) -> Any:
    with_code = False
    pattern: bytes | None = None
    i = 2
    while i < len(argv):
        arg = argv[i]
        if not with_code and arg.lower() == b"withcode":
            with_code = True
        elif pattern is None and arg.lower() == b"libraryname":
            if i >= len(argv) - 1:
                raise CommandError("ERR library name argument was not given")
            i += 1
            pattern = argv[i]
        else:
            raise CommandError("ERR Unknown argument " + errors.user_text(arg, 1 << 20))
        i += 1
    reply = []
    for lib in client.server.scripting.libraries.libraries.values():
        if pattern is not None and not glob_match(pattern, lib.name, nocase=True):
            continue
        entry: dict[bytes, Any] = {
            b"library_name": lib.name,
            b"engine": b"LUA",
            b"functions": [
                {
                    b"name": fn.name,
                    b"description": fn.description,
                    b"flags": OrderedSet(Status(flag) for flag in fn.flags),
                }
                for fn in lib.functions.values()
            ],
        }
        if with_code:
            entry[b"library_code"] = lib.code
        reply.append(entry)
    return reply


@command("function|dump")
def function_dump(client: Client, argv: list[bytes]) -> Any:
    return client.server.scripting.dump_functions()


@command("function|restore")
def function_restore(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4:
        raise CommandError(errors.subcommand_syntax(argv))
    policy = "append"
    if len(argv) == 4:
        policy = argv[3].decode("latin-1").lower()
        if policy not in ("append", "replace", "flush"):
            raise CommandError(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
            )
    client.server.scripting.restore_functions(argv[2], policy)
    return OK


@command("function|stats")
def function_stats(client: Client, argv: list[bytes]) -> Any:
    scripting = client.server.scripting
    run = scripting.running
    if run is not None and run.eval_mode:
        raise CommandError(scripting.busy_error())
    return scripting.function_stats()


@command("function|kill")
def function_kill(client: Client, argv: list[bytes]) -> Any:
    client.server.scripting.kill(from_eval=False)
    return OK


@command("function|help")
def function_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP


def _fcall(client: Client, argv: list[bytes], name: str, read_only: bool) -> Any:
    server = client.server
    if server.monitors:
        # Shown before the commands the function runs (FCALL is skip_monitor otherwise).
        server.feed_monitors(client, name, argv)
    return server.scripting.fcall(client, argv, read_only=read_only)


@command("fcall")
def fcall(client: Client, argv: list[bytes]) -> Any:
    return _fcall(client, argv, "fcall", read_only=False)


@command("fcall_ro")
def fcall_ro(client: Client, argv: list[bytes]) -> Any:
    return _fcall(client, argv, "fcall_ro", read_only=True)
