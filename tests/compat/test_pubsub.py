"""Pub/Sub against the reference Redis: subscribe and unsubscribe replies, the RESP2
subscribed context, RESP3 pushes interleaved with replies, delivery, PUBSUB introspection,
CLIENT REPLY, MULTI and pipelines, byte for byte under RESP2 and RESP3.

Every exchange reads the exact bytes from both servers through raw sockets. Where a command
answers several pushes (SUBSCRIBE a b), each is read and compared in turn.
"""

from __future__ import annotations

import re
import time

import pytest
from support import normalize
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair
from support.raw import RawClient, encode_command

Cmd = tuple[bytes | str | int, ...]


def exchange(pair: Pair, cmd: Cmd, replies: int) -> list[bytes]:
    """Send ``cmd`` to both servers and compare the next ``replies`` replies."""
    pair.ref.send(*cmd)
    pair.ours.send(*cmd)
    return read_both(pair, replies, " ".join(str(c) for c in cmd))


def read_both(pair: Pair, replies: int, what: str = "") -> list[bytes]:
    got = []
    for i in range(replies):
        expected, ours = pair.ref.read_reply(), pair.ours.read_reply()
        assert ours == expected, (
            f"RESP{pair.resp} {what} reply {i}\n redis:    {expected!r}\n resplite: {ours!r}"
        )
        got.append(ours)
    return got


def read_both_unordered(pair: Pair, replies: int, what: str = "") -> None:
    """Compare the next ``replies`` replies as a multiset: Redis serves pattern subscribers in
    its hash table's order, resplite in the order the patterns were first subscribed."""
    expected = sorted(pair.ref.read_reply() for _ in range(replies))
    ours = sorted(pair.ours.read_reply() for _ in range(replies))
    assert ours == expected, f"RESP{pair.resp} {what}\n redis: {expected}\n ours: {ours}"


def pipeline(pair: Pair, commands: list[Cmd], replies: int) -> list[bytes]:
    payload = b"".join(encode_command(c) for c in commands)
    pair.ref.send_raw(payload)
    pair.ours.send_raw(payload)
    return read_both(pair, replies, "pipeline")


def nothing_pending(*clients: RawClient) -> None:
    for client in clients:
        client.sock.settimeout(0.2)
        try:
            data = client.sock.recv(1 << 16)
        except TimeoutError:
            data = b""
        finally:
            client.sock.settimeout(5.0)
        assert data == b"" and client.buf == b"", f"unexpected {client.buf + data!r}"


# -- subscribing and unsubscribing ------------------------------------------------------------

SUBSCRIBE_SEQUENCES: dict[str, list[tuple[Cmd, int]]] = {
    "SUBSCRIBE: one push per channel, counts growing; a repeat does not count twice": [
        (("SUBSCRIBE", "a", "b", "a"), 3),
        (("SUBSCRIBE", "c"), 1),
    ],
    "UNSUBSCRIBE: named channels, subscribed or not, one push each": [
        (("SUBSCRIBE", "a", "b"), 2),
        (("UNSUBSCRIBE", "b", "zz", "b"), 3),
        (("UNSUBSCRIBE", "a"), 1),
    ],
    "UNSUBSCRIBE with no argument and nothing subscribed: one push with a null": [
        (("UNSUBSCRIBE",), 1),
        (("PUNSUBSCRIBE",), 1),
        (("SUNSUBSCRIBE",), 1),
    ],
    "UNSUBSCRIBE with no argument leaves the channels only, patterns stay counted": [
        (("SUBSCRIBE", "a"), 1),
        (("PSUBSCRIBE", "p*"), 1),
        (("UNSUBSCRIBE",), 1),
        (("PUNSUBSCRIBE",), 1),
        (("PUNSUBSCRIBE",), 1),
    ],
    "PSUBSCRIBE and PUNSUBSCRIBE count channels and patterns together": [
        (("SUBSCRIBE", "x"), 1),
        (("PSUBSCRIBE", "a*", "b?", "a*"), 3),
        (("PUNSUBSCRIBE", "b?", "nope"), 2),
        (("UNSUBSCRIBE", "x"), 1),
        (("PUNSUBSCRIBE", "a*"), 1),
    ],
    "SSUBSCRIBE counts shard channels apart from the others": [
        (("SUBSCRIBE", "x"), 1),
        (("SSUBSCRIBE", "s1", "s2"), 2),
        (("SUNSUBSCRIBE", "s1", "s3"), 2),
        (("UNSUBSCRIBE", "x"), 1),
        (("SUNSUBSCRIBE",), 1),
    ],
    "binary and empty channel names": [
        (("SUBSCRIBE", b"\x00\xff", ""), 2),
        (("UNSUBSCRIBE", b"\x00\xff", ""), 2),
    ],
}


