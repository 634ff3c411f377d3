"""Connection commands (``resplite/commands/connection.py``), byte for byte against Redis.

PING, ECHO, HELLO (every option and error), AUTH (with and without ``requirepass``), SELECT,
QUIT, RESET, and the handshakes of client libraries. HELLO's ``version`` and ``id`` are
blanked: resplite reports its ``redis-compat-version`` line's ``.0`` release where the
reference is 8.6.3, and client ids depend on
each server's history. The dispatcher's texts and order of checks are in ``test_dispatch.py``.
"""

from __future__ import annotations

import pytest
from support import normalize
from support.pair import Normalizer, Pair
from support.raw import RawClient
from support.servers import ServerPairFactory, ServerProcess


def test_ping_echo(pair: Pair) -> None:
    pair.check("PING")
    pair.check("ping", "hello")
    pair.check("PING", "a", "b")
    pair.check("ECHO", "x y")
    pair.check("ECHO", b"\x00\xff\r\n")
    pair.check("ECHO")
    pair.check("ECHO", "a", "b")


def test_hello_replies(pair: Pair) -> None:
    pair.check("HELLO", normalize=normalize.hello)
    pair.check("HELLO", "2", normalize=normalize.hello)
    pair.check("HELLO", "3", normalize=normalize.hello)
    pair.check("PING")
    pair.check("HELLO", "3", "SETNAME", "conn-a", normalize=normalize.hello)
    pair.check("CLIENT", "GETNAME")
    pair.check("HELLO", "2", "AUTH", "default", "anything", normalize=normalize.hello)
    pair.check("hello", "2", "setname", "n2", "auth", "default", "x", normalize=normalize.hello)
    pair.check("CLIENT", "GETNAME")


