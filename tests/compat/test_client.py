"""CLIENT and its subcommands (``resplite/commands/client.py``) against the reference Redis
(8.6.3), client-side caching (TRACKING, CACHING, GETREDIR, TRACKINGINFO and the invalidations)
included.

Errors and simple replies are compared byte for byte. CLIENT LIST / INFO lines are compared
field by field: the same names in the same order (resplite answers as the reference's line),
the same values for what the commands under test decide (name, db, flags, multi, watch, cmd,
user, resp, lib-name, lib-ver), and only the shape for what depends on the process (ids,
addresses, file descriptors, buffer sizes, traffic counters). Redis 8.8's fields are checked
on resplite alone, marked.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from support import normalize
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair
from support.raw import RawClient

if TYPE_CHECKING:
    from resplite.testing.embedded import ServerHandle

# Fields whose values depend on the process, checked for shape only.
_VOLATILE = {
    "id": r"\d+", "addr": r"[\d.]+:\d+", "laddr": r"[\d.]+:\d+", "fd": r"\d+",
    "age": r"\d+", "idle": r"\d+", "qbuf": r"\d+", "qbuf-free": r"\d+", "argv-mem": r"\d+",
    "multi-mem": r"\d+", "rbs": r"\d+", "rbp": r"\d+", "obl": r"\d+", "oll": r"\d+",
    "omem": r"\d+", "tot-mem": r"\d+", "events": r"r|rw|w|",
}
# Redis 8.0's and 8.8's fields after lib-ver (traffic counters: checked as numbers).
_REDIS8_FIELDS = ("io-thread", "tot-net-in", "tot-net-out", "tot-cmds", "read-events",
                  "parse-batch-cmd-sum", "parse-batch-cnt")
_VOLATILE.update({name: r"\d+" for name in _REDIS8_FIELDS})


def _lines(data: bytes) -> list[list[tuple[str, str]]]:
    text = normalize.verbatim_text(data)
    assert text.endswith(b"\n") or text == b""
    return [normalize.client_fields(line) for line in text.split(b"\n") if line]


def assert_same_client_lines(ref: bytes, ours: bytes, resp: int) -> None:
    if resp == 3:
        assert ref.startswith(b"=") and ours.startswith(b"=")
    else:
        assert ref.startswith(b"$") and ours.startswith(b"$")
    ref_lines, our_lines = _lines(ref), _lines(ours)
    assert len(our_lines) == len(ref_lines)
    for ref_fields, our_fields in zip(ref_lines, our_lines, strict=True):
        # resplite answers as the reference's line: the same fields (7.2's lib-name and
        # lib-ver, 7.4's watch, 8.0's traffic counters; compat DIFFERENCES client-list-*).
        assert [n for n, _ in our_fields] == [n for n, _ in ref_fields]
        ref_values = dict(ref_fields)
        for name, value in our_fields:
            if name in _VOLATILE:
                assert re.fullmatch(_VOLATILE[name], value), (name, value)
            else:
                assert value == ref_values[name], (name, value, ref_values[name])


def test_client_id_and_info(pair: Pair) -> None:
    ref, ours = pair.both("CLIENT", "ID")
    assert re.fullmatch(rb":\d+\r\n", ours) and re.fullmatch(rb":\d+\r\n", ref)
    ref, ours = pair.both("CLIENT", "INFO")
    assert_same_client_lines(ref, ours, pair.resp)
    line = _lines(ours)[0]
    assert dict(line)["id"] == ours_id(pair)


def ours_id(pair: Pair) -> str:
    return pair.ours.call("CLIENT", "ID")[1:-2].decode()


def test_client_info_reflects_state(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        other.check("SELECT", "5")
        other.check("CLIENT", "SETNAME", "worker-1")
        other.check("CLIENT", "NO-EVICT", "on")
        other.check("WATCH", "a", "b")
        ref_id, our_id = (c.call("CLIENT", "ID")[1:-2] for c in (other.ref, other.ours))
        other.check("MULTI")
        other.check("PING")
        other.check("PING")
        other.check("CLIENT", "ID")
        ref = pair.ref.call("CLIENT", "LIST", "ID", ref_id)
        ours = pair.ours.call("CLIENT", "LIST", "ID", our_id)
        assert_same_client_lines(ref, ours, pair.resp)
        fields = dict(_lines(ours)[0])
        assert fields["flags"] == "xe" and fields["multi"] == "3" and fields["db"] == "5"
        assert fields["watch"] == "2" and fields["name"] == "worker-1"
        assert fields["cmd"] == "client|id"
    finally:
        other.close()


def test_client_list_filters(pair: Pair) -> None:
    ref, ours = pair.both("CLIENT", "LIST", "ID", "999999")
    assert_same_client_lines(ref, ours, pair.resp)
    ref_id = pair.ref.call("CLIENT", "ID")[1:-2]
    our_id = pair.ours.call("CLIENT", "ID")[1:-2]
    ref = pair.ref.call("CLIENT", "LIST", "ID", ref_id, "999999", ref_id)
    ours = pair.ours.call("CLIENT", "LIST", "ID", our_id, "999999", our_id)
    assert_same_client_lines(ref, ours, pair.resp)
    ref = pair.ref.call("CLIENT", "LIST", "TYPE", "pubsub")
    ours = pair.ours.call("CLIENT", "LIST", "TYPE", "PUBSUB")
    assert_same_client_lines(ref, ours, pair.resp)
    for type_name in ("normal", "NORMAL", "replica", "slave", "master"):
        ref, ours = pair.both("CLIENT", "LIST", "TYPE", type_name)
        # Other connections of the session may be listed; our own line must be there.
        assert normalize.verbatim_text(ours).count(b"\n") >= (type_name.lower() == "normal")


@pytest.mark.parametrize(
    "args",
    [
        ("TYPE", "foo"),
        ("ID", "abc"),
        ("ID", "1", "2", "x"),
        ("ID",),
        ("TYPE",),
        ("foo",),
        ("TYPE", "normal", "extra"),
    ],
    ids=lambda a: " ".join(a),
)
def test_client_list_errors(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("CLIENT", "LIST", *args)


def test_client_list_sees_other_connection(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        other.check("CLIENT", "SETNAME", "the-other")
        other.check("SELECT", "7")
        ref = pair.ref.call("CLIENT", "LIST", "ID", other.ref.call("CLIENT", "ID")[1:-2])
        ours = pair.ours.call("CLIENT", "LIST", "ID", other.ours.call("CLIENT", "ID")[1:-2])
        assert_same_client_lines(ref, ours, pair.resp)
        assert dict(_lines(ours)[0])["cmd"] == "client|id"
    finally:
        other.close()


def test_setname_getname(pair: Pair) -> None:
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETNAME", "abc")
    pair.check("CLIENT", "GETNAME")
    for bad in ("a b", "a\nb", "é", "\x7f", "\x00"):
        pair.check("CLIENT", "SETNAME", bad)
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETNAME", "")
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETNAME", "!~")
    pair.check("CLIENT", "GETNAME")


def test_names_are_checked_up_to_a_nul_byte(pair: Pair) -> None:
    """Redis 7.2 and later check a name as a C string: what follows a NUL is kept unchecked,
    and CLIENT LIST prints the name up to the NUL."""
    pair.check("CLIENT", "SETNAME", "a\0 b")
    pair.check("CLIENT", "GETNAME")
    pair.check("CLIENT", "SETINFO", "lib-name", "x\0 y")
    ref, ours = pair.both("CLIENT", "INFO")
    assert_same_client_lines(ref, ours, pair.resp)
    assert dict(_lines(ours)[0])["name"] == "a"


@pytest.mark.reference("7.0")
def test_names_with_a_nul_byte_are_refused_by_redis_7_0(pair: Pair) -> None:
    pair.check("CLIENT", "SETNAME", "a\0 b")
    pair.check("CLIENT", "SETNAME", "\0")
    pair.check("CLIENT", "GETNAME")


@pytest.mark.parametrize(
    "cmd",
    [
        ("NO-EVICT", "on"), ("NO-EVICT", "OFF"), ("NO-EVICT", "maybe"), ("NO-EVICT",),
        ("REPLY", "maybe"), ("TRACKINGINFO",), ("GETREDIR",), ("GETREDIR", "x"),
        ("UNPAUSE",), ("UNBLOCK", "abc"), ("UNBLOCK", "99999"), ("UNBLOCK", "1", "foo"),
        ("UNBLOCK", "1", "TIMEOUT"), ("UNBLOCK", "1", "error"), ("UNBLOCK", "1", "error", "x"),
        ("PAUSE", "abc"), ("PAUSE", "-1"), ("PAUSE", "10", "foo"), ("PAUSE", "0"),
        ("PAUSE", "0", "WRITE"), ("PAUSE", "10", "write", "x"), ("PAUSE", "1.5"),
        ("KILL", "1.2.3.4:5"), ("KILL", "id"), ("KILL", "ID", "99999"), ("KILL", "ID", "abc"),
        ("KILL", "ID", "0"), ("KILL", "ID", "-5"), ("KILL", "foo", "bar"),
        ("KILL", "ADDR", "1.1.1.1:1", "SKIPME", "maybe"), ("KILL", "USER", "nobody"),
        ("KILL", "TYPE", "pubsub"), ("KILL", "TYPE", "foo"), ("KILL", "TYPE", "master"),
        ("KILL", "ADDR", "9.9.9.9:9"), ("KILL", "LADDR", "9.9.9.9:9"), ("KILL", "ID", "1", "x"),
        ("KILL", "SKIPME", "no", "ID", "99999"),
    ],
    ids=lambda c: " ".join(c),
)
def test_client_subcommand_replies(pair: Pair, cmd: tuple[str, ...]) -> None:
    pair.check("CLIENT", *cmd)
    pair.check("PING")


def test_client_help_shape(pair: Pair) -> None:
    ref, ours = pair.both("CLIENT", "HELP")
    assert_same_shape(ref, ours, ours_has=implemented("client"))


def test_client_reply_modes(pair: Pair) -> None:
    script = [
        ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "ID"), ("PING",), ("ECHO", "one"),
        ("CLIENT", "REPLY", "OFF"), ("PING",), ("NOSUCH",), ("CLIENT", "REPLY", "SKIP"),
        ("ECHO", "hidden"), ("CLIENT", "REPLY", "ON"), ("CLIENT", "REPLY", "SKIP"),
        ("NOSUCH",), ("ECHO", "two"), ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"),
        ("ECHO", "three"),
    ]
    from support.raw import encode_command

    payload = b"".join(encode_command(cmd) for cmd in script)
    pair.ref.send_raw(payload)
    pair.ours.send_raw(payload)
    expected = [pair.ref.read_reply() for _ in range(5)]
    got = [pair.ours.read_reply() for _ in range(5)]
    assert got == expected
    assert pair.ref.call("PING") == pair.ours.call("PING")  # nothing else was sent


def _ids(extra: Pair) -> tuple[bytes, bytes]:
    return extra.ref.call("CLIENT", "ID")[1:-2], extra.ours.call("CLIENT", "ID")[1:-2]


def test_client_kill_by_id_and_addr(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        ref_id, our_id = _ids(other)
        assert pair.ref.call("CLIENT", "KILL", "ID", ref_id) == b":1\r\n"
        assert pair.ours.call("CLIENT", "KILL", "ID", our_id) == b":1\r\n"
        assert other.ref.is_closed() and other.ours.is_closed()
        ref, ours = pair.both("CLIENT", "LIST", "ID", ref_id)
        assert normalize.verbatim_text(ours) == normalize.verbatim_text(ref) == b""
    finally:
        other.close()
    for form in ("new", "old"):
        other = pair.connect_extra()
        try:
            other.check("PING")  # accepted and registered by both servers
            addrs = [_sockname(c) for c in (other.ref, other.ours)]
            if form == "new":
                replies = (pair.ref.call("CLIENT", "KILL", "ADDR", addrs[0], "SKIPME", "yes"),
                           pair.ours.call("CLIENT", "KILL", "ADDR", addrs[1], "SKIPME", "yes"))
                assert replies == (b":1\r\n", b":1\r\n")
            else:
                replies = (pair.ref.call("CLIENT", "KILL", addrs[0]),
                           pair.ours.call("CLIENT", "KILL", addrs[1]))
                assert replies == (b"+OK\r\n", b"+OK\r\n")
            assert other.ref.is_closed() and other.ours.is_closed()
        finally:
            other.close()


def _sockname(conn: RawClient) -> str:
    host, port = conn.sock.getsockname()[:2]
    return f"{host}:{port}"


def test_client_kill_self(pair: Pair) -> None:
    ref_id, our_id = pair.ref.call("CLIENT", "ID")[1:-2], pair.ours.call("CLIENT", "ID")[1:-2]
    # SKIPME yes (the default) spares the caller.
    assert pair.ref.call("CLIENT", "KILL", "ID", ref_id) == b":0\r\n"
    assert pair.ours.call("CLIENT", "KILL", "ID", our_id) == b":0\r\n"
    # The old form and SKIPME no do not: the reply comes, then the connection closes.
    assert pair.ref.call("CLIENT", "KILL", "ID", ref_id, "SKIPME", "no") == b":1\r\n"
    assert pair.ours.call("CLIENT", "KILL", "ID", our_id, "SKIPME", "no") == b":1\r\n"
    assert pair.ref.is_closed() and pair.ours.is_closed()


def test_client_kill_self_old_form(pair: Pair) -> None:
    addrs = [_sockname(c) for c in (pair.ref, pair.ours)]
    assert pair.ref.call("CLIENT", "KILL", addrs[0]) == b"+OK\r\n"
    assert pair.ours.call("CLIENT", "KILL", addrs[1]) == b"+OK\r\n"
    assert pair.ref.is_closed() and pair.ours.is_closed()


def test_client_unblock_wakes_a_blocked_client(pair: Pair) -> None:
    for reason in ((), ("TIMEOUT",), ("ERROR",)):
        other = pair.connect_extra()
        try:
            ref_id, our_id = _ids(other)
            other.ref.send("WAIT", "1", "0")  # no replica will ever answer: blocks for ever
            other.ours.send("WAIT", "1", "0")
            _wait_blocked(pair.ref, ref_id)
            _wait_blocked(pair.ours, our_id)
            ref = pair.ref.call("CLIENT", "UNBLOCK", ref_id, *reason)
            ours = pair.ours.call("CLIENT", "UNBLOCK", our_id, *reason)
            assert ref == ours == b":1\r\n"
            assert other.ours.read_reply() == other.ref.read_reply()
            other.check("PING")
            # Unblocking a client that is not blocked does nothing.
            ref = pair.ref.call("CLIENT", "UNBLOCK", ref_id, *reason)
            ours = pair.ours.call("CLIENT", "UNBLOCK", our_id, *reason)
            assert ref == ours == b":0\r\n"
        finally:
            other.close()


def _wait_blocked(conn: RawClient, client_id: bytes) -> None:
    for _ in range(200):
        line = conn.call("CLIENT", "LIST", "ID", client_id)
        if b"flags=b" in line:
            return
        import time

        time.sleep(0.005)
    raise AssertionError("the client never blocked")


def _expect_no_reply(conn: RawClient, timeout: float = 0.15) -> None:
    conn.sock.settimeout(timeout)
    try:
        with pytest.raises((TimeoutError, socket.timeout)):
            conn.read_reply()
    finally:
        conn.sock.settimeout(5)


def test_client_pause_write_holds_writes_until_unpause(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        pair.check("CLIENT", "PAUSE", "5000", "WRITE")
        other.check("GET", "k")  # reads go on
        other.ref.send("SET", "k", "v")
        other.ours.send("SET", "k", "v")
        _expect_no_reply(other.ref)
        _expect_no_reply(other.ours)
        pair.check("CLIENT", "UNPAUSE")
        assert other.ours.read_reply() == other.ref.read_reply() == b"+OK\r\n"
        other.check("GET", "k")
    finally:
        pair.check("CLIENT", "UNPAUSE")
        other.close()


def _blocked_clients(pair: Pair) -> tuple[str, str]:
    ref, ours = pair.info("clients")
    return dict(ref["Clients"])["blocked_clients"], dict(ours["Clients"])["blocked_clients"]


def test_client_pause_write_holds_may_replicate_commands_as_blocked_clients(pair: Pair) -> None:
    # PFCOUNT may rewrite its key and PUBLISH goes to replicas: a WRITE pause holds both,
    # and the held clients count as blocked, on both servers alike.
    pair.check("PFADD", "hll", "a")
    counter, publisher = pair.connect_extra(), pair.connect_extra()
    try:
        pair.check("CLIENT", "PAUSE", "100000", "WRITE")
        for conn, cmd in ((counter, ("PFCOUNT", "hll")), (publisher, ("PUBLISH", "ch", "m"))):
            conn.ref.send(*cmd)
            conn.ours.send(*cmd)
        for _ in range(1000):
            if _blocked_clients(pair) == ("2", "2"):
                break
            import time

            time.sleep(0.01)
        assert _blocked_clients(pair) == ("2", "2")
        _expect_no_reply(counter.ours)
        _expect_no_reply(publisher.ours)
        pair.check("CLIENT", "UNPAUSE")
        assert counter.ours.read_reply() == counter.ref.read_reply() == b":1\r\n"
        assert publisher.ours.read_reply() == publisher.ref.read_reply() == b":0\r\n"
        assert _blocked_clients(pair) == ("0", "0")
    finally:
        pair.check("CLIENT", "UNPAUSE")
        counter.close()
        publisher.close()


def test_client_pause_write_lets_read_only_scripts_through(pair: Pair) -> None:
    # EVAL_RO and EVALSHA_RO are not may-replicate, unlike EVAL: without a shebang, the
    # first runs during a WRITE pause and the second is held.
    read = "return redis.call('get', KEYS[1])"
    sha = pair.check("SCRIPT", "LOAD", read)[5:-2]
    other = pair.connect_extra()
    try:
        pair.check("SET", "k", "v")
        pair.check("CLIENT", "PAUSE", "100000", "WRITE")
        other.check("EVAL_RO", read, 1, "k")
        other.check("EVALSHA_RO", sha, 1, "k")
        other.ref.send("EVAL", read, 1, "k")
        other.ours.send("EVAL", read, 1, "k")
        _expect_no_reply(other.ref)
        _expect_no_reply(other.ours)
        pair.check("CLIENT", "UNPAUSE")
        assert other.ours.read_reply() == other.ref.read_reply() == b"$1\r\nv\r\n"
    finally:
        pair.check("CLIENT", "UNPAUSE")
        other.close()


def test_client_pause_holds_multi_queueing_and_ends_by_itself(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        other.check("MULTI")
        pair.check("CLIENT", "PAUSE", "300", "WRITE")
        other.ref.send("SET", "k", "v")
        other.ours.send("SET", "k", "v")
        _expect_no_reply(other.ref, 0.1)
        _expect_no_reply(other.ours, 0.1)
        # Without UNPAUSE the pause ends at its timeout and the held command runs.
        assert other.ours.read_reply() == other.ref.read_reply() == b"+QUEUED\r\n"
        other.check("EXEC")
    finally:
        pair.check("CLIENT", "UNPAUSE")
        other.close()


def test_client_pause_all_holds_everyone_including_the_caller(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        pair.check("CLIENT", "PAUSE", "1000", "ALL")
        for conn in (other.ref, other.ours, pair.ref, pair.ours):
            conn.send("PING")
        for conn in (other.ref, other.ours, pair.ref, pair.ours):
            _expect_no_reply(conn, 0.1)
        # The pause ends by itself; every held command then runs.
        for conn in (other.ref, other.ours, pair.ref, pair.ours):
            assert conn.read_reply() == b"+PONG\r\n"
    finally:
        other.close()


def test_client_pause_refuses_an_end_past_the_clock_range(pair: Pair) -> None:
    # Redis 7.0 adds such a timeout to the clock and overflows (not sent to it); 7.2 and later
    # refuse it with the error WAIT and blocking reads give.
    for mode in ((), ("WRITE",), ("ALL",)):
        pair.check("CLIENT", "PAUSE", "9223372036854775807", *mode)
    pair.check("WAIT", "0", "9223372036854775807")
    pair.check("SET", "k", "v")  # nothing was paused


def test_client_setinfo(pair: Pair) -> None:
    pair.check("CLIENT", "SETINFO", "LIB-NAME", "redis-py")
    pair.check("CLIENT", "SETINFO", "lib-ver", "8.1.0")
    pair.check("CLIENT", "SETINFO", "lib-foo", "x")
    pair.check("CLIENT", "SETINFO", "Lib-Name", "a b")
    pair.check("CLIENT", "SETINFO", "lib-name")
    ref, ours = pair.both("CLIENT", "INFO")
    assert_same_client_lines(ref, ours, pair.resp)
    fields = dict(_lines(ours)[0])
    assert fields["lib-name"] == "redis-py" and fields["lib-ver"] == "8.1.0"
    pair.check("CLIENT", "SETINFO", "lib-name", "")
    ref, ours = pair.both("CLIENT", "INFO")
    assert_same_client_lines(ref, ours, pair.resp)
    assert dict(_lines(ours)[0])["lib-name"] == ""


@pytest.mark.reference("7.0")
def test_client_setinfo_is_unknown_to_redis_7_0(pair: Pair) -> None:
    pair.check("CLIENT", "SETINFO", "lib-name", "x")
    pair.check("CLIENT", "NO-TOUCH", "on")
    # (CLIENT KILL MAXAGE, 7.4's, is an option of an existing command: accepted whatever
    # the version, docs/compatibility.md.)


def test_client_no_touch(pair: Pair) -> None:
    pair.check("CLIENT", "NO-TOUCH", "on")
    ref, ours = pair.both("CLIENT", "INFO")
    assert_same_client_lines(ref, ours, pair.resp)
    assert dict(_lines(ours)[0])["flags"] == "T"
    pair.check("CLIENT", "NO-TOUCH", "maybe")
    pair.check("CLIENT", "NO-TOUCH", "off")
    ref, ours = pair.both("CLIENT", "INFO")
    assert_same_client_lines(ref, ours, pair.resp)


def test_client_kill_maxage(pair: Pair) -> None:
    pair.check("CLIENT", "KILL", "MAXAGE", "100000")
    pair.check("CLIENT", "KILL", "MAXAGE", "0")
    pair.check("CLIENT", "KILL", "MAXAGE", "bogus")


# -- client-side caching: CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO ------------------------
#
# The invalidation messages are RESP3 pushes, or Pub/Sub messages on ``__redis__:invalidate``
# for a RESP2 client redirecting to a subscriber, compared byte for byte. Client ids differ
# between the two servers, so commands that name one (REDIRECT) are sent to each server with
# its own id, and replies that show it are compared with the id replaced.


def ids(pair: Pair) -> tuple[int, int]:
    return int(pair.ref.call("CLIENT", "ID")[1:-2]), int(pair.ours.call("CLIENT", "ID")[1:-2])


def both_with_id(pair: Pair, target: Pair, *cmd: str) -> None:
    """Send ``cmd`` with ``{id}`` replaced by ``target``'s client id on each server."""
    ref_id, our_id = ids(target)
    expected = pair.ref.call(*[c.replace("{id}", str(ref_id)) for c in cmd])
    got = pair.ours.call(*[c.replace("{id}", str(our_id)) for c in cmd])
    assert got == expected, f"{cmd}\n redis: {expected!r}\n resplite: {got!r}"


