"""Sets and SORT through redis-py, as applications use them: tags and dedup, random sampling,
set algebra, SSCAN iteration and SORT BY / GET over hashes, in RESP2 and RESP3 with both
parsers (RESP3 set replies arrive as Python sets, RESP2 ones as lists)."""

from __future__ import annotations

from typing import cast

import pytest
import redis


def test_tags_and_dedup(r: redis.Redis) -> None:
    assert r.sadd("post:1:tags", "python", "redis", "testing") == 3
    assert r.sadd("post:2:tags", "redis", "go") == 2
    assert set(r.smembers("post:1:tags")) == {"python", "redis", "testing"}
    assert r.sismember("post:1:tags", "redis") and not r.sismember("post:1:tags", "go")
    assert r.smismember("post:2:tags", ["go", "python"]) == [1, 0]
    assert set(r.sinter(["post:1:tags", "post:2:tags"])) == {"redis"}
    assert set(r.sunion(["post:1:tags", "post:2:tags"])) == {"python", "redis", "testing", "go"}
    assert set(r.sdiff(["post:1:tags", "post:2:tags"])) == {"python", "testing"}
    assert r.sintercard(2, ["post:1:tags", "post:2:tags"]) == 1
    assert r.sunionstore("all", ["post:1:tags", "post:2:tags"]) == 4
    assert r.smove("all", "seen", "go") and r.scard("all") == 3
    # Dedup of a job stream: only the first SADD of an id is new.
    fresh = [job for job in ("j1", "j2", "j1", "j3", "j2") if r.sadd("jobs:seen", job)]
    assert fresh == ["j1", "j2", "j3"]
    assert r.object("encoding", "post:1:tags") == "listpack"
    assert r.type("post:1:tags") == "set"


def test_random_sampling_and_pops(r: redis.Redis) -> None:
    r.sadd("pool", *[f"m{i}" for i in range(300)])
    # redis-py types a reply as every shape the command can have: cast to the one it has here.
    sample = cast("list[str]", r.srandmember("pool", 10))
    assert len(sample) == 10 and len(set(sample)) == 10
    assert len(cast("list[str]", r.srandmember("pool", -500))) == 500
    popped = cast("list[str]", r.spop("pool", 250))
    assert len(set(popped)) == 250 and r.scard("pool") == 50
    one = cast("str | None", r.spop("pool"))
    assert one is not None and not r.sismember("pool", one)
    assert r.spop("missing") is None and r.srandmember("missing") is None


def test_sscan_iter_over_a_hashtable(r: redis.Redis) -> None:
    members = {f"user:{i}" for i in range(2000)}
    r.sadd("online", *members)
    assert r.object("encoding", "online") == "hashtable"
    seen = set()
    for i, member in enumerate(r.sscan_iter("online", count=100)):
        seen.add(member)
        if i % 50 == 0:
            r.sadd("online", f"late:{i}")  # writes during the scan keep the cursor valid
    assert members <= seen
    assert set(r.sscan_iter("online", match="user:19??")) == {f"user:{i}" for i in
                                                              range(1900, 2000)}


def test_sort_by_hash_fields(r: redis.Redis) -> None:
    for uid, (name, score) in {1: ("ann", 30), 2: ("bob", 10), 3: ("cid", 20)}.items():
        r.hset(f"user:{uid}", mapping={"name": name, "score": score})
        r.sadd("users", uid)
    assert r.sort("users") == ["1", "2", "3"]
    assert r.sort("users", by="user:*->score") == ["2", "3", "1"]
    assert r.sort("users", by="user:*->score", get=["#", "user:*->name"], desc=True) == [
        "1", "ann", "3", "cid", "2", "bob"]
    assert r.sort("users", by="user:*->name", alpha=True, start=1, num=1) == ["2"]
    assert r.sort_ro("users", by="nosort", get=["user:*->name"]) is not None
    with pytest.raises(redis.ResponseError, match="scores can't be converted"):
        r.sort("users", by="user:*->name")


def test_pipeline_and_transaction(r: redis.Redis) -> None:
    with r.pipeline() as pipe:
        # One queued command a statement: redis-py types each as returning its reply.
        pipe.sadd("a", 1, 2, 3)
        pipe.sadd("b", 3, 4)
        pipe.sinterstore("c", ["a", "b"])
        pipe.smembers("c")
        assert pipe.execute()[:3] == [3, 2, 1]
    with r.pipeline(transaction=True) as tx:
        tx.spop("a", 3)
        tx.exists("a")
        popped, exists = tx.execute()
        assert set(popped) == {"1", "2", "3"} and exists == 0
