"""The process-level directives of redis.conf, as ``redis-server`` applies them at start.

Only the command-line server (:mod:`resplite.server.cli`) uses this module: an embedded server
shares its host's process, whose working directory, title, logging and OOM score are not its
to change.

Order, as Redis's start-up: ``dir`` is entered while the configuration is read (so a relative
``logfile`` or ``pidfile`` after it is relative to it); then logging is set up (``logfile``,
``syslog-*``, ``loglevel``); ``daemonize yes`` forks into the background (stdin/stdout/stderr
go to /dev/null, and without a ``logfile`` the log goes there too); the pid file is written
(``pidfile``, or ``/var/run/redis.pid`` when daemonized without one) and removed at exit; the
process title follows ``proc-title-template`` when ``set-proc-title`` is on; ``oom-score-adj``
writes ``/proc/self/oom_score_adj``. Once listening, ``supervised systemd`` (or ``auto`` with
``NOTIFY_SOCKET`` set) tells systemd READY=1 and ``upstart`` stops itself with SIGSTOP; the
logo (a few lines, not Redis's art) is shown with ``always-show-logo yes`` or on a terminal.

Every step that fails for lack of permission (an OOM score below the current one, a pid file
in a directory not ours) logs a warning and lets the server run, as Redis does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
from pathlib import Path

from resplite.engine.config import Config, expand_template
from resplite.version import REDIS_VERSION, __version__

log = logging.getLogger("resplite.server")

DEFAULT_DAEMON_PIDFILE = "/var/run/redis.pid"

LEVELS = {
    "debug": logging.DEBUG,
    "verbose": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "nothing": logging.CRITICAL + 10,
}

def enter_dir(config: Config) -> None:
    """``dir``: the working directory for every relative path after it."""
    directory = config["dir"]
    if directory and directory != ".":
        os.chdir(directory)


def setup_logging(config: Config) -> None:
    """Send the ``resplite`` loggers to ``logfile`` (or stdout) and syslog when enabled."""
    root = logging.getLogger("resplite")
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    fmt = logging.Formatter("%(process)d:M %(asctime)s * %(message)s")
    handler: logging.Handler
    if config["logfile"]:
        handler = logging.FileHandler(config["logfile"])
    elif config["daemonize"]:
        handler = logging.NullHandler()
    else:
        handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(fmt)
    root.addHandler(handler)
    if config["syslog-enabled"]:
        from logging.handlers import SysLogHandler  # only with syslog

        facilities = {
            "user": SysLogHandler.LOG_USER,
            **{f"local{i}": getattr(SysLogHandler, f"LOG_LOCAL{i}") for i in range(8)},
        }
        address = "/dev/log" if os.path.exists("/dev/log") else ("localhost", 514)
        syslog = SysLogHandler(
            address=address, facility=facilities[config["syslog-facility"]]
        )
        syslog.ident = f"{config['syslog-ident']}[{os.getpid()}]: "
        syslog.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(syslog)
    root.setLevel(LEVELS[config["loglevel"]])
    config.on_change("loglevel", lambda _name, level: root.setLevel(LEVELS[level]))


def daemonize() -> None:
    """Fork into the background as Redis does: the parent exits, the child leads a new
    session with its standard streams on /dev/null."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)


def write_pidfile(config: Config) -> str | None:
    """Write the pid file Redis would; returns its path (to remove at exit) or None."""
    path = config["pidfile"] or (DEFAULT_DAEMON_PIDFILE if config["daemonize"] else "")
    if not path:
        return None
    try:
        Path(path).write_text(f"{os.getpid()}\n")
    except OSError as exc:
        log.warning("Failed to write PID file: %s", exc.strerror)
        return None
    return str(Path(path).absolute())


def remove_pidfile(path: str | None) -> None:
    if path:
        with contextlib.suppress(OSError):
            os.unlink(path)


