"""Done when: a fresh project installs resplite and tests a recovery flow with no conftest.

The test builds a new virtual environment in a temporary folder, installs resplite into it
from a copy of this working tree (``pip install --no-deps --no-build-isolation``, so nothing
is downloaded; the already installed dependencies are made visible to the new environment
through a ``.pth`` file), writes a test module that only names fixtures, and runs pytest
there. The module tests XAUTOCLAIM recovering a crashed consumer's entries after a clock
advance, never a sleep, through the sync and the asyncio client, and that each test starts
on an empty database.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROJECT_TESTS = '''
import pytest
import redis


def test_the_plugin_comes_from_the_fresh_install(resplite_server):
    import resplite

    assert resplite.__file__.startswith(INSTALL_PREFIX), resplite.__file__
    assert resplite_server.ping()


def test_a_crashed_consumers_entries_are_recovered_after_a_clock_advance(
    redis_client, resplite_clock
):
    resplite_clock.freeze()
    ids = [redis_client.xadd("jobs", {"job": str(n)}) for n in range(3)]
    redis_client.xgroup_create("jobs", "workers", id="0")

    delivered = redis_client.xreadgroup("workers", "w1", {"jobs": ">"}, count=10)
    # The fixture's client is Redis.from_url(redis_url): the shape production code gets.
    [[stream, entries]] = delivered
    assert stream == b"jobs"
    assert [entry_id for entry_id, _ in entries] == ids
    # w1 crashes here: nothing was acknowledged.

    assert redis_client.xautoclaim("jobs", "workers", "w2", min_idle_time=60_000) == [
        b"0-0", [], []
    ]
    resplite_clock.advance(60_001)
    cursor, claimed, deleted = redis_client.xautoclaim(
        "jobs", "workers", "w2", min_idle_time=60_000, count=10
    )
    assert cursor == b"0-0"
    assert [entry_id for entry_id, _ in claimed] == ids
    assert claimed[0][1] == {b"job": b"0"}
    assert deleted == []
    pending = redis_client.xpending_range("jobs", "workers", "-", "+", 10)
    assert [(p["consumer"], p["times_delivered"]) for p in pending] == [(b"w2", 2)] * 3

    assert redis_client.xack("jobs", "workers", *ids) == 3
    assert redis_client.xpending("jobs", "workers")["pending"] == 0


def test_each_test_starts_on_an_empty_database_with_a_running_clock(
    redis_client, resplite_clock
):
    assert redis_client.dbsize() == 0
    assert resplite_clock.get() == pytest.approx(redis_client.time()[0] * 1000, abs=2000)


@pytest.mark.resplite(protocol=2, decode_responses=True)
def test_a_marker_selects_resp2_and_decoding(redis_client):
    assert redis_client.connection_pool.connection_kwargs["protocol"] == 2
    redis_client.set("k", "v", px=1000)
    assert redis_client.get("k") == "v"


@pytest.mark.asyncio
async def test_the_asyncio_client_sees_the_same_recovery(aredis_client, resplite_clock):
    resplite_clock.freeze()
    entry = await aredis_client.xadd("jobs", {"job": "a"})
    await aredis_client.xgroup_create("jobs", "workers", id="0")
    await aredis_client.xreadgroup("workers", "w1", {"jobs": ">"})
    resplite_clock.advance(5_000)
    _, claimed, _ = await aredis_client.xautoclaim("jobs", "workers", "w2", min_idle_time=5_000)
    assert [entry_id for entry_id, _ in claimed] == [entry]
'''


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout}\n{done.stderr}"
    return done


def _can_build_offline() -> bool:
    """setuptools builds wheels by itself from 70.1 on; before that it needs ``wheel``."""
    return any(
        importlib.util.find_spec(name) is not None
        for name in ("setuptools.command.bdist_wheel", "wheel")
    )


@pytest.mark.slow
def test_a_fresh_project_uses_the_fixtures_with_no_conftest(tmp_path: Path) -> None:
    if not _can_build_offline():
        message = "building resplite offline needs setuptools>=70.1 (the dev extra has it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    # What is installed, and how, is checked here, not the compiled modules (minutes of C
    # compilation; the suite runs on them): a pure-Python build.
    env["RESPLITE_PURE_PYTHON"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    # A copy of what the package is built from, as the Dockerfile copies it.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "resplite", source / "resplite",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.so",
                                                  "compiled-sources.txt"))

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.strip())
    # The dependencies already installed here (hiredis, uvloop, redis, pytest, pip,
    # setuptools ...) become visible after the new environment's own site-packages.
    (purelib / "_installed_dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
          "--no-index", "--ignore-installed", str(source)], tmp_path, env)

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_recovery.py").write_text(
        f"INSTALL_PREFIX = {str(purelib)!r}\n" + textwrap.dedent(PROJECT_TESTS),
        encoding="utf-8",
    )
    assert not list(project.glob("conftest.py"))
    done = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
                 "error::pytest.PytestUnraisableExceptionWarning"], project, env)
    assert "5 passed" in done.stdout, done.stdout
