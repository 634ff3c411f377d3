"""The commands ``python -m bench`` and ``python -m bench.instructions`` measure: each one's
command line and what the server must hold before it runs (a filled keyspace, list or
stream, a loaded script)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from bench.clients import encode

SCRIPT = "return redis.call('incr', KEYS[1])"
SCRIPT_SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()
CHANNEL = b"bench:channel"
CAPPED_LENGTH = 100_000


GROUP_STREAM = b"bench:group-stream"


@dataclass(frozen=True)
class Case:
    """One command measured: ``line`` is the command as sent (``__rand_int__`` standing for
    a random number below the keyspace); redis-benchmark runs it as the ``-t`` test
    ``tests`` (reported as ``report``) where there is one, else given as a command line.
    The consumer-group cycle has neither (see :func:`bench.clients.consumer_cycles`).

    ``setup(requests, keyspace)`` gives the commands that prepare a run of ``requests``:
    before each run, or only before a server's first when ``once``."""

    name: str
    label: str
    tests: str = ""
    report: str = ""
    line: tuple[str, ...] = ()
    setup: Callable[[int, int], list[bytes]] | None = None
    once: bool = False


def _keyspace(requests: int, keyspace: int) -> list[bytes]:
    # redis-benchmark's __rand_int__ is a 12-digit, zero-padded number below -r.
    return [encode(b"MSET", *[part for i in range(first, min(first + 500, keyspace))
                              for part in (b"key:%012d" % i, b"xxx")])
            for first in range(0, keyspace, 500)]


def _list(requests: int, keyspace: int) -> list[bytes]:
    return [encode(b"RPUSH", b"mylist", *[b"xxx"] * min(1000, requests - first))
            for first in range(0, requests, 1000)]


def _fresh_stream(requests: int, keyspace: int) -> list[bytes]:
    return [encode(b"DEL", b"bench:stream")]


def _capped_stream(requests: int, keyspace: int) -> list[bytes]:
    return [encode(b"XADD", b"bench:capped", b"*", b"field", b"xxx")] * CAPPED_LENGTH


def group_stream(requests: int, keyspace: int) -> list[bytes]:
    """A stream of ``requests`` entries with ids ``1-1``, ``1-2``, ... and a group ``g``
    that has read none of them."""
    return [encode(b"DEL", GROUP_STREAM),
            *(encode(b"XADD", GROUP_STREAM, b"1-%d" % i, b"field", b"xxx")
              for i in range(1, requests + 1)),
            encode(b"XGROUP", b"CREATE", GROUP_STREAM, b"g", b"0")]


def _script(requests: int, keyspace: int) -> list[bytes]:
    return [encode(b"SCRIPT", b"LOAD", SCRIPT)]


CASES = (
    Case("PING", "PING", tests="ping_mbulk", report="PING_MBULK", line=("PING",)),
    Case("SET", "SET", tests="set", report="SET", line=("SET", "key:__rand_int__", "xxx")),
    Case("GET", "GET", tests="get", report="GET", line=("GET", "key:__rand_int__"),
         setup=_keyspace, once=True),
    Case("INCR", "INCR", tests="incr", report="INCR", line=("INCR", "counter:__rand_int__")),
    Case("LPUSH", "LPUSH", tests="lpush", report="LPUSH", line=("LPUSH", "mylist", "xxx")),
    Case("RPOP", "RPOP", tests="rpop", report="RPOP", line=("RPOP", "mylist"),
         setup=_list),
    Case("SADD", "SADD", tests="sadd", report="SADD",
         line=("SADD", "myset", "element:__rand_int__")),
    Case("HSET", "HSET", tests="hset", report="HSET",
         line=("HSET", "myhash", "element:__rand_int__", "xxx")),
    Case("ZADD", "ZADD", tests="zadd", report="ZADD",
         line=("ZADD", "myzset", "__rand_int__", "element:__rand_int__")),
    Case("XADD", "XADD", line=("XADD", "bench:stream", "*", "field", "xxx"),
         setup=_fresh_stream),
    Case("XADD-MAXLEN", "XADD MAXLEN ~ 100000",
         line=("XADD", "bench:capped", "MAXLEN", "~", str(CAPPED_LENGTH), "*", "field",
               "xxx"), setup=_capped_stream, once=True),
    Case("XREADGROUP", "XREADGROUP+XACK (cycle)", setup=group_stream),
    Case("EVALSHA", "EVALSHA (1 call)",
         line=("EVALSHA", SCRIPT_SHA, "1", "counter:__rand_int__"), setup=_script),
    Case("PUBLISH", "PUBLISH (1 subscriber)", line=("PUBLISH", CHANNEL.decode(), "xxx")),
)
NAMES = tuple(case.name for case in CASES)
