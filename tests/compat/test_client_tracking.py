"""Client-side caching against the reference Redis: CLIENT TRACKING / CACHING / GETREDIR /
TRACKINGINFO, and the invalidation messages (RESP3 pushes, or Pub/Sub messages on
``__redis__:invalidate`` for a RESP2 client redirecting to a subscriber), byte for byte.

Client ids differ between the two servers, so commands that name one (REDIRECT) are sent to
each server with its own id, and replies that show it are compared with the id replaced.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.pair import Pair
from support.raw import RawClient


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
    out = []
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
def test_tracking_commands_alone(pair, cmd):
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
def test_tracking_transitions(pair, name):
    for cmd in TRANSITIONS[name]:
        pair.check(*cmd)


def test_redirect_info_and_getredir(pair, other):
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}")
    same_shape(pair, other, "CLIENT", "GETREDIR")
    same_shape(pair, other, "CLIENT", "TRACKINGINFO")
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "REDIRECT", "{id}")


# -- invalidations --------------------------------------------------------------------------------


def test_default_mode_invalidations_resp3(pair, other):
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


def test_noloop_skips_own_writes(pair, other):
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


def test_optin_and_optout_decide_what_is_remembered(pair, other):
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


def test_optin_caching_lasts_for_a_whole_transaction(pair, other):
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


def test_hashes_and_streams_are_tracked_too(pair, other):
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


def test_bcast_sends_prefixed_keys_once_per_turn(pair, other):
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "acct:")
    other.check("MSET", "user:2", "a", "user:1", "b", "acct:9", "c", "other", "d")
    compare_pending(pair)
    other.check("DEL", "user:1")
    compare_pending(pair)


def test_bcast_noloop_leaves_out_own_keys(pair, other):
    if pair.resp != 3:
        pytest.skip("RESP3 pushes")
    pair.check("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP")
    pair.check("SET", "mine", "1")
    compare_pending(pair)
    other.check("SET", "theirs", "1")
    compare_pending(pair)


def test_redirect_to_a_resp2_subscriber(pair, other):
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


def test_redirect_to_a_resp3_connection(pair, other):
    for conn in (other.ref, other.ours):
        conn.call("HELLO", "3")
    both_with_id(pair, other, "CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "BCAST")
    pair.check("SET", "k", "v")
    compare_pending(other)


def test_broken_redirect(pair, other):
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
    ref, ours = pair.ref.call("CLIENT", "TRACKINGINFO"), pair.ours.call("CLIENT", "TRACKINGINFO")
    assert b"broken_redirect" in ref and b"broken_redirect" in ours
