"""The container's start command, exercised without Docker.

The test reads the Dockerfile's ``CMD``, runs that same command line directly with the port
swapped for a free one, and expects a PONG within a second of starting it; SIGTERM (what
``docker stop`` sends) must stop it cleanly.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def dockerfile_cmd() -> list[str]:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    commands = re.findall(r"^CMD\s+(\[.*\])\s*$", text, flags=re.MULTILINE)
    assert commands, "the Dockerfile has no exec-form CMD"
    argv = json.loads(commands[-1])
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    return argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def with_port(argv: list[str], port: int) -> list[str]:
    assert "--port" in argv, f"the CMD does not set --port: {argv}"
    swapped = list(argv)
    swapped[swapped.index("--port") + 1] = str(port)
    return swapped


def resolve(program: str) -> str:
    # The image installs the console script on PATH; here it sits next to this interpreter.
    beside = Path(sys.executable).parent / program
    found = str(beside) if beside.exists() else shutil.which(program)
    assert found, f"{program} is not installed (pip install -e . puts it in the venv's bin)"
    return found


def ping(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        return sock.recv(64)


def test_dockerfile_cmd_starts_a_server_that_answers_ping_within_a_second(
    tmp_path: Path,
) -> None:
    argv = with_port(dockerfile_cmd(), free_port())
    port = int(argv[argv.index("--port") + 1])
    argv[0] = resolve(argv[0])
    started = time.monotonic()
    # In a folder of its own, as the image's WORKDIR: with Redis's default save rules the
    # SIGTERM below writes dump.rdb there, not into the checkout.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            cwd=tmp_path, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        reply = b""
        while time.monotonic() - started < 10.0:
            assert proc.poll() is None, f"exited early: {proc.stdout.read()!r}"  # type: ignore[union-attr]
            try:
                reply = ping(port)
                break
            except OSError:
                time.sleep(0.005)
        elapsed = time.monotonic() - started
        assert reply == b"+PONG\r\n", f"no PONG after {elapsed:.3f}s"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    # How fast it starts is measured by bench/bench_startup.py, not asserted here.
