"""Waiting, without timed sleeps, for redis-py asyncio clients to block on a server.

A blocking command sent from a task is in the server's hands once INFO clients counts it in
``blocked_clients``: :func:`park` starts the command and returns when it is, so the test
then acts knowing who waits, in which order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import redis.asyncio as aioredis


async def blocked_count(admin: aioredis.Redis) -> int:
    return int((await admin.info("clients"))["blocked_clients"])


async def until_blocked(admin: aioredis.Redis, count: int) -> None:
    """Return once exactly ``count`` clients are blocked: the server is asked (2000 times
    at most, 2 ms apart), never a clock."""
    for _ in range(2000):
        if await blocked_count(admin) == count:
            return
        await asyncio.sleep(0.002)
    raise AssertionError(f"expected {count} blocked clients")


async def park(admin: aioredis.Redis, aw: Awaitable[Any], count: int) -> asyncio.Task[Any]:
    """Start ``aw`` (a blocking command) and return its task once ``count`` clients are
    blocked."""
    task = asyncio.ensure_future(aw)
    await until_blocked(admin, count)
    return task
