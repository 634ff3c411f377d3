"""redis.conf as Redis reads it: Debian's stock file loads and daemonizes, include and
rename-command work, the process directives take effect, a bad line names file and line.

Each test starts ``python -m resplite`` as a separate process (the process directives change
the process: working directory, fork, title, OOM score), in a temporary directory, and stops
it with SHUTDOWN. Waits are for events (a pid file, a port) with a deadline, never durations.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import procs
from support.raw import RawClient
from support.servers import free_port

STOCK = Path("/etc/redis/redis.conf")


def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _connect(port: int, proc: subprocess.Popen[str] | None = None) -> RawClient:
    """A connection to the server on ``port``; if none comes, ``proc`` (that started it) is
    stopped."""
    conn: list[RawClient] = []

    def up() -> bool:
        try:
            conn.append(RawClient("127.0.0.1", port))
        except OSError:
            return False
        return True

    try:
        _wait_for(up, f"port {port}")
    except BaseException:
        if proc is not None:
            procs.stop(proc)
        raise
    return conn[0]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of ours counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ", 1)[1][:1] != "Z"


def _pid_gone(pid: int) -> bool:
    return not _pid_alive(pid)


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "resplite", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def _stock_copy(tmp: Path, port: int) -> Path:
    """Debian's redis.conf with only dir, logfile, pidfile and port pointed at ``tmp``."""
    text = STOCK.read_text()
    for name, value in (("dir", str(tmp / "data")), ("logfile", str(tmp / "redis.log")),
                        ("pidfile", str(tmp / "redis.pid")), ("port", str(port))):
        text, n = re.subn(rf"(?m)^{name} .*$", f"{name} {value}", text)
        assert n == 1, name
    (tmp / "data").mkdir()
    path = tmp / "redis.conf"
    path.write_text(text)
    return path


@pytest.mark.skipif(not STOCK.exists(), reason="no stock /etc/redis/redis.conf (redis-server)")
def test_debians_stock_redis_conf_loads_daemonizes_and_serves(tmp_path: Path) -> None:
    port = free_port()
    conf = _stock_copy(tmp_path, port)
    done = _run(str(conf), cwd=tmp_path)
    # daemonize yes: the foreground process returns at once, the server runs on.
    assert done.returncode == 0, done.stderr
    pidfile = tmp_path / "redis.pid"
    _wait_for(pidfile.exists, "the pid file")
    pid = int(pidfile.read_text())
    procs.record(pid)
    try:
        _check_stock_daemon(port, pid, conf, tmp_path)
        _wait_for(lambda: not _pid_alive(pid), "the daemon to exit")
    except BaseException:
        # The daemon is nobody's child: if the test stops early, stop it here.
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
        raise
    assert not pidfile.exists()  # removed at exit
    log = (tmp_path / "redis.log").read_text()
    assert "Ready to accept connections" in log
    # Directives without a meaning here are named once, in one line.
    [line] = [ln for ln in log.splitlines() if "have no effect here" in ln]
    for name in ("repl-diskless-sync", "replica-priority", "jemalloc-bg-thread"):
        assert name in line
    for name in ("pidfile", "loglevel", "hz", "dynamic-hz", "activerehashing", "daemonize",
                 "rdbcompression", "dbfilename", "appendfsync", "appendonly"):
        assert f" {name}," not in line and not line.endswith(f" {name}")


def _check_stock_daemon(port: int, pid: int, conf: Path, tmp_path: Path) -> None:
    conn = _connect(port)
    try:
        assert conn.call("PING") == b"+PONG\r\n"
        assert conn.call("CONFIG", "GET", "daemonize") == b"*2\r\n$9\r\ndaemonize\r\n$3\r\nyes\r\n"
        assert conn.call("CONFIG", "GET", "appendfsync").endswith(b"$8\r\neverysec\r\n")
        assert conn.call("CONFIG", "GET", "oom-score-adj-values").endswith(b"$9\r\n0 200 800\r\n")
        info = conn.call("INFO", "server").decode()
        assert f"config_file:{conf}" in info and f"process_id:{pid}" in info
        # The working directory is `dir`, as Redis enters it while reading the file.
        assert Path(f"/proc/{pid}/cwd").resolve() == (tmp_path / "data").resolve()
        # The daemon left its session and writes nothing to the terminal.
        assert os.getsid(pid) == pid
        # set-proc-title yes: the kernel's task name (or the full title) says what runs.
        assert Path(f"/proc/{pid}/comm").read_text().startswith("resplite")
        conn.call("SET", "k", "v")
        conn.send("SHUTDOWN", "NOSAVE")
        assert conn.is_closed(timeout=10)
    finally:
        conn.close()


