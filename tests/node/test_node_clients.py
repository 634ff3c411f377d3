"""node clients (ioredis and node-redis) run a consumer-group workflow and Pub/Sub against
resplite, and BullMQ runs a job queue (``bullmq-queue.mjs``: add, process, retry, a delayed
job moved on by RESPLITE.CLOCK ADVANCE) through its Lua scripts.

Each ``*.test.mjs`` file here is run with ``node --test`` against the session's resplite
server: ``streams-*`` run XADD, XREADGROUP, a consumer that dies with entries pending,
RESPLITE.CLOCK ADVANCE past the idle threshold, XAUTOCLAIM by another consumer, XACK;
``pubsub-*`` subscribe to channels and patterns and receive keyspace events as the clock
advances; ``cluster-*`` run against an in-process cluster of three nodes
(``resplite.serve(cluster=3)``, its nodes in ``RESPLITE_CLUSTER_NODES``). The packages are
installed with npm into this folder on first use and reused while package.json and
package-lock.json are unchanged. Without node and npm the tests skip and say so, except in
CI, where they fail.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import node as node_support

NODE_DIR = Path(__file__).resolve().parent
SCRIPTS = sorted(p.name for p in NODE_DIR.glob("*.test.mjs") if not p.name.startswith("cluster-"))
CLUSTER_SCRIPTS = sorted(p.name for p in NODE_DIR.glob("cluster-*.test.mjs"))

pytestmark = pytest.mark.xdist_group("node")


def _node() -> str:
    why = node_support.missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the node client tests are required in CI: {why}")
        pytest.skip(f"{why}: the node client tests need both")
    return node_support.node_with_packages()


@pytest.mark.parametrize("script", SCRIPTS)
def test_node_client_stream_workflow(script: str, redis_url: str) -> None:
    node = _node()
    env = dict(os.environ, RESPLITE_URL=redis_url, NODE_NO_WARNINGS="1")
    done = subprocess.run(
        [node, "--test", "--test-concurrency=1", "--test-reporter=spec", script],
        cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"node --test {script} failed:\n{done.stdout}\n{done.stderr}"
    assert "# fail 0" in done.stdout or "fail 0" in done.stdout, done.stdout


@pytest.mark.parametrize("script", CLUSTER_SCRIPTS)
def test_node_cluster_client(script: str) -> None:
    import resplite

    node = _node()
    with resplite.serve(cluster=3) as cluster:
        nodes = ",".join(f"{host}:{port}" for host, port in cluster.cluster_nodes)
        env = dict(os.environ, RESPLITE_CLUSTER_NODES=nodes, NODE_NO_WARNINGS="1")
        done = subprocess.run(
            [node, "--test", "--test-concurrency=1", "--test-reporter=spec", script],
            cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=120,
        )
    assert done.returncode == 0, f"node --test {script} failed:\n{done.stdout}\n{done.stderr}"
    assert "fail 0" in done.stdout, done.stdout


def test_bullmq_queue_and_worker(redis_url: str) -> None:
    node = _node()
    env = dict(os.environ, RESPLITE_URL=redis_url, NODE_NO_WARNINGS="1")
    done = subprocess.run(
        [node, "--test", "--test-concurrency=1", "--test-reporter=spec", "bullmq-queue.mjs"],
        cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=180,
    )
    assert done.returncode == 0, f"node --test bullmq-queue.mjs failed:\n{done.stdout}\n" \
        f"{done.stderr}"
