"""redis-cli against resplite: one-shot calls (with ``-3``, ``-n``, ``-a``) and an interactive
session driven through a pseudo-terminal.

In the interactive session redis-cli builds its command hints from our COMMAND DOCS: the
hint shown for XADD lists ``KEEPREF|DELREF|ACKED``, which redis-cli 7.0's built-in help does
not know, so the hint can only have come from the server.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

import pytest
from support.servers import ServerProcess, start_resplite

from resplite.version import REDIS_VERSION

REDIS_CLI = shutil.which("redis-cli")
pytestmark = pytest.mark.skipif(REDIS_CLI is None, reason="redis-cli is not installed")


@pytest.fixture(scope="module")
def protected_server() -> Iterator[ServerProcess]:
    srv = start_resplite("--requirepass", "s3cret")
    yield srv
    srv.stop()


def cli(srv: ServerProcess, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    assert REDIS_CLI is not None
    return subprocess.run(
        [REDIS_CLI, "-h", srv.host, "-p", str(srv.port), *args],
        input=stdin, capture_output=True, text=True, timeout=20,
    )


def test_one_shot_commands(server: ServerProcess) -> None:
    assert cli(server, "PING").stdout == "PONG\n"
    assert cli(server, "SET", "cli:k", "hello world").stdout == "OK\n"
    assert cli(server, "GET", "cli:k").stdout == "hello world\n"
    assert cli(server, "INCR", "cli:n").stdout == "1\n"
    assert cli(server, "--no-raw", "GET", "cli:k").stdout == '"hello world"\n'
    assert cli(server, "--no-raw", "INCR", "cli:n").stdout == "(integer) 2\n"
    assert cli(server, "--no-raw", "GET", "cli:missing").stdout == "(nil)\n"
    out = cli(server, "NOSUCH", "x")
    assert "ERR unknown command 'NOSUCH'" in out.stdout + out.stderr
    assert f"redis_version:{REDIS_VERSION}" in cli(server, "INFO", "server").stdout
    assert cli(server, "DEL", "cli:k", "cli:n").stdout == "2\n"


def test_resp3_flag(server: ServerProcess) -> None:
    out = cli(server, "-3", "--no-raw", "HELLO", "3")
    assert "proto" in out.stdout and "(integer) 3" in out.stdout
    out = cli(server, "-3", "--no-raw", "CONFIG", "GET", "maxmemory")
    assert out.stdout == '1# "maxmemory" => "0"\n'
    out = cli(server, "-3", "CLIENT", "INFO")
    assert "resp=3" in out.stdout


def test_database_flag(server: ServerProcess) -> None:
    assert cli(server, "-n", "3", "SET", "cli:db", "three").stdout == "OK\n"
    assert cli(server, "-n", "3", "GET", "cli:db").stdout == "three\n"
    assert cli(server, "GET", "cli:db").stdout == "\n"
    assert "db=3" in cli(server, "-n", "3", "CLIENT", "INFO").stdout
    cli(server, "-n", "3", "FLUSHDB")


def test_password_flag(protected_server: ServerProcess) -> None:
    out = cli(protected_server, "-a", "s3cret", "PING")
    assert out.stdout == "PONG\n"
    assert "Using a password" in out.stderr  # redis-cli's own warning
    assert cli(protected_server, "-a", "s3cret", "--no-auth-warning", "PING").stderr == ""
    out = cli(protected_server, "PING")
    assert "NOAUTH Authentication required." in out.stdout + out.stderr
    out = cli(protected_server, "-a", "wrong", "--no-auth-warning", "PING")
    assert "WRONGPASS" in out.stdout + out.stderr or "AUTH failed" in out.stdout + out.stderr
    out = cli(protected_server, "-3", "-a", "s3cret", "--no-auth-warning", "CLIENT", "INFO")
    assert "resp=3" in out.stdout


def test_piped_commands(server: ServerProcess) -> None:
    out = cli(server, stdin="SET cli:p 1\nINCR cli:p\nGET cli:p\nDEL cli:p\n")
    assert out.stdout.split("\n")[:4] == ["OK", "2", "2", "1"]


def test_interactive_session_shows_hints_from_command_docs(server: ServerProcess) -> None:
    pexpect = pytest.importorskip("pexpect")
    prompt = f"{server.host}:{server.port}> "
    child = pexpect.spawn(REDIS_CLI, ["-h", server.host, "-p", str(server.port)],
                          encoding="utf-8", timeout=10, dimensions=(40, 250))
    try:
        child.expect_exact(prompt)
        child.send("set ")
        # (Redis 8.4's argument tree: the conditions share NX and XX's block.)
        child.expect_exact("key value [NX|XX|IFEQ ")
        child.expect_exact("] [GET] [EX seconds|PX milliseconds")
        child.send("cli:i v\r")
        child.expect_exact("OK")
        child.expect_exact(prompt)
        child.send("xadd ")
        # Only the server's COMMAND DOCS (Redis 8.2's argument tree) has these words.
        child.expect_exact("[KEEPREF|DELREF|ACKED]")
        child.send("\x15")  # clear the line
        child.send("get cli:i\r")
        child.expect_exact('"v"')
        child.expect_exact(prompt)
        child.send("client setname\r")
        child.expect_exact("wrong number of arguments for 'client|setname' command")
        child.expect_exact(prompt)
        child.send("del cli:i\r")
        child.expect_exact("(integer) 1")
        child.expect_exact(prompt)
        child.send("quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
