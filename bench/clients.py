"""Small RESP clients for what redis-benchmark cannot drive: bulk preparation, a subscriber
that keeps reading, and a consumer-group loop that reads and acknowledges entries.

Replies are parsed by hiredis (a dependency of resplite), requests encoded here; every
socket is closed by whoever opened it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import hiredis


def bulk(data: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(data), data)


def encode(*args: str | bytes | int) -> bytes:
    """One command as a RESP array of bulk strings."""
    return b"*%d\r\n" % len(args) + b"".join(
        bulk(arg if isinstance(arg, bytes) else str(arg).encode()) for arg in args)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


@contextlib.contextmanager
def pinned_to(cpu: str) -> Iterator[None]:
    """Run the calling thread on core ``cpu`` for the block (where the OS allows it)."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(cpu)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


class Client:
    """A blocking connection: ``call`` one command, or ``pipeline`` many in chunks."""

    def __init__(self, port: int) -> None:
        self.sock = connect(port)
        self.reader = hiredis.Reader(notEnoughData=_MISSING)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _replies(self, count: int) -> list[Any]:
        replies: list[Any] = []
        while len(replies) < count:
            reply = self.reader.gets()
            if reply is _MISSING:
                data = self.sock.recv(1 << 16)
                if not data:
                    raise ConnectionError("the server closed the connection")
                self.reader.feed(data)
            elif isinstance(reply, hiredis.ReplyError):
                raise RuntimeError(f"error reply: {reply}")
            else:
                replies.append(reply)
        return replies

    def call(self, *args: str | bytes | int) -> Any:
        self.sock.sendall(encode(*args))
        return self._replies(1)[0]

    def pipeline(self, commands: Iterable[bytes], chunk: int = 1000) -> int:
        """Send encoded commands ``chunk`` at a time, reading each chunk's replies (which
        must not be errors) before the next; returns how many were sent."""
        sent = 0
        batch: list[bytes] = []
        for command in commands:
            batch.append(command)
            if len(batch) == chunk:
                self.sock.sendall(b"".join(batch))
                self._replies(len(batch))
                sent += len(batch)
                batch = []
        if batch:
            self.sock.sendall(b"".join(batch))
            self._replies(len(batch))
            sent += len(batch)
        return sent


_MISSING = object()


