"""A minimal blocking RESP client that the test kit uses to manage servers it started.

It carries the handle's housekeeping (FLUSHALL between tests, RESPLITE.CLOCK for a server in
another process) without depending on a client library: the server's own dependency,
hiredis, parses the replies. One connection, opened lazily, authenticated when the server
has a password, reopened once if the server dropped it (a test may have run CLIENT KILL).
Calls are serialised by a lock so that several threads may share one handle.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import hiredis


class ControlError(Exception):
    """The server answered an error reply; the message is the reply's text."""


def encode(args: tuple[str | bytes | int, ...]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class ControlConnection:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        unix_socket: str | None = None,
        password: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.host = host
        self.port = port
        self.unix_socket = unix_socket
        self.password = password
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._reader: Any = None
        self._lock = threading.Lock()

    def _connect(self) -> socket.socket:
        if self.unix_socket:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self.unix_socket)
            except OSError:
                sock.close()
                raise
        else:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._reader = hiredis.Reader()
        if self.password:
            self._roundtrip((("AUTH", self.password),))
        return sock

    def _roundtrip(self, commands: tuple[tuple[str | bytes | int, ...], ...]) -> list[Any]:
        sock = self._sock
        assert sock is not None
        sock.sendall(b"".join(encode(c) for c in commands))
        replies: list[Any] = []
        while len(replies) < len(commands):
            reply = self._reader.gets()
            if reply is False:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("the server closed the control connection")
                self._reader.feed(chunk)
                continue
            replies.append(reply)
        return replies

    def pipeline(self, *commands: tuple[str | bytes | int, ...]) -> list[Any]:
        """Send ``commands`` in one write; returns the replies (errors as ControlError values)."""
        with self._lock:
            for attempt in (1, 2):
                try:
                    if self._sock is None:
                        self._connect()
                    replies = self._roundtrip(commands)
                    break
                except (ConnectionError, BrokenPipeError):
                    self._close_socket()
                    if attempt == 2:
                        raise
            return [ControlError(str(r)) if isinstance(r, hiredis.ReplyError) else r
                    for r in replies]

    def call(self, *args: str | bytes | int) -> Any:
        """Send one command; returns its reply or raises :class:`ControlError`."""
        (reply,) = self.pipeline(args)
        if isinstance(reply, ControlError):
            raise reply
        return reply

    def _close_socket(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        with self._lock:
            self._close_socket()
