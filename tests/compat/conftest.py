"""Compatibility fixtures: the same commands go to a real redis-server and to resplite.

``pair`` gives two raw connections, one to each server, already switched to the protocol
version under test (the fixture runs every test under RESP2 and RESP3), on freshly flushed
servers. ``pair.check(*cmd)`` sends the command to both and asserts the raw reply bytes are
equal. Servers are started once per test process on free ports. Without a redis-server the
tests skip visibly, except under CI, where its absence is an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

import pytest
from support.raw import RawClient
from support.servers import ServerProcess, redis_server_path, start_redis, start_resplite

Normalizer = Callable[[bytes], bytes]


def _require_redis() -> None:
    if redis_server_path() is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is required for the compatibility tests in CI")
        pytest.skip("redis-server is not installed: compatibility tests need the reference")


@pytest.fixture(scope="session")
def redis_ref() -> Iterator[ServerProcess]:
    _require_redis()
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def resplite_srv() -> Iterator[ServerProcess]:
    server = start_resplite()
    yield server
    server.stop()


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


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def pair(request: pytest.FixtureRequest, redis_ref: ServerProcess,
         resplite_srv: ServerProcess) -> Iterator[Pair]:
    p = open_pair(redis_ref, resplite_srv, request.param)
    p.ref.call("FLUSHALL")
    p.ours.call("FLUSHALL")
    yield p
    p.close()


@pytest.fixture
def server_pair_factory() -> Iterator[Callable[..., tuple[ServerProcess, ServerProcess]]]:
    """Start a dedicated redis-server and resplite with extra directives."""
    started: list[ServerProcess] = []

    def make(*extra: str) -> tuple[ServerProcess, ServerProcess]:
        _require_redis()
        ref = start_redis(*extra)
        started.append(ref)
        ours = start_resplite(*extra)
        started.append(ours)
        return ref, ours

    yield make
    for server in started:
        server.stop()
