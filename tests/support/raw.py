"""A raw RESP client that returns each reply's exact bytes, undecoded.

Comparing decoded values hides what matters for compatibility (simple vs bulk strings, the
kind of null, error prefixes), so compat tests compare the bytes this client returns.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence


def encode_command(args: Iterable[bytes | str | int]) -> bytes:
    parts = []
    items = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    parts.append(b"*%d\r\n" % len(items))
    for item in items:
        parts.append(b"$%d\r\n%s\r\n" % (len(item), item))
    return b"".join(parts)


class IncompleteReply(Exception):
    pass


def reply_end(buf: bytes, pos: int = 0) -> int:
    """Offset just past the one complete reply starting at ``pos``; raises IncompleteReply.

    Walks the reply with a count of the values still to come rather than by recursion, so
    replies nested thousands deep (a script's deep tables) are read too."""
    pending = 1
    while pending:
        pending -= 1
        if pos >= len(buf):
            raise IncompleteReply
        start = pos
        kind = buf[pos : pos + 1]
        nl = buf.find(b"\r\n", pos)
        if nl < 0:
            raise IncompleteReply
        head = buf[pos + 1 : nl]
        pos = nl + 2
        if kind in (b"+", b"-", b":", b",", b"#", b"_", b"("):
            continue
        if kind in (b"$", b"=", b"!"):
            n = int(head)
            if n < 0:
                continue
            pos += n + 2
            if pos > len(buf):
                raise IncompleteReply
            continue
        if kind in (b"*", b"~", b">", b"%", b"|"):
            n = int(head)
            if n < 0:
                continue
            pending += n * 2 if kind in (b"%", b"|") else n
            if kind == b"|":  # an attribute precedes the actual reply
                pending += 1
            continue
        raise ValueError(f"not a RESP reply at {start}: {buf[start:start + 40]!r}")
    return pos


class RawClient:
    """Sends commands, returns raw reply bytes."""

    def __init__(self, host: str, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, *args: bytes | str | int) -> None:
        self.sock.sendall(encode_command(args))

    def read_reply(self) -> bytes:
        while True:
            try:
                end = reply_end(self.buf)
            except IncompleteReply:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise ConnectionError(f"closed with {self.buf!r} pending") from None
                self.buf += chunk
                continue
            reply, self.buf = self.buf[:end], self.buf[end:]
            return reply

    def call(self, *args: bytes | str | int) -> bytes:
        self.send(*args)
        return self.read_reply()

    def pipeline(self, commands: Sequence[Sequence[bytes | str | int]]) -> list[bytes]:
        self.sock.sendall(b"".join(encode_command(c) for c in commands))
        return [self.read_reply() for _ in commands]

    def is_closed(self, timeout: float = 1.0) -> bool:
        """Whether the server closed the connection (after any pending data)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    return True
                self.buf += chunk
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