class Subscriber(threading.Thread):
    """One SUBSCRIBEd connection, read as fast as messages come (on the client core) and
    counted in bytes; ``wait_for`` returns once a number of bytes has arrived."""

    def __init__(self, port: int, channel: bytes, cpu: str) -> None:
        super().__init__(daemon=True)
        self.sock = connect(port)
        self.cpu = cpu
        self.received = 0
        self._closing = threading.Event()
        self.sock.sendall(encode(b"SUBSCRIBE", channel))
        confirm = b"*3\r\n" + bulk(b"subscribe") + bulk(channel) + b":1\r\n"
        got = b""
        while len(got) < len(confirm):
            got += self.sock.recv(len(confirm) - len(got))
        if got != confirm:
            raise RuntimeError(f"unexpected SUBSCRIBE reply {got!r}")
        self.sock.settimeout(0.1)

    def run(self) -> None:
        buf = bytearray(1 << 18)
        with pinned_to(self.cpu):
            while not self._closing.is_set():
                try:
                    n = self.sock.recv_into(buf)
                except TimeoutError:
                    continue
                if not n:
                    return
                self.received += n

    def wait_for(self, total: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while self.received < total:
            if time.monotonic() > deadline or not self.is_alive():
                raise RuntimeError(f"the subscriber got {self.received} of {total} bytes")
            time.sleep(0.001)

    def close(self) -> None:
        self._closing.set()
        self.join()
        self.sock.close()


def message_size(channel: bytes, payload: bytes) -> int:
    """Bytes of one RESP2 pub/sub ``message`` push."""
    return len(b"*3\r\n" + bulk(b"message") + bulk(channel) + bulk(payload))


def consumer_cycles(port: int, stream: bytes, group: bytes, *, cycles: int, clients: int,
                    pipeline: int, latencies: list[float] | None = None) -> float:
    """Read-and-acknowledge cycles of a consumer group; returns the elapsed seconds.

    ``clients`` connections (consumer ``c<i>`` each) each repeat: send ``pipeline``
    ``XREADGROUP GROUP group c<i> COUNT 1 STREAMS stream >`` at once, read the replies, send
    one ``XACK stream group <id>`` per entry delivered, read those replies. A cycle is one
    entry read and acknowledged: two commands. The stream must hold at least ``cycles`` new
    entries for the group. With ``latencies`` (and one client, unpipelined), the time of
    each cycle from its XREADGROUP sent to its XACK reply read is appended to it.
    """
    per_client = max(pipeline, cycles // clients // pipeline * pipeline)
    sel = selectors.DefaultSelector()
    states: list[dict[str, Any]] = []
    for i in range(clients):
        sock = connect(port)
        sock.setblocking(False)
        read = encode(b"XREADGROUP", b"GROUP", group, b"c%d" % i, b"COUNT", b"1",
                      b"STREAMS", stream, b">")
        state: dict[str, Any] = {"sock": sock, "reader": hiredis.Reader(notEnoughData=_MISSING),
                 "read": read * pipeline, "left": per_client, "acking": False,
                 "pending": 0, "ids": [], "sent_at": 0.0}
        states.append(state)
        sel.register(sock, selectors.EVENT_READ, state)
    ack_prefix = [b"XACK", stream, group]

    def send_reads(state: dict[str, Any]) -> None:
        state["acking"] = False
        state["pending"] = pipeline
        state["ids"] = []
        state["sent_at"] = time.perf_counter()
        state["sock"].sendall(state["read"])

    started = time.perf_counter()
    try:
        active = len(states)
        for state in states:
            send_reads(state)
        while active:
            for key, _ in sel.select(timeout=30):
                state = key.data
                data = state["sock"].recv(1 << 16)
                if not data:
                    raise ConnectionError("the server closed a consumer's connection")
                reader = state["reader"]
                reader.feed(data)
                while state["pending"]:
                    reply = reader.gets()
                    if reply is _MISSING:
                        break
                    if isinstance(reply, hiredis.ReplyError):
                        raise RuntimeError(f"error reply: {reply}")
                    state["pending"] -= 1
                    if not state["acking"]:
                        if reply is None:
                            raise RuntimeError("the stream ran out of entries")
                        state["ids"].append(reply[0][1][0][0])
                if state["pending"]:
                    continue
                if not state["acking"]:
                    state["acking"] = True
                    state["pending"] = len(state["ids"])
                    state["sock"].sendall(b"".join(encode(*ack_prefix, entry_id)
                                                   for entry_id in state["ids"]))
                    continue
                if latencies is not None:
                    latencies.append(time.perf_counter() - state["sent_at"])
                state["left"] -= pipeline
                if state["left"] > 0:
                    send_reads(state)
                else:
                    active -= 1
        return time.perf_counter() - started
    finally:
        sel.close()
        for state in states:
            state["sock"].close()


def total_cycles(cycles: int, clients: int, pipeline: int) -> int:
    """How many cycles :func:`consumer_cycles` runs for these arguments."""
    return max(pipeline, cycles // clients // pipeline * pipeline) * clients


def timed_calls(port: int, requests: list[bytes]) -> list[float]:
    """Send each request on one connection and wait for its reply before the next; returns
    the seconds from each send to its whole reply parsed (error replies fail the run)."""
    times: list[float] = []
    reader = hiredis.Reader(notEnoughData=_MISSING)
    clock = time.perf_counter
    with connect(port) as sock:
        send, recv, feed, gets = sock.sendall, sock.recv, reader.feed, reader.gets
        for request in requests:
            started = clock()
            send(request)
            reply = gets()
            while reply is _MISSING:
                data = recv(1 << 16)
                if not data:
                    raise ConnectionError("the server closed the connection")
                feed(data)
                reply = gets()
            times.append(clock() - started)
            if isinstance(reply, hiredis.ReplyError):
                raise RuntimeError(f"error reply: {reply}")
    return times
