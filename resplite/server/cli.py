"""``resplite-server [redis.conf] [--directive value ...]``: the command-line entry point."""

from __future__ import annotations

import asyncio
import logging
import sys

from resplite.engine.acl import AclError
from resplite.engine.config import ConfigError, parse_args
from resplite.engine.persistence import LoadError
from resplite.version import REDIS_VERSION, __version__

USAGE = """\
Usage: resplite-server [/path/to/redis.conf] [options]
       resplite-server -v or --version
       resplite-server -h or --help

Options are Redis configuration directives, e.g.:
       resplite-server --port 7777
       resplite-server --port 0                  (an ephemeral port, printed at start)
       resplite-server /etc/redis/redis.conf --loglevel verbose
       resplite-server --unixsocket /tmp/resplite.sock --port 0
"""

_LEVELS = {
    "debug": logging.DEBUG,
    "verbose": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "nothing": logging.CRITICAL + 10,
}


def _install_event_loop(use_uvloop: bool) -> None:
    if not use_uvloop:
        return
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args and args[0] in ("-v", "--version"):
        sys.stdout.write(f"resplite server v={__version__} redis_version={REDIS_VERSION}\n")
        return 0
    try:
        config = parse_args(args)
    except ConfigError as exc:
        sys.stderr.write(f"\n*** FATAL CONFIG ERROR ***\n{exc}\n")
        return 1
    handler: logging.Handler
    if config["logfile"]:
        handler = logging.FileHandler(config["logfile"])
    else:
        handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(process)d:M %(asctime)s * %(message)s"))
    root = logging.getLogger("resplite")
    root.addHandler(handler)
    root.setLevel(_LEVELS[config["loglevel"]])
    _install_event_loop(config["uvloop"])

    from resplite.server.app import Server

    async def run() -> None:
        server = Server(config)
        server.install_signal_handlers()
        await server.serve_forever()

    try:
        asyncio.run(run())
    except AclError as exc:
        sys.stderr.write(f"\n*** FATAL CONFIG ERROR ***\n{exc.message}\n")
        return 1
    except LoadError as exc:
        # As Redis: a data set that cannot be read stops the server (never start empty).
        logging.getLogger("resplite").error("Fatal error loading the DB: %s. Exiting.", exc)
        return 1
    except OSError as exc:
        logging.getLogger("resplite").error("Could not start: %s", exc)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