@pytest.mark.parametrize("name", list(SUBSCRIBE_SEQUENCES))
def test_subscribe_sequences(pair: Pair, name: str) -> None:
    for cmd, replies in SUBSCRIBE_SEQUENCES[name]:
        exchange(pair, cmd, replies)
    exchange(pair, ("PING",), 1)


def test_subscribe_arity(pair: Pair) -> None:
    for cmd in (("SUBSCRIBE",), ("PSUBSCRIBE",), ("SSUBSCRIBE",), ("PUBLISH", "a"),
                ("SPUBLISH", "a", "b", "c"), ("PUBSUB",)):
        pair.check(*cmd)


# -- the subscribed context -------------------------------------------------------------------


def test_subscribed_context_allows_only_some_commands(pair: Pair) -> None:
    exchange(pair, ("SUBSCRIBE", "a"), 1)
    for cmd in (("GET", "k"), ("SET", "k", "v"), ("MULTI",), ("CLIENT", "ID"), ("HELLO",),
                ("ECHO", "x"), ("NOSUCH",), ("PUBLISH", "a", "m"), ("get",)):
        pair.check(*cmd)
    pair.check("PING")
    pair.check("PING", "hello")
    pair.check("PING", "a", "b")
    exchange(pair, ("PSUBSCRIBE", "p*"), 1)
    exchange(pair, ("UNSUBSCRIBE",), 1)
    pair.check("GET", "k")  # still in the context: a pattern is left
    exchange(pair, ("PUNSUBSCRIBE",), 1)
    pair.check("GET", "k")
    pair.check("PING")


def test_ssubscribe_enters_the_context_too(pair: Pair) -> None:
    exchange(pair, ("SSUBSCRIBE", "s"), 1)
    pair.check("GET", "k")
    pair.check("PING")
    exchange(pair, ("SUNSUBSCRIBE", "s"), 1)
    pair.check("PING")


def test_reset_leaves_the_context_without_messages(pair: Pair) -> None:
    exchange(pair, ("SUBSCRIBE", "a", "b"), 2)
    exchange(pair, ("PSUBSCRIBE", "p*"), 1)
    pair.check("RESET")
    pair.check("PING")
    exchange(pair, ("UNSUBSCRIBE",), 1)
    publisher = pair.connect_extra()
    try:
        publisher.check("PUBLISH", "a", "m")
        publisher.check("PUBSUB", "NUMPAT")
    finally:
        publisher.close()


def test_quit_in_the_context(pair: Pair) -> None:
    exchange(pair, ("SUBSCRIBE", "a"), 1)
    pair.check("QUIT")
    assert pair.ref.is_closed() and pair.ours.is_closed()


def test_pipelined_mix_with_a_subscribe(pair: Pair) -> None:
    # One channel only before the bare UNSUBSCRIBE: Redis leaves several in hash order.
    pipeline(pair, [
        ("SET", "k", "v"), ("SUBSCRIBE", "a"), ("PING",), ("GET", "k"),
        ("PSUBSCRIBE", "x*"), ("UNSUBSCRIBE",), ("PUNSUBSCRIBE", "x*"), ("GET", "k"),
        ("PING", "m"),
    ], 9)


