"""HOTKEYS (Redis 8.6): START, STOP, GET, RESET and HELP over :mod:`resplite.engine.hotkeys`.

START's arguments, in any order after ``METRICS count CPU|NET ...`` (``count`` says how many
metric names follow, one or two, each once): COUNT k (1 to 64 keys per list, 10 when not
given), DURATION seconds (0: until STOP), SAMPLE ratio (at least 1) and SLOTS, which only a
cluster accepts (resplite tracks every slot of its node and refuses SLOTS, in a cluster with
an error saying so).
GET answers a null while no session exists, else one entry: the fields as a flat array in
RESP2, a map in RESP3. The error texts are resplite's (Redis's documentation names the cases,
not the words).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import c_option, parse_int
from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Status

if TYPE_CHECKING:
    from resplite.engine.client import Client

_MAX_K = 64

_HELP = help_reply("HOTKEYS", [
    ("START METRICS <count> [CPU] [NET] [COUNT <k>] [DURATION <seconds>] [SAMPLE <ratio>] "
     "[SLOTS <count> <slot> ...]", [
        "Start tracking the keys that cost the most CPU time (CPU) or network bytes (NET),",
        "reporting the top <k>, for <seconds> (0: until STOP), counting each key with",
        "probability 1/<ratio>.",
     ]),
    ("STOP", ["Stop tracking; the data stays for GET until RESET or the next START."]),
    ("GET", ["Reply with the session's totals and its hottest keys per metric."]),
    ("RESET", ["Forget a stopped session's data."]),
])


def _positive(arg: bytes, low: int, high: int, message: str) -> int:
    value = parse_int(arg)
    if value is None or not low <= value <= high:
        raise CommandError(message)
    return value


@command("hotkeys|start")
def hotkeys_start(client: Client, argv: list[bytes]) -> Status:
    n = len(argv)
    if n < 4 or c_option(argv[2]) != b"metrics":
        raise CommandError(errors.SYNTAX)
    count = parse_int(argv[3])
    if count is None or not 1 <= count <= 2 or n < 4 + count:
        raise CommandError(errors.HOTKEYS_METRICS)
    metrics = {c_option(a) for a in argv[4:4 + count]}
    if len(metrics) != count or not metrics <= {b"cpu", b"net"}:
        raise CommandError(errors.HOTKEYS_METRICS)
    k, duration, ratio = 10, 0, 1
    seen: set[bytes] = set()
    i = 4 + count
    while i < n:
        option = c_option(argv[i])
        if option in seen or i + 1 >= n:
            raise CommandError(errors.SYNTAX)
        seen.add(option)
        if option == b"count":
            k = _positive(argv[i + 1], 1, _MAX_K, errors.HOTKEYS_COUNT)
        elif option == b"duration":
            duration = _positive(argv[i + 1], 0, 1 << 31, errors.HOTKEYS_DURATION)
        elif option == b"sample":
            ratio = _positive(argv[i + 1], 1, 1 << 31, errors.HOTKEYS_SAMPLE)
        elif option == b"slots":
            # Per-slot tracking is not implemented: refused, in a cluster too.
            raise CommandError(errors.HOTKEYS_SLOTS if client.server.cluster is None
                               else errors.HOTKEYS_SLOTS_UNSUPPORTED)
        else:
            raise CommandError(errors.SYNTAX)
        i += 2
    hotkeys = client.server.hotkeys
    hotkeys.expire(client.server.net_bytes())
    if hotkeys.active:
        raise CommandError(errors.HOTKEYS_ACTIVE)
    hotkeys.start(b"cpu" in metrics, b"net" in metrics, k, duration, ratio,
                  client.server.net_bytes())
    return OK


@command("hotkeys|stop")
def hotkeys_stop(client: Client, argv: list[bytes]) -> Status:
    hotkeys = client.server.hotkeys
    hotkeys.expire(client.server.net_bytes())
    if not hotkeys.active:
        raise CommandError(errors.HOTKEYS_NOT_ACTIVE)
    hotkeys.stop(client.server.net_bytes())
    return OK


@command("hotkeys|get")
def hotkeys_get(client: Client, argv: list[bytes]) -> Any:
    hotkeys = client.server.hotkeys
    if not hotkeys.exists:
        return None
    fields = hotkeys.report(client.server.net_bytes())
    if client.resp >= 3:
        return [dict(fields)]
    return [[x for pair in fields for x in pair]]


@command("hotkeys|reset")
def hotkeys_reset(client: Client, argv: list[bytes]) -> Status:
    hotkeys = client.server.hotkeys
    hotkeys.expire(client.server.net_bytes())
    if hotkeys.active:
        raise CommandError(errors.HOTKEYS_RESET_ACTIVE)
    hotkeys.reset()
    return OK


@command("hotkeys|help")
def hotkeys_help(client: Client, argv: list[bytes]) -> list[Status]:
    return _HELP
