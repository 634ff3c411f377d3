"""``resplite-server [redis.conf] [--directive value ...]``: the command-line entry point.

Start-up follows ``redis-server``: read the configuration (file, then arguments), enter
``dir``, fork when ``daemonize yes``, set up logging, write the pid file, adjust the OOM
score, listen, then set the process title, tell a supervisor it is ready and log, once, the
directives that were given but have no effect here (see :mod:`resplite.server.process`).

``--version`` and ``--help`` import nothing of the server: the configuration, the engine and
asyncio are imported only on the way to serving, so that a script or a health check asking
for the version pays for the interpreter alone.
"""

from __future__ import annotations

import sys

from resplite import build
from resplite.engine.config_names import IMPLEMENTED
from resplite.version import REDIS_VERSION, __version__

TYPE_CHECKING = False  # as in resplite/__init__.py: typing is not imported for --version
if TYPE_CHECKING:
    from resplite.engine.config import Config
    from resplite.server.cluster import ClusterServer

USAGE = """\
Usage: resplite-server [/path/to/redis.conf] [options]
       resplite-server -v or --version
       resplite-server -h or --help

Options are Redis configuration directives, e.g.:
       resplite-server --port 7777
       resplite-server --port 0                  (an ephemeral port, printed at start)
       resplite-server /etc/redis/redis.conf --loglevel verbose
       resplite-server --unixsocket /tmp/resplite.sock --port 0

A redis.conf for Redis 7.4 / 8.0 loads as it is: every directive Redis knows is accepted
with Redis's checks; those below take effect, among them persistence (RDB snapshots and the
multi-part append-only file). The others are logged at start as having no effect here
(replication, cluster bus, TLS, modules, threads, the allocator, and a few persistence
tunings such as rdb-save-incremental-fsync). A file may also use include and
rename-command.

Directives resplite implements:
"""

def usage() -> str:
    import textwrap

    names = textwrap.fill(", ".join(IMPLEMENTED), width=90, break_on_hyphens=False,
                          initial_indent="       ", subsequent_indent="       ")
    return USAGE + names + "\n"


def _install_event_loop(use_uvloop: bool) -> None:
    if not use_uvloop:
        return
    import asyncio

    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(usage())
        return 0
    if args and args[0] in ("-v", "--version"):
        sys.stdout.write(f"resplite server v={__version__} redis_version={REDIS_VERSION}\n")
        return 0
    from resplite.engine.config import ConfigError, parse_args
    from resplite.server import process

    try:
        config = parse_args(args)
        process.enter_dir(config)
    except (ConfigError, OSError) as exc:
        sys.stderr.write(f"\n*** FATAL CONFIG ERROR ***\n{exc}\n")
        return 1
    if config["daemonize"]:
        process.daemonize()
    process.setup_logging(config)
    pidfile = process.write_pidfile(config)
    process.apply_oom_score(config, process.read_oom_score())
    _install_event_loop(config["uvloop"])
    try:
        return _serve(config)
    finally:
        process.remove_pidfile(pidfile)


def _serve(config: Config) -> int:
    import asyncio
    import logging

    from resplite.engine.acl import AclError
    from resplite.engine.config import ConfigError
    from resplite.engine.persistence import LoadError
    from resplite.server import process
    from resplite.server.app import Server

    log = logging.getLogger("resplite")

    async def run() -> None:
        server: Server | ClusterServer
        if config["cluster-enabled"]:
            from resplite.server.cluster import ClusterServer

            server = ClusterServer(config)
        else:
            server = Server(config)
        server.install_signal_handlers()

        def ready() -> None:
            title = process.proc_title(config, server.port, server.unix_socket)
            if title is not None:
                process.set_proc_title(title)
            banner = process.logo(config, server.port)
            if banner is not None:
                log.info("%s", banner.rstrip())
            # Which build runs; and why compiled modules that are there are not used (an
            # edited source: `make` compiles them again; RESPLITE_PURE_PYTHON).
            unused = build.reason()
            log.info("resplite_build:%s%s", build.kind(), f" ({unused})" if unused else "")
            if not isinstance(server, Server):
                log.warning("Cluster of %d nodes in this process, on ports %s",
                            len(server.ports), ", ".join(map(str, server.ports)))
            ignored = config.without_effect()
            if ignored:
                log.warning("These directives are accepted for compatibility and have no "
                            "effect here: %s", ", ".join(ignored))
            process.notify_supervisor(config)

        await server.serve_forever(on_ready=ready)

    try:
        asyncio.run(run())
    except AclError as exc:
        sys.stderr.write(f"\n*** FATAL CONFIG ERROR ***\n{exc.message}\n")
        return 1
    except LoadError as exc:
        # As Redis: a data set that cannot be read stops the server (never start empty),
        # with Redis's own log lines where it has them, before any file is changed.
        if exc.lines:
            for line in exc.lines:
                log.warning("%s", line)
        else:
            log.error("Fatal error loading the DB: %s. Exiting.", exc)
        return 1
    except ConfigError as exc:
        log.error("*** FATAL CONFIG ERROR *** %s", exc)
        sys.stderr.write(f"\n*** FATAL CONFIG ERROR ***\n{exc}\n")
        return 1
    except OSError as exc:
        log.error("Could not start: %s", exc)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