def same_shape(pair: Pair, target: Pair, *cmd: str) -> None:
    """Compare replies with ``target``'s id (as it appears in them) replaced by ``<id>``."""
    ref_id, our_id = ids(target)
    expected = pair.ref.call(*cmd).replace(b":%d\r\n" % ref_id, b":<id>\r\n")
    got = pair.ours.call(*cmd).replace(b":%d\r\n" % our_id, b":<id>\r\n")
    assert got == expected, f"{cmd}\n redis: {expected!r}\n resplite: {got!r}"


def pending(conn: RawClient) -> list[bytes]:
    """Every reply the connection got before a PING sent now (the PONG itself left out)."""
    conn.send("PING")
    out: list[bytes] = []
    while True:
        reply = conn.read_reply()
        if reply in (b"+PONG\r\n", b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"):
            return out
        out.append(reply)


def compare_pending(pair: Pair) -> list[bytes]:
    expected, got = pending(pair.ref), pending(pair.ours)
    assert got == expected, f"pending\n redis: {expected}\n resplite: {got}"
    return got


@pytest.fixture
def other(pair: Pair) -> Iterator[Pair]:
    extra = pair.connect_extra()
    yield extra
    extra.close()


# -- the commands and their errors -----------------------------------------------------------


@pytest.mark.parametrize("cmd", [
    ("CLIENT", "TRACKING", "on"), ("CLIENT", "TRACKING", "OFF"), ("CLIENT", "TRACKING", "maybe"),
    ("CLIENT", "TRACKING", "on", "PREFIX", "a"), ("CLIENT", "TRACKING", "on", "BCAST", "OPTIN"),
    ("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"), ("CLIENT", "TRACKING", "on", "NOSUCH"),
    ("CLIENT", "TRACKING", "on", "REDIRECT"), ("CLIENT", "TRACKING", "on", "REDIRECT", "x"),
    ("CLIENT", "TRACKING", "on", "REDIRECT", "999999"), ("CLIENT", "TRACKING", "on", "PREFIX"),
    ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
    ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b", "NOLOOP"),
    ("CLIENT", "TRACKING"), ("CLIENT", "CACHING", "yes"), ("CLIENT", "CACHING"),
    ("CLIENT", "GETREDIR"), ("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR", "x"),
])
def test_tracking_commands_alone(pair: Pair, cmd: tuple[str, ...]) -> None:
    pair.check(*cmd)
    pair.check("CLIENT", "TRACKINGINFO")
    pair.check("CLIENT", "GETREDIR")


TRANSITIONS: dict[str, list[tuple[str, ...]]] = {
    "OPTIN, then CACHING YES / NO": [
        ("CLIENT", "TRACKING", "on", "OPTIN"), ("CLIENT", "CACHING", "yes"),
        ("CLIENT", "TRACKINGINFO"), ("CLIENT", "CACHING", "no"), ("CLIENT", "CACHING", "x"),
        ("GET", "k"), ("CLIENT", "TRACKINGINFO"),
    ],
    "OPTOUT, then CACHING NO": [
        ("CLIENT", "TRACKING", "on", "OPTOUT", "NOLOOP"), ("CLIENT", "CACHING", "no"),
        ("CLIENT", "TRACKINGINFO"), ("CLIENT", "CACHING", "yes"),
        ("CLIENT", "TRACKING", "on", "OPTIN"), ("CLIENT", "TRACKING", "on", "BCAST"),
    ],
    "BCAST prefixes accumulate, overlap refused, BCAST cannot be switched": [
        ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "acct:"),
        ("CLIENT", "TRACKINGINFO"), ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:x"),
        ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "zz"), ("CLIENT", "TRACKINGINFO"),
        ("CLIENT", "TRACKING", "on"), ("CLIENT", "TRACKING", "off"), ("CLIENT", "TRACKINGINFO"),
        ("CLIENT", "TRACKING", "on"), ("CLIENT", "TRACKINGINFO"),
    ],
    "BCAST with no prefix tracks everything": [
        ("CLIENT", "TRACKING", "on", "BCAST"), ("CLIENT", "TRACKINGINFO"),
        ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a"),
    ],
    "RESET turns tracking off": [
        ("CLIENT", "TRACKING", "on", "NOLOOP"), ("RESET",), ("CLIENT", "TRACKINGINFO"),
    ],
}


