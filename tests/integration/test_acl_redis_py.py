"""redis-py's ACL API against resplite: acl_* calls parse our replies (RESP2 and RESP3, Python
and hiredis parsers), and clients log in as their own restricted users (AUTH and HELLO AUTH)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry
from support.redis_py import COMBO_IDS, COMBOS, sync_client
from support.servers import ServerProcess


@pytest.fixture(params=COMBOS, ids=COMBO_IDS)
def admin(request: pytest.FixtureRequest, server: ServerProcess) -> Iterator[redis.Redis]:
    protocol, hiredis = request.param
    client = sync_client(server, protocol, hiredis, decode_responses=True)
    yield client
    # redis-py types a reply as every shape the command can have: cast to the one it has here.
    for name in cast("list[str]", client.acl_users()):
        if name != "default":
            client.acl_deluser(name)
    client.acl_log_reset()
    client.close()


def test_acl_calls_parse(admin: redis.Redis) -> None:
    assert admin.acl_whoami() == "default"
    assert admin.acl_setuser("alice", enabled=True, passwords=["+pw"], keys=["k*"],
                             commands=["+get", "+set", "+@hash"], channels=["news.*"])
    user = cast("dict[str, Any]", admin.acl_getuser("alice"))
    assert "on" in user["flags"]
    assert user["keys"] == ["~k*"] or user["keys"] == "~k*"
    assert "+get" in str(user["commands"])
    assert sorted(admin.acl_users()) == ["alice", "default"]
    listing = cast("list[str]", admin.acl_list())
    # Redis 7.2+ describes a new user with sanitize-payload before its passwords.
    assert any(line.startswith("user alice on sanitize-payload #") for line in listing)
    assert "hash" in admin.acl_cat()
    assert "hset" in admin.acl_cat("hash")
    assert len(admin.acl_genpass()) == 64
    assert len(admin.acl_genpass(128)) == 32
    assert admin.acl_dryrun("alice", "get", "k1") == "OK"
    assert admin.acl_dryrun("alice", "del", "k1") == (
        "User alice has no permissions to run the 'del' command")
    assert admin.acl_dryrun("alice", "get", "x") == (
        "User alice has no permissions to access the 'x' key")
    assert admin.acl_deluser("alice") == 1
    assert admin.acl_getuser("alice") is None


def test_users_log_in_and_are_held_to_their_rules(
    server: ServerProcess, admin: redis.Redis
) -> None:
    admin.acl_setuser("alice", enabled=True, passwords=["+pw"], keys=["k*"],
                      commands=["+get", "+set", "+client|setinfo", "+hello", "+auth"])
    before = admin.info("stats")
    for protocol in (2, 3):
        alice = redis.Redis(host=server.host, port=server.port, username="alice",
                            password="pw", protocol=protocol, decode_responses=True)
        assert alice.set("k1", "v")
        assert alice.get("k1") == "v"
        with pytest.raises(redis.exceptions.NoPermissionError,
                           match=r"^No permissions to access a key$"):
            alice.get("other")
        with pytest.raises(redis.exceptions.NoPermissionError,
                           match=r"^User alice has no permissions to run the 'del' command$"):
            alice.delete("k1")
        alice.close()
    after = admin.info("stats")
    for counter in ("acl_access_denied_key", "acl_access_denied_cmd"):
        assert after[counter] - before[counter] == 2, counter
    # No retries: redis-py would otherwise retry a refused login with back-off.
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host=server.host, port=server.port, username="alice", password="wrong",
                    retry=Retry(NoBackoff(), 0)).ping()
    entries = cast("list[dict[str, Any]]", admin.acl_log())
    reasons = {e["reason"] for e in entries}
    assert {"key", "command", "auth"} <= reasons
    assert all("client-info" in e for e in entries)
    assert cast("list[dict[str, Any]]", admin.acl_log(count=1))[0]["count"] >= 1


async def test_asyncio_client_with_a_user(server: ServerProcess) -> None:
    admin = redis.asyncio.Redis(host=server.host, port=server.port, decode_responses=True)
    await admin.acl_setuser("bob", enabled=True, nopass=True, keys=["*"],
                            commands=["+@all", "-@dangerous"])
    bob = redis.asyncio.Redis(host=server.host, port=server.port, username="bob",
                              password="any", decode_responses=True)
    assert await bob.set("x", "1")
    assert await bob.acl_whoami() == "bob"
    with pytest.raises(redis.exceptions.NoPermissionError):
        await bob.flushall()
    await bob.aclose()
    await admin.acl_deluser("bob")
    await admin.aclose()