def proc_title(config: Config, port: int, unix_socket: str) -> str | None:
    """The title ``proc-title-template`` gives this process, or None when it is off."""
    if not config["set-proc-title"]:
        return None
    binds = config["bind"]
    listen = f"{binds[0] if binds else '*'}:{port}" if port else f"unixsocket:{unix_socket}"
    program = os.path.basename(sys.argv[0])
    if program in ("", "__main__.py", "-c"):  # python -m resplite
        program = "resplite-server"
    title = expand_template(config["proc-title-template"], {
        "title": program,
        "listen-addr": listen,
        "server-mode": "[cluster]" if config["cluster-enabled"] else "",
        "config-file": config.config_file or "-",
        "port": str(port),
        "tls-port": "0",
        "unixsocket": unix_socket,
    })
    return title or None


def set_proc_title(title: str) -> bool:
    """Set what ps and top show: the whole title when the ``setproctitle`` package is
    installed, else the kernel's 15-byte task name (``/proc/self/comm``, or prctl where
    that file cannot be written)."""
    try:
        import setproctitle
    except ImportError:
        pass
    else:
        setproctitle.setproctitle(title)
        return True
    # Linux: the task name is a file of the process (what prctl(PR_SET_NAME) sets for the
    # main thread, the one that calls this).
    try:
        with open("/proc/self/comm", "wb") as comm:
            comm.write(title.encode()[:15])
        return True
    except OSError:
        pass
    import ctypes

    # The C library is already loaded in this process: its symbols are found without
    # ctypes.util.find_library, which runs ldconfig in a subprocess at every start.
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        import ctypes.util

        libc_name = ctypes.util.find_library("c")
        if libc_name is None:
            return False
        try:
            prctl = ctypes.CDLL(libc_name, use_errno=True).prctl
        except (OSError, AttributeError):
            return False
    pr_set_name = 15
    return bool(prctl(pr_set_name, title.encode()[:15], 0, 0, 0) == 0)


def apply_oom_score(config: Config, base: int | None) -> None:
    """``oom-score-adj``: ``yes``/``relative`` adds the primary's value to the score the
    process started with, ``absolute`` writes it as is, ``no`` restores the start value."""
    mode = config["oom-score-adj"]
    if base is None:
        return
    value = config["oom-score-adj-values"][0]
    target = base if mode == "no" else value if mode == "absolute" else base + value
    target = max(-1000, min(1000, target))
    try:
        Path("/proc/self/oom_score_adj").write_text(f"{target}\n")
    except OSError as exc:
        log.warning("Unable to write oom_score_adj: %s", exc.strerror)


def read_oom_score() -> int | None:
    try:
        return int(Path("/proc/self/oom_score_adj").read_text())
    except (OSError, ValueError):
        return None


def notify_supervisor(config: Config) -> None:
    """``supervised``: READY=1 to systemd's NOTIFY_SOCKET, or SIGSTOP for upstart."""
    mode = config["supervised"]
    target = os.environ.get("NOTIFY_SOCKET")
    if mode == "auto":
        mode = "systemd" if target else "upstart" if os.environ.get("UPSTART_JOB") else "no"
    if mode == "systemd":
        if not target:
            log.warning("systemd supervision requested, but NOTIFY_SOCKET not found")
            return
        address = "\0" + target[1:] if target.startswith("@") else target
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(b"STATUS=Ready to accept connections\nREADY=1\n", address)
    elif mode == "upstart" and os.environ.get("UPSTART_JOB"):
        os.environ.pop("UPSTART_JOB", None)
        os.kill(os.getpid(), 19)  # SIGSTOP: upstart's "expect stop"


def logo(config: Config, port: int) -> str | None:
    """The start-up banner: with ``always-show-logo yes``, or when stdout is a terminal."""
    if not (config["always-show-logo"] or (sys.stdout.isatty() and not config["logfile"])):
        return None
    return (
        f"resplite {__version__} (speaks Redis {REDIS_VERSION}), 64 bit, standalone mode\n"
        f"port {port}, pid {os.getpid()}\n"
    )