@pytest.mark.parametrize("name", list(TRANSITIONS))
def test_tracking_transitions(pair: Pair, name: str) -> None:
    for cmd in TRANSITIONS[name]:
        pair.check(*cmd)


def test_redirect_info_and_getredir(pair: Pair, other: Pair) -> None:
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}")
    same_shape(pair, other, "CLIENT", "GETREDIR")
    same_shape(pair, other, "CLIENT", "TRACKINGINFO")
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "REDIRECT", "{id}")


# -- invalidations --------------------------------------------------------------------------------


def _info_field(conn: RawClient, section: str, name: str) -> int:
    text = conn.call("INFO", section).decode()
    return int(text.split(f"\r\n{name}:")[1].split("\r\n")[0])


def test_an_eviction_s_invalidation_comes_before_the_reply(pair: Pair) -> None:
    """A key evicted to make room for a command is invalidated before that command's reply
    (Redis evicts before it runs the command); the reply follows."""
    if pair.resp != 3:
        pytest.skip("invalidations reach a RESP2 client only through a redirect")
    pair.check("CLIENT", "TRACKING", "on")
    try:
        for conn in (pair.ref, pair.ours):
            used = _info_field(conn, "memory", "used_memory") - \
                _info_field(conn, "memory", "mem_not_counted_for_evict")
            assert conn.call("CONFIG", "SET", "maxmemory", str(used + 100 * 1024)) == b"+OK\r\n"
        pair.check("CONFIG", "SET", "maxmemory-policy", "volatile-random")
        pair.check("SETEX", "volatile-key", "10000", "x")
        pair.check("GET", "volatile-key")
        pair.check("SETBIT", "big-key", "1600000", "0")  # over the limit from now on
        pair.check("GETBIT", "big-key", "0")  # the invalidation, first
        assert compare_pending(pair) == [b":0\r\n"]  # then the reply
        pair.check("EXISTS", "volatile-key")
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "maxmemory", "0")
            conn.call("CONFIG", "SET", "maxmemory-policy", "noeviction")


def _wait_blocked_both(pair: Pair, count: str) -> None:
    deadline = time.monotonic() + 30
    while _blocked_clients(pair) != (count, count):
        assert time.monotonic() < deadline, _blocked_clients(pair)
        time.sleep(0.01)


def test_a_served_blocked_command_s_reply_comes_before_its_invalidation(
        pair: Pair, other: Pair) -> None:
    """A blocked BLMOVE served later writes a key its own client tracks: the reply first,
    then the invalidation, as after any command (pushes queued before it was served would
    go first)."""
    if pair.resp != 3:
        pytest.skip("invalidations reach a RESP2 client only through a redirect")
    pair.check("RPUSH", "list2", "a")
    other.check("CLIENT", "TRACKING", "on")
    other.check("LRANGE", "list2", "0", "-1")
    for conn in (other.ref, other.ours):
        conn.send("BLMOVE", "list1", "list2", "LEFT", "LEFT", "0")
    _wait_blocked_both(pair, "1")
    pair.check("RPUSH", "list1", "foo")
    assert other.ours.read_reply() == other.ref.read_reply() == b"$3\r\nfoo\r\n"
    assert other.ours.read_reply() == other.ref.read_reply()
    assert compare_pending(other) == []


def test_the_tracking_table_keeps_at_most_its_max_keys(pair: Pair, other: Pair) -> None:
    """tracking-table-max-keys: past it, remembered keys are invalidated until the table
    holds that many (which ones is each server's choice: Redis's is random)."""
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "NOLOOP")
    other.check("SUBSCRIBE", "__redis__:invalidate")
    pair.check("MSET", "key1", "1", "key2", "2", "key3", "3")
    pair.check("MGET", "key1", "key2", "key3")
    try:
        pair.check("CONFIG", "SET", "tracking-table-max-keys", "1")
        told: dict[str, set[bytes]] = {}
        for name, conn in (("redis", other.ref), ("resplite", other.ours)):
            told[name] = set()
            while len(told[name]) < 2:  # Redis's cron gets there within a tick
                message = conn.read_reply()
                assert b"invalidate" in message, message
                told[name].update(re.findall(rb"key\d", message))
        assert len(told["redis"]) == len(told["resplite"]) == 2
        ref, ours = pair.info("stats")
        assert dict(ref["Stats"])["tracking_total_keys"] == \
            dict(ours["Stats"])["tracking_total_keys"] == "1"
    finally:
        pair.check("CONFIG", "SET", "tracking-table-max-keys", "1000000")


def test_default_mode_invalidations_resp3(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("invalidations reach a RESP2 client only through a redirect")
    pair.check("CLIENT", "TRACKING", "on")
    pair.check("SET", "a", "1")
    pair.check("MSET", "b", "2", "c", "3")
    pair.check("GET", "a")
    pair.check("MGET", "b", "c", "nope")
    pair.check("STRLEN", "a")  # a second read of a changes nothing
    other.check("SET", "a", "x")
    other.check("DEL", "b", "nope")
    other.check("SET", "a", "y")  # a was not read again: no second message
    compare_pending(pair)
    pair.check("SET", "c", "z")  # our own write: the message follows the reply
    compare_pending(pair)
    pair.check("GET", "c")
    other.check("FLUSHDB")
    compare_pending(pair)


def test_noloop_skips_own_writes(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "NOLOOP")
    pair.check("SET", "k", "1")
    pair.check("GET", "k")
    pair.check("SET", "k", "2")
    compare_pending(pair)
    pair.check("GET", "k")
    other.check("INCR", "k")
    compare_pending(pair)


def test_optin_and_optout_decide_what_is_remembered(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "OPTIN")
    pair.check("GET", "a")
    pair.check("CLIENT", "CACHING", "yes")
    pair.check("GET", "b")
    pair.check("GET", "c")  # CACHING YES lasted one command
    other.check("MSET", "a", "1", "b", "1", "c", "1")
    compare_pending(pair)
    pair.check("CLIENT", "TRACKING", "off")
    pair.check("CLIENT", "TRACKING", "on", "OPTOUT")
    pair.check("GET", "a")
    pair.check("CLIENT", "CACHING", "no")
    pair.check("GET", "b")
    other.check("MSET", "a", "2", "b", "2")
    compare_pending(pair)


def test_optin_caching_lasts_for_a_whole_transaction(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "OPTIN")
    pair.check("CLIENT", "CACHING", "yes")
    pair.check("MULTI")
    pair.check("GET", "a")
    pair.check("GET", "b")
    pair.check("EXEC")
    other.check("MSET", "a", "1", "b", "1")
    compare_pending(pair)


def test_hashes_and_streams_are_tracked_too(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on")
    pair.check("HSET", "h", "f", "v")
    pair.check("HGET", "h", "f")
    pair.check("XADD", "s", "1-1", "f", "v")
    pair.check("XRANGE", "s", "-", "+")
    pair.check("XLEN", "s")
    other.check("HDEL", "h", "f")
    other.check("XADD", "s", "2-1", "f", "v")
    compare_pending(pair)


def test_bcast_sends_prefixed_keys_once_per_turn(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "acct:")
    other.check("MSET", "user:2", "a", "user:1", "b", "acct:9", "c", "other", "d")
    compare_pending(pair)
    other.check("DEL", "user:1")
    compare_pending(pair)


def test_bcast_noloop_leaves_out_own_keys(pair: Pair, other: Pair) -> None:
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP")
    pair.check("SET", "mine", "1")
    compare_pending(pair)
    other.check("SET", "theirs", "1")
    compare_pending(pair)


def test_redirect_to_a_resp2_subscriber(pair: Pair, other: Pair) -> None:
    """RESP2 caching: the data connection redirects to a connection subscribed to
    ``__redis__:invalidate``, which gets Pub/Sub messages (a null on FLUSHALL)."""
    ref_id, our_id = ids(other)
    for conn in (other.ref, other.ours):
        if pair.resp == 3:
            conn.call("HELLO", "2")
        conn.call("SUBSCRIBE", "__redis__:invalidate")
    assert pair.ref.call("CLIENT", "TRACKING", "on", "REDIRECT", str(ref_id)) == b"+OK\r\n"
    assert pair.ours.call("CLIENT", "TRACKING", "on", "REDIRECT", str(our_id)) == b"+OK\r\n"
    pair.check("SET", "k", "v")
    pair.check("GET", "k")
    pair.check("SET", "k", "w")
    compare_pending(other)
    pair.check("GET", "k")
    pair.check("FLUSHALL")
    compare_pending(other)


def test_redirect_to_a_resp3_connection(pair: Pair, other: Pair) -> None:
    for conn in (other.ref, other.ours):
        conn.call("HELLO", "3")
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "BCAST")
    pair.check("SET", "k", "v")
    compare_pending(other)


def test_broken_redirect(pair: Pair, other: Pair) -> None:
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}")
    pair.check("SET", "k", "v")
    pair.check("GET", "k")
    other.close()
    # Wait for both servers to notice the closed connection.
    for conn in (pair.ref, pair.ours):
        for _ in range(200):
            if b"flags=N" in conn.call("CLIENT", "LIST")[-300:] and conn.call(
                "CLIENT", "LIST"
            ).count(b"\n") <= 1:
                break
    pair.check("SET", "k", "w")
    if pair.resp == 3:
        # The tracking-redir-broken push carries the old id; compare its shape.
        ref, ours = pending(pair.ref), pending(pair.ours)
        assert [r.split(b":")[0] for r in ours] == [r.split(b":")[0] for r in ref]
        assert len(ours) == 1 and b"tracking-redir-broken" in ours[0]
    ref_info = pair.ref.call("CLIENT", "TRACKINGINFO")
    our_info = pair.ours.call("CLIENT", "TRACKINGINFO")
    assert b"broken_redirect" in ref_info and b"broken_redirect" in our_info


