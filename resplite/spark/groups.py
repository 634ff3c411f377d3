"""Consumer-group bookkeeping done on the driver: consumer names, claims, acknowledgements.

Each micro-batch ``B`` of a streaming query reads through consumers named
``<consumerPrefix>-<B>-<partition>``. The name is a pure function of the batch and partition, so
a retried task or a restarted query reading batch ``B`` again uses the same consumer and finds
that consumer's pending entries, which is what makes a replay read the same entries.

* :func:`claim_idle` moves entries that another reader left pending for at least the idle
  threshold into this batch's consumers (XAUTOCLAIM with JUSTID, so the delivery count is bumped
  once, when the task reads them).
* :func:`acknowledge_through` runs when Spark commits batch ``B``: it acknowledges every entry
  still pending on this query's consumers of batches ``<= B`` and removes those consumers.
  Entries are acknowledged only through the consumers that delivered them, so nothing that was
  not delivered to this query is ever acknowledged.
* :func:`pending_by_consumer` and :func:`idle_foreign_pending` tell ``latestOffset`` whether
  there is work that is not new entries: an uncommitted batch of ours, or idle entries of a dead
  reader.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from redis.exceptions import ResponseError

from resplite.spark.connection import StreamServer, as_map, text

log = logging.getLogger("resplite.spark")

ACK_PAGE = 10_000
CLAIM_PAGE = 1_000


def consumer_name(prefix: str, batch: int, partition: int) -> str:
    return f"{prefix}-{batch}-{partition}"


def parse_consumer(prefix: str, name: str) -> tuple[int, int] | None:
    """``(batch, partition)`` if ``name`` is one of this prefix's consumers, else None."""
    head, _, part = name.rpartition("-")
    stem, _, batch = head.rpartition("-")
    if stem != prefix or not batch.isdigit() or not part.isdigit():
        return None
    return int(batch), int(part)


@dataclass(frozen=True, slots=True)
class ClaimResult:
    per_consumer: dict[str, int]
    deleted: int


