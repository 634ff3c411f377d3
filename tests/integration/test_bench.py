"""``python -m bench`` and ``python -m bench.instructions`` run end to end and print what they
promise: every table, one row per command with numbers and their ratio. Nothing here asserts
how fast anything is.

``bench --quick --only PING startup`` starts a redis-server and resplite, runs redis-benchmark
twice per server and times a thousand requests and one start of each: a few seconds. The
instruction count runs two Python processes under cachegrind (marked slow).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEEDS_REDIS = pytest.mark.skipif(
    shutil.which("redis-server") is None or shutil.which("redis-benchmark") is None,
    reason="the benchmark compares with redis-server, driven by redis-benchmark "
           "(neither may be missing)")
NEEDS_VALGRIND = pytest.mark.skipif(shutil.which("valgrind") is None,
                                    reason="valgrind is not installed")
NUMBER = r"-?[\d,]+(\.\d+)?|nan"


def run_module(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def figures(line: str, label: str) -> list[float]:
    """The numbers of a table row: resplite, redis and ratio, for each column group."""
    rest = line[len(label):].split()
    assert all(re.fullmatch(NUMBER, cell) for cell in rest), line
    return [float(cell.replace(",", "")) for cell in rest]


def assert_pairs(numbers: list[float], groups: int, line: str) -> None:
    assert len(numbers) == 3 * groups, line
    for ours, ref, ratio in zip(*[iter(numbers)] * 3, strict=True):
        assert ours > 0 and ref > 0, line
        # The ratio is resplite / Redis, of the unrounded figures (printed to 2 decimals).
        assert math.isclose(ratio, ours / ref, rel_tol=0.05, abs_tol=0.011), line


@NEEDS_REDIS
def test_quick_run_prints_every_table_for_the_command_asked_for() -> None:
    done = run_module("bench", "--quick", "--only", "PING", "startup")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"resplite \S+, build: (pure|compiled); redis-server [\d.]+; "
                        r"\d+ cores", lines[0]), lines[0]
    assert lines[1].startswith("load average (1, 5, 15 min): "), lines[1]
    assert lines[2].startswith("ratio = resplite / Redis"), lines[2]
    titles = [lines[i + 1] for i, line in enumerate(lines) if not line]
    assert [title.split(",")[0] for title in titles] == [
        "redis-benchmark -c 50 -P 1", "redis-benchmark -c 50 -P 16",
        "one client", "process start to first PONG"], titles
    # Only PING was asked for: one row per table, each a (resplite, redis, ratio) triple per
    # column group (CPU and requests/s; p50 and p99; wall and CPU time).
    rows = [line for line in lines if line.startswith("PING ")]
    assert len(rows) == 3, done.stdout
    for row in rows:
        assert_pairs(figures(row, "PING"), 2, row)
    start_rows = [line for line in lines if line.startswith("resplite-server / redis-server")]
    assert len(start_rows) == 1, done.stdout
    assert_pairs(figures(start_rows[0], "resplite-server / redis-server"), 2, start_rows[0])


def test_an_unknown_command_name_is_refused_with_the_names_to_choose_from() -> None:
    done = run_module("bench", "--only", "PONG", timeout=60)
    assert done.returncode == 2
    assert "unknown --only name(s) PONG" in done.stderr
    assert "XREADGROUP" in done.stderr and "startup" in done.stderr


@pytest.mark.slow  # two Python processes under cachegrind: about 15 s of CPU
@NEEDS_VALGRIND
def test_instructions_counts_the_python_path_per_request() -> None:
    done = run_module("bench.instructions", "PING", "-n", "320", "--baseline", "160",
                      "-P", "16")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("instructions per request (Python path, fake transport; -P 16;"
                               " runs of 320 and 160 requests"), lines[0]
    row = next(line for line in lines if line.startswith("PING "))
    (count,) = figures(row, "PING")
    # An instruction count is a whole positive number of instructions per request.
    assert count > 0, row