@pytest.mark.parametrize(
    "args",
    [
        ("4",),
        ("1",),
        ("-1",),
        ("abc",),
        ("3.0",),
        ("99999999999999999999",),
        ("2", "foo"),
        ("2", "AUTH"),
        ("2", "AUTH", "default"),
        ("2", "SETNAME"),
        ("2", "SETNAME", "a b"),
        ("2", "SETNAME", "x\ny"),
        ("2", "AUTH", "nobody", "pw"),
        ("2", "SETNAME", "ok", "bogus"),
    ],
    ids=lambda a: " ".join(a),
)
def test_hello_errors(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("HELLO", *args)
    pair.check("PING")  # the connection is unchanged and still usable


def test_hello_bad_auth_keeps_protocol(pair: Pair) -> None:
    # A refused HELLO 3 must not switch the protocol of a RESP2 connection.
    pair.check("HELLO", "3", "AUTH", "nobody", "x")
    pair.check("CONFIG", "GET", "maxclients")


def test_auth_without_password(pair: Pair) -> None:
    pair.check("AUTH", "x")
    pair.check("AUTH", "default", "whatever")
    pair.check("AUTH", "someone", "x")
    pair.check("AUTH", "a", "b", "c")
    pair.check("AUTH")


def test_select(pair: Pair) -> None:
    pair.check("SELECT", "1")
    pair.check("DBSIZE")
    pair.check("SELECT", "15")
    pair.check("SELECT", "16")
    pair.check("SELECT", "-1")
    pair.check("SELECT", "abc")
    pair.check("SELECT", "01")
    pair.check("SELECT", "1", "2")
    pair.check("SELECT", "0")


def test_quit_closes_after_ok(pair: Pair) -> None:
    pair.check("QUIT")
    assert pair.ref.is_closed() and pair.ours.is_closed()


def test_quit_with_arguments(pair: Pair) -> None:
    # QUIT's arity is -1: extra words are accepted and ignored.
    pair.check("QUIT", "now")
    assert pair.ref.is_closed() and pair.ours.is_closed()


def test_reset_restores_connection_state(pair: Pair) -> None:
    pair.check("SELECT", "3")
    pair.check("CLIENT", "SETNAME", "before-reset")
    pair.check("CLIENT", "NO-EVICT", "on")
    pair.check("MULTI")
    pair.check("PING")
    pair.check("RESET")
    pair.check("CLIENT", "GETNAME")
    pair.check("EXEC")  # the transaction is gone
    pair.check("CONFIG", "GET", "maxclients")  # RESP2 again, even after HELLO 3
    pair.check("RESET", "x")


def _hello_hint(reply: bytes) -> bytes:
    # Redis 7.2 added "<proto>" to the hint in HELLO's NOAUTH text; resplite follows 7.4.
    return reply.replace(b"the HELLO AUTH <user>", b"the HELLO <proto> AUTH <user>")


def _raw(server: ServerProcess) -> RawClient:
    return RawClient(server.host, server.port)


def test_requirepass_noauth_and_wrongpass(server_pair_factory: ServerPairFactory) -> None:
    ref_srv, our_srv = server_pair_factory("--requirepass", "pw")
    ref, ours = _raw(ref_srv), _raw(our_srv)

    def check(*cmd: str, normalize: Normalizer | None = None) -> None:
        a, b = ref.call(*cmd), ours.call(*cmd)
        if normalize is not None:
            a, b = normalize(a), normalize(b)
        assert b == a, f"{cmd}\n redis:    {a!r}\n resplite: {b!r}"

    try:
        check("PING")
        check("GET", "k")
        check("NOSUCH")  # existence is checked before authentication
        check("GET")  # and so is arity
        check("CLIENT", "NOSUCH")
        check("HELLO", "3", normalize=_hello_hint)
        check("HELLO", "2", normalize=_hello_hint)
        check("AUTH", "wrong")
        check("AUTH", "default", "wrong")
        check("AUTH", "nobody", "pw")
        check("HELLO", "2", "AUTH", "default", "wrong")
        check("PING")
        check("MULTI")
        check("AUTH", "pw")
        check("PING")
        check("RESET")  # back to unauthenticated
        check("PING")
        check("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "named", normalize=normalize.hello)
        check("CLIENT", "GETNAME")
        check("PING")
        check("QUIT")
    finally:
        ref.close()
        ours.close()


# What client libraries send when they connect (see REFERENCE.md), in order (CLIENT SETINFO
# is Redis 7.2's).
CONNECT_SEQUENCES = {
    "redis-py-8": [("HELLO", "3"), ("CLIENT", "SETINFO", "LIB-NAME", "redis-py"),
                   ("CLIENT", "SETINFO", "LIB-VER", "8.1.0"),
                   ("CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "internal-ip"),
                   ("SELECT", "0"), ("PING",)],
    "go-redis-9": [("HELLO", "3", "AUTH", "default", "", "SETNAME", "go-app"),
                   ("CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.22.1)"),
                   ("CLIENT", "SETINFO", "LIB-VER", "9.7.0"),
                   ("CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "none"),
                   ("PING",)],
    "go-redis-9-resp2-fallback": [("HELLO", "9"), ("AUTH", "default", "x"),
                                  ("SELECT", "2"), ("CLIENT", "SETNAME", "go-app"), ("PING",)],
    "node-redis-5": [("AUTH", "default", "pw"), ("CLIENT", "SETNAME", "node"), ("SELECT", "1"),
                     ("CLIENT", "SETINFO", "LIB-NAME", "node-redis"),
                     ("CLIENT", "SETINFO", "LIB-VER", "5.0.0"),
                     ("CLIENT", "MAINT_NOTIFICATIONS", "ON"), ("PING",)],
    "ioredis": [("CLIENT", "SETNAME", "io"), ("SELECT", "3"),
                ("CLIENT", "SETINFO", "LIB-NAME", "ioredis"),
                ("CLIENT", "SETINFO", "LIB-VER", "5.4.1"), ("INFO",), ("PING",)],
    "jedis": [("HELLO", "3"), ("CLIENT", "SETNAME", "jedis-app"),
              ("CLIENT", "SETINFO", "lib-name", "jedis"),
              ("CLIENT", "SETINFO", "lib-ver", "5.2.0"), ("SELECT", "0"), ("PING",)],
}


@pytest.mark.parametrize("library", sorted(CONNECT_SEQUENCES))
def test_client_library_handshakes(pair: Pair, library: str) -> None:
    for cmd in CONNECT_SEQUENCES[library]:
        ref, ours = pair.both(*cmd)
        if cmd[:2] == ("CLIENT", "SETINFO"):
            assert ours == ref == b"+OK\r\n"
        elif cmd == ("INFO",):
            assert b"loading:0\r\n" in ours  # ioredis waits for this before it is ready
        else:
            assert normalize.hello(ours) == normalize.hello(ref), cmd
    pair.check("CLIENT", "GETNAME")