def test_client_reply_off_still_sends_pushes(pair: Pair) -> None:
    pipeline(pair, [
        ("CLIENT", "REPLY", "OFF"), ("SET", "k", "v"), ("SUBSCRIBE", "a"),
        ("UNSUBSCRIBE", "a"), ("GET", "k"), ("CLIENT", "REPLY", "ON"), ("GET", "k"),
    ], 4)


def test_commands_refused_in_the_context_and_exec_abort(pair: Pair) -> None:
    exchange(pair, ("SUBSCRIBE", "a"), 1)
    pipeline(pair, [
        ("CLIENT", "REPLY", "OFF"), ("SUBSCRIBE", "b"), ("MONITOR",), ("MULTI",), ("EXEC",),
        ("DISCARD",), ("UNSUBSCRIBE", "a", "b"), ("GET", "k"),
    ], 8 if pair.resp == 2 else 3)  # RESP3 obeys REPLY OFF: only the pushes come


def test_client_reply_skip_and_subscribe(pair: Pair) -> None:
    pipeline(pair, [
        ("CLIENT", "REPLY", "SKIP"), ("SUBSCRIBE", "a"), ("UNSUBSCRIBE",), ("PING",),
    ], 3)


def test_subscribe_inside_multi(pair: Pair) -> None:
    pair.check("MULTI")
    pair.check("SUBSCRIBE", "a", "b")
    pair.check("SET", "k", "v")
    pair.check("SSUBSCRIBE", "s")
    pair.check("UNSUBSCRIBE", "a")
    # EXEC's array holds each command's reply: SUBSCRIBE's is two pushes back to back, so
    # the array's count (4) is one less than what follows it, as Redis sends it.
    pair.ref.send("EXEC")
    pair.ours.send("EXEC")
    read_both(pair, 2, "EXEC")
    exchange(pair, ("UNSUBSCRIBE",), 1)


# -- delivery ---------------------------------------------------------------------------------


def test_publish_delivers_messages(pair: Pair) -> None:
    publisher = pair.connect_extra()
    try:
        exchange(pair, ("SUBSCRIBE", "news", "other"), 2)
        exchange(pair, ("PSUBSCRIBE", "n*", "ne?s", "x*"), 3)
        publisher.check("PUBLISH", "news", "hello")
        # One message for the channel first, then one pmessage per matching pattern.
        read_both(pair, 1, "delivery")
        read_both_unordered(pair, 2, "delivery")
        publisher.check("PUBLISH", "other", b"bin\x00\r\nary")
        read_both(pair, 1, "delivery")
        publisher.check("PUBLISH", "nothing", "x")
        read_both(pair, 1, "delivery")
        publisher.check("PUBLISH", "zzz", "nobody")
        publisher.check("PUBLISH", "", "empty")
        nothing_pending(pair.ref, pair.ours)
    finally:
        publisher.close()


def test_glob_patterns_follow_redis(pair: Pair) -> None:
    publisher = pair.connect_extra()
    try:
        exchange(pair, ("PSUBSCRIBE", "h[ae]llo", "h\\*y", "[^a]b", "[a-c]z"), 4)
        for channel in ("hallo", "hello", "hillo", "h*y", "hey", "xb", "ab", "bz", "dz"):
            expected = publisher.check("PUBLISH", channel, "m")
            n = int(expected[1:-2])
            read_both(pair, n, channel)
        nothing_pending(pair.ref, pair.ours)
    finally:
        publisher.close()


def test_spublish_reaches_shard_subscribers_only(pair: Pair) -> None:
    publisher = pair.connect_extra()
    try:
        exchange(pair, ("SSUBSCRIBE", "s"), 1)
        exchange(pair, ("PSUBSCRIBE", "*"), 1)
        publisher.check("SPUBLISH", "s", "shard")
        read_both(pair, 1, "smessage")
        publisher.check("PUBLISH", "s", "plain")
        read_both(pair, 1, "pmessage")
        publisher.check("SPUBLISH", "none", "x")
        nothing_pending(pair.ref, pair.ours)
    finally:
        publisher.close()


