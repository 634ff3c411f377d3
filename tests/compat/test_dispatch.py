"""The dispatcher (``resplite/engine/dispatch.py``) against Redis: the texts of unknown commands
and subcommands and of wrong arity, and the order in which it applies its checks (existence,
arity, protected commands, authentication, MULTI), byte for byte.

These are not one command module's tests: every command goes through the dispatcher before
its handler runs. AUTH and HELLO themselves are in ``test_connection.py``.
"""

from __future__ import annotations

import pytest
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerPairFactory, ServerProcess


def _raw(server: ServerProcess) -> RawClient:
    return RawClient(server.host, server.port)


def test_unknown_command_texts(pair: Pair) -> None:
    pair.check("NOSUCHCOMMAND")
    pair.check("nosuch", "a", "b c", "")
    pair.check("FOO", *[str(i) for i in range(200)])
    pair.check("FOO", "x" * 300)
    pair.check(b"\xff\xfe", b"\x01")
    pair.check("PING")


def test_unknown_subcommand_texts(pair: Pair) -> None:
    pair.check("CONFIG", "NOSUCH")
    pair.check("client", "bogus", "x")
    pair.check("CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "internal-ip")
    pair.check("OBJECT", "nosuch", "k")
    pair.check("PING")


@pytest.mark.parametrize(
    "cmd",
    [
        ("GET",),
        ("GET", "a", "b"),
        ("SET", "k"),
        ("CONFIG",),
        ("CONFIG", "GET"),
        ("CONFIG", "SET", "maxclients"),
        ("CLIENT",),
        ("CLIENT", "ID", "x"),
        ("CLIENT", "SETNAME"),
        ("CLIENT", "KILL"),
        ("DBSIZE", "x"),
        ("SWAPDB", "0"),
        ("MULTI", "x"),
        ("EXEC", "x"),
        ("WATCH",),
        ("SELECT",),
        ("ECHO",),
        ("DEBUG",),
        ("TIME", "x"),
    ],
    ids=lambda c: " ".join(c),
)
def test_arity_texts(pair: Pair, cmd: tuple[str, ...]) -> None:
    pair.check(*cmd)


def test_checks_order_unknown_before_arity(pair: Pair) -> None:
    # An unknown subcommand is reported even when the argument count is also wrong.
    pair.check("CONFIG", "NOSUCH", "a", "b", "c")
    # A known subcommand with the wrong count fails arity.
    pair.check("CONFIG", "RESETSTAT", "extra")


def test_debug_is_refused_before_authentication(server_pair_factory: ServerPairFactory) -> None:
    ref_srv, our_srv = server_pair_factory(
        "--requirepass", "pw", "--enable-debug-command", "no"
    )
    ref, ours = _raw(ref_srv), _raw(our_srv)
    try:
        for cmd in (("DEBUG", "SLEEP", "0"), ("DEBUG", "HELP"), ("DEBUG",), ("AUTH", "pw"),
                    ("DEBUG", "SLEEP", "0"), ("MULTI",), ("DEBUG", "SLEEP", "0"), ("EXEC",)):
            assert ours.call(*cmd) == ref.call(*cmd), cmd
    finally:
        ref.close()
        ours.close()
