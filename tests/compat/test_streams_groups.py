"""Consumer groups against a real redis-server: XGROUP, XREADGROUP (without blocking), XACK,
XPENDING, XCLAIM, XAUTOCLAIM and XINFO GROUPS, byte for byte in RESP2 and RESP3.

Idle times are the only values that depend on when each server ran the command; they are
masked (XPENDING's third field). Behaviour that changed after Redis 7.0 (consumers created
by claims, XINFO CONSUMERS' ``inactive``) is asserted in ``test_streams_newer.py``.
"""

from __future__ import annotations

import re

import pytest
from support.helpshape import assert_same_shape, implemented

_PENDING_IDLE = re.compile(rb"(\*4\r\n\$\d+\r\n\d+-\d+\r\n\$\d+\r\n[^\r]*\r\n):\d+\r\n")


def mask_idle(reply: bytes) -> bytes:
    """Blank the idle-time field of XPENDING's extended entries."""
    return _PENDING_IDLE.sub(rb"\1:<idle>\r\n", reply)


def seed(pair, key: str = "s", n: int = 5) -> None:  # type: ignore[no-untyped-def]
    for i in range(1, n + 1):
        pair.check("XADD", key, f"{i}-1", "f", f"v{i}")


# -- XGROUP --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ("XGROUP", "CREATE", "s", "g", "$"),
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XGROUP", "CREATE", "s", "g", "-"),
        ("XGROUP", "CREATE", "s", "g", "+"),
        ("XGROUP", "CREATE", "s", "g", "x"),
        ("XGROUP", "CREATE", "s", "g", "3-1", "ENTRIESREAD", "3"),
        ("XGROUP", "CREATE", "s", "g", "3-1", "ENTRIESREAD", "-1"),
        ("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "-2"),
        ("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "x"),
        ("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD"),
        ("XGROUP", "CREATE", "s", "g", "$", "foo"),
        ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
        ("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", "ENTRIESREAD", "2", "MKSTREAM"),
        ("XGROUP", "CREATE", "nokey", "g", "$"),
        ("XGROUP", "CREATE", "nokey", "g", "x"),
        ("XGROUP", "CREATE", "nokey", "g", "$", "mkstream"),
        ("XGROUP", "CREATE", "nokey", "g", "5-5", "MKSTREAM"),
        ("XGROUP", "CREATE", "nokey", "g", "x", "MKSTREAM"),
        ("XGROUP", "CREATE", "s"),
        ("XGROUP", "SETID", "s", "nog", "$"),
        ("XGROUP", "SETID", "nokey", "g", "$"),
        ("XGROUP", "DESTROY", "s", "nog"),
        ("XGROUP", "DESTROY", "nokey", "nog"),
        ("XGROUP", "CREATECONSUMER", "s", "nog", "c"),
        ("XGROUP", "DELCONSUMER", "s", "nog", "c"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "c", "extra"),
        ("XGROUP", "help", "foo"),
        ("XGROUP", "foo", "s", "g"),
        ("XGROUP",),
    ],
    ids=lambda c: " ".join(c),
)
def test_xgroup_arguments(pair, cmd: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check(*cmd)
    pair.check(*cmd)
    pair.check("EXISTS", "nokey")
    pair.check("XINFO", "GROUPS", "s")


def test_xgroup_help_has_the_shape_of_redis(pair) -> None:  # type: ignore[no-untyped-def]
    for spelling in ("HELP", "help"):
        ref, ours = pair.both("XGROUP", spelling)
        assert_same_shape(ref, ours, ours_has=implemented("xgroup"))


def test_xgroup_lifecycle(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check_all([
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XGROUP", "CREATE", "s", "a", "$"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "c"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "c"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "b"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
        ("XGROUP", "SETID", "s", "g", "0"),
        ("XREADGROUP", "GROUP", "g", "b", "COUNT", "3", "STREAMS", "s", ">"),
        ("XPENDING", "s", "g"),
        ("XGROUP", "SETID", "s", "g", "$"),
        ("XGROUP", "SETID", "s", "g", "-"),
        ("XGROUP", "SETID", "s", "g", "+"),
        ("XGROUP", "SETID", "s", "g", "2-1", "ENTRIESREAD", "2"),
        ("XGROUP", "SETID", "s", "g", "2-1", "MKSTREAM"),
        ("XGROUP", "SETID", "s", "g", "2-1", "ENTRIESREAD", "2", "ENTRIESREAD", "2"),
        ("XGROUP", "SETID", "s", "g", "x"),
        ("XINFO", "GROUPS", "s"),
        ("XGROUP", "DELCONSUMER", "s", "g", "b"),
        ("XGROUP", "DELCONSUMER", "s", "g", "zz"),
        ("XPENDING", "s", "g"),
        ("XGROUP", "DESTROY", "s", "g"),
        ("XGROUP", "DESTROY", "s", "g"),
        ("XINFO", "GROUPS", "s"),
    ])


def test_xgroup_on_another_type(pair) -> None:  # type: ignore[no-untyped-def]
    pair.check("SET", "str", "x")
    for cmd in [
        ("XGROUP", "CREATE", "str", "g", "$"),
        ("XGROUP", "CREATE", "str", "g", "$", "MKSTREAM"),
        ("XGROUP", "DESTROY", "str", "g"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
        ("XACK", "str", "g", "1"),
        ("XPENDING", "str", "g"),
        ("XCLAIM", "str", "g", "c", "0", "1"),
        ("XAUTOCLAIM", "str", "g", "c", "0", "0"),
        ("XINFO", "GROUPS", "str"),
        ("XINFO", "CONSUMERS", "str", "g"),
    ]:
        pair.check(*cmd)


# -- XREADGROUP (no blocking) ---------------------------------------------------------------


def test_xreadgroup_delivery_and_history(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check_all([
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "1-1"),
        ("XREADGROUP", "GROUP", "g", "c", "NOACK", "COUNT", "1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s",
         "18446744073709551615-18446744073709551615"),
        ("XDEL", "s", "4-1"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
        ("XPENDING", "s", "g"),
        ("XINFO", "GROUPS", "s"),
    ])
    pair.check("XPENDING", "s", "g", "-", "+", "10", normalize=mask_idle)


def test_xreadgroup_several_streams(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair, "a", 3)
    seed(pair, "b", 2)
    pair.check("XGROUP", "CREATE", "a", "g", "0")
    pair.check("XGROUP", "CREATE", "b", "g", "$")
    pair.check_all([
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"),
        ("XADD", "b", "9-1", "x", "y"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "b", "a", ">", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "0", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "nokey", ">", ">"),
        ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "a", ">"),
    ])


@pytest.mark.parametrize(
    "cmd",
    [
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "x"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "-1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "COUNT", "2", "STREAMS", "s", ">"),
        ("XREADGROUP", "COUNT", "1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "NOACK", "NOACK", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "foo", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "x", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"),
        ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", ">", "x"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xreadgroup_errors(pair, cmd: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check(*cmd)


# -- XACK -----------------------------------------------------------------------------------


def test_xack(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check_all([
        ("XACK", "s", "g", "1-1"),
        ("XACK", "s", "g", "x"),
        ("XACK", "nokey", "g", "x"),
        ("XGROUP", "CREATE", "s", "g", "0"),
        ("XACK", "s", "g", "x"),
        ("XACK", "s", "g", "1-1", "x"),
        ("XACK", "s", "g", "-"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
        ("XACK", "s", "g", "1-1", "1-1", "2", "9-9"),
        ("XACK", "s", "g", "2-1"),
        ("XPENDING", "s", "g"),
        ("XACK", "s", "g", "3-1", "4-1", "5-1"),
        ("XPENDING", "s", "g"),
    ])


# -- XPENDING ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        ("XPENDING", "s", "g"),
        ("XPENDING", "s", "g", "-", "+", "10"),
        ("XPENDING", "s", "g", "-", "+", "2"),
        ("XPENDING", "s", "g", "-", "+", "0"),
        ("XPENDING", "s", "g", "-", "+", "-1"),
        ("XPENDING", "s", "g", "(2-1", "+", "10"),
        ("XPENDING", "s", "g", "-", "(4-1", "10"),
        ("XPENDING", "s", "g", "3", "3", "10"),
        ("XPENDING", "s", "g", "-", "+", "10", "a"),
        ("XPENDING", "s", "g", "-", "+", "10", "b"),
        ("XPENDING", "s", "g", "-", "+", "10", "nobody"),
        ("XPENDING", "s", "g", "-", "+", "10", "a", "extra"),
        ("XPENDING", "s", "g", "IDLE", "0", "-", "+", "10"),
        ("XPENDING", "s", "g", "IDLE", "99999999", "-", "+", "10"),
        ("XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"),
        ("XPENDING", "s", "g", "IDLE", "5", "-", "+"),
        ("XPENDING", "s", "g", "IDLE", "1", "-", "+", "10", "a", "e"),
        ("XPENDING", "s", "g", "-", "+", "x"),
        ("XPENDING", "s", "g", "x", "+", "10"),
        ("XPENDING", "s", "g", "(-", "+", "10"),
        ("XPENDING", "s", "g", "(18446744073709551615-18446744073709551615", "+", "10"),
        ("XPENDING", "s", "g", "-", "(0-0", "10"),
        ("XPENDING", "s", "g", "-", "+"),
        ("XPENDING", "s", "g", "-"),
        ("XPENDING", "s", "nog"),
        ("XPENDING", "nokey", "g"),
        ("XPENDING", "nokey", "g", "x", "+", "10"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xpending(pair, cmd: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "STREAMS", "s", ">")
    pair.check("XREADGROUP", "GROUP", "g", "b", "COUNT", "2", "STREAMS", "s", ">")
    pair.check("XREADGROUP", "GROUP", "g", "a", "COUNT", "1", "STREAMS", "s", ">")
    pair.check(*cmd, normalize=mask_idle)


def test_xpending_empty_group(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("XGROUP", "CREATE", "s", "g", "$")
    pair.check("XPENDING", "s", "g")
    pair.check("XPENDING", "s", "g", "-", "+", "10")


# -- XCLAIM / XAUTOCLAIM ---------------------------------------------------------------------


def claim_setup(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair, n=6)
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")


def test_xclaim(pair) -> None:  # type: ignore[no-untyped-def]
    claim_setup(pair)
    pair.check_all([
        ("XCLAIM", "s", "g", "c2", "0", "1-1", "2-1", "JUSTID"),
        ("XCLAIM", "s", "g", "c2", "0", "1-1", "RETRYCOUNT", "7"),
        ("XCLAIM", "s", "g", "c2", "0", "9-9", "FORCE"),
        ("XCLAIM", "s", "g", "c2", "0", "3-1", "FORCE", "JUSTID"),
        ("XACK", "s", "g", "4-1"),
        ("XCLAIM", "s", "g", "c2", "0", "4-1", "FORCE"),
        ("XCLAIM", "s", "g", "c3", "0", "4-1", "JUSTID"),
        ("XCLAIM", "s", "g", "c2", "0", "5-1", "LASTID", "9-0"),
        ("XINFO", "GROUPS", "s"),
        ("XCLAIM", "s", "g", "c2", "0", "5-1", "LASTID", "1-0"),
        ("XCLAIM", "s", "g", "c2", "0", "5-1", "TIME", "5", "JUSTID"),
        ("XCLAIM", "s", "g", "c2", "0", "5-1", "TIME", "99999999999999999"),
        ("XCLAIM", "s", "g", "c2", "0", "5-1", "IDLE", "-5"),
        ("XCLAIM", "s", "g", "c2", "99999999", "5-1"),
        ("XCLAIM", "s", "g", "c2", "-5", "5-1", "JUSTID"),
        ("XDEL", "s", "6-1"),
        ("XCLAIM", "s", "g", "c2", "0", "6-1"),
        ("XPENDING", "s", "g"),
        ("XCLAIM", "s", "g", "c2", "0", "1-1", "5-1", "FORCE", "JUSTID", "RETRYCOUNT", "3"),
    ])
    pair.check("XPENDING", "s", "g", "-", "+", "10", normalize=mask_idle)


@pytest.mark.parametrize(
    "cmd",
    [
        ("XCLAIM", "s", "g", "c", "x", "1-1"),
        ("XCLAIM", "s", "g", "c", "0", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "foo"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "FORCE", "2-1"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "IDLE"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "IDLE", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "TIME", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "RETRYCOUNT", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "LASTID", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-1", "LASTID", "-"),
        ("XCLAIM", "s", "g", "c", "0", "-"),
        ("XCLAIM", "s", "nog", "c", "x", "1-1"),
        ("XCLAIM", "nokey", "g", "c", "0", "1-1"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xclaim_errors(pair, cmd: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    claim_setup(pair)
    pair.check(*cmd)


def test_xautoclaim(pair) -> None:  # type: ignore[no-untyped-def]
    claim_setup(pair)
    pair.check_all([
        ("XAUTOCLAIM", "s", "g", "c2", "0", "0", "COUNT", "2"),
        ("XAUTOCLAIM", "s", "g", "c2", "0", "3-1", "COUNT", "1", "JUSTID"),
        ("XAUTOCLAIM", "s", "g", "c2", "0", "(3-1", "COUNT", "10"),
        ("XAUTOCLAIM", "s", "g", "c2", "99999999", "0"),
        ("XDEL", "s", "2-1", "4-1"),
        ("XAUTOCLAIM", "s", "g", "c3", "0", "0", "COUNT", "2"),
        ("XAUTOCLAIM", "s", "g", "c3", "0", "3-1", "COUNT", "2"),
        ("XPENDING", "s", "g"),
        ("XAUTOCLAIM", "s", "g", "c3", "0", "0", "JUSTID", "COUNT", "100"),
        ("XAUTOCLAIM", "s", "g", "c3", "0", "9-9"),
    ])


def test_xautoclaim_scans_at_most_count_times_ten(pair) -> None:  # type: ignore[no-untyped-def]
    for i in range(1, 61):
        pair.ref.send("XADD", "s", f"{i}-1", "f", "v")
        pair.ours.send("XADD", "s", f"{i}-1", "f", "v")
    for _ in range(60):
        pair.ref.read_reply()
        pair.ours.read_reply()
    pair.check("XGROUP", "CREATE", "s", "g", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    # Nothing is idle enough: one call looks at 10 entries and returns the 11th as cursor.
    pair.check("XAUTOCLAIM", "s", "g", "c2", "99999999", "0", "COUNT", "1")
    pair.check("XAUTOCLAIM", "s", "g", "c2", "99999999", "0", "COUNT", "6")
    pair.check("XAUTOCLAIM", "s", "g", "c2", "99999999", "0", "COUNT", "5")
    # Deleted entries count against COUNT and are reported.
    pair.check("XDEL", "s", *[f"{i}-1" for i in range(1, 60, 2)])
    pair.check("XAUTOCLAIM", "s", "g", "c2", "0", "0", "COUNT", "4")
    pair.check("XAUTOCLAIM", "s", "g", "c2", "99999999", "0", "COUNT", "3")
    pair.check("XPENDING", "s", "g")


@pytest.mark.parametrize(
    "cmd",
    [
        ("XAUTOCLAIM", "s", "g", "c", "x", "0"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "x"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "(-"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "(18446744073709551615-18446744073709551615"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "x"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "999999999999999999"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "foo"),
        ("XAUTOCLAIM", "s", "nog", "c", "0", "0"),
        ("XAUTOCLAIM", "nokey", "g", "c", "0", "0"),
        ("XAUTOCLAIM", "nokey", "g", "c", "x", "0"),
    ],
    ids=lambda c: " ".join(c),
)
def test_xautoclaim_errors(pair, cmd: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    claim_setup(pair)
    pair.check(*cmd)


# -- XINFO GROUPS and lag ------------------------------------------------------------------------


def test_xinfo_groups_lag_while_reading(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair, n=10)
    pair.check_all([
        ("XGROUP", "CREATE", "s", "a", "0"),
        ("XGROUP", "CREATE", "s", "b", "$"),
        ("XGROUP", "CREATE", "s", "c", "5-1", "ENTRIESREAD", "5"),
        ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "a", "x", "COUNT", "3", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
        ("XADD", "s", "11-1", "f", "v"),
        ("XREADGROUP", "GROUP", "c", "x", "COUNT", "1", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
        ("XDEL", "s", "2-1"),
        ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "a", "x", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"),
    ])
