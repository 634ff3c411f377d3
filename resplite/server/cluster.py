"""An in-process cluster: N servers on one event loop, one per node, sharing a slot map.

``resplite-server --cluster-enabled yes [--cluster-nodes 3]`` and ``resplite.serve(cluster=3)``
start one :class:`~resplite.server.app.Server` per node, each with its own keyspace and
listener (``port``, ``port + 1``, ... or ephemeral ports when ``port`` is 0), all on one
thread and one clock, and join them to one :class:`~resplite.engine.cluster.Cluster`, which
splits the 16384 slots evenly in node order. Routing and the CLUSTER commands live in the
engine and in :mod:`resplite.commands.cluster`; this module only starts and stops the nodes.

SHUTDOWN on any node, or a signal, stops every node. Each node's address is published in the
slot map once it listens, so CLUSTER SLOTS / SHARDS / NODES and redirections name real ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import signal
from collections.abc import Callable
from typing import Any

from resplite.engine.clock import Clock
from resplite.engine.cluster import Cluster, ClusterNode
from resplite.engine.config import Config
from resplite.server.app import Server


def node_config(base: Config, index: int) -> Config:
    """Node ``index``'s configuration: the base one with its own port, hooks and append-only
    file folder (``appenddirname`` with ``-<index>`` after the first node: nodes sharing
    ``dir`` must not share a log)."""
    config = copy.copy(base)
    config.values = dict(base.values)
    config.hooks = {}
    if base["port"]:
        config.values["port"] = base["port"] + index
    if index and base["unixsocket"]:
        config.values["unixsocket"] = f"{base['unixsocket']}.{index}"
    if index:
        config.values["appenddirname"] = f"{base['appenddirname']}-{index}"
    return config


class ClusterServer:
    """The nodes of one in-process cluster, with the interface of a single Server."""

    def __init__(self, config: Config, clock: Clock | None = None, *,
                 embedded: bool = False) -> None:
        count = config["cluster-nodes"]
        self.config = config
        self.clock = clock or Clock()
        self.cluster = Cluster.create(count, seed=str(id(self)))
        self.nodes = [Server(node_config(config, i), self.clock, embedded=embedded)
                      for i in range(count)]
        for i, node in enumerate(self.nodes):
            node.state.join_cluster(ClusterNode(self.cluster, i))
            node.state.shutdown_requested = self.request_shutdown
            self.cluster.states.append(node.state)
        self._stopped: asyncio.Event | None = None

    # The first node stands for the cluster where one server is expected (the test kit's
    # handle, the CLI's messages).
    @property
    def state(self) -> Any:
        return self.nodes[0].state

    @property
    def port(self) -> int:
        return self.nodes[0].port

    @property
    def unix_socket(self) -> str:
        return self.nodes[0].unix_socket

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes]

    async def start(self) -> None:
        self._stopped = asyncio.Event()
        for i, node in enumerate(self.nodes):
            await node.start()
            self.cluster.nodes[i].port = node.port

    async def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        await self.start()
        if on_ready is not None:
            on_ready()
        assert self._stopped is not None
        await self._stopped.wait()
        await self.stop()

    def request_shutdown(self) -> None:
        if self._stopped is not None:
            self._stopped.set()

    async def stop(self) -> None:
        for node in self.nodes:
            await node.stop()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_shutdown)
