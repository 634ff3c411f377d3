"""node and the npm packages of tests/node (ioredis, node-redis, BullMQ), for the tests that
run node programs: installed with npm into tests/node on first use and reused while
package.json and package-lock.json are unchanged."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: Where package.json is and the packages go.
NODE_DIR = Path(__file__).resolve().parent.parent / "node"


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


def missing() -> str | None:
    """Why node programs cannot run here, or None."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node or npm is not installed"
    return None


def node_with_packages() -> str:
    """The node executable, once tests/node's packages are installed (``missing()`` must be
    None)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node is not None and npm is not None, missing()
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