def claim_idle(
    server: StreamServer,
    key: str,
    group: str,
    consumers: Sequence[str],
    min_idle_ms: int,
    limit: int | None,
) -> ClaimResult:
    """XAUTOCLAIM idle entries round-robin into ``consumers``, at most ``limit`` in all."""
    per_consumer = dict.fromkeys(consumers, 0)
    cursor = "0-0"
    claimed = deleted = 0
    turn = 0
    first_id = last_id = ""
    # Size each XAUTOCLAIM so that the claimable entries spread evenly over the consumers.
    try:
        idle = len(server.call("XPENDING", key, group, "IDLE", min_idle_ms, "-", "+", CLAIM_PAGE))
    except ResponseError as exc:
        raise server.explain(exc, key, group) from None
    if idle == 0:
        return ClaimResult(per_consumer, 0)
    wanted = idle if limit is None else min(idle, limit)
    share = max(1, -(-wanted // len(consumers)))
    while limit is None or claimed < limit:
        count = share if limit is None else max(1, min(share, limit - claimed))
        consumer = consumers[turn % len(consumers)]
        turn += 1
        try:
            reply = server.call(
                "XAUTOCLAIM", key, group, consumer, min_idle_ms, cursor, "COUNT", count, "JUSTID"
            )
        except ResponseError as exc:
            raise server.explain(exc, key, group) from None
        cursor = text(reply[0])
        ids = [text(i) for i in reply[1]]
        gone = reply[2] if len(reply) > 2 else []
        deleted += len(gone)
        if ids:
            per_consumer[consumer] += len(ids)
            claimed += len(ids)
            first_id = first_id or ids[0]
            last_id = ids[-1]
        if cursor == "0-0":
            break
    if claimed:
        log.info(
            "claimed %d entries of stream %r (group %r) idle for at least %d ms into %s (%s .. %s)",
            claimed, key, group, min_idle_ms,
            ", ".join(c for c, n in per_consumer.items() if n), first_id, last_id,
        )  # fmt: skip
    if deleted:
        log.info(
            "dropped %d pending entries of stream %r (group %r) that no longer exist",
            deleted, key, group,
        )  # fmt: skip
    return ClaimResult(per_consumer, deleted)


def pending_by_consumer(server: StreamServer, key: str, group: str) -> dict[str, int]:
    """Consumers with pending entries and how many each holds (XPENDING summary form)."""
    try:
        reply = server.call("XPENDING", key, group)
    except ResponseError as exc:
        raise server.explain(exc, key, group) from None
    owners = reply[3] if len(reply) > 3 and reply[3] else []
    return {text(name): int(count) for name, count in owners}


def idle_foreign_pending(
    server: StreamServer,
    key: str,
    group: str,
    owners: dict[str, int],
    exclude: set[str],
    min_idle_ms: int,
) -> int:
    """How many (up to a page) entries of consumers outside ``exclude`` are idle enough to claim."""
    found = 0
    for consumer in owners:
        if consumer in exclude:
            continue
        reply = server.call(
            "XPENDING", key, group, "IDLE", min_idle_ms, "-", "+", CLAIM_PAGE, consumer
        )
        found += len(reply)
        if found >= CLAIM_PAGE:
            break
    return found


def consumers_of(server: StreamServer, key: str, group: str) -> dict[str, int]:
    """All consumers of ``group`` with their pending counts (XINFO CONSUMERS)."""
    try:
        reply = server.call("XINFO", "CONSUMERS", key, group)
    except ResponseError as exc:
        raise server.explain(exc, key, group) from None
    result: dict[str, int] = {}
    for item in reply:
        info = as_map(item)
        result[text(info["name"])] = int(info.get("pending", 0))
    return result


def acknowledge_through(
    server: StreamServer, key: str, group: str, prefix: str, batch: int
) -> tuple[int, int]:
    """XACK everything pending on this prefix's consumers of batches <= ``batch``; drop them.

    Returns (entries acknowledged, consumers removed).
    """
    acked = removed = 0
    for consumer, pending in sorted(consumers_of(server, key, group).items()):
        parsed = parse_consumer(prefix, consumer)
        if parsed is None or parsed[0] > batch:
            continue
        if pending:
            acked += _ack_consumer(server, key, group, consumer)
        # Removing a consumer drops whatever it still holds from the group, which would be an
        # acknowledgement nobody checked; so remove it only once it is seen to hold nothing.
        if server.call("XPENDING", key, group, "-", "+", 1, consumer):
            log.warning("consumer %r received entries after its batch was committed", consumer)
            continue
        server.call("XGROUP", "DELCONSUMER", key, group, consumer)
        removed += 1
    if acked or removed:
        log.info(
            "acknowledged %d entries of stream %r (group %r) through batch %d; "
            "removed %d consumers",
            acked, key, group, batch, removed,
        )  # fmt: skip
    return acked, removed


def _ack_consumer(server: StreamServer, key: str, group: str, consumer: str) -> int:
    acked = 0
    start = "-"
    while True:
        reply = server.call("XPENDING", key, group, start, "+", ACK_PAGE, consumer)
        if not reply:
            return acked
        ids = [text(item[0]) for item in reply]
        acked += int(server.call("XACK", key, group, *ids))
        if len(ids) < ACK_PAGE:
            return acked
        start = "(" + ids[-1]


def remove_idle_consumers(server: StreamServer, key: str, group: str, prefix: str) -> int:
    """Remove this prefix's consumers that hold nothing (left by empty or committed batches)."""
    removed = 0
    for consumer, pending in consumers_of(server, key, group).items():
        if pending == 0 and parse_consumer(prefix, consumer) is not None:
            server.call("XGROUP", "DELCONSUMER", key, group, consumer)
            removed += 1
    return removed


def remove_if_empty(server: StreamServer, keys: Sequence[str], group: str, consumer: str) -> None:
    """Remove ``consumer`` from each stream's group where it holds no pending entry."""
    for key in keys:
        if not server.call("XPENDING", key, group, "-", "+", 1, consumer):
            server.call("XGROUP", "DELCONSUMER", key, group, consumer)
