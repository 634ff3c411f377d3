"""redis-benchmark against resplite: PING (inline and multibulk), SET and GET, unpipelined and
with 16 requests per pipeline, must all finish without an error.

redis-benchmark first asks CONFIG GET save / appendonly (and stops if that fails in a way it
does not expect), then opens its 50 connections; each test sends 20000 requests. Marked slow:
together the runs take several seconds on a small machine.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from support.servers import ServerProcess

REDIS_BENCHMARK = shutil.which("redis-benchmark")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_BENCHMARK is None, reason="redis-benchmark is not installed"),
]


@pytest.mark.parametrize("pipeline", [1, 16])
def test_ping_set_get_finish_without_errors(server: ServerProcess, pipeline: int) -> None:
    assert REDIS_BENCHMARK is not None
    result = subprocess.run(
        [REDIS_BENCHMARK, "-h", server.host, "-p", str(server.port), "-t", "ping,set,get",
         "-n", "20000", "-P", str(pipeline), "-q"],
        capture_output=True, text=True, timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "rror" not in output, output
    lines = [line for line in re.split(r"[\r\n]+", result.stdout) if "requests per second" in line]
    names = [line.split(":", 1)[0].strip() for line in lines]
    assert names == ["PING_INLINE", "PING_MBULK", "SET", "GET"], output
    for line in lines:
        match = re.search(r"([\d.]+) requests per second", line)
        assert match is not None, line
        rate = float(match[1])
        assert rate > 0, line
