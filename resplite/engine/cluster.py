"""A Redis Cluster in one process: N nodes, each a whole server, sharing one slot map.

Theory of operation
-------------------
A :class:`Cluster` holds the topology: the nodes (id, address) and, for each of the 16384
hash slots, the node that serves it, plus the slots being moved (``migrating`` on the source,
``importing`` on the target). Each node is an ordinary server state (its own keyspace,
clients, clock listener) whose ``cluster`` attribute is its :class:`ClusterNode`, its view
of the shared map. Nothing travels over a cluster bus: every node reads the same map, so it
is always consistent, and moving a slot is a change the test makes (CLUSTER SETSLOT, MIGRATE
or the handle's helpers), never a vote.

Routing follows Redis's ``getNodeByQuery`` for a command's keys (found from its key specs):

* keys in different slots: ``-CROSSSLOT``;
* a slot served elsewhere: ``-MOVED <slot> <host>:<port>``;
* a slot this node is migrating, when a key of the command is not here any more:
  ``-ASK <slot> <host>:<port>`` of the target (``-TRYAGAIN`` if only some keys are missing);
* a slot this node is importing: served only for a client that sent ASKING just before
  (the flag lasts one command), otherwise ``-MOVED`` to the slot's owner;
* a command without keys is served by whichever node receives it.

Every node has database 0 only (SELECT other than 0 is refused, as in Redis). The check runs
only on cluster nodes: a standalone server never consults this module.

Invariants: ``owner[slot]`` is an index into ``nodes``; every slot has an owner; ``migrating``
and ``importing`` map a slot to the node it goes to, as its owner and that node declared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from resplite.algorithms.keyslot import SLOTS, key_slot

CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot"
TRYAGAIN = "TRYAGAIN Multiple keys request during rehashing of slot"


class NodeInfo:
    """One node as the others see it."""

    __slots__ = ("epoch", "host", "id", "port", "shard_id")

    def __init__(self, id: str, host: str, port: int, shard_id: str, epoch: int) -> None:
        self.id = id
        self.host = host
        self.port = port
        self.shard_id = shard_id
        self.epoch = epoch

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class Cluster:
    """The shared topology of the nodes of one process."""

    __slots__ = ("epoch", "importing", "migrating", "nodes", "owner", "states")

    def __init__(self, nodes: list[NodeInfo], owner: list[int], epoch: int = 0) -> None:
        self.nodes = nodes
        self.owner = owner  # slot -> index of the node serving it
        # slot -> index of the node it is moving to (set on its owner: SETSLOT MIGRATING)
        self.migrating: dict[int, int] = {}
        # slot -> index of the node importing it (set on that node: SETSLOT IMPORTING)
        self.importing: dict[int, int] = {}
        self.epoch = epoch
        # The nodes' server states, in node order (MIGRATE reaches the target's keyspace).
        self.states: list[Any] = []

    @classmethod
    def create(cls, count: int, seed: str = "") -> Cluster:
        """``count`` nodes (addresses set when they listen) splitting the slots evenly."""
        if count < 1:
            raise ValueError("a cluster needs at least one node")
        nodes = [
            NodeInfo(_node_id(f"{seed}node{i}"), "127.0.0.1", 0, _node_id(f"{seed}shard{i}"),
                     i + 1)
            for i in range(count)
        ]
        # The split redis-cli --cluster create makes: 0-5460, 5461-10922, 10923-16383 for 3.
        owner: list[int] = []
        per_node = SLOTS / count
        cursor = 0.0
        for index in range(count):
            last = SLOTS - 1 if index == count - 1 else int(cursor + per_node - 1 + 0.5)
            owner.extend([index] * (last + 1 - len(owner)))
            cursor += per_node
        return cls(nodes, owner, epoch=count)

    def node_index(self, node_id: str) -> int | None:
        for i, node in enumerate(self.nodes):
            if node.id == node_id:
                return i
        return None

    def ranges(self, index: int) -> list[tuple[int, int]]:
        """The slots of node ``index`` as (first, last) runs, in order."""
        runs: list[tuple[int, int]] = []
        start = None
        for slot in range(SLOTS + 1):
            mine = slot < SLOTS and self.owner[slot] == index
            if mine and start is None:
                start = slot
            elif not mine and start is not None:
                runs.append((start, slot - 1))
                start = None
        return runs

    def assign(self, slot: int, index: int) -> None:
        """CLUSTER SETSLOT ... NODE: ``slot`` is served by ``index`` from now on."""
        self.owner[slot] = index
        self.migrating.pop(slot, None)
        self.importing.pop(slot, None)
        self.epoch += 1
        self.nodes[index].epoch = self.epoch


def _node_id(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()


class ClusterNode:
    """One node's view of the :class:`Cluster`: its index and the routing check."""

    __slots__ = ("cluster", "index")

    def __init__(self, cluster: Cluster, index: int) -> None:
        self.cluster = cluster
        self.index = index

    @property
    def me(self) -> NodeInfo:
        return self.cluster.nodes[self.index]

    def route(self, keys: Sequence[bytes], present: Sequence[bool], asking: bool) -> str | None:
        """The redirection or error for a command on ``keys`` (``present``: whether each is
        in this node's keyspace), or None to serve it here."""
        if not keys:
            return None
        slot = key_slot(keys[0])
        for key in keys[1:]:
            if key_slot(key) != slot:
                return CROSSSLOT
        cluster = self.cluster
        owner = cluster.owner[slot]
        missing = sum(1 for p in present if not p)
        if owner == self.index:
            target = cluster.migrating.get(slot)
            if target is None or missing == 0:
                return None
            if missing < len(keys):
                return TRYAGAIN
            return f"ASK {slot} {cluster.nodes[target].address}"
        if asking and cluster.importing.get(slot) == self.index:
            if 0 < missing < len(keys):
                return TRYAGAIN
            return None
        return f"MOVED {slot} {cluster.nodes[owner].address}"