def test_several_subscribers_and_counts(pair: Pair) -> None:
    others = [pair.connect_extra() for _ in range(3)]
    try:
        for i, other in enumerate(others):
            exchange(other, ("SUBSCRIBE", "c"), 1)
            if i:
                exchange(other, ("PSUBSCRIBE", "c*"), 1)
        pair.check("PUBLISH", "c", "m")
        for i, other in enumerate(others):
            read_both(other, 2 if i else 1, f"subscriber {i}")
        pair.check("PUBSUB", "NUMSUB", "c", "d", "c")
        pair.check("PUBSUB", "NUMPAT")
        pair.check("PUBSUB", "CHANNELS")
        pair.check("PUBSUB", "CHANNELS", "c*")
        pair.check("PUBSUB", "CHANNELS", "x*")
    finally:
        for other in others:
            other.close()


def test_a_subscriber_that_leaves_is_forgotten(pair: Pair) -> None:
    other = pair.connect_extra()
    exchange(other, ("SUBSCRIBE", "gone"), 1)
    exchange(other, ("PSUBSCRIBE", "gone*"), 1)
    exchange(other, ("SSUBSCRIBE", "sgone"), 1)
    other.close()
    # The servers notice the close asynchronously; PING both until they have.
    for _ in range(50):
        if pair.ours.call("PUBSUB", "NUMSUB", "gone") == pair.ref.call(
            "PUBSUB", "NUMSUB", "gone"
        ) and b":0" in pair.ours.call("PUBSUB", "NUMSUB", "gone"):
            break
    pair.check("PUBSUB", "NUMSUB", "gone")
    pair.check("PUBSUB", "NUMPAT")
    pair.check("PUBSUB", "SHARDNUMSUB", "sgone")
    pair.check("PUBLISH", "gone", "x")


# -- PUBSUB introspection ----------------------------------------------------------------------


