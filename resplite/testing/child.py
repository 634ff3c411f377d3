"""``python -m resplite.testing.child '<json directives>'``: a server for a parent test process.

The process-isolated mode of :func:`resplite.testing.embedded.serve` runs this module. The
directives arrive as one JSON object (name -> text) so that no value can be mistaken for an
option. With ``cluster-enabled yes`` it runs an in-process cluster of ``cluster-nodes``
nodes. Once listening, the child writes one JSON line on stdout, ``{"port": ..,
"unix_socket": .., "pid": .., "ports": [..]}`` (``ports``: every node's, the first being
``port``), or ``{"error": ..}`` if it could not start, and writes nothing else there
(logging goes to stderr).

The child lives as long as its stdin stays open: the parent closes the pipe to stop it, and a
parent that dies for any reason closes it too, so no server outlives its test run. SIGTERM
and SIGINT stop it as they stop ``resplite-server``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys


def _report(payload: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    from resplite.engine.config import Config, ConfigError

    config = Config()
    try:
        directives = json.loads(argv[0]) if argv else {}
        for name, value in directives.items():
            config.set(name, value, at_startup=True)
    except (ConfigError, ValueError) as exc:
        _report({"error": f"bad directive: {exc}"})
        return 1

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("resplite %(process)d %(levelname)s %(message)s"))
    root = logging.getLogger("resplite")
    root.addHandler(handler)
    root.setLevel(logging.WARNING if config["loglevel"] != "debug" else logging.DEBUG)

    if config["uvloop"]:
        try:
            import uvloop

            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        except ImportError:
            pass

    from resplite.server.app import Server
    from resplite.server.cluster import ClusterServer

    async def run() -> None:
        server: Server | ClusterServer
        server = ClusterServer(config) if config["cluster-enabled"] else Server(config)
        server.install_signal_handlers()
        loop = asyncio.get_running_loop()
        stdin = sys.stdin.fileno()

        def on_stdin() -> None:
            try:
                data = os.read(stdin, 4096)
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(stdin)
                server.request_shutdown()

        def ready() -> None:
            # A pipe from the parent is watched; anything else (a terminal, /dev/null) is
            # left alone, and signals stop the server as they stop resplite-server.
            with contextlib.suppress(OSError):
                if stat.S_ISFIFO(os.fstat(stdin).st_mode):
                    loop.add_reader(stdin, on_stdin)
            ports = server.ports if isinstance(server, ClusterServer) else [server.port]
            _report({"port": server.port, "unix_socket": server.unix_socket or None,
                     "pid": os.getpid(), "ports": ports})

        await server.serve_forever(on_ready=ready)

    try:
        asyncio.run(run())
    except OSError as exc:
        _report({"error": f"could not start: {exc}"})
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
