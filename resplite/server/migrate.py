"""The blocking sockets MIGRATE talks to its targets through (the engine's transport seam).

:class:`SocketTransport` implements :class:`resplite.engine.migrate.MigrateTransport` with
plain blocking TCP sockets, as Redis's ``connBlockingConnect`` / ``connSyncWrite`` /
``connSyncReadLine`` do: connecting, each write and each wait for reply bytes are bounded by
MIGRATE's timeout, and the event loop's thread waits meanwhile. That is Redis's own
behaviour (the server serves nobody while MIGRATE runs) and keeps the engine's command
synchronous. Other servers in this process on other threads (the test kit's embedded
servers) keep running, since a blocked socket call releases the interpreter lock; a server
on this very loop cannot answer, and MIGRATE reports a read timeout, as Redis does when
asked to migrate to itself.
"""

from __future__ import annotations

import contextlib
import errno
import select
import socket

from resplite.engine.migrate import WRITE_CHUNK, LinkError, MigrateLink


class SocketLink:
    """One connected target; reads are buffered so that a line may arrive in pieces."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def send(self, data: bytes, timeout_ms: int) -> None:
        view = memoryview(data)
        try:
            for start in range(0, len(data), WRITE_CHUNK):
                # Each chunk has the whole timeout, as Redis's loop of connSyncWrite calls.
                self.sock.settimeout(timeout_ms / 1000)
                self.sock.sendall(view[start:start + WRITE_CHUNK])
        except TimeoutError:
            raise LinkError(True) from None
        except OSError as exc:
            raise LinkError(False, str(exc)) from None

    def read_line(self, timeout_ms: int) -> bytes:
        buffer = self.buffer
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                line = bytes(buffer[:end])
                del buffer[:end + 1]
                return line[:-1] if line.endswith(b"\r") else line
            try:
                self.sock.settimeout(timeout_ms / 1000)
                data = self.sock.recv(4096)
            except TimeoutError:
                raise LinkError(True) from None
            except OSError as exc:
                raise LinkError(False, str(exc)) from None
            if not data:
                raise LinkError(False, "connection closed by the target")
            buffer += data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class SocketTransport:
    """Opens :class:`SocketLink` connections as Redis's ``connBlockingConnect`` does: a
    non-blocking connect to each address the host resolves to, the first one under way
    kept, then a wait of up to the timeout until it is writable. A refused connection is
    writable at once (with its error pending), so it fails on the first write, and MIGRATE
    reports a write error, as Redis does; only a name that does not resolve, an address
    that refuses synchronously, or a connection still pending at the timeout is a connect
    error. TCP_NODELAY is set, as Redis sets it."""

    def connect(self, host: str, port: int, timeout_ms: int) -> MigrateLink:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, OverflowError, UnicodeError) as exc:
            raise LinkError(False, str(exc)) from None
        for family, kind, proto, _name, address in infos:
            try:
                sock = socket.socket(family, kind, proto)
            except OSError:
                continue
            sock.setblocking(False)
            code = sock.connect_ex(address)
            if code in (0, errno.EINPROGRESS):
                break
            sock.close()
        else:
            raise LinkError(False, "no address accepted the connection")
        _, writable, _ = select.select([], [sock], [], timeout_ms / 1000)
        if not writable:
            sock.close()
            raise LinkError(True)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return SocketLink(sock)
