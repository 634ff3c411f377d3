"""``redis-compat-version``: resplite answering as the reference Redis's own version.

The reference redis-server is asked its version; resplite is started with that line as its
``redis-compat-version``, and the replies that differ between Redis versions (the
differences of :mod:`resplite.engine.compat`, and the commands added later) are compared
byte for byte. Version-specific shapes of the newer lines than the reference are checked on
resplite alone, from the facts the compat module records.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from compat_helpers import decode
from support.newer import as_map
from support.pair import Pair, open_pair
from support.raw import RawClient
from support.servers import ServerProcess, redis_server_path, start_redis, start_resplite

from resplite.engine import compat


def _line(server: ServerProcess) -> str:
    client = RawClient(server.host, server.port)
    try:
        info = client.call("INFO", "server").decode()
    finally:
        client.close()
    match = re.search(r"redis_version:(\d+)\.(\d+)", info)
    assert match is not None
    return f"{match[1]}.{match[2]}"


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[ServerProcess, ServerProcess]]:
    if redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    ref = start_redis()
    try:
        line = _line(ref)
        if line not in compat.VERSIONS:
            pytest.skip(f"the reference is Redis {line}, not a version resplite answers as")
        ours = start_resplite("--redis-compat-version", line)
        try:
            yield ref, ours
        finally:
            ours.stop()
    finally:
        ref.stop()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def vpair(request: pytest.FixtureRequest,
          servers: tuple[ServerProcess, ServerProcess]) -> Iterator[Pair]:
    p = open_pair(*servers, request.param)
    p.ref.call("FLUSHALL")
    p.ours.call("FLUSHALL")
    p.ref.call("SLOWLOG", "RESET")
    p.ours.call("SLOWLOG", "RESET")
    yield p
    p.close()


def _version_of(pair: Pair) -> compat.Version:
    return compat.parse(_line_of(pair.ours))


def _line_of(client: RawClient) -> str:
    match = re.search(rb"redis_version:(\d+\.\d+)", client.call("INFO", "server"))
    assert match is not None
    return match[1].decode()


def test_the_reported_version_is_the_line_asked_for(vpair: Pair) -> None:
    assert _line_of(vpair.ours) == _line_of(vpair.ref)
    hello: dict[Any, Any] = as_map(decode(vpair.ours.call("HELLO")))
    assert hello[b"version"].startswith(_line_of(vpair.ref).encode() + b".")
    script = vpair.ours.call("EVAL", "return redis.REDIS_VERSION", "0")
    assert script.split(b"\r\n")[1].startswith(_line_of(vpair.ref).encode() + b".")


# Commands and subcommands newer than 7.0, with arguments that would be valid for them.
_NEWER = [
    ("WAITAOF", "0", "0", "0"),  # 7.2
    ("HEXPIRE", "h", "10", "FIELDS", "1", "f"),  # 7.4
    ("HGETEX", "h", "FIELDS", "1", "f"),  # 8.0
    ("XACKDEL", "s", "g", "IDS", "1", "1-1"),  # 8.2
    ("MSETEX", "1", "k", "v"),  # 8.4
    ("XCFGSET", "s", "IDMP-DURATION", "5"),  # 8.6
    ("XNACK", "s", "g", "c", "IDS", "1", "1-1"),  # 8.8
    ("CLIENT", "NO-TOUCH", "on"),  # 7.2
    ("CLIENT", "SETINFO", "lib-name", "x"),  # 7.2
]


@pytest.mark.parametrize("command", _NEWER, ids=lambda c: " ".join(c[:2]))
def test_a_command_newer_than_the_version_is_unknown_as_there(
    vpair: Pair, command: tuple[str, ...],
) -> None:
    ref, ours = vpair.both(*command)
    if ref.startswith(b"-ERR unknown"):
        assert ours == ref
    else:  # the reference has it: so does resplite
        assert not ours.startswith(b"-ERR unknown"), ours


def test_slowlog_entries_have_the_version_s_length(vpair: Pair) -> None:
    for client in (vpair.ref, vpair.ours):
        client.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        client.call("SET", "k", "v")
        client.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    ref, ours = (decode(c.call("SLOWLOG", "GET", "1")) for c in (vpair.ref, vpair.ours))
    assert isinstance(ref, list) and isinstance(ours, list)
    assert len(ours[0]) == len(ref[0])


def test_client_list_has_the_version_s_fields(vpair: Pair) -> None:
    def names(line: bytes) -> list[bytes]:
        return [field.split(b"=", 1)[0] for field in line.split()]

    ref, ours = (decode(c.call("CLIENT", "INFO")) for c in (vpair.ref, vpair.ours))
    assert isinstance(ref, bytes) and isinstance(ours, bytes)
    assert names(ours) == names(ref)


def test_xinfo_has_the_version_s_fields(vpair: Pair) -> None:
    for client in (vpair.ref, vpair.ours):
        client.call("XADD", "s", "1-1", "f", "v")
        client.call("XGROUP", "CREATE", "s", "g", "0")
        client.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")

    def keys(reply: object) -> object:
        """Field names only, nested: the values (times, radix figures) may differ."""
        if isinstance(reply, list) and len(reply) % 2 == 0 and reply and all(
                isinstance(k, bytes) for k in reply[::2]):
            return [(k, keys(v)) for k, v in zip(reply[::2], reply[1::2], strict=True)]
        if isinstance(reply, dict):
            return [(k, keys(v)) for k, v in reply.items()]
        if isinstance(reply, list):
            return [keys(v) for v in reply]
        return None

    for command in (("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL"),
                    ("XINFO", "GROUPS", "s"), ("XINFO", "CONSUMERS", "s", "g")):
        ref, ours = (decode(c.call(*command)) for c in (vpair.ref, vpair.ours))
        assert keys(ours) == keys(ref), command


@pytest.mark.parametrize("line", compat.VERSIONS)
def test_every_version_starts_and_reports_itself(line: str) -> None:
    server = start_resplite("--redis-compat-version", line)
    try:
        client = RawClient(server.host, server.port)
        try:
            assert _line_of(client) == line
            # What the version has and has not, from the recorded facts.
            version = compat.parse(line)
            slow = client.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
            assert slow == b"+OK\r\n"
            client.call("PING")
            entry = decode(client.call("SLOWLOG", "GET", "1"))
            assert isinstance(entry, list)
            assert len(entry[0]) == (7 if compat.follows(version, "slowlog-argc") else 6)
            client.call("XADD", "s", "1-1", "f", "v")
            info = as_map(decode(client.call("XINFO", "STREAM", "s")))
            assert (b"idmp-duration" in info) == compat.follows(version, "xinfo-stream-idmp")
            unknown = client.call("XNACK", "s", "g", "c", "IDS", "1", "1-1")
            assert unknown.startswith(b"-ERR unknown command") == (version < (8, 8))
        finally:
            client.close()
    finally:
        server.stop()


def test_the_directive_is_refused_when_unknown_or_changed_at_run_time() -> None:
    server = start_resplite()
    try:
        client = RawClient(server.host, server.port)
        try:
            assert client.call("CONFIG", "GET", "redis-compat-version") == (
                b"*2\r\n$20\r\nredis-compat-version\r\n$4\r\n8.10\r\n")
            refused = client.call("CONFIG", "SET", "redis-compat-version", "7.0")
            assert refused.startswith(b"-ERR CONFIG SET failed"), refused
        finally:
            client.close()
    finally:
        server.stop()
