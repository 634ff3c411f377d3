"""The client matrix's workload through redis-py's asyncio client (``redis.asyncio``):
``async_workload.py HOST PORT PREFIX``. Output and steps as in sync_workload.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import redis
import redis.asyncio

HOST, PORT, P = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failed = False


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


async def step(name: str, fn: Callable[[], Awaitable[None]]) -> None:
    global failed
    try:
        await asyncio.wait_for(fn(), 120)
    except Exception as exc:  # any error fails this step only
        failed = True
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        print(f"FAIL {name}: {detail}", flush=True)
    else:
        print(f"PASS {name}", flush=True)


def client(protocol: int = 2) -> Any:
    # Any: redis-py's reply types are unions of every protocol's shapes.
    return redis.asyncio.Redis(host=HOST, port=PORT, decode_responses=True, protocol=protocol,
                               socket_timeout=60)


async def main() -> None:
    r = client()

    async def strings() -> None:
        await r.set(f"{P}s", "hello")
        check(await r.append(f"{P}s", " world") == 11, "APPEND length")
        check(await r.get(f"{P}s") == "hello world", "GET after APPEND")
        check(await r.incrby(f"{P}n", 5) == 5, "INCRBY")
        await r.set(f"{P}t", "v", ex=100)
        check(0 < await r.ttl(f"{P}t") <= 100, "TTL after SET EX")

    async def hashes() -> None:
        check(await r.hset(f"{P}h", mapping={"f1": "v1", "f2": "v2"}) == 2, "HSET")
        check(await r.hgetall(f"{P}h") == {"f1": "v1", "f2": "v2"}, "HGETALL")
        check(await r.hincrby(f"{P}h", "n", 3) == 3, "HINCRBY")
        check(await r.hdel(f"{P}h", "f1") == 1, "HDEL")
        check(await r.hlen(f"{P}h") == 2, "HLEN")

    async def lists_blpop() -> None:
        check(await r.rpush(f"{P}l", "a", "b", "c") == 3, "RPUSH")
        check(await r.lrange(f"{P}l", 0, -1) == ["a", "b", "c"], "LRANGE")
        check(tuple(await r.blpop([f"{P}l"], timeout=5)) == (f"{P}l", "a"), "BLPOP")
        # A BLPOP that blocks until another connection pushes.
        pusher = client()
        try:
            waiting = asyncio.ensure_future(r.blpop([f"{P}empty"], timeout=60))
            while not any(c.get("flags") == "b" for c in await pusher.client_list()):
                await asyncio.sleep(0.01)  # until BLPOP is blocked (step limit: 120 s)
            await pusher.rpush(f"{P}empty", "late")
            check(tuple(await waiting) == (f"{P}empty", "late"), "BLPOP woken by RPUSH")
        finally:
            await pusher.aclose()

    async def sorted_sets() -> None:
        check(await r.zadd(f"{P}z", {"a": 1, "b": 2, "c": 3}) == 3, "ZADD")
        check(await r.zincrby(f"{P}z", 10, "a") == 11.0, "ZINCRBY")
        check(await r.zrange(f"{P}z", 0, -1, withscores=True)
              == [("b", 2.0), ("c", 3.0), ("a", 11.0)], "ZRANGE WITHSCORES")
        check(await r.zrangebyscore(f"{P}z", 2, 3) == ["b", "c"], "ZRANGEBYSCORE")
        check(await r.zrank(f"{P}z", "a") == 2, "ZRANK")
        check(await r.zscore(f"{P}z", "c") == 3.0, "ZSCORE")

    async def scan() -> None:
        await r.mset({f"{P}scan:{i}": i for i in range(300)})
        cursor, seen, calls = 0, set(), 0
        while True:
            cursor, keys = await r.scan(cursor, match=f"{P}scan:*", count=20)
            seen.update(keys)
            calls += 1
            check(calls < 10_000, "SCAN did not reach cursor 0")
            if cursor == 0:
                break
        check(calls > 1, "one SCAN call returned everything")
        check(seen == {f"{P}scan:{i}" for i in range(300)}, "SCAN keys")

    async def hscan() -> None:
        await r.hset(f"{P}bigh", mapping={f"f{i}": i for i in range(600)})
        cursor, seen, calls = 0, {}, 0
        while True:
            cursor, fields = await r.hscan(f"{P}bigh", cursor, count=20)
            seen.update(fields)
            calls += 1
            check(calls < 10_000, "HSCAN did not reach cursor 0")
            if cursor == 0:
                break
        check(calls > 1, "one HSCAN call returned everything")
        check(seen == {f"f{i}": str(i) for i in range(600)}, "HSCAN fields")

    async def pipeline() -> None:
        pipe = r.pipeline(transaction=False)
        for _ in range(1000):
            pipe.incr(f"{P}pipe")
        check(await pipe.execute() == list(range(1, 1001)), "1,000 INCR replies")
        check(await r.get(f"{P}pipe") == "1000", "counter after the pipeline")

    async def multi_watch() -> None:
        tx = r.pipeline(transaction=True)
        tx.incr(f"{P}tx").incr(f"{P}tx")
        check(await tx.execute() == [1, 2], "MULTI/EXEC replies")
        other = client()
        try:
            async with r.pipeline() as pipe:
                await pipe.watch(f"{P}w")
                await other.set(f"{P}w", "theirs")
                pipe.multi()
                pipe.set(f"{P}w", "mine")
                try:
                    await pipe.execute()
                    raise AssertionError("EXEC ran despite the WATCH conflict")
                except redis.WatchError:
                    pass
            check(await r.get(f"{P}w") == "theirs", "value after the aborted EXEC")
            async with r.pipeline() as pipe:
                await pipe.watch(f"{P}w")
                pipe.multi()
                pipe.set(f"{P}w", "mine")
                check(await pipe.execute() == [True], "EXEC without a conflict")
            check(await r.get(f"{P}w") == "mine", "value after EXEC")
        finally:
            await other.aclose()

    async def pubsub() -> None:
        ps = r.pubsub()
        try:
            await ps.subscribe(f"{P}chan")
            confirm = await ps.get_message(timeout=30)
            check(confirm is not None and confirm["type"] == "subscribe", "subscribe confirmed")
            check(await r.publish(f"{P}chan", "hi") == 1, "PUBLISH receivers")
            msg = await ps.get_message(timeout=30)
            check(msg is not None and msg["type"] == "message" and msg["data"] == "hi",
                  f"message received: {msg!r}")
            await ps.unsubscribe()
        finally:
            await ps.aclose()

    async def eval_evalsha() -> None:
        body = f"return redis.call('INCRBY', KEYS[1], ARGV[1]) -- {P}"
        sha = hashlib.sha1(body.encode()).hexdigest()
        try:
            await r.evalsha(sha, 1, f"{P}ev", 2)
            raise AssertionError("EVALSHA of an unknown script succeeded")
        except redis.exceptions.NoScriptError:
            pass
        check(await r.eval(body, 1, f"{P}ev", 2) == 2, "EVAL")
        check(await r.evalsha(sha, 1, f"{P}ev", 3) == 5, "EVALSHA after EVAL")
        script = r.register_script(f"return ARGV[1] .. '{P}'")
        check(await script(args=["x"]) == f"x{P}", "registered script (NOSCRIPT fallback)")

    async def consumer_group() -> None:
        st = f"{P}st"
        await r.xgroup_create(st, "g", id="$", mkstream=True)
        ids = [await r.xadd(st, {"n": str(i)}) for i in range(3)]
        got = await r.xreadgroup("g", "c1", {st: ">"}, count=10)
        check([e[0] for e in got[0][1]] == ids, "XREADGROUP entries")
        check(await r.xack(st, "g", ids[0]) == 1, "XACK")
        summary = await r.xpending(st, "g")
        check(summary["pending"] == 2 and summary["min"] == ids[1], "XPENDING summary")
        detail = await r.xpending_range(st, "g", min="-", max="+", count=10)
        check([d["message_id"] for d in detail] == ids[1:], "XPENDING range")
        claimed = await r.xautoclaim(st, "g", "c2", min_idle_time=0, start_id="0-0")
        check(claimed[0] == "0-0" and [e[0] for e in claimed[1]] == ids[1:], "XAUTOCLAIM")
        check((await r.xpending(st, "g"))["consumers"] == [{"name": "c2", "pending": 2}],
              "XPENDING after XAUTOCLAIM")

    async def xinfo_stream_full() -> None:
        info = await r.xinfo_stream(f"{P}st", full=True)
        check(info["length"] == 3, "length")
        group = info["groups"][0]
        check(group["name"] == "g" and group["pel-count"] == 2, "group")
        check([c["name"] for c in group["consumers"]] == ["c1", "c2"], "consumers")

    async def resp3() -> None:
        r3 = client(protocol=3)
        try:
            hello = await r3.execute_command("HELLO", 3)
            check(hello["proto"] == 3, "HELLO 3")
            check(await r3.hgetall(f"{P}h") == {"f2": "v2", "n": "3"}, "HGETALL map")
            check(await r3.zscore(f"{P}z", "c") == 3.0, "ZSCORE double")
            info = await r3.xinfo_stream(f"{P}st", full=True)
            check(info["groups"][0]["pel-count"] == 2, "XINFO STREAM FULL in RESP3")
        finally:
            await r3.aclose()

    for name, fn in [("strings", strings), ("hashes", hashes), ("lists_blpop", lists_blpop),
                     ("sorted_sets", sorted_sets), ("scan", scan), ("hscan", hscan),
                     ("pipeline", pipeline), ("multi_watch", multi_watch), ("pubsub", pubsub),
                     ("eval_evalsha", eval_evalsha), ("consumer_group", consumer_group),
                     ("xinfo_stream_full", xinfo_stream_full), ("resp3", resp3)]:
        await step(name, fn)
    await r.aclose()


asyncio.run(main())
sys.exit(1 if failed else 0)
