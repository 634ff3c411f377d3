"""redis-py's list helpers against resplite: sync client, RESP2 and RESP3, pure-Python and
hiredis parsers. Each helper's decoded result is what redis-py gives against Redis, so an
application's list code runs unchanged; a capped "latest items" log (LPUSH + LTRIM +
LRANGE in one transaction) and a round-robin rotation (LMOVE onto the same list) are run as
applications use them.
"""

from __future__ import annotations

import pytest
import redis


def test_list_helpers_decode_as_against_redis(r: redis.Redis) -> None:
    assert r.rpush("l", "a", "b", "c") == 3
    assert r.lpush("l", "z") == 4
    assert r.lrange("l", 0, -1) == ["z", "a", "b", "c"]
    assert r.lpop("l") == "z" and r.rpop("l", 2) == ["c", "b"]
    assert r.lpop("missing") is None and r.lpop("missing", 2) is None
    assert r.rpush("l", "b", "a") == 3
    assert r.lpos("l", "a") == 0 and r.lpos("l", "a", rank=-1) == 2
    assert r.lpos("l", "a", count=0) == [0, 2] and r.lpos("l", "nope") is None
    assert r.linsert("l", "before", "b", "x") == 4
    assert r.lindex("l", -1) == "a" and r.llen("l") == 4
    assert r.lset("l", 0, "first") is True
    assert r.lrem("l", 0, "a") == 1
    assert r.lmove("l", "m", "LEFT", "RIGHT") == "first"
    assert r.rpoplpush("l", "m") == "b"
    assert r.lmpop(2, "nokey", "m", direction="LEFT", count=5) == ["m", ["b", "first"]]
    assert r.lmpop(1, "nokey", direction="RIGHT") is None
    popped = r.blpop(["l"], timeout=1)
    assert popped is not None and list(popped) == ["l", "x"]  # a tuple in RESP2, a list in RESP3
    assert r.blmpop(1, 1, "nokey", direction="LEFT") is None
    assert r.execute_command("BLMOVE", "nokey", "m", "LEFT", "RIGHT", "0.01") is None
    assert r.lpushx("nokey", "a") == 0 and r.exists("nokey") == 0
    assert r.type("m") == "none"
    r.rpush("t", "1")
    assert r.type("t") == "list"
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.get("t")
    with pytest.raises(redis.ResponseError, match="index out of range"):
        r.lset("t", 5, "x")
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        r.blpop(["t"], timeout=-1)


def test_capped_log_of_latest_items(r: redis.Redis) -> None:
    for i in range(250):
        with r.pipeline() as pipe:
            pipe.lpush("latest", f"event:{i}")
            pipe.ltrim("latest", 0, 99)
            pipe.lrange("latest", 0, 4)
            _, _, top = pipe.execute()
        assert top[0] == f"event:{i}"
    assert r.llen("latest") == 100
    assert r.lrange("latest", -1, -1) == ["event:150"]
    assert r.object("encoding", "latest") == "listpack"


def test_round_robin_rotation(r: redis.Redis) -> None:
    r.rpush("servers", "s1", "s2", "s3")
    picks = [r.lmove("servers", "servers", "LEFT", "RIGHT") for _ in range(7)]
    assert picks == ["s1", "s2", "s3", "s1", "s2", "s3", "s1"]
    assert r.lrange("servers", 0, -1) == ["s2", "s3", "s1"]