def test_pubsub_introspection(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        exchange(other, ("SUBSCRIBE", "alpha"), 1)
        exchange(other, ("SSUBSCRIBE", "shard1"), 1)
        for cmd in (
            ("PUBSUB", "CHANNELS"), ("PUBSUB", "CHANNELS", "a*"), ("PUBSUB", "CHANNELS", "z"),
            ("PUBSUB", "CHANNELS", "a", "b"), ("PUBSUB", "NUMSUB"),
            ("PUBSUB", "NUMSUB", "alpha", "beta"), ("PUBSUB", "NUMPAT"),
            ("PUBSUB", "NUMPAT", "x"), ("PUBSUB", "SHARDCHANNELS"),
            ("PUBSUB", "SHARDCHANNELS", "s*"), ("PUBSUB", "SHARDCHANNELS", "a", "b"),
            ("PUBSUB", "SHARDNUMSUB", "shard1", "alpha"), ("PUBSUB", "SHARDNUMSUB"),
            ("PUBSUB", "NOSUCH"), ("PUBSUB", "channels"),
        ):
            pair.check(*cmd)
    finally:
        other.close()


def test_pubsub_help_shape(pair: Pair) -> None:
    ref, ours = pair.both("PUBSUB", "HELP")
    assert_same_shape(ref, ours, ours_has=implemented("pubsub"))


# -- RESP3: pushes interleaved with replies ----------------------------------------------------


def test_resp3_subscriber_runs_commands_between_messages(pair: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 only: under RESP2 the subscribed context refuses commands")
    publisher = pair.connect_extra()
    try:
        exchange(pair, ("SUBSCRIBE", "a"), 1)
        pair.check("SET", "k", "v")
        publisher.check("PUBLISH", "a", "one")
        read_both(pair, 1, "push")
        pair.check("GET", "k")
        pair.check("PING")
        publisher.check("PUBLISH", "a", "two")
        publisher.check("PUBLISH", "a", "three")
        pair.check("ECHO", "after")  # two pushes, then the reply
        read_both(pair, 2, "after")
    finally:
        publisher.close()


@pytest.mark.redis_version("7.2")
def test_resp3_own_publish_is_pushed_after_the_reply() -> None:
    """A RESP3 client publishing to its own channel gets the reply, then the push (Redis 7.2+;
    7.0 sent the push first)."""
    from support.servers import start_resplite

    server = start_resplite()
    try:
        c = RawClient(server.host, server.port)
        c.call("HELLO", "3")
        assert c.call("SUBSCRIBE", "a") == b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
        assert c.call("PUBLISH", "a", "m") == b":1\r\n"
        assert c.read_reply() == b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nm\r\n"
        c.send_raw(encode_command(("MULTI",)) + encode_command(("PUBLISH", "a", "x"))
                   + encode_command(("PUBLISH", "a", "y")) + encode_command(("EXEC",)))
        assert [c.read_reply() for _ in range(4)] == [
            b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", b"*2\r\n:1\r\n:1\r\n"]
        assert c.read_reply() == b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nx\r\n"
        assert c.read_reply() == b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\ny\r\n"
        c.close()
    finally:
        server.stop()


# -- MONITOR ----------------------------------------------------------------------------------

_MONITOR_HEAD = re.compile(rb"^\+\d+\.\d{6} \[(\d+) [^\]]+\] ")


def _monitor_line(line: bytes) -> bytes:
    return _MONITOR_HEAD.sub(rb"+<time> [\1 <addr>] ", line)


def test_monitor_lines(pair: Pair) -> None:
    monitor = pair.connect_extra()
    try:
        exchange(monitor, ("MONITOR",), 1)
        script: list[Cmd] = [
            ("SET", "k", b"a b\"c\\d\r\n\t\x07\x08\x00\xff\x7f"), ("get", "k"), ("NOSUCH", "x"),
            ("GET",), ("AUTH", "secret"), ("AUTH", "user", "secret"),
            ("HELLO", str(pair.resp), "AUTH", "default", "pw", "SETNAME", "n"),
            ("CONFIG", "GET", "maxmemory"), ("SELECT", "2"), ("INCR", "c"), ("MULTI",),
            ("SET", "x", "1"), ("EXEC",), ("SELECT", "0"), ("CLIENT", "ID"), ("PING",),
            ("DEBUG", "SLEEP", "0"), ("HSET", "h", "f", "1"), ("XADD", "s", "1-1", "f", "v"),
        ]
        for cmd in script:
            pair.ref.call(*cmd)
            pair.ours.call(*cmd)
        expected = [_monitor_line(line) for line in _drain_monitor(monitor.ref, pair.resp)]
        got = [_monitor_line(line) for line in _drain_monitor(monitor.ours, pair.resp)]
        assert got == expected, f"\n redis: {expected}\n resplite: {got}"
        # A monitor may not touch the keyspace (refused, so not shown); PING is shown after
        # its reply; a second MONITOR gets no reply at all.
        for cmd in (("GET", "k"), ("PING",), ("MONITOR",), ("PING",)):
            monitor.ref.send(*cmd)
            monitor.ours.send(*cmd)
        expected = [_monitor_line(monitor.ref.read_reply()) for _ in range(5)]
        got = [_monitor_line(monitor.ours.read_reply()) for _ in range(5)]
        assert got == expected
    finally:
        monitor.close()


def _drain_monitor(conn: RawClient, resp: int) -> list[bytes]:
    # The monitor's own ECHO marks the end of what came before it; its line follows its
    # reply (commands are shown once they have run).
    conn.send("ECHO", "end-of-monitor")
    out: list[bytes] = []
    while True:
        reply = conn.read_reply()
        if reply == b"$14\r\nend-of-monitor\r\n":
            assert conn.read_reply().endswith(b'] "ECHO" "end-of-monitor"\r\n')
            return out
        out.append(reply)


# -- client introspection and output buffer limits ---------------------------------------------


def _fields(conn: RawClient, *names: str) -> dict[str, str]:
    fields = dict(normalize.client_fields(normalize.verbatim_text(
        conn.call("CLIENT", "INFO")).rstrip(b"\n")))
    return {name: fields[name] for name in names}


def test_client_info_of_a_subscriber(pair: Pair) -> None:
    names = ("flags", "sub", "psub", "ssub", "redir", "omem", "cmd")
    assert _fields(pair.ours, *names) == _fields(pair.ref, *names)
    exchange(pair, ("SUBSCRIBE", "a", "b"), 2)
    exchange(pair, ("PSUBSCRIBE", "p*"), 1)
    exchange(pair, ("SSUBSCRIBE", "s"), 1)
    if pair.resp == 3:  # CLIENT INFO is refused in the RESP2 subscribed context
        assert _fields(pair.ours, *names) == _fields(pair.ref, *names)
    observer = pair.connect_extra()
    try:
        for conn in (observer.ref, observer.ours):
            listed = normalize.verbatim_text(conn.call("CLIENT", "LIST", "TYPE", "pubsub"))
            assert listed.count(b"\n") == 1 and b" flags=P " in listed
            assert b" sub=2 psub=1 ssub=1 " in listed
        for section in ("Clients", "Stats"):
            ref = dict(normalize.info_sections(normalize.verbatim_text(
                observer.ref.call("INFO", section)))[section])
            ours = dict(normalize.info_sections(normalize.verbatim_text(
                observer.ours.call("INFO", section)))[section])
            for key in ("pubsub_clients", "tracking_clients", "pubsub_channels",
                        "pubsub_patterns", "pubsubshard_channels"):
                if key in ref:
                    assert ours.get(key) == ref[key], key
    finally:
        observer.close()


@pytest.mark.parametrize("value", [
    "pubsub 1mb 512kb 10", "normal 100 50 5 replica 1gb 1gb 0",
    "slave 1000 2000 30 pubsub 0 0 0", "PUBSUB 1k 1kb 1",
])
def test_client_output_buffer_limit_config(pair: Pair, value: str) -> None:
    try:
        pair.check("CONFIG", "SET", "client-output-buffer-limit", value)
        pair.check("CONFIG", "GET", "client-output-buffer-limit")
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "client-output-buffer-limit",
                      "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")


@pytest.mark.parametrize("value", [
    "pubsub 1mb 512kb", "master 1 1 1", "nosuch 1 1 1", "pubsub x 1 1", "pubsub 1 1 -1",
    "pubsub 1 1 1x", "",
])
def test_client_output_buffer_limit_errors(pair: Pair, value: str) -> None:
    pair.check("CONFIG", "SET", "client-output-buffer-limit", value)
    pair.check("CONFIG", "GET", "client-output-buffer-limit")


@pytest.mark.parametrize("command", ["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"])
def test_subscriptions_count_in_used_memory(pair: Pair, command: str) -> None:
    """Subscriptions take memory as Redis counts it: past maxmemory (noeviction) a further
    SUBSCRIBE (denyoom) is refused with OOM; the subscriber leaving gives it back."""
    base = "a" * 2048
    subscriber = pair.connect_extra()
    try:
        pair.check("CONFIG", "SET", "maxmemory", "10485760")
        pair.check("CONFIG", "SET", "maxmemory-policy", "noeviction")
        for conn in (subscriber.ref, subscriber.ours):
            for i in range(6000):
                reply = conn.call(command, f"{base}{i}")
                if reply.startswith(b"-"):
                    break
            assert reply.startswith(b"-OOM command not allowed"), reply
            assert i > 1000
        subscriber.close()
        deadline = time.monotonic() + 30
        for conn in (pair.ref, pair.ours):
            while conn.call("SET", "after", "ok") != b"+OK\r\n":
                assert time.monotonic() < deadline
                time.sleep(0.01)
    finally:
        subscriber.close()
        pair.check("CONFIG", "SET", "maxmemory", "0")
