"""RESPLITE.FAULT: make chosen commands misbehave on purpose, from any client.

resplite's own command, for testing how clients recover (the engine side, and what each
action does, is :mod:`resplite.engine.faults`)::

    RESPLITE.FAULT ERROR <command-pattern> <error> [CLIENT <name-pattern>] [TIMES <n>]
    RESPLITE.FAULT DELAY <command-pattern> <milliseconds> [CLIENT ...] [TIMES ...]
    RESPLITE.FAULT CLOSE <command-pattern> BEFORE|AFTER [CLIENT ...] [TIMES ...]
    RESPLITE.FAULT DROP <command-pattern> [CLIENT ...] [TIMES ...]
    RESPLITE.FAULT LIST
    RESPLITE.FAULT CLEAR [id ...]

ERROR, DELAY, CLOSE and DROP answer the new fault's id; LIST an array of maps; CLEAR how
many faults it removed. An error text may be given with or without the leading ``-``
(``"-LOADING Redis is loading the dataset in memory"``); it must be one line.

Gated like RESPLITE.CLOCK, by ``enable-fault-command`` (``no`` by default; the test kit
turns it on); HELP is always answered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import int_arg
from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.config import protected_action_allowed
from resplite.engine.errors import CommandError
from resplite.engine.registry import command

if TYPE_CHECKING:
    from resplite.engine.client import Client

_HELP = help_reply("RESPLITE.FAULT", [
    ("ERROR <command-pattern> <error> [CLIENT <name-pattern>] [TIMES <count>]", [
        "Fail the matching calls with <error> instead of running them. The pattern is a",
        "glob over command names (XREADGROUP, xgroup|create, x*); CLIENT limits it to",
        "clients whose CLIENT SETNAME name matches; TIMES to the next <count> calls.",
    ]),
    ("DELAY <command-pattern> <milliseconds> [CLIENT ...] [TIMES ...]", [
        "Run the matching calls but hold each reply for <milliseconds> of server time.",
    ]),
    ("CLOSE <command-pattern> BEFORE|AFTER [CLIENT ...] [TIMES ...]", [
        "Close the connection instead of running the call (BEFORE), or after running it",
        "without replying (AFTER).",
    ]),
    ("DROP <command-pattern> [CLIENT ...] [TIMES ...]", [
        "Run the matching calls and never send their replies.",
    ]),
    ("LIST", ["List the faults in force, with their hits and remaining calls."]),
    ("CLEAR [<id> ...]", ["Remove the given faults, or all of them."]),
])


def _check_enabled(client: Client) -> None:
    if not protected_action_allowed(client.server.config["enable-fault-command"], client.local):
        raise CommandError(errors.FAULT_DISABLED)


def _add(client: Client, argv: list[bytes], at: int, action: str, **details: Any) -> int:
    """Parse the CLIENT / TIMES options from ``argv[at:]`` and add the fault."""
    name: bytes | None = None
    times: int | None = None
    i = at
    while i < len(argv):
        option = argv[i].lower()
        if i + 1 >= len(argv):
            raise CommandError(errors.SYNTAX)
        if option == b"client":
            name = argv[i + 1]
        elif option == b"times":
            times = int_arg(argv[i + 1])
            if times < 1:
                raise CommandError(errors.FAULT_TIMES)
        else:
            raise CommandError(errors.SYNTAX)
        i += 2
    fault = client.server.faults.add(argv[2], action, client=name, times=times, **details)
    return fault.id


@command("resplite.fault|error")
def fault_error(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    text = argv[3].decode("utf-8", "surrogateescape")
    if "\r" in text or "\n" in text:
        raise CommandError(errors.FAULT_ONE_LINE)
    text = text[1:] if text.startswith("-") else text
    if not text:
        raise CommandError(errors.SYNTAX)
    return _add(client, argv, 4, "error", error=text)


@command("resplite.fault|delay")
def fault_delay(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    delay = int_arg(argv[3])
    if delay < 0:
        raise CommandError(errors.FAULT_DELAY)
    return _add(client, argv, 4, "delay", delay_ms=delay)


@command("resplite.fault|close")
def fault_close(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    when = argv[3].lower()
    if when not in (b"before", b"after"):
        raise CommandError(errors.SYNTAX)
    return _add(client, argv, 4, f"close-{when.decode()}")


@command("resplite.fault|drop")
def fault_drop(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    return _add(client, argv, 3, "drop")


@command("resplite.fault|list")
def fault_list(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    return [fault.describe() for fault in client.server.faults.rules]


@command("resplite.fault|clear")
def fault_clear(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    ids = [int_arg(arg) for arg in argv[2:]]
    return client.server.faults.clear(ids or None)


@command("resplite.fault|help")
def fault_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP
