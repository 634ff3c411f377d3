"""RESPLITE.CLOCK over the wire: exact replies, the enable-clock-command gate, bad arguments
that change nothing, and everything time-dependent following the clock (TTLs, TIME, INFO
uptime, ``*`` stream ids, pending-entry idle times, BLOCK timeouts), in the order a real
passage of time would fire it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from support.helpshape import HelpReply, implemented
from support.raw import RawClient

import resplite
from resplite.testing.embedded import ServerHandle

T0 = 1_900_000_000_000  # a fixed, frozen "now" for deterministic replies


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    with resplite.serve() as handle:
        yield handle


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def conn(request: pytest.FixtureRequest, server: ServerHandle) -> Iterator[RawClient]:
    server.reset()
    client = RawClient("127.0.0.1", server.port)
    if request.param == 3:
        client.call("HELLO", "3")
    client.call("RESPLITE.CLOCK", "FREEZE")
    client.call("RESPLITE.CLOCK", "SET", T0)
    yield client
    client.close()


def integer(n: int) -> bytes:
    return b":%d\r\n" % n


def test_get_freeze_advance_set_resume_answer_exactly(conn: RawClient) -> None:
    assert conn.call("RESPLITE.CLOCK", "GET") == integer(T0)
    assert conn.call("RESPLITE.CLOCK", "FREEZE") == b"+OK\r\n"
    assert conn.call("RESPLITE.CLOCK", "ADVANCE", "1500") == integer(T0 + 1500)
    assert conn.call("RESPLITE.CLOCK", "ADVANCE", "0") == integer(T0 + 1500)
    assert conn.call("RESPLITE.CLOCK", "GET") == integer(T0 + 1500)
    assert conn.call("RESPLITE.CLOCK", "SET", T0 - 86_400_000) == integer(T0 - 86_400_000)
    assert conn.call("resplite.clock", "get") == integer(T0 - 86_400_000)
    assert conn.call("RESPLITE.CLOCK", "RESUME") == b"+OK\r\n"
    # Running again: the reading moves on with real time (poll, never sleep).
    first = int(conn.call("RESPLITE.CLOCK", "GET")[1:-2])
    assert first >= T0 - 86_400_000
    for _ in range(100_000):
        if int(conn.call("RESPLITE.CLOCK", "GET")[1:-2]) > first:
            break
    else:
        pytest.fail("the resumed clock did not move")


def test_time_follows_the_clock(conn: RawClient) -> None:
    conn.call("RESPLITE.CLOCK", "SET", T0 + 1234)
    expected = b"*2\r\n$10\r\n%d\r\n$6\r\n%06d\r\n" % ((T0 + 1234) // 1000, 234_000)
    assert conn.call("TIME") == expected


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["ADVANCE", "abc"], b"-ERR value is not an integer or out of range\r\n"),
        (["ADVANCE", "1.5"], b"-ERR value is not an integer or out of range\r\n"),
        (["ADVANCE", " 1"], b"-ERR value is not an integer or out of range\r\n"),
        (["ADVANCE", "-1"], b"-ERR ADVANCE only moves the clock forwards; use RESPLITE.CLOCK "
                            b"SET to set an earlier time\r\n"),
        (["ADVANCE", "99999999999999999"], b"-ERR clock time out of range: it must stay "
                                           b"between 0 and 253402300799999 ms\r\n"),
        (["ADVANCE", "99999999999999999999"], b"-ERR value is not an integer or out of range\r\n"),
        (["SET", "soon"], b"-ERR value is not an integer or out of range\r\n"),
        (["SET", "-1"], b"-ERR clock time out of range: it must stay between 0 and "
                        b"253402300799999 ms\r\n"),
        (["SET", "253402300800000"], b"-ERR clock time out of range: it must stay between 0 "
                                     b"and 253402300799999 ms\r\n"),
        (["ADVANCE"], b"-ERR wrong number of arguments for 'resplite.clock|advance' command\r\n"),
        (["SET", "1", "2"], b"-ERR wrong number of arguments for 'resplite.clock|set' "
                            b"command\r\n"),
        (["GET", "now"], b"-ERR wrong number of arguments for 'resplite.clock|get' command\r\n"),
        (["REWIND", "5"], b"-ERR unknown subcommand 'REWIND'. Try RESPLITE.CLOCK HELP.\r\n"),
        ([], b"-ERR wrong number of arguments for 'resplite.clock' command\r\n"),
    ],
)
def test_bad_arguments_get_a_clear_error_and_change_nothing(
    conn: RawClient, args: list[str], error: bytes
) -> None:
    conn.call("SET", "k", "v", "PX", "1000")
    assert conn.call("RESPLITE.CLOCK", *args) == error
    assert conn.call("RESPLITE.CLOCK", "GET") == integer(T0)
    assert conn.call("PTTL", "k") == integer(1000)


def test_help_lists_every_subcommand_as_simple_strings(conn: RawClient) -> None:
    help_reply = HelpReply(conn.call("RESPLITE.CLOCK", "HELP"))
    assert help_reply.header.startswith("RESPLITE.CLOCK <subcommand> ")
    assert help_reply.syntax == {
        "GET": ["GET"],
        "FREEZE": ["FREEZE"],
        "RESUME": ["RESUME"],
        "ADVANCE": ["ADVANCE <milliseconds>"],
        "SET": ["SET <unix-time-milliseconds>"],
        "HELP": ["HELP"],
    }
    assert set(help_reply.syntax) == implemented("resplite.clock")


def test_advance_and_set_are_refused_inside_multi(conn: RawClient) -> None:
    assert conn.call("MULTI") == b"+OK\r\n"
    assert conn.call("RESPLITE.CLOCK", "GET") == b"+QUEUED\r\n"
    assert conn.call("RESPLITE.CLOCK", "ADVANCE", "10") == (
        b"-ERR Command not allowed inside a transaction\r\n"
    )
    assert conn.call("EXEC").startswith(b"-EXECABORT")
    assert conn.call("RESPLITE.CLOCK", "GET") == integer(T0)


def test_command_info_and_docs_list_the_command_and_its_subcommands(conn: RawClient) -> None:
    info = conn.call("COMMAND", "INFO", "resplite.clock")
    for sub in (b"get", b"freeze", b"resume", b"advance", b"set", b"help"):
        assert b"resplite.clock|" + sub in info
    assert info.startswith(b"*1\r\n*10\r\n$14\r\nresplite.clock\r\n:-2\r\n")
    docs = conn.call("COMMAND", "DOCS", "resplite.clock")
    assert b"unix-time-milliseconds" in docs
    assert b"resplite.clock|advance" in docs


def test_a_key_expires_the_millisecond_after_the_clock_reaches_its_time(conn: RawClient) -> None:
    assert conn.call("SET", "session", "x", "PX", "60000") == b"+OK\r\n"
    conn.call("RESPLITE.CLOCK", "ADVANCE", "59999")
    assert conn.call("PTTL", "session") == integer(1)
    conn.call("RESPLITE.CLOCK", "ADVANCE", "1")
    # Redis keeps a key while now <= its time: PTTL 0 with the value still there.
    assert conn.call("PTTL", "session") == integer(0)
    assert conn.call("GET", "session") == b"$1\r\nx\r\n"
    conn.call("RESPLITE.CLOCK", "ADVANCE", "1")
    # The advance itself expired the key: DBSIZE counts it gone before anybody reads it.
    assert conn.call("DBSIZE") == integer(0)
    assert conn.call("GET", "session") in (b"$-1\r\n", b"_\r\n")


def test_a_backward_set_keeps_stream_ids_monotonic(conn: RawClient) -> None:
    assert conn.call("XADD", "s", "*", "f", "1") == b"$15\r\n%d-0\r\n" % T0
    conn.call("RESPLITE.CLOCK", "SET", T0 - 10_000)
    assert conn.call("XADD", "s", "*", "f", "2") == b"$15\r\n%d-1\r\n" % T0
    assert conn.call("XADD", "s", "*", "f", "3") == b"$15\r\n%d-2\r\n" % T0
    conn.call("RESPLITE.CLOCK", "ADVANCE", "10001")
    assert conn.call("XADD", "s", "*", "f", "4") == b"$15\r\n%d-0\r\n" % (T0 + 1)


def test_pending_entries_age_with_the_clock_for_xpending_and_xautoclaim(conn: RawClient) -> None:
    conn.call("XADD", "jobs", "1-1", "job", "a")
    conn.call("XGROUP", "CREATE", "jobs", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "w1", "STREAMS", "jobs", ">")
    conn.call("RESPLITE.CLOCK", "ADVANCE", "4999")
    assert conn.call("XPENDING", "jobs", "g", "-", "+", "10") == (
        b"*1\r\n*4\r\n$3\r\n1-1\r\n$2\r\nw1\r\n:4999\r\n:1\r\n"
    )
    assert conn.call("XAUTOCLAIM", "jobs", "g", "w2", "5000", "0") == (
        b"*3\r\n$3\r\n0-0\r\n*0\r\n*0\r\n"
    )
    conn.call("RESPLITE.CLOCK", "ADVANCE", "2")
    assert conn.call("XAUTOCLAIM", "jobs", "g", "w2", "5000", "0", "JUSTID") == (
        b"*3\r\n$3\r\n0-0\r\n*1\r\n$3\r\n1-1\r\n*0\r\n"
    )
    assert conn.call("XPENDING", "jobs", "g", "-", "+", "10") == (
        b"*1\r\n*4\r\n$3\r\n1-1\r\n$2\r\nw2\r\n:0\r\n:1\r\n"
    )


def test_info_uptime_follows_the_clock(conn: RawClient) -> None:
    def uptime() -> int:
        info = conn.call("INFO", "server").decode()
        line = next(x for x in info.split("\r\n") if x.startswith("uptime_in_seconds:"))
        return int(line.split(":")[1])

    before = uptime()
    conn.call("RESPLITE.CLOCK", "ADVANCE", "7200000")
    assert uptime() - before in (7200, 7201)


def test_one_advance_fires_expiry_and_timeouts_in_the_order_time_would(
    server: ServerHandle, conn: RawClient
) -> None:
    # "gone" expires at +2 s and its reader (BLOCK 5 s) is woken by that with NOGROUP;
    # "idle"'s reader times out at +1 s, before its stream expires at +2 s.
    for key in ("gone", "idle"):
        conn.call("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
        conn.call("PEXPIRE", key, "2000")
    woken = RawClient("127.0.0.1", server.port)
    timed_out = RawClient("127.0.0.1", server.port)
    try:
        woken.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "gone", ">")
        timed_out.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000", "STREAMS", "idle", ">")
        for _ in range(1000):
            if b"blocked_clients:2" in conn.call("INFO", "clients"):
                break
        else:
            pytest.fail("the readers never blocked")
        assert conn.call("RESPLITE.CLOCK", "ADVANCE", "10000") == integer(T0 + 10_000)
        assert timed_out.read_reply() == b"*-1\r\n"
        assert woken.read_reply().startswith(b"-NOGROUP ")
        assert conn.call("DBSIZE") == integer(0)
    finally:
        woken.close()
        timed_out.close()


@pytest.mark.parametrize("setting", ["no", "local"])
def test_the_gate_refuses_every_subcommand_but_help(setting: str) -> None:
    error = (b"-ERR RESPLITE.CLOCK is disabled on this server: start it with "
             b"'enable-clock-command yes' (or 'local' to allow it from local connections "
             b"only)\r\n")
    address = non_loopback_address()
    if setting == "local" and address is None:
        pytest.skip("no non-loopback address to connect from")
    bind = "127.0.0.1" if setting == "no" else f"127.0.0.1 {address}"
    # Protected mode (on by default, as in Redis) would refuse the non-loopback client.
    with resplite.serve(enable_clock_command=setting, bind=bind, protected_mode=False) as server:
        host = "127.0.0.1" if setting == "no" else address
        client = RawClient(host or "", server.port)
        try:
            before = server.clock.get()
            for args in (["GET"], ["FREEZE"], ["RESUME"], ["ADVANCE", "1000"], ["SET", "0"]):
                assert client.call("RESPLITE.CLOCK", *args) == error
            assert "ADVANCE" in HelpReply(client.call("RESPLITE.CLOCK", "HELP")).syntax
            assert abs(server.clock.get() - before) < 1000
        finally:
            client.close()
        if setting == "local":
            local = RawClient("127.0.0.1", server.port)
            try:
                assert local.call("RESPLITE.CLOCK", "FREEZE") == b"+OK\r\n"
            finally:
                local.close()


def test_local_allows_unix_socket_connections() -> None:
    with resplite.serve(enable_clock_command="local", unixsocket=True) as server:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(server.unix_socket or "")
        sock.sendall(b"*2\r\n$14\r\nRESPLITE.CLOCK\r\n$6\r\nFREEZE\r\n")
        assert sock.recv(64) == b"+OK\r\n"
        sock.close()


def non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address


@pytest.mark.redis_version("7.2")  # XINFO CONSUMERS' inactive field and seen-time meaning
def test_consumer_idle_and_inactive_times_follow_the_clock(conn: RawClient) -> None:
    def consumer_fields() -> dict[bytes, bytes]:
        parts = conn.call("XINFO", "CONSUMERS", "s", "g").split(b"\r\n")
        return {part: parts[i + 1] for i, part in enumerate(parts)
                if part in (b"idle", b"inactive") and parts[i - 1].startswith(b"$")}

    conn.call("XADD", "s", "1-1", "f", "v")
    conn.call("XGROUP", "CREATE", "s", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    conn.call("RESPLITE.CLOCK", "ADVANCE", "5000")
    assert consumer_fields() == {b"idle": b":5000", b"inactive": b":5000"}
    # A read that delivers nothing counts as seen, not as active.
    conn.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    conn.call("RESPLITE.CLOCK", "ADVANCE", "250")
    assert consumer_fields() == {b"idle": b":250", b"inactive": b":5250"}
