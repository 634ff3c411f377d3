"""``python -m bench.bench_pubsub``: PUBLISH fan-out of resplite side by side with Redis.

One publisher sends PUBLISH to one channel with 1, 100 and 1000 subscribers (each a plain
socket), pipelined in batches; a reader thread drains every subscriber with epoll and counts
the bytes that arrive (every message has the same size). For each server (started fresh and
pinned to its own core, the client on the other) two figures are printed with the ratio
resplite / Redis:

* messages delivered per second: subscribers x messages, divided by the time from the first
  PUBLISH to the last byte received, the best of the rounds;
* the server's CPU time per delivered message in microseconds (user + system from /proc), the
  median round: the steadier figure on a shared machine.

The publisher never runs more than a window of messages ahead of the slowest delivery, so
neither server's output buffers (nor the pub/sub output limit) come into play.
"""

from __future__ import annotations

import argparse
import os
import resource
import select
import socket
import statistics
import threading
import time

from bench.common import CLIENT_CPU, Server, cpu_seconds, print_table, start

CHANNEL = b"bench"
PAYLOAD = b"p" * 16
MESSAGE = (b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
           % (len(CHANNEL), CHANNEL, len(PAYLOAD), PAYLOAD))
PUBLISH = b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
    len(CHANNEL), CHANNEL, len(PAYLOAD), PAYLOAD)
BATCH = 50


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


class Readers(threading.Thread):
    """Drains every subscriber socket and counts the bytes received."""

    def __init__(self, socks: list[socket.socket]) -> None:
        super().__init__(daemon=True)
        self.socks = socks
        self.received = 0
        self.stop = False
        self.done_at = 0.0
        self.expected = 0

    def run(self) -> None:
        poller = select.epoll()
        by_fd = {s.fileno(): s for s in self.socks}
        for fd in by_fd:
            poller.register(fd, select.EPOLLIN)
        buf = bytearray(1 << 18)
        view = memoryview(buf)
        while not self.stop:
            for fd, _ in poller.poll(0.05):
                n = by_fd[fd].recv_into(view)
                self.received += n
            if self.expected and self.received >= self.expected and not self.done_at:
                self.done_at = time.perf_counter()
        poller.close()


def fanout(server: Server, subscribers: int, messages: int) -> tuple[float, float]:
    """(messages delivered per second, server CPU microseconds per delivered message)."""
    subs = [_connect(server.port) for _ in range(subscribers)]
    confirm = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(CHANNEL), CHANNEL)
    for sock in subs:
        sock.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(CHANNEL), CHANNEL))
    for sock in subs:
        assert _read_exactly(sock, len(confirm)) == confirm
    publisher = _connect(server.port)
    reply = b":%d\r\n" % subscribers
    readers = Readers(subs)
    readers.expected = subscribers * messages * len(MESSAGE)
    readers.start()
    window = max(BATCH * 4, 20_000 // subscribers) * subscribers * len(MESSAGE)
    cpu_before = cpu_seconds(server.pid)
    start_at = time.perf_counter()
    sent = 0
    batch = PUBLISH * BATCH
    while sent < messages:
        n = min(BATCH, messages - sent)
        publisher.sendall(batch if n == BATCH else PUBLISH * n)
        got = _read_exactly(publisher, len(reply) * n)
        assert got == reply * n, got[:40]
        sent += n
        while sent * subscribers * len(MESSAGE) - readers.received > window:
            time.sleep(0.0005)
    while not readers.done_at:
        time.sleep(0.001)
    elapsed = readers.done_at - start_at
    cpu = cpu_seconds(server.pid) - cpu_before
    readers.stop = True
    readers.join()
    publisher.close()
    for sock in subs:
        sock.close()
    delivered = subscribers * messages
    return delivered / elapsed, cpu * 1e6 / delivered


def _raise_file_limit(needed: int) -> None:
    # 1000 subscribers need 1000 sockets here and as many in the server (started after this,
    # so it inherits the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


def run(rounds: int, deliveries: int, counts: tuple[int, ...]) -> None:
    _raise_file_limit(2 * max(counts) + 256)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(CLIENT_CPU)})
    rates: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    load_before = os.getloadavg()[0]
    with start("redis") as redis, start("resplite") as ours:
        for i in range(rounds):
            order = (redis, ours) if i % 2 == 0 else (ours, redis)
            for count in counts:
                messages = max(deliveries // count, 200)
                for server in order:
                    rate, cpu = fanout(server, count, messages)
                    rates.setdefault((server.name, count), []).append(rate)
                    cpus.setdefault((server.name, count), []).append(cpu)
    print_table("PUBLISH fan-out: messages delivered per second (best round)", [
        (f"{count} subscriber{'s' if count > 1 else ''}",
         max(rates[("resplite", count)]), max(rates[("redis", count)]))
        for count in counts
    ], unit="msg/s")
    print_table("server CPU time per delivered message (median round)", [
        (f"{count} subscriber{'s' if count > 1 else ''}",
         statistics.median(cpus[("resplite", count)]), statistics.median(cpus[("redis", count)]))
        for count in counts
    ], unit="us", digits=3)
    print(f"\nload average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--deliveries", type=int, default=1_000_000,
                        help="messages delivered per run (split over the subscribers)")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.deliveries = 1, 50_000
    run(args.rounds, args.deliveries, (1, 100, 1000))


if __name__ == "__main__":
    main()
