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

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parent
SCRIPTS = sorted(p.name for p in NODE_DIR.glob("*.test.mjs") if not p.name.startswith("cluster-"))
CLUSTER_SCRIPTS = sorted(p.name for p in NODE_DIR.glob("cluster-*.test.mjs"))

pytestmark = pytest.mark.xdist_group("node")


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    # Two xdist workers must not run npm in the same folder at once.
    path = Path(tempfile.gettempdir()) / f"resplite-npm-{os.getuid()}.lock"
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _node() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are required for the node client tests in CI")
        pytest.skip("node or npm is not installed: the node client tests need both")
    stamp = NODE_DIR / "node_modules" / ".package-lock.json"
    sources = [NODE_DIR / "package.json", NODE_DIR / "package-lock.json"]
    with _install_lock():
        newest = max(p.stat().st_mtime for p in sources if p.exists())
        if not stamp.exists() or stamp.stat().st_mtime < newest:
            command = "ci" if sources[1].exists() else "install"
            done = subprocess.run(
                [npm, command, "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=NODE_DIR, capture_output=True, text=True, timeout=600,
            )
            assert done.returncode == 0, f"npm {command} failed:\n{done.stdout}\n{done.stderr}"
    return node


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