@pytest.mark.redis_version("8.8")
def test_client_info_counts_the_connections_traffic(server: ServerHandle) -> None:
    """Redis 8.0's io-thread, tot-net-in, tot-net-out, tot-cmds and 8.8's read-events,
    parse-batch-cmd-sum, parse-batch-cnt: the bytes read and written and the commands run
    before the CLIENT INFO asking (one read per request sent after the previous reply)."""
    conn = RawClient(server.host, server.port)
    try:
        assert conn.call("PING") == b"+PONG\r\n"
        assert conn.call("ECHO", "hello") == b"$5\r\nhello\r\n"
        fields = dict(normalize.client_fields(
            normalize.verbatim_text(conn.call("CLIENT", "INFO")).rstrip(b"\n")))
        request = len(b"*2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n")
        assert fields["io-thread"] == "0"
        assert fields["tot-net-in"] == str(len(b"*1\r\n$4\r\nPING\r\n")
                                           + len(b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n")
                                           + request)
        assert fields["tot-net-out"] == str(len(b"+PONG\r\n") + len(b"$5\r\nhello\r\n"))
        assert fields["tot-cmds"] == "2"
        assert fields["read-events"] == "3"
        assert (fields["parse-batch-cmd-sum"], fields["parse-batch-cnt"]) == ("2", "2")
    finally:
        conn.close()


def test_a_pause_holds_expiry_back(pair: Pair) -> None:
    """CLIENT PAUSE WRITE pauses expiry too: a key past its time reads as missing but is not
    deleted (expired_keys stays), RANDOMKEY may still answer it; after UNPAUSE it goes."""
    pair.check("CONFIG", "RESETSTAT")
    try:
        pair.check("MULTI")
        pair.check("SET", "key", "value", "PX", "3")
        pair.check("CLIENT", "PAUSE", "100000", "WRITE")
        pair.check("EXEC")
        deadline = time.monotonic() + 30
        while pair.ref.call("PTTL", "key") != b":-2\r\n" or \
                pair.ours.call("PTTL", "key") != b":-2\r\n":
            assert time.monotonic() < deadline
            time.sleep(0.005)
        for cmd in (("GET", "key"), ("EXISTS", "key"), ("TYPE", "key"), ("KEYS", "*"),
                    ("RANDOMKEY",), ("DBSIZE",)):
            pair.check(*cmd)
        ref, ours = pair.info("stats")
        assert dict(ref["Stats"])["expired_keys"] == dict(ours["Stats"])["expired_keys"] == "0"
        pair.check("CLIENT", "UNPAUSE")
        pair.check("GET", "key")
        pair.check("RANDOMKEY")
        ref, ours = pair.info("stats")
        assert dict(ref["Stats"])["expired_keys"] == dict(ours["Stats"])["expired_keys"] == "1"
    finally:
        pair.check("CLIENT", "UNPAUSE")


def _tot_cmds(conn: RawClient) -> int:
    info = normalize.verbatim_text(conn.call("CLIENT", "INFO")).rstrip(b"\n")
    return int(dict(normalize.client_fields(info))["tot-cmds"])


def test_tot_cmds_counts_calls_as_redis(pair: Pair, other: Pair) -> None:
    """tot-cmds counts every call made for the client: a script's calls, EXEC's queued
    commands (not their queueing), a blocked command once it has its reply."""
    pair.check("SET", "k", "v")
    before = (_tot_cmds(pair.ref), _tot_cmds(pair.ours))
    pair.check("EVAL", "redis.call('ping') return redis.call('get', KEYS[1])", "1", "k")
    pair.check("MULTI")
    pair.check("PING")
    pair.check("GET", "k")
    pair.check("EXEC")
    pair.check("GETX")  # unknown: no call
    after = (_tot_cmds(pair.ref), _tot_cmds(pair.ours))
    assert after[0] - before[0] == after[1] - before[1]
    other_before = (_tot_cmds(other.ref), _tot_cmds(other.ours))
    for conn in (other.ref, other.ours):
        conn.send("BLPOP", "waited", "0")
    _wait_blocked_both(pair, "1")
    pair.check("LPUSH", "waited", "x")
    assert other.ours.read_reply() == other.ref.read_reply()
    other_after = (_tot_cmds(other.ref), _tot_cmds(other.ours))
    assert other_after[0] - other_before[0] == other_after[1] - other_before[1] == 2


def test_randomkey_under_a_pause_draws_over_expired_keys(pair: Pair) -> None:
    """Under a pause expired keys stay but RANDOMKEY draws past them to a live key (only
    when every key has a TTL does it give up and answer an expired one)."""
    try:
        pair.check("MULTI")
        pair.check("SET", "gone", "v", "PX", "1")
        pair.check("SET", "live", "v")
        pair.check("CLIENT", "PAUSE", "100000", "WRITE")
        pair.check("EXEC")
        deadline = time.monotonic() + 30
        for conn in (pair.ref, pair.ours):
            while conn.call("EXISTS", "gone") != b":0\r\n":
                assert time.monotonic() < deadline
                time.sleep(0.005)
        for _ in range(20):
            pair.check("RANDOMKEY")
        pair.check("DBSIZE")
    finally:
        pair.check("CLIENT", "UNPAUSE")
