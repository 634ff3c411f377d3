"""The channel registry: who listens to which channel, pattern or shard channel.

Three registries mirror each client's own subscriptions (``Client.channels``, ``patterns``,
``shard_channels``): channel -> subscribers, pattern -> subscribers, shard channel ->
subscribers, each an insertion-ordered dict used as a set. A channel or pattern is in a
registry exactly while at least one client subscribes to it (an empty entry is removed, so
PUBSUB CHANNELS lists only live channels and abandoned names cost nothing).

Publishing encodes a message once per protocol version (a RESP2 array ``*3`` or a RESP3 push
``>3``, the rest of the bytes shared) and appends it to each subscriber's outbox through
:class:`~resplite.engine.output.Output`: per subscriber the cost is one list append, and
the subscriber's connection gets one write per batch of messages. Channel subscribers are
served first, then pattern subscribers in the order the patterns were first subscribed, each
pattern matched with Redis's glob rules (:mod:`resplite.store.glob`); a client subscribed to
a channel and to a matching pattern receives both a ``message`` and a ``pmessage``, and each
counts as a receiver, as in Redis. Shard channels ignore patterns.

Replies to (P|S)(UN)SUBSCRIBE are push messages too, built here with the subscription counts
Redis reports: channels plus patterns for the classic commands, shard channels for the S
commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resplite.protocol.replies import Push
from resplite.store.glob import glob_match

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.output import Output

Subscribers = dict["Client", None]


def _bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


_MESSAGE = _bulk(b"message")
_PMESSAGE = _bulk(b"pmessage")
_SMESSAGE = _bulk(b"smessage")


# What one subscription costs beyond its name's bytes: the name's object and an entry in
# the client's registry and in the server's.
SUBSCRIPTION_OVERHEAD = 128


def _cost(name: bytes) -> int:
    return len(name) + SUBSCRIPTION_OVERHEAD


class PubSub:
    """The server's subscription registries. Each client's ``sub_bytes`` is what its
    subscriptions cost (:func:`_cost` of each), kept as they are made and dropped."""

    __slots__ = ("channels", "output", "patterns", "shard_channels")

    def __init__(self, output: Output) -> None:
        self.output = output
        self.channels: dict[bytes, Subscribers] = {}
        self.patterns: dict[bytes, Subscribers] = {}
        self.shard_channels: dict[bytes, Subscribers] = {}

    # -- subscribing --------------------------------------------------------------------------

    def subscribe(self, client: Client, channel: bytes) -> Push:
        if channel not in client.channels:
            client.channels[channel] = None
            client.sub_bytes += _cost(channel)
            self.channels.setdefault(channel, {})[client] = None
        return Push([b"subscribe", channel, client.subscription_count])

    def psubscribe(self, client: Client, pattern: bytes) -> Push:
        if pattern not in client.patterns:
            client.patterns[pattern] = None
            client.sub_bytes += _cost(pattern)
            self.patterns.setdefault(pattern, {})[client] = None
        return Push([b"psubscribe", pattern, client.subscription_count])

    def ssubscribe(self, client: Client, channel: bytes) -> Push:
        if channel not in client.shard_channels:
            client.shard_channels[channel] = None
            client.sub_bytes += _cost(channel)
            self.shard_channels.setdefault(channel, {})[client] = None
        return Push([b"ssubscribe", channel, len(client.shard_channels)])

    def unsubscribe(self, client: Client, channels: list[bytes]) -> list[Push]:
        """UNSUBSCRIBE: the named channels, or all of them (one reply with a null if none)."""
        return self._unsubscribe(client, channels, client.channels, self.channels,
                                 b"unsubscribe", shard=False)

    def punsubscribe(self, client: Client, patterns: list[bytes]) -> list[Push]:
        return self._unsubscribe(client, patterns, client.patterns, self.patterns,
                                 b"punsubscribe", shard=False)

    def sunsubscribe(self, client: Client, channels: list[bytes]) -> list[Push]:
        return self._unsubscribe(client, channels, client.shard_channels,
                                 self.shard_channels, b"sunsubscribe", shard=True)

    @staticmethod
    def _unsubscribe(
        client: Client,
        names: list[bytes],
        own: dict[bytes, None],
        registry: dict[bytes, Subscribers],
        kind: bytes,
        *,
        shard: bool,
    ) -> list[Push]:
        replies: list[Push] = []
        targets = names if names else list(own)
        for name in targets:
            if name in own:
                del own[name]
                client.sub_bytes -= _cost(name)
                subscribers = registry.get(name)
                if subscribers is not None:
                    subscribers.pop(client, None)
                    if not subscribers:
                        del registry[name]
            count = len(own) if shard else client.subscription_count
            replies.append(Push([kind, name, count]))
        if not replies:
            # Nothing to leave: Redis still answers once, with a null name.
            count = len(own) if shard else client.subscription_count
            replies.append(Push([kind, None, count]))
        return replies

    def forget(self, client: Client) -> None:
        """Drop every subscription of a client that is leaving or being RESET."""
        for own, registry in (
            (client.channels, self.channels),
            (client.patterns, self.patterns),
            (client.shard_channels, self.shard_channels),
        ):
            for name in own:
                subscribers = registry.get(name)
                if subscribers is not None:
                    subscribers.pop(client, None)
                    if not subscribers:
                        del registry[name]
            own.clear()
        client.sub_bytes = 0

    # -- publishing ---------------------------------------------------------------------------

    def publish(self, channel: bytes, message: bytes) -> int:
        """Deliver ``message`` to the subscribers of ``channel`` and of matching patterns."""
        receivers = 0
        subscribers = self.channels.get(channel)
        tail = b""
        if subscribers:
            # One formatting for the RESP2 array; the RESP3 push differs in its first byte.
            resp2 = b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
                len(channel), channel, len(message), message)
            self._deliver(subscribers, (b"", b"", resp2, b">" + resp2[1:]))
            receivers = len(subscribers)
        if self.patterns:
            for pattern, subscribers in list(self.patterns.items()):
                if not glob_match(pattern, channel):
                    continue
                if not tail:
                    tail = _bulk(channel) + _bulk(message)
                body = _PMESSAGE + _bulk(pattern) + tail
                self._deliver(subscribers, (b"", b"", b"*4\r\n" + body, b">4\r\n" + body))
                receivers += len(subscribers)
        return receivers

    def spublish(self, channel: bytes, message: bytes) -> int:
        subscribers = self.shard_channels.get(channel)
        if not subscribers:
            return 0
        tail = _bulk(channel) + _bulk(message)
        self._deliver(subscribers, (b"", b"", b"*3\r\n" + _SMESSAGE + tail,
                                    b">3\r\n" + _SMESSAGE + tail))
        return len(subscribers)

    def _deliver(self, subscribers: Subscribers, encoded: tuple[bytes, ...]) -> None:
        # The one loop that runs per subscriber per message: an append, and a dict store
        # the first time a client gets something in this batch.
        output = self.output
        pending = output.pending
        first = not pending
        for client in subscribers:
            box = client.outbox
            if not box:
                pending[client] = None
            box.append(encoded[client.resp])
        if first and pending:
            output.schedule()

    # -- introspection ------------------------------------------------------------------------

    def channel_names(self, pattern: bytes | None, shard: bool = False) -> list[bytes]:
        registry = self.shard_channels if shard else self.channels
        if pattern is None:
            return list(registry)
        return [name for name in registry if glob_match(pattern, name)]

    def numsub(self, channel: bytes, shard: bool = False) -> int:
        registry = self.shard_channels if shard else self.channels
        return len(registry.get(channel, ()))

    @property
    def subscription_total(self) -> int:
        """Channels, patterns and shard channels with at least one subscriber."""
        return len(self.channels) + len(self.patterns) + len(self.shard_channels)
