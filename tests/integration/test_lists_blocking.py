"""Blocking list commands with many redis-py asyncio clients at once, on a server whose clock
the tests freeze and advance (no test waits for time to pass), and a small job queue in the
style of RQ built on BLMOVE.

What is checked: clients are served one element each in the order they blocked, per key;
BLMOVE chains hand an element on through several lists in one round; timeouts follow the
server's clock (RESPLITE.CLOCK ADVANCE fires them) and CLIENT UNBLOCK ends a wait; a key that
is deleted or changes type keeps its clients waiting, and a BLMOVE whose destination turned
into another type answers WRONGTYPE when it is finally served (Redis 7.2+ re-runs the
command); inside MULTI nothing blocks; a disconnected waiter leaves nothing behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError
from support.blocking import blocked_count, park, until_blocked

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def clients(frozen: Any) -> AsyncIterator[list[aioredis.Redis]]:
    made = [frozen.async_client(protocol=3, decode_responses=True) for _ in range(12)]
    yield made
    for c in made:
        await c.aclose()


async def test_ten_waiters_get_one_element_each_in_blocking_order(
    clients: list[aioredis.Redis],
) -> None:
    admin, *waiters = clients[:11]
    tasks = []
    for n, c in enumerate(waiters, start=1):
        pop = c.blpop(["jobs"], timeout=0) if n % 2 else c.brpop(["other", "jobs"], timeout=0)
        tasks.append(await park(admin, pop, n))
    await admin.rpush("jobs", *[f"j{i}" for i in range(1, 8)])
    served = [await t for t in tasks[:7]]
    # BLPOP waiters take from the head, BRPOP waiters from the tail, in blocking order.
    assert served == [["jobs", "j1"], ["jobs", "j7"], ["jobs", "j2"], ["jobs", "j6"],
                      ["jobs", "j3"], ["jobs", "j5"], ["jobs", "j4"]]
    assert await blocked_count(admin) == 3 and await admin.exists("jobs") == 0
    await admin.lpush("jobs", "late")
    assert await tasks[7] == ["jobs", "late"]
    await admin.rpush("other", "x")
    assert await tasks[9] == ["other", "x"]  # BRPOP other jobs: served from "other"
    await admin.rpush("jobs", "y")
    assert await tasks[8] == ["jobs", "y"]


async def test_waiters_on_several_keys_are_served_per_key(clients: list[aioredis.Redis]) -> None:
    admin, a1, b1, ab, a2 = clients[:5]
    t_a1 = await park(admin, a1.blpop(["a"], timeout=0), 1)
    t_b1 = await park(admin, b1.blpop(["b"], timeout=0), 2)
    t_ab = await park(admin, ab.blpop(["a", "b"], timeout=0), 3)
    t_a2 = await park(admin, a2.blpop(["a"], timeout=0), 4)
    async with admin.pipeline(transaction=True) as pipe:
        pipe.rpush("b", "b1", "b2")
        pipe.rpush("a", "a1", "a2")
        await pipe.execute()
    # "b" was made ready first, so its waiters are served first, in order: b1, then ab,
    # whose BLPOP a b is re-run (Redis 7.2+) and takes from "a", its first key with
    # elements. Then "a"'s waiters: a1 takes what is left; a2 finds "a" gone and waits on.
    assert await t_b1 == ["b", "b1"]
    assert await t_ab == ["a", "a1"]
    assert await t_a1 == ["a", "a2"]
    assert await blocked_count(admin) == 1 and await admin.lrange("b", 0, -1) == ["b2"]
    await admin.rpush("a", "a3")
    assert await t_a2 == ["a", "a3"]


async def test_blmove_chain_moves_an_element_through_every_list(
    clients: list[aioredis.Redis],
) -> None:
    admin, *movers = clients[:6]
    tasks = []
    for i, c in enumerate(movers[:4]):
        tasks.append(await park(admin, c.blmove(f"l{i}", f"l{i + 1}", 0, "RIGHT", "LEFT"),
                                i + 1))
    last = await park(admin, movers[4].blpop(["l4"], timeout=0), 5)
    await admin.lpush("l0", "token")
    assert [await t for t in tasks] == ["token"] * 4
    assert await last == ["l4", "token"]
    assert await admin.exists("l0", "l1", "l2", "l3", "l4") == 0


async def test_timeouts_follow_the_servers_clock(
    clients: list[aioredis.Redis], resplite_clock: Any
) -> None:
    admin, short, longer, mover, forever = clients[:5]
    t_short = await park(admin, short.blpop(["q"], timeout=1.5), 1)
    t_long = await park(admin, longer.execute_command("BLMPOP", "2.5", "1", "q", "LEFT"), 2)
    t_move = await park(admin, mover.execute_command("BLMOVE", "q", "d", "LEFT", "LEFT", "2.5"), 3)
    t_forever = await park(admin, forever.brpop(["q"], timeout=0), 4)
    resplite_clock.advance(1499)
    await until_blocked(admin, 4)
    resplite_clock.advance(1)
    assert await t_short is None
    await until_blocked(admin, 3)
    resplite_clock.advance(1000)
    assert await t_long is None
    assert await t_move is None  # a timed-out BLMOVE answers a null (array), like the others
    resplite_clock.advance(10**9)
    assert await blocked_count(admin) == 1
    await admin.rpush("q", "v")
    assert await t_forever == ["q", "v"]


async def test_resplite_clock_advance_fires_list_timeouts(clients: list[aioredis.Redis]) -> None:
    admin, waiter = clients[:2]
    task = await park(admin, waiter.brpop(["q"], timeout=60), 1)
    await admin.execute_command("RESPLITE.CLOCK", "ADVANCE", "59999")
    await until_blocked(admin, 1)
    await admin.execute_command("RESPLITE.CLOCK", "ADVANCE", "1")
    assert await task is None


async def test_fractional_timeouts_round_up_to_the_millisecond(
    clients: list[aioredis.Redis], resplite_clock: Any
) -> None:
    admin, waiter = clients[:2]
    task = await park(admin, waiter.blpop(["q"], timeout=0.0101), 1)  # 10.1 ms -> 11 ms
    resplite_clock.advance(10)
    await until_blocked(admin, 1)
    resplite_clock.advance(1)
    assert await task is None


async def test_client_unblock_as_timeout_or_error(clients: list[aioredis.Redis]) -> None:
    admin, first, second = clients[:3]
    first_id, second_id = await first.client_id(), await second.client_id()
    t_first = await park(admin, first.brpoplpush("q", "d", 0), 1)
    t_second = await park(admin, second.blpop(["q"], timeout=0), 2)
    assert await admin.client_unblock(first_id) is True
    assert await t_first is None
    assert await admin.client_unblock(second_id, error=True) is True
    with pytest.raises(ResponseError, match="UNBLOCKED client unblocked via CLIENT UNBLOCK"):
        await t_second
    assert await admin.client_unblock(second_id) is False
    assert await admin.exists("q", "d") == 0


async def test_key_deleted_or_retyped_keeps_waiters_and_blmove_meets_wrongtype(
    clients: list[aioredis.Redis],
) -> None:
    admin, popper, mover = clients[:3]
    t_pop = await park(admin, popper.blpop(["q"], timeout=0), 1)
    t_move = await park(admin, mover.blmove("src", "dst", 0, "LEFT", "LEFT"), 2)
    await admin.set("q", "now a string")
    await admin.delete("q")
    await admin.hset("q", "f", "v")
    await admin.set("dst", "not a list")
    await until_blocked(admin, 2)
    await admin.delete("q")
    await admin.rpush("q", "finally")
    assert await t_pop == ["q", "finally"]
    await admin.rpush("src", "element")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        await t_move
    assert await admin.lrange("src", 0, -1) == ["element"]  # nothing was moved


async def test_a_push_inside_a_transaction_wakes_only_after_exec(
    clients: list[aioredis.Redis],
) -> None:
    admin, waiter = clients[:2]
    task = await park(admin, waiter.blpop(["q"], timeout=0), 1)
    async with admin.pipeline(transaction=True) as pipe:
        pipe.rpush("q", "a", "b")
        pipe.lrange("q", 0, -1)
        pipe.lpop("q")
        replies = await pipe.execute()
    assert replies == [2, ["a", "b"], "a"]  # the waiter took nothing during EXEC
    assert await task == ["q", "b"]


async def test_blocking_commands_inside_a_transaction_do_not_block(
    clients: list[aioredis.Redis],
) -> None:
    admin = clients[0]
    async with admin.pipeline(transaction=True) as pipe:
        pipe.blpop(["q"], timeout=0)
        pipe.brpop(["q"], timeout=0)
        pipe.blmove("q", "d", 0)
        pipe.brpoplpush("q", "d", 0)
        pipe.execute_command("BLMPOP", "0", "1", "q", "LEFT")
        replies = await pipe.execute()
    assert replies == [None, None, None, None, None]
    assert await blocked_count(admin) == 0


async def test_a_disconnected_waiter_leaves_nothing_behind(frozen: Any) -> None:
    admin = frozen.async_client(protocol=3, decode_responses=True)
    try:
        doomed = [frozen.async_client(protocol=3) for _ in range(3)]
        tasks = [asyncio.ensure_future(c.blpop(["q"], timeout=0)) for c in doomed]
        await until_blocked(admin, 3)
        for task in tasks:
            task.cancel()
        for c in doomed:
            await c.aclose()
        await until_blocked(admin, 0)
        await admin.rpush("q", "kept")
        assert await admin.lrange("q", 0, -1) == ["kept"]
    finally:
        await admin.aclose()


async def test_resp2_clients(frozen: Any) -> None:
    admin = frozen.async_client(protocol=2, decode_responses=True)
    reader = frozen.async_client(protocol=2, decode_responses=True)
    try:
        task = await park(admin, reader.execute_command("BLMPOP", "0", "1", "q", "RIGHT",
                                                        "COUNT", "2"), 1)
        await admin.rpush("q", "1", "2", "3")
        assert await task == ["q", ["3", "2"]]
    finally:
        await admin.aclose()
        await reader.aclose()


# -- a reliable job queue, the way RQ-like libraries use lists ----------------------------------


async def test_reliable_queue_with_blmove(
    frozen: Any, clients: list[aioredis.Redis], resplite_clock: Any
) -> None:
    """Producers LPUSH jobs; each worker BLMOVEs one into its own processing list, does it,
    records the result and LREMs it from processing. A worker that dies mid-job leaves the
    job in its processing list, from where a reaper puts it back on the queue."""
    admin = clients[0]
    producers = clients[1:3]
    workers = clients[3:7]
    jobs = [f"job:{i}" for i in range(40)]
    done: list[str] = []

    crash_on = {"job:7"}  # the worker that takes this job dies with it

    async def work(conn: aioredis.Redis, name: str) -> None:
        processing = f"processing:{name}"
        while True:
            job = str(await conn.blmove("queue", processing, 0, "RIGHT", "LEFT"))
            if job == "stop":
                await conn.lrem(processing, 1, job)
                return
            if job in crash_on:
                crash_on.discard(job)
                return  # gone, with the job still in its processing list
            async with conn.pipeline(transaction=True) as pipe:
                pipe.rpush("results", f"{job}:{name}")
                pipe.lrem(processing, 1, job)
                await pipe.execute()
            done.append(job)

    tasks = [asyncio.ensure_future(work(w, f"w{i}")) for i, w in enumerate(workers)]
    await until_blocked(admin, len(workers))
    for i, job in enumerate(jobs):
        await producers[i % 2].lpush("queue", job)
    for _ in range(2000):
        if len(done) == len(jobs) - 1 and await blocked_count(admin) == len(workers) - 1:
            break
        await asyncio.sleep(0.002)
    assert sorted(done) == sorted(j for j in jobs if j != "job:7")
    # The reaper: whatever sits in a processing list goes back to the queue.
    stranded = {name: await admin.lrange(f"processing:w{i}", 0, -1)
                for i, name in enumerate(f"w{i}" for i in range(len(workers)))}
    assert sorted(stranded.values()) == [[], [], [], ["job:7"]]
    dead = next(name for name, held in stranded.items() if held)
    await admin.lmove(f"processing:{dead}", "queue", "RIGHT", "RIGHT")
    for _ in range(2000):
        if len(done) == len(jobs):
            break
        await asyncio.sleep(0.002)
    assert sorted(done) == sorted(jobs)
    for _ in range(len(workers) - 1):
        await admin.lpush("queue", "stop")
    await asyncio.gather(*tasks)
    assert await admin.llen("results") == len(jobs)
    assert await admin.exists("queue", *[f"processing:w{i}" for i in range(len(workers))]) == 0
    # Jobs left in LPUSH order are taken from the right: first in, first out per producer.
    order = [str(r).split(":")[1] for r in await admin.lrange("results", 0, -1)]
    assert order.index("0") < order.index("2") < order.index("4")
