"""The compat tests' pair of raw connections: one to a real redis-server, one to resplite."""

from __future__ import annotations

import re
from collections.abc import Callable

from support.raw import RawClient
from support.servers import ServerProcess

Normalizer = Callable[[bytes], bytes]


STREAM_ID = re.compile(rb"\d{13}-\d+")


def loose_ids(data: bytes) -> bytes:
    """Replace millisecond stream ids (from ``*``) with a placeholder of fixed length."""
    return STREAM_ID.sub(b"<id>", data)


class Pair:
    """One connection to the reference Redis and one to resplite."""

    def __init__(self, ref: RawClient, ours: RawClient, resp: int) -> None:
        self.ref = ref
        self.ours = ours
        self.resp = resp

    def both(self, *args: bytes | str | int) -> tuple[bytes, bytes]:
        return self.ref.call(*args), self.ours.call(*args)

    def check(self, *args: bytes | str | int, normalize: Normalizer | None = None) -> bytes:
        expected, got = self.both(*args)
        if normalize is not None:
            expected, got = normalize(expected), normalize(got)
        cmd = " ".join(a.decode(errors="replace") if isinstance(a, bytes) else str(a)
                       for a in args)
        assert got == expected, (
            f"RESP{self.resp} {cmd}\n redis:    {expected!r}\n resplite: {got!r}"
        )
        return got

    def check_all(self, commands: list[tuple[bytes | str | int, ...]]) -> None:
        for cmd in commands:
            self.check(*cmd)

    def raw_both(self, data: bytes) -> tuple[bytes, bytes]:
        self.ref.send_raw(data)
        self.ours.send_raw(data)
        return self.ref.read_reply(), self.ours.read_reply()

    def connect_extra(self) -> Pair:
        """A second pair of connections to the same two servers, same protocol."""
        ref = RawClient(self.ref.sock.getpeername()[0], self.ref.sock.getpeername()[1])
        ours = RawClient(self.ours.sock.getpeername()[0], self.ours.sock.getpeername()[1])
        extra = Pair(ref, ours, self.resp)
        if self.resp == 3:
            ref.call("HELLO", "3")
            ours.call("HELLO", "3")
        return extra

    def close(self) -> None:
        self.ref.close()
        self.ours.close()


def open_pair(redis: ServerProcess, ours: ServerProcess, resp: int) -> Pair:
    pair = Pair(RawClient(redis.host, redis.port), RawClient(ours.host, ours.port), resp)
    if resp == 3:
        pair.ref.call("HELLO", "3")
        pair.ours.call("HELLO", "3")
    return pair
