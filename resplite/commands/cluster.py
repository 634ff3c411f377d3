"""CLUSTER, READONLY, READWRITE and ASKING: the in-process cluster's commands.

On a standalone server (``cluster-enabled no``) every one of them answers Redis's
``ERR This instance has cluster support disabled``. On a node of an in-process cluster
(:mod:`resplite.engine.cluster`) they answer as a Redis Cluster node does: CLUSTER SLOTS,
SHARDS, NODES, INFO, MYID, MYSHARDID, KEYSLOT, COUNTKEYSINSLOT, GETKEYSINSLOT and SETSLOT
(IMPORTING, MIGRATING, STABLE, NODE) over the shared slot map, READONLY / READWRITE set the
connection's flag (there are no replicas, so reads are served by the primaries either way),
ASKING lets the next command use a slot this node is importing. MIGRATE, which moves keys
to another node of the same process directly, lives in :mod:`resplite.commands.migrate`.

COUNTKEYSINSLOT and GETKEYSINSLOT scan the node's keys: O(N) in the keys it holds, where
Redis keeps a per-slot index. CLUSTER SLOT-STATS (Redis 8.2) reports each of the node's
slots with its ``key-count`` (one pass over the keys), as Redis does while
``cluster-slot-stats-enabled`` is off: the CPU and network metrics, and ORDERBY on them,
need that directive, which resplite does not have. Node addresses are 127.0.0.1 and the
ports the nodes listen on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.algorithms.keyslot import SLOTS, key_slot
from resplite.algorithms.numbers import parse_int
from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Verbatim

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.cluster import ClusterNode

_HELP = help_reply("CLUSTER", [
    ("COUNTKEYSINSLOT <slot>", ["Return the number of keys in <slot>."]),
    ("GETKEYSINSLOT <slot> <count>", ["Return key names stored by this node in a slot."]),
    ("INFO", ["Return information about the cluster."]),
    ("KEYSLOT <key>", ["Return the hash slot for <key>."]),
    ("MYID", ["Return the node id."]),
    ("MYSHARDID", ["Return the node's shard id."]),
    ("NODES", ["Return cluster configuration seen by node, one line per node."]),
    ("SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)", [
        "Set slot state.",
    ]),
    ("SHARDS", ["Return information about slot range mappings and the nodes serving them."]),
    ("SLOT-STATS <SLOTSRANGE <start-slot> <end-slot> "
     "| ORDERBY <metric> [LIMIT <limit>] [ASC|DESC]>", [
        "Return usage statistics (the key count) of this node's slots, by slot range or",
        "ordered by a metric.",
    ]),
    ("SLOTS", ["Return information about slots range mappings."]),
])


def _node(client: Client) -> ClusterNode:
    node = client.server.cluster
    if node is None:
        raise CommandError(errors.NO_CLUSTER)
    return node


def _slot(arg: bytes, error: str = errors.INVALID_SLOT) -> int:
    value = parse_int(arg)
    if value is None or not 0 <= value < SLOTS:
        raise CommandError(error)
    return value


@command("cluster|keyslot")
def cluster_keyslot(client: Client, argv: list[bytes]) -> Any:
    _node(client)
    return key_slot(argv[2])


@command("cluster|myid")
def cluster_myid(client: Client, argv: list[bytes]) -> Any:
    return _node(client).me.id.encode()


@command("cluster|myshardid")
def cluster_myshardid(client: Client, argv: list[bytes]) -> Any:
    return _node(client).me.shard_id.encode()


@command("cluster|slots")
def cluster_slots(client: Client, argv: list[bytes]) -> Any:
    node = _node(client)
    cluster = node.cluster
    reply = []
    runs = sorted((first, last, i) for i in range(len(cluster.nodes))
                  for first, last in cluster.ranges(i))
    for first, last, i in runs:
        info = cluster.nodes[i]
        reply.append([first, last, [info.host.encode(), info.port, info.id.encode(), {}]])
    return reply


@command("cluster|shards")
def cluster_shards(client: Client, argv: list[bytes]) -> Any:
    cluster = _node(client).cluster
    reply = []
    for i, info in enumerate(cluster.nodes):
        slots = [bound for run in cluster.ranges(i) for bound in run]
        reply.append({
            b"slots": slots,
            b"nodes": [{
                b"id": info.id.encode(),
                b"port": info.port,
                b"ip": info.host.encode(),
                b"endpoint": info.host.encode(),
                b"role": b"master",
                b"replication-offset": 0,
                b"health": b"online",
            }],
        })
    return reply


@command("cluster|nodes")
def cluster_nodes(client: Client, argv: list[bytes]) -> Any:
    node = _node(client)
    cluster = node.cluster
    lines = []
    for i, info in enumerate(cluster.nodes):
        flags = "myself,master" if i == node.index else "master"
        slots = [str(a) if a == b else f"{a}-{b}" for a, b in cluster.ranges(i)]
        slots += [f"[{s}->-{cluster.nodes[t].id}]" for s, t in sorted(cluster.migrating.items())
                  if cluster.owner[s] == i]
        slots += [f"[{s}-<-{cluster.nodes[cluster.owner[s]].id}]"
                  for s, t in sorted(cluster.importing.items()) if t == i]
        lines.append(" ".join([info.id, f"{info.address}@{info.port + 10000}", flags, "-", "0",
                               "0", str(info.epoch), "connected", *slots]))
    return Verbatim(("\n".join(lines) + "\n").encode())


@command("cluster|info")
def cluster_info(client: Client, argv: list[bytes]) -> Any:
    node = _node(client)
    cluster = node.cluster
    fields = [
        ("cluster_state", "ok"),
        ("cluster_slots_assigned", SLOTS),
        ("cluster_slots_ok", SLOTS),
        ("cluster_slots_pfail", 0),
        ("cluster_slots_fail", 0),
        ("cluster_known_nodes", len(cluster.nodes)),
        ("cluster_size", sum(1 for i in range(len(cluster.nodes)) if cluster.ranges(i))),
        ("cluster_current_epoch", cluster.epoch),
        ("cluster_my_epoch", node.me.epoch),
        ("cluster_stats_messages_sent", 0),
        ("cluster_stats_messages_received", 0),
        ("total_cluster_links_buffer_limit_exceeded", 0),
    ]
    text = "".join(f"{name}:{value}\r\n" for name, value in fields)
    return Verbatim(text.encode())


def _keys_in_slot(client: Client, slot: int) -> list[bytes]:
    return [key for key in client.db.live_keys() if key_slot(key) == slot]


@command("cluster|countkeysinslot")
def cluster_countkeysinslot(client: Client, argv: list[bytes]) -> Any:
    _node(client)
    return len(_keys_in_slot(client, _slot(argv[2])))


def _slot_key_counts(client: Client) -> dict[int, int]:
    counts: dict[int, int] = {}
    for key in client.db.live_keys():
        slot = key_slot(key)
        counts[slot] = counts.get(slot, 0) + 1
    return counts


def _slot_stat(slot: int, counts: dict[int, int]) -> list[Any]:
    return [slot, {b"key-count": counts.get(slot, 0)}]


@command("cluster|slot-stats")
def cluster_slot_stats(client: Client, argv: list[bytes]) -> Any:
    node = _node(client)
    mine = [slot for first, last in node.cluster.ranges(node.index)
            for slot in range(first, last + 1)]
    n = len(argv)
    mode = argv[2].lower() if n > 2 else b""
    if n == 5 and mode == b"slotsrange":
        start = _slot(argv[3], errors.INVALID_OR_OUT_OF_RANGE_SLOT)
        end = _slot(argv[4], errors.INVALID_OR_OUT_OF_RANGE_SLOT)
        if start > end:
            raise CommandError(errors.slot_range_reversed(start, end))
        counts = _slot_key_counts(client)
        return [_slot_stat(slot, counts) for slot in mine if start <= slot <= end]
    if n >= 4 and mode == b"orderby":
        if argv[3].lower() != b"key-count":
            raise CommandError(errors.SLOT_STATS_METRIC)
        limit, desc = SLOTS, True
        limits = orders = 0
        i = 4
        while i < n:
            option = argv[i].lower()
            if option == b"limit" and i + 1 < n:
                value = parse_int(argv[i + 1])
                if value is None or not 1 <= value <= SLOTS:
                    raise CommandError(errors.SLOT_STATS_LIMIT)
                limit = value
                limits += 1
                i += 1
            elif option in (b"asc", b"desc"):
                desc = option == b"desc"
                orders += 1
            else:
                raise CommandError(errors.SYNTAX)
            if limits > 1 or orders > 1:
                raise CommandError(errors.SLOT_STATS_REPEATED)
            i += 1
        counts = _slot_key_counts(client)
        # Ties: the lower slot first, in either direction.
        ranked = sorted(mine, key=lambda slot: (-counts.get(slot, 0) if desc
                                                else counts.get(slot, 0), slot))
        return [_slot_stat(slot, counts) for slot in ranked[:limit]]
    raise CommandError(errors.subcommand_syntax(argv))


@command("cluster|getkeysinslot")
def cluster_getkeysinslot(client: Client, argv: list[bytes]) -> Any:
    _node(client)
    slot = _slot(argv[2], errors.INVALID_SLOT_OR_COUNT)
    count = parse_int(argv[3])
    if count is None or count < 0:
        raise CommandError(errors.INVALID_SLOT_OR_COUNT)
    return _keys_in_slot(client, slot)[:count]


@command("cluster|setslot")
def cluster_setslot(client: Client, argv: list[bytes]) -> Any:
    node = _node(client)
    cluster = node.cluster
    slot = _slot(argv[2])
    action = argv[3].lower() if len(argv) > 3 else b""
    if action == b"stable" and len(argv) == 4:
        cluster.migrating.pop(slot, None)
        cluster.importing.pop(slot, None)
        return OK
    if action not in (b"importing", b"migrating", b"node") or len(argv) != 5:
        raise CommandError("ERR Invalid CLUSTER SETSLOT action or number of arguments. "
                           "Try CLUSTER HELP")
    target = cluster.node_index(argv[4].decode("utf-8", "replace"))
    if target is None:
        raise CommandError(f"ERR I don't know about node {argv[4].decode('utf-8', 'replace')}")
    if action == b"migrating":
        if cluster.owner[slot] != node.index:
            raise CommandError(f"ERR I'm not the owner of hash slot {slot}")
        cluster.migrating[slot] = target
    elif action == b"importing":
        if cluster.owner[slot] == node.index:
            raise CommandError(f"ERR I'm already the owner of hash slot {slot}")
        cluster.importing[slot] = node.index
    else:
        cluster.assign(slot, target)
    return OK


@command("cluster|help")
def cluster_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP


@command("readonly")
def readonly(client: Client, argv: list[bytes]) -> Any:
    _node(client)
    client.cluster_readonly = True
    return OK


@command("readwrite")
def readwrite(client: Client, argv: list[bytes]) -> Any:
    _node(client)
    client.cluster_readonly = False
    return OK


@command("asking")
def asking(client: Client, argv: list[bytes]) -> Any:
    _node(client)
    client.cluster_asking = True
    return OK
