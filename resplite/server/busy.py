"""Serving clients while a script runs past busy-reply-threshold.

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
queued. The listening sockets are polled too, so the server stays reachable: a connection
accepted meanwhile is served on its raw socket and handed to the event loop (with the same
client) once the script ends.

Invariants: nothing here waits; blocked clients are never served while the script runs;
EOFs are left for the event loop to see.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resplite.server.connection import Connection

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState

class _GuestTransport:
    """A blocking socket standing in for a transport until the event loop can take it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.protocol: Connection | None = None
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
        with contextlib.suppress(OSError):
            self.sock.close()
        if self.protocol is not None:
            self.protocol.connection_lost(None)

    abort = close

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


class ConnectionPump:
    """The shell's :class:`~resplite.engine.scripting.BusyPump`."""

    def __init__(
        self,
        listening: Callable[[], list[Any]],
        make_connection: Callable[[], Connection],
    ) -> None:
        self._listening = listening
        self._make_connection = make_connection
        self.state: ServerState | None = None
        self._accepting: list[socket.socket] | None = None
        self._guests: list[tuple[socket.socket, Connection, _GuestTransport]] = []
        self._eof: set[int] = set()
        self._handovers: set[asyncio.Task[Any]] = set()

    def serve_while_busy(self, caller: Client) -> None:
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
        listeners = self._listeners()
        watch = list(conns) + [sock.fileno() for sock in listeners]
        if not watch:
            return
        try:
            readable, _, _ = select.select(watch, [], [], 0)
        except (OSError, ValueError):
            return
        for fd in readable:
            conn = conns.get(fd)
            if conn is None:
                self._accept(fd, listeners)
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
        """The script ended: hand the connections accepted meanwhile to the event loop."""
        for sock in self._accepting or ():
            with contextlib.suppress(OSError):
                sock.close()
        self._accepting = None
        self._eof.clear()
        guests, self._guests = self._guests, []
        if not guests:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for sock, conn, shim in guests:
            if shim.is_closing():
                continue
            shim.protocol = None
            sock.setblocking(False)

            def adopt(conn: Connection = conn) -> Connection:
                return conn

            task = loop.create_task(loop.connect_accepted_socket(adopt, sock))
            self._handovers.add(task)
            task.add_done_callback(self._handovers.discard)

    def _listeners(self) -> list[socket.socket]:
        if self._accepting is None:
            accepting = []
            for listener in self._listening():
                for sock in listener.sockets:
                    with contextlib.suppress(OSError):
                        dup = socket.socket(fileno=os.dup(sock.fileno()))
                        dup.setblocking(False)
                        accepting.append(dup)
            self._accepting = accepting
        return self._accepting

    def _accept(self, fd: int, listeners: list[socket.socket]) -> None:
        for listener in listeners:
            if listener.fileno() != fd:
                continue
            try:
                sock, _ = listener.accept()
            except (BlockingIOError, InterruptedError, OSError):
                return
            sock.setblocking(True)
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = self._make_connection()
            shim = _GuestTransport(sock)
            shim.protocol = conn
            conn.connection_made(shim)  # type: ignore[arg-type]
            if not conn.closing:
                self._guests.append((sock, conn, shim))
            return