@pytest.mark.skipif(not STOCK.exists(), reason="no stock /etc/redis/redis.conf (redis-server)")
def test_debians_stock_redis_conf_keeps_the_keys_across_a_sigterm(tmp_path: Path) -> None:
    """The stock file has no save line, so Redis's built-in rules apply: SIGTERM (what
    systemctl stop sends) writes dump.rdb in ``dir`` and the restarted server has the keys."""
    port = free_port()
    conf = _stock_copy(tmp_path, port)
    pidfile = tmp_path / "redis.pid"
    for round_ in ("write", "read"):
        done = _run(str(conf), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        _wait_for(pidfile.exists, "the pid file")
        pid = int(pidfile.read_text())
        conn = _connect(port)
        try:
            if round_ == "write":
                assert conn.call("CONFIG", "GET", "save") == \
                    b"*2\r\n$4\r\nsave\r\n$23\r\n3600 1 300 100 60 10000\r\n"
                for i in range(100):
                    assert conn.call("SET", f"key:{i}", f"value:{i}") == b"+OK\r\n"
                assert conn.call("RPUSH", "list", "a", "b") == b":2\r\n"
            else:
                assert conn.call("DBSIZE") == b":101\r\n"
                assert conn.call("GET", "key:99") == b"$8\r\nvalue:99\r\n"
                assert conn.call("LRANGE", "list", "0", "-1") == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
        finally:
            conn.close()
        os.kill(pid, signal.SIGTERM)
        _wait_for(functools.partial(_pid_gone, pid), "the daemon to exit")
        assert (tmp_path / "data" / "dump.rdb").exists()


def _start(tmp: Path, *args: str) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resplite", *args, "--port", str(port)], cwd=tmp,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return proc, port


def _stop(proc: subprocess.Popen[str], conn: RawClient) -> str:
    try:
        conn.send("SHUTDOWN", "NOSAVE")
        conn.is_closed(timeout=10)
        conn.close()
        out, _ = proc.communicate(timeout=30)
    finally:
        procs.stop(proc)
    return out


def test_include_globs_and_rename_command(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "10-limits.conf").write_text("maxclients 321\n")
    (tmp_path / "conf.d" / "20-limits.conf").write_text("maxclients 654\nhz 25\n")
    (tmp_path / "main.conf").write_text(
        "include conf.d/*.conf\n"
        "rename-command FLUSHALL \"\"\n"
        "rename-command config admin-config\n"
        "loglevel warning\n"
    )
    proc, port = _start(tmp_path, "main.conf")
    conn = _connect(port, proc)
    try:
        # Files of a glob are read in name order: the later one wins.
        assert conn.call("ADMIN-CONFIG", "GET", "maxclients").endswith(b"$3\r\n654\r\n")
        assert conn.call("ADMIN-CONFIG", "GET", "hz").endswith(b"$2\r\n25\r\n")
        assert conn.call("FLUSHALL").startswith(b"-ERR unknown command 'FLUSHALL'")
        assert conn.call("CONFIG", "GET", "hz").startswith(b"-ERR unknown command 'CONFIG'")
    finally:
        _stop(proc, conn)


def test_a_bad_line_stops_the_server_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.conf").write_text("port 7000\nmaxmemory-samples 65\n")
    done = _run("bad.conf", cwd=tmp_path)
    assert done.returncode == 1
    assert "bad.conf:2" in done.stderr
    assert "argument must be between 1 and 64 inclusive" in done.stderr
    (tmp_path / "bad2.conf").write_text("rename-command NOSUCHCOMMAND x\n")
    done = _run("bad2.conf", "--port", "0", cwd=tmp_path)
    assert done.returncode == 1 and "No such command in rename-command" in done.stderr


def test_loglevel_changes_at_runtime_and_oom_score_is_raised(tmp_path: Path) -> None:
    base = int(Path("/proc/self/oom_score_adj").read_text())
    log = tmp_path / "server.log"
    proc, port = _start(tmp_path, "--logfile", str(log), "--loglevel", "warning",
                        "--oom-score-adj", "relative", "--oom-score-adj-values", "100 0 0",
                        "--always-show-logo", "yes")
    conn = _connect(port, proc)
    try:
        assert Path(f"/proc/{proc.pid}/oom_score_adj").read_text().strip() == str(
            min(base + 100, 1000))
        assert conn.call("CONFIG", "SET", "loglevel", "notice") == b"+OK\r\n"
    finally:
        _stop(proc, conn)
    text = log.read_text()
    # Before the change only warnings were written (no logo, no ready line); after it, the
    # notice-level shutdown lines are there.
    assert "speaks Redis" not in text and "Ready to accept" not in text
    assert "ready to exit" in text


def test_help_lists_the_directives_resplite_implements(tmp_path: Path) -> None:
    done = _run("--help", cwd=tmp_path)
    assert done.returncode == 0
    listed = done.stdout.split("Directives resplite implements:", 1)[1]
    names = {n.strip() for n in listed.replace("\n", " ").split(",")}
    for name in ("pidfile", "daemonize", "logfile", "loglevel", "syslog-enabled",
                 "always-show-logo", "set-proc-title", "oom-score-adj", "hz", "dynamic-hz",
                 "lazyfree-lazy-user-del", "activerehashing", "hash-max-listpack-entries",
                 "appendonly", "appendfsync"):
        assert name in names, name
    for name in ("aof-timestamp-enabled", "repl-diskless-sync", "tls-port",
                 "cluster-node-timeout", "rdb-save-incremental-fsync"):
        assert name not in names, name
    # Persistence works, and the text says so rather than listing it among the ignored.
    head = " ".join(done.stdout.split("Directives resplite implements:", 1)[0].split())
    assert "among them persistence (RDB snapshots and the multi-part append-only file)" in head
    assert "no effect here (persistence" not in head
    assert {"save", "dbfilename", "appenddirname", "auto-aof-rewrite-percentage"} <= names
    assert shutil.which(sys.executable)
