"""Serving clients while a script runs past busy-reply-threshold, or the data set loads.

A script runs on the event loop's own turn (so nothing interleaves with it); one that runs
long would leave every other client unanswered. Redis answers them from inside the script
(its Lua hook processes events while blocked); so does resplite: the scripting engine calls
:meth:`ConnectionPump.serve_while_busy` from its Lua hook once the script is past the
threshold, about every 100,000 Lua instructions.

Each call polls, without blocking, the sockets of every client but the script's caller and
blocked clients (their input waits, as Redis protects the caller's), reads what arrived and
runs it through the dispatcher's busy path: SCRIPT KILL, FUNCTION KILL, FUNCTION STATS,
SHUTDOWN NOSAVE and the other allow-busy commands work, everything else is answered -BUSY.
Replies go out through each transport's ``write``, which sends at once when nothing is
queued. The listening sockets are polled too, so the server stays reachable.

The start-up load is served the same way (:meth:`ConnectionPump.serve_while_loading`, which
the load calls every few milliseconds, as Redis's ``processEventsWhileBlocked``): the server
listens before it loads, and what clients send meanwhile is answered through the same busy
path, where commands without the ``loading`` flag get -LOADING.

Every open connection is a client the pump can see. The event loop's own servers
(``create_server``) accept a socket in one turn and give it to its protocol a turn or two
later; a script going busy in between would leave that connection unserved (no -BUSY, no
SCRIPT KILL) until it ended. So the server listens through :class:`Listener`: the callback
that accepts a connection also registers its client, on a :class:`_GuestTransport` over the
raw socket, and the event loop takes the socket over (same client, same
:class:`Connection`) in a later turn, or once the script ends if one went busy first.

Invariants: nothing here waits; blocked clients are never served while the script runs;
EOFs are left for the event loop to see; an accepted socket belongs to exactly one of its
guest transport or its event-loop transport, and is closed exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import select
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resplite.server.connection import Connection

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.server")

# accept() failures that pass once resources free up: accepting pauses for a second.
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class _GuestTransport:
    """A blocking socket standing in for a transport until the event loop takes it.

    While ``leaving`` (the event loop is taking the socket over) closing only marks the
    transport closed: the event loop's transport closes the socket (see
    :meth:`ConnectionPump._hand_over`).
    """

    def __init__(self, sock: socket.socket, protocol: Connection) -> None:
        self.sock = sock
        self.protocol = protocol
        self.leaving = False
        self._closing = False

    def write(self, data: bytes) -> None:
        if not self._closing:
            try:
                self.sock.sendall(data)
            except OSError:
                self.close()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        if not self.leaving:
            self.release()

    abort = close

    def release(self) -> None:
        """Close the socket and end the connection."""
        self._closing = True
        with contextlib.suppress(OSError):
            self.sock.close()
        self.protocol.connection_lost(None)

    def pause_reading(self) -> None:
        return None

    def resume_reading(self) -> None:
        return None

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        try:
            if name == "peername":
                return self.sock.getpeername()
            if name == "sockname":
                return self.sock.getsockname()
        except OSError:
            return default
        if name == "socket":
            return self.sock
        return default


class Listener:
    """One listening socket (TCP or Unix), accepting on the running event loop.

    Each accepted connection goes to :meth:`ConnectionPump.take` in the same callback, so its
    client exists before any script can start. Out of file descriptors or memory, accepting
    pauses for a second (as asyncio's servers do); Redis logs the same warning.
    """

    def __init__(self, sock: socket.socket, backlog: int, pump: ConnectionPump) -> None:
        self.sockets = (sock,)
        self.paused = False
        self.closed = False
        self._sock = sock
        self._backlog = max(backlog, 1)
        self._pump = pump
        self._loop = asyncio.get_running_loop()
        self._retry: asyncio.TimerHandle | None = None
        sock.setblocking(False)
        self._loop.add_reader(sock.fileno(), self.accept)

    def fileno(self) -> int:
        return self._sock.fileno()

    def accept(self) -> None:
        """Accept the connections waiting (at most a backlog's worth)."""
        for _ in range(self._backlog):
            if self.closed or self.paused:
                return
            try:
                sock, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as exc:
                log.warning("Accepting client connection: %s", exc.strerror or exc)
                if exc.errno in _OUT_OF_RESOURCES:
                    self.paused = True
                    self._loop.remove_reader(self._sock.fileno())
                    self._retry = self._loop.call_later(1.0, self._resume)
                return
            self._pump.take(sock)

    def _resume(self) -> None:
        self._retry = None
        if not self.closed:
            self.paused = False
            self._loop.add_reader(self._sock.fileno(), self.accept)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._retry is not None:
            self._retry.cancel()
        elif not self.paused:
            with contextlib.suppress(ValueError, OSError):
                self._loop.remove_reader(self._sock.fileno())
        self._sock.close()

    async def wait_closed(self) -> None:
        return None


class ConnectionPump:
    """The shell's :class:`~resplite.engine.scripting.BusyPump`, and where accepted
    connections become clients."""

    def __init__(
        self,
        listening: Callable[[], list[Listener]],
        make_connection: Callable[[], Connection],
    ) -> None:
        self._listening = listening
        self._make_connection = make_connection
        self.state: ServerState | None = None
        self._eof: set[int] = set()
        self._handovers: set[asyncio.Task[None]] = set()

    def take(self, sock: socket.socket) -> None:
        """A connection just accepted: its client now, on a guest transport; the event
        loop's transport from a later turn (after the script, if one is running)."""
        sock.setblocking(True)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = self._make_connection()
        shim = _GuestTransport(sock, conn)
        conn.connection_made(shim)  # type: ignore[arg-type]
        if conn.closing:
            return  # refused (protected mode, maxclients): the socket is closed
        task = asyncio.get_running_loop().create_task(self._hand_over(sock, conn, shim))
        self._handovers.add(task)
        task.add_done_callback(self._handovers.discard)

    async def _hand_over(
        self, sock: socket.socket, conn: Connection, shim: _GuestTransport
    ) -> None:
        if shim.is_closing():
            return
        shim.leaving = True
        try:
            sock.setblocking(False)
            await asyncio.get_running_loop().connect_accepted_socket(lambda: conn, sock)
        except OSError:
            shim.release()  # the peer went away first
            return
        except BaseException:
            shim.release()
            raise
        if shim.is_closing():
            conn.close()  # closed while the event loop took it over: now on its transport

    def serve_while_loading(self) -> None:
        """The start-up load's turn for clients (every connection, none excluded): their
        requests go through the same busy path, which answers -LOADING to what may not
        run during a load."""
        self.serve_while_busy(None)

    def serve_while_busy(self, caller: Client | None) -> None:
        state = self.state
        if state is None:
            return
        conns: dict[int, Connection] = {}
        for client in state.clients.values():
            if client is caller or client.blocked is not None or client.fd < 0:
                continue
            conn = client.conn
            if isinstance(conn, Connection) and not conn.closing and client.fd not in self._eof:
                conns[client.fd] = conn
        listeners = {lst.fileno(): lst for lst in self._listening()
                     if not lst.closed and not lst.paused}
        watch = list(conns) + list(listeners)
        if not watch:
            return
        try:
            readable, _, _ = select.select(watch, [], [], 0)
        except (OSError, ValueError):
            return
        for fd in readable:
            conn = conns.get(fd)
            if conn is None:
                listener = listeners.get(fd)
                if listener is not None:
                    listener.accept()
                continue
            try:
                data = os.read(fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                self._eof.add(fd)
                continue
            if not data:
                self._eof.add(fd)  # the event loop will see the EOF when the script ends
                continue
            conn.data_received_while_busy(data)

    def busy_ended(self) -> None:
        """The script ended: connections accepted meanwhile go to the event loop by their
        own hand-over tasks; EOFs seen are the event loop's to notice again."""
        self._eof.clear()
