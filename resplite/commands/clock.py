"""RESPLITE.CLOCK: read, freeze, advance, set and release the server's clock from any client.

resplite's own command, for tests written in any language: ``GET`` answers the current Unix
time in milliseconds, ``FREEZE`` stops time, ``RESUME`` lets it run again from where it
stands, ``ADVANCE <ms>`` moves it forward and ``SET <unix-ms>`` puts it anywhere, backwards
included. ADVANCE and SET answer the new reading. Moving time fires what became due in the
order a real passage of time would (see :mod:`resplite.engine.timeflow`).

The command is gated by the ``enable-clock-command`` directive (``no`` by default, ``yes``,
or ``local`` for loopback and Unix-socket connections only), as Redis gates DEBUG with
``enable-debug-command``; HELP is always answered so that users learn how to switch it on.
A refused or malformed call changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import int_arg
from resplite.commands.helptext import help_reply
from resplite.engine import errors, timeflow
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK

if TYPE_CHECKING:
    from resplite.engine.client import Client

_HELP = help_reply("RESPLITE.CLOCK", [
    ("GET", ["Reply with the server's time now, in Unix milliseconds."]),
    ("FREEZE", ["Hold the clock still at its present reading until RESUME."]),
    ("RESUME", ["Let a frozen clock run on from the reading it was held at."]),
    ("ADVANCE <milliseconds>", [
        "Jump the clock forward. Keys that expire on the way go first, then the",
        "blocked clients whose timeout is reached. Replies with the new reading.",
    ]),
    ("SET <unix-time-milliseconds>", [
        "Put the clock at a given Unix time in milliseconds, which may be in the",
        "past. Replies with the new reading.",
    ]),
])


def _check_enabled(client: Client) -> None:
    setting = client.server.config["enable-clock-command"]
    if setting == "yes" or (setting == "local" and client.local):
        return
    raise CommandError(errors.CLOCK_DISABLED)


@command("resplite.clock|get")
def clock_get(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    return timeflow.now_ms(client.server)


@command("resplite.clock|freeze")
def clock_freeze(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    timeflow.freeze(client.server)
    return OK


@command("resplite.clock|resume")
def clock_resume(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    timeflow.resume(client.server)
    return OK


@command("resplite.clock|advance")
def clock_advance(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    ms = int_arg(argv[2])
    try:
        return timeflow.advance(client.server, ms)
    except timeflow.ClockDirectionError:
        raise CommandError(errors.CLOCK_BACKWARDS) from None
    except timeflow.ClockRangeError:
        raise CommandError(errors.CLOCK_OUT_OF_RANGE) from None


@command("resplite.clock|set")
def clock_set(client: Client, argv: list[bytes]) -> Any:
    _check_enabled(client)
    unix_ms = int_arg(argv[2])
    try:
        return timeflow.set_time(client.server, unix_ms)
    except timeflow.ClockRangeError:
        raise CommandError(errors.CLOCK_OUT_OF_RANGE) from None


@command("resplite.clock|help")
def clock_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP
