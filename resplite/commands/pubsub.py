"""Pub/Sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB ...; MONITOR.

The registry and the delivery of messages live in the engine (:mod:`resplite.engine.pubsub`,
:mod:`resplite.engine.output`); these handlers parse, subscribe and answer as Redis does:

* (P|S)SUBSCRIBE answer one push per argument, ``[kind, name, count]``, where the count is
  channels plus patterns for the classic commands and shard channels for SSUBSCRIBE; the
  client enters Pub/Sub mode (under RESP2 it may then run only (P|S)(UN)SUBSCRIBE, PING, QUIT
  and RESET, which the dispatcher enforces). Inside EXEC, SUBSCRIBE and PSUBSCRIBE work (for
  compatibility, as in Redis) while SSUBSCRIBE is refused.
* (P|S)UNSUBSCRIBE answer one push per argument, subscribed or not; without arguments one per
  current subscription, or a single one with a null name when there is none. The client leaves
  Pub/Sub mode when its last subscription of any kind goes.
* Those pushes are the command's reply: they are sent even while CLIENT REPLY is OFF, and
  inside EXEC they are the command's element of the EXEC array, exactly Redis's bytes.
* PUBLISH / SPUBLISH answer the number of receivers.

MONITOR turns the connection into a monitor: it is answered ``+OK`` once (a second MONITOR is
not answered at all, as Redis ignores it), then receives a line per command run by any client
(:mod:`resplite.engine.monitor`); it may not run commands that touch the keyspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Pushes, Raw

if TYPE_CHECKING:
    from resplite.engine.client import Client

_HELP = help_reply("PUBSUB", [
    ("CHANNELS [<pattern>]", [
        "Reply with the channels that have at least one subscriber, those matching",
        "<pattern> when given.",
    ]),
    ("NUMPAT", ["Reply with the number of patterns that have at least one subscriber."]),
    ("NUMSUB [<channel> ...]", [
        "Reply with each channel and its number of subscribers (pattern subscriptions",
        "not counted).",
    ]),
    ("SHARDCHANNELS [<pattern>]", [
        "Reply with the shard channels that have at least one subscriber, those",
        "matching <pattern> when given.",
    ]),
    ("SHARDNUMSUB [<shardchannel> ...]", [
        "Reply with each shard channel and its number of subscribers.",
    ]),
])


def _deny_blocking(client: Client, name: str, *, multi_exempt: bool) -> None:
    # Redis refuses these to a client that expects one reply per command: inside EXEC
    # (where SUBSCRIBE and PSUBSCRIBE stay allowed for backward compatibility).
    if client.executing_multi and not multi_exempt:
        raise CommandError(f"ERR {name} isn't allowed for a DENY BLOCKING client")


def _left_pubsub(client: Client) -> None:
    if not (client.channels or client.patterns or client.shard_channels):
        client.pubsub = False


def _entered_pubsub(client: Client) -> None:
    client.pubsub = True


@command("subscribe")
def subscribe(client: Client, argv: list[bytes]) -> Any:
    _deny_blocking(client, "SUBSCRIBE", multi_exempt=True)
    pubsub = client.server.pubsub
    replies = Pushes(pubsub.subscribe(client, channel) for channel in argv[1:])
    _entered_pubsub(client)
    return replies


@command("psubscribe")
def psubscribe(client: Client, argv: list[bytes]) -> Any:
    _deny_blocking(client, "PSUBSCRIBE", multi_exempt=True)
    pubsub = client.server.pubsub
    replies = Pushes(pubsub.psubscribe(client, pattern) for pattern in argv[1:])
    _entered_pubsub(client)
    return replies


@command("ssubscribe")
def ssubscribe(client: Client, argv: list[bytes]) -> Any:
    _deny_blocking(client, "SSUBSCRIBE", multi_exempt=False)
    pubsub = client.server.pubsub
    replies = Pushes(pubsub.ssubscribe(client, channel) for channel in argv[1:])
    _entered_pubsub(client)
    return replies


@command("unsubscribe")
def unsubscribe(client: Client, argv: list[bytes]) -> Any:
    replies = Pushes(client.server.pubsub.unsubscribe(client, argv[1:]))
    _left_pubsub(client)
    return replies


@command("punsubscribe")
def punsubscribe(client: Client, argv: list[bytes]) -> Any:
    replies = Pushes(client.server.pubsub.punsubscribe(client, argv[1:]))
    _left_pubsub(client)
    return replies


@command("sunsubscribe")
def sunsubscribe(client: Client, argv: list[bytes]) -> Any:
    replies = Pushes(client.server.pubsub.sunsubscribe(client, argv[1:]))
    _left_pubsub(client)
    return replies


@command("publish")
def publish(client: Client, argv: list[bytes]) -> int:
    return client.server.pubsub.publish(argv[1], argv[2])


@command("spublish")
def spublish(client: Client, argv: list[bytes]) -> int:
    return client.server.pubsub.spublish(argv[1], argv[2])


# -- PUBSUB introspection -------------------------------------------------------------------


@command("pubsub|channels")
def pubsub_channels(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    return client.server.pubsub.channel_names(argv[2] if len(argv) == 3 else None)


@command("pubsub|shardchannels")
def pubsub_shardchannels(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    return client.server.pubsub.channel_names(argv[2] if len(argv) == 3 else None, shard=True)


@command("pubsub|numsub")
def pubsub_numsub(client: Client, argv: list[bytes]) -> Any:
    pubsub = client.server.pubsub
    out: list[Any] = []
    for channel in argv[2:]:
        out += [channel, pubsub.numsub(channel)]
    return out


@command("pubsub|shardnumsub")
def pubsub_shardnumsub(client: Client, argv: list[bytes]) -> Any:
    pubsub = client.server.pubsub
    out: list[Any] = []
    for channel in argv[2:]:
        out += [channel, pubsub.numsub(channel, shard=True)]
    return out


@command("pubsub|numpat")
def pubsub_numpat(client: Client, argv: list[bytes]) -> int:
    return len(client.server.pubsub.patterns)


@command("pubsub|help")
def pubsub_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP


# -- MONITOR --------------------------------------------------------------------------------


@command("monitor")
def monitor(client: Client, argv: list[bytes]) -> Any:
    if client.executing_multi:
        raise CommandError("ERR MONITOR isn't allowed for DENY BLOCKING client")
    if client.monitor:
        return Raw(b"")  # Redis ignores a second MONITOR without a word
    client.server.set_monitor(client, True)
    return OK
