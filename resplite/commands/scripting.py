"""Scripts: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP.

The engine (:mod:`resplite.engine.scripting`) compiles, caches and runs scripts; these
handlers parse the arguments in Redis's order of checks and answer in its words. A script's
keys come from ``numkeys`` in the spec data, which is what COMMAND GETKEYS reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK

if TYPE_CHECKING:
    from resplite.engine.client import Client

_HELP = help_reply("SCRIPT", [
    ("EXISTS <sha1> [<sha1> ...]", [
        "Answer 1 for each digest whose script is in the script cache, 0 for the others.",
    ]),
    ("FLUSH [ASYNC|SYNC]", [
        "Empty the script cache (both modes empty it at once here).",
    ]),
    ("KILL", ["Stop the script that is running, if it has not written anything yet."]),
    ("LOAD <script>", ["Compile <script> into the script cache and answer its SHA1 digest."]),
])


def _monitor(client: Client, name: str, argv: list[bytes]) -> None:
    """MONITOR shows a script command before the commands its script runs (Redis feeds it
    from the command itself, which is flagged skip_monitor for the generic feed)."""
    server = client.server
    if server.monitors:
        server.feed_monitors(client, name, argv)


@command("eval")
def eval_(client: Client, argv: list[bytes]) -> Any:
    _monitor(client, "eval", argv)
    return client.server.scripting.eval(client, argv, by_sha=False, read_only=False)


@command("evalsha")
def evalsha(client: Client, argv: list[bytes]) -> Any:
    _monitor(client, "evalsha", argv)
    return client.server.scripting.evalsha(client, argv)


@command("eval_ro")
def eval_ro(client: Client, argv: list[bytes]) -> Any:
    _monitor(client, "eval_ro", argv)
    return client.server.scripting.eval(client, argv, by_sha=False, read_only=True)


@command("evalsha_ro")
def evalsha_ro(client: Client, argv: list[bytes]) -> Any:
    _monitor(client, "evalsha_ro", argv)
    return client.server.scripting.eval(client, argv, by_sha=True, read_only=True)


@command("script|load")
def script_load(client: Client, argv: list[bytes]) -> Any:
    return client.server.scripting.create_script(argv[2], from_eval=False).sha


@command("script|exists")
def script_exists(client: Client, argv: list[bytes]) -> Any:
    return client.server.scripting.script_exists(argv[2:])


@command("script|flush")
def script_flush(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3 or (len(argv) == 3 and argv[2].lower() not in (b"sync", b"async")):
        raise CommandError("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
    client.server.scripting.flush_scripts()
    return OK


@command("script|kill")
def script_kill(client: Client, argv: list[bytes]) -> Any:
    client.server.scripting.kill(from_eval=True)
    return OK


@command("script|help")
def script_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP

