"""The server's lifecycle: listeners, the periodic cron, and graceful shutdown.

:class:`Server` owns one :class:`~resplite.engine.state.ServerState` and the asyncio servers
listening on TCP addresses and an optional Unix socket. The cron runs ``hz`` times a second:
it expires keys nobody reads, closes clients idle past ``timeout``, fires blocked-client
timeouts (a safety net behind their own timers) and refreshes the memory figure that
``maxmemory`` is checked against.

At start the server listens first, then loads its data set, answering clients every few
milliseconds of the load (-LOADING to most commands, as Redis does; see :meth:`Server._load`).
The cron's active expiry is :mod:`resplite.engine.expire`'s slow cycle; its fast cycles run
on the event loop's timers between turns.

Shutdown (SIGINT, SIGTERM or SHUTDOWN) closes the listeners, closes every client connection
and stops; a second signal while shutting down exits at once.

An ``embedded`` server (the test kit runs one in a background thread of the host process)
leaves the host's garbage collector alone. Clock jumps fire due work through
:mod:`resplite.engine.timeflow` (expirations before blocked-client timeouts).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resplite.commands import command_table
from resplite.engine import timeflow
from resplite.engine.clock import Clock
from resplite.engine.config import Config, ConfigError
from resplite.engine.persistence import LoadingStopped
from resplite.engine.scheduler import TimerHandle
from resplite.engine.state import ServerState
from resplite.engine.table import for_version, renamed
from resplite.server.busy import ConnectionPump, Listener
from resplite.server.connection import Connection
from resplite.server.migrate import SocketTransport
from resplite.server.replica import MasterLink

if TYPE_CHECKING:
    from resplite.engine.client import Client

log = logging.getLogger("resplite.server")

_FAMILY_MISSING = frozenset({errno.ENOPROTOOPT, errno.EPROTONOSUPPORT, errno.ESOCKTNOSUPPORT,
                             errno.EPFNOSUPPORT, errno.EAFNOSUPPORT})
# Redis's CONFIG SET texts when listening again fails.
_REBIND_FAILED = {
    "bind": "Failed to bind to specified addresses.",
    "port": "Unable to listen on this port. Check server logs.",
}


def _listen(family: int, host: str, port: int, backlog: int) -> socket.socket:
    """One listening socket, as Redis's anetTcpServer makes it (the first address the name
    resolves to; an IPv6 socket only for IPv6)."""
    infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(infos[0][4])
        sock.listen(backlog)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _client_info_line(client: Client) -> bytes:
    """CLIENT LIST's line for ``client`` (the ACL log's description of it); the CLIENT
    command's module is imported when a denial is first logged, not at start."""
    from resplite.commands.client import client_info_line

    return client_info_line(client)


def _listen_unix(path: str, backlog: int) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


class LoopScheduler:
    """The engine's timers on the running event loop (none while no loop runs)."""

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle | None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return loop.call_later(delay_s, callback)


class Server:
    def __init__(
        self, config: Config, clock: Clock | None = None, *, embedded: bool = False
    ) -> None:
        self.config = config
        self.embedded = embedded
        # Only the commands of the Redis version it answers as (redis-compat-version).
        table = for_version(command_table(), config["redis-compat-version"])
        if config.renames:
            try:
                table = renamed(table, config.renames)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        # Serves other clients while a script runs past busy-reply-threshold.
        self.pump = ConnectionPump(self._all_listeners, self._protocol)
        self.state = ServerState(
            config, clock, table=table, scheduler=LoopScheduler(),
            client_info=_client_info_line, busy_pump=self.pump,
            migrate_transport=SocketTransport(),
        )
        self.pump.state = self.state
        self.dispatcher = self.state.dispatcher
        self.state.shutdown_requested = self.request_shutdown
        self._listeners: list[Listener] = []  # the Unix socket's
        self._tcp_listeners: list[Listener] = []
        self._rebinding: set[asyncio.Task[None]] = set()
        self._stopped: asyncio.Event | None = None
        self._cron_task: asyncio.Task[None] | None = None
        self.port = 0
        self.unix_socket = ""
        self._first_signal_at: float | None = None
        self._clock_listener = timeflow.install(self.state)
        # REPLICAOF's link to a primary (resplite.server.replica).
        self.master_link = MasterLink(self.state, self.pump.serve_while_loading,
                                      self.pump.busy_ended)
        self.state.replication.connector = self.master_link

    def _protocol(self) -> Connection:
        return Connection(self.state, self.dispatcher)

    async def start(self) -> None:
        """Bind every listener, then load the data set (clients are answered meanwhile, see
        :meth:`_load`); after this returns the server serves them fully. A snapshot that
        cannot be loaded raises LoadError, with nothing left listening."""
        loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        config = self.config
        port = config["port"]
        backlog = config["tcp-backlog"]
        if port != 0 or not config["unixsocket"]:
            sockets, self.port = self._bind_tcp(config["bind"], port)
            # Not the event loop's servers: a Listener makes each connection a client in the
            # callback that accepts it, so a script going busy next serves it (server/busy.py).
            self._tcp_listeners += [Listener(sock, backlog, self.pump) for sock in sockets]
        if config["unixsocket"]:
            path = config["unixsocket"]
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            listener = Listener(_listen_unix(path, backlog), backlog, self.pump)
            if config["unixsocketperm"]:
                os.chmod(path, config["unixsocketperm"])
            self._listeners.append(listener)
            self.unix_socket = path
        self.state.tcp_port = self.port
        self.state.unix_socket = self.unix_socket
        config.on_change("bind", self._rebind)
        config.on_change("port", self._rebind)
        if not self._load():
            return  # a SHUTDOWN during the load: serve_forever goes on to stop
        self.state.start_aof()
        self.state.replication.refresh_good()  # min-replicas-to-write from the start
        if config["replicaof"]:
            host, port = config["replicaof"].rsplit(" ", 1)
            self.state.replication.set_master(host, int(port), cached=False)
        self._cron_task = loop.create_task(self._cron())
        where = [f"{sock.getsockname()[0]}:{sock.getsockname()[1]}"
                 for lst in self._all_listeners() for sock in lst.sockets
                 if sock.family in (socket.AF_INET, socket.AF_INET6)]
        if self.unix_socket:
            where.append(self.unix_socket)
        log.info("Ready to accept connections on %s (pid %d)", ", ".join(where), os.getpid())

    def _load(self) -> bool:
        """The start-up load, with clients served every few milliseconds of it as Redis
        serves them (-LOADING to the commands without the ``loading`` flag); False when a
        SHUTDOWN sent meanwhile stopped it."""
        persistence = self.state.persistence
        persistence.serve_while_loading = self._serve_while_loading
        # A load makes millions of objects and no garbage cycles: the cyclic collector
        # would only pause it (and the clients it serves) to walk them. Not when embedded:
        # the collector is the host's.
        collecting = not self.embedded and gc.isenabled()
        if collecting:
            gc.disable()
        try:
            persistence.load_at_start()
        except LoadingStopped:
            log.warning("The data set was still loading: exiting without it.")
            return False
        except BaseException:
            for listener in self._all_listeners():
                listener.close()
            for client in list(self.state.clients.values()):
                conn: Any = client.conn
                if conn is not None:
                    conn.close()
            raise
        finally:
            if collecting:
                gc.enable()
            persistence.serve_while_loading = None
            self.pump.busy_ended()
        return True

    def _serve_while_loading(self) -> None:
        self.pump.serve_while_loading()
        if self._stopped is not None and self._stopped.is_set():
            raise LoadingStopped

    def _all_listeners(self) -> list[Listener]:
        return self._tcp_listeners + self._listeners

    def _bind_tcp(self, addresses: tuple[str, ...], port: int) -> tuple[list[socket.socket], int]:
        """Listening sockets for ``addresses`` as Redis's listenToPort makes them.

        An address starting with ``-`` is optional (skipped when it does not exist here),
        ``*`` is every IPv4 address and ``::*`` every IPv6 one; an address family the
        machine lacks is skipped; any other failure closes what was opened and raises. With
        port 0 the first socket takes an ephemeral port and the others the same one.
        """
        backlog = self.config["tcp-backlog"]
        opened: list[socket.socket] = []
        try:
            for raw in addresses:
                optional = raw.startswith("-")
                host = raw[1:] if optional else raw
                host = {"*": "0.0.0.0", "::*": "::"}.get(host, host)
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
                try:
                    opened.append(_listen(family, host, port, backlog))
                except OSError as exc:
                    log.warning("Warning: Could not create server TCP listening socket "
                                "%s:%d: %s", host, port, exc.strerror or exc)
                    if optional and exc.errno == errno.EADDRNOTAVAIL:
                        continue
                    if exc.errno in _FAMILY_MISSING:
                        continue
                    raise
                if port == 0:
                    port = opened[-1].getsockname()[1]
        except BaseException:
            for sock in opened:
                sock.close()
            raise
        return opened, port

    def _rebind(self, name: str, value: object) -> None:
        """CONFIG SET bind / port: close the TCP listeners and listen again, as Redis 7's
        changeBindAddr / changeListenPort do (port 0 closes them and listens on none)."""
        if self._stopped is None:
            return  # not started: start() reads the values
        loop = asyncio.get_running_loop()
        for listener in self._tcp_listeners:
            listener.close()
        self._tcp_listeners = []
        port = self.config["port"]
        self.port = self.state.tcp_port = 0 if port == 0 else self.port
        if port == 0:
            return
        try:
            sockets, port = self._bind_tcp(self.config["bind"], port)
        except OSError as exc:
            log.warning("Failed to bind: %s", exc)
            raise ConfigError(_REBIND_FAILED[name]) from None
        self.port = self.state.tcp_port = port
        backlog = self.config["tcp-backlog"]
        for sock in sockets:
            # The sockets already listen (connections wait in their backlog); accepting
            # starts on the loop's next turn.
            task = loop.create_task(self._serve_socket(sock, backlog))
            self._rebinding.add(task)
            task.add_done_callback(self._rebinding.discard)

    async def _serve_socket(self, sock: socket.socket, backlog: int) -> None:
        if sock.fileno() < 0 or self._stopped is None or self._stopped.is_set():
            sock.close()
            return
        self._tcp_listeners.append(Listener(sock, backlog, self.pump))

    async def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        await self.start()
        if on_ready is not None:
            on_ready()
        assert self._stopped is not None
        await self._stopped.wait()
        await self.stop()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._on_signal, sig)

    def _on_signal(self, sig: int) -> None:
        now = time.monotonic()
        if self._first_signal_at is not None:
            # A supervisor (make, a shell, timeout) often relays the same signal at once;
            # only a second signal given on purpose, later, cuts the shutdown short.
            if now - self._first_signal_at > 1.0:
                log.warning("second signal received: exiting now")
                os._exit(1)
            return
        self._first_signal_at = now
        name = signal.Signals(sig).name
        log.info("Received %s, shutting down", name)
        if not self._save_on_signal(sig):
            # As Redis: rather than exit and lose the writes since the last snapshot, the
            # server keeps running (``force`` in shutdown-on-sig* exits anyway).
            log.warning("Errors trying to shut down the server. Check the logs for more "
                        "information.")
            self._first_signal_at = None
            return
        self.request_shutdown()

    def _save_on_signal(self, sig: int) -> bool:
        """The final snapshot a SIGTERM or SIGINT asks for, by ``shutdown-on-sigterm`` /
        ``shutdown-on-sigint``: ``save`` always, ``nosave`` never, ``default`` when there
        are save rules. False when it failed and ``force`` is not set."""
        flags = self.config["shutdown-on-sigint" if sig == signal.SIGINT
                            else "shutdown-on-sigterm"]
        state = self.state
        if "nosave" in flags or not ("save" in flags or self.config["save"]):
            state.shutdown_saved = True
            return True
        persistence = state.persistence
        persistence.kill_child()
        log.info("Saving the final RDB snapshot before exiting.")
        if persistence.save():
            state.shutdown_saved = True
            return True
        log.warning("Error trying to save the DB, can't exit.")
        if "force" in flags:
            state.shutdown_saved = True
            return True
        return False

    def request_shutdown(self) -> None:
        if self._stopped is not None:
            self._stopped.set()

    async def stop(self) -> None:
        persistence = self.state.persistence
        persistence.kill_child()
        self.master_link.disconnect()
        self.state.replication.kill_child()
        self.state.aof.shutdown()
        if self.config["save"] and not self.state.shutdown_saved:
            # As Redis on SIGTERM: save rules mean the data set is saved on the way out.
            log.info("Saving the final RDB snapshot before exiting.")
            if not persistence.save():
                log.warning("Error trying to save the DB before exiting.")
        self._listeners = self._all_listeners()
        self._tcp_listeners = []
        for listener in self._listeners:
            listener.close()
        for client in list(self.state.clients.values()):
            conn: Any = client.conn
            if conn is not None:
                conn.close()
        for listener in self._listeners:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(listener.wait_closed(), 1.0)
        self._listeners.clear()
        if self._cron_task is not None:
            self._cron_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._cron_task
            self._cron_task = None
        if self.unix_socket:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.unix_socket)
        self.state.migrate.close_all()
        self.state.clock.remove_listener(self._clock_listener)
        log.info("resplite is now ready to exit, bye bye...")

    async def _cron(self) -> None:
        state = self.state
        await asyncio.sleep(1 / state.current_hz())
        # Long-lived start-up objects (the command table, module state) never need the
        # cyclic collector again; freezing them keeps each collection small. Done on the
        # first tick rather than before listening: the full collection would delay the
        # first reply. Not when embedded: the objects would be the host's, and a full
        # collection costs its time.
        if not self.embedded:
            gc.collect()
            gc.freeze()
        while True:
            try:
                if not state.cron_paused:  # (DEBUG PAUSE-CRON)
                    self.cron_tick()
            except Exception:
                log.exception("error in server cron")
            if state.blocking.ready:
                state.blocking.serve_ready()
            await asyncio.sleep(1 / state.current_hz())

    def cron_tick(self) -> None:
        state = self.state
        state.persistence.cron()
        state.replication.cron()
        config = self.config
        state.keyspace.cron(rehash=config["activerehashing"])
        state.expiry.slow_cycle()
        state.lazyfree.release()
        state.migrate.close_idle()
        state.blocking.check_timeouts()
        timeout = self.config["timeout"]
        if timeout:
            now = state.clock.monotonic_ms()
            for client in list(state.clients.values()):
                idle = now - client.last_interaction_ms
                if client.blocked is None and client.multi is None and idle > timeout * 1000:
                    conn: Any = client.conn
                    if conn is not None:
                        conn.close()
        # A client over a soft output limit that reads nothing is not written to again:
        # whether it has been over long enough is seen here, as in Redis's clientsCron.
        state.output.check_soft_limits(state.clients.values())
        # Client buffers change between batches (replies drain, pushes queue): their share
        # of used_memory is kept current while a limit needs it; the peak always.
        if state.memory_gate:
            state.measure_clients()
            state.evict_clients()
        else:
            state.note_peak()
