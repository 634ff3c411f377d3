"""``python -m bench.bench_nonreaders``: clients that pipeline and never read, and a newcomer.

100 clients (``--clients``) connect to a server that needs a password and send pipelined
``GET k`` (``k`` holds ``--value-size`` bytes) as fast as the server takes them, never
reading a reply: a process of their own on the client core does it. Meanwhile a *probe*
connects every 100 ms from this process, sends ``AUTH`` and ``PING`` and waits for both
replies; the figure is the time from the start of the connect to the ``PONG``. Both servers
run the same case in turn (started fresh and pinned to the server core, see
:mod:`bench.common`):

* ``unauth``: the pipeliners never authenticate. Redis (7.4.3+ and 8; Debian's 7.0.15
  carries the fix) closes a client that has not authenticated once more than 1 KB of its
  replies waits unsent, so they are all gone at once; the table shows how many the server
  closed, what it read from them (``total_net_input_bytes``) and its resident memory
  growth;
* ``auth``: the pipeliners authenticate first. Redis has no output limit for normal clients
  (``client-output-buffer-limit normal 0 0 0``) and keeps reading and answering them, its
  replies piling up in memory; resplite stops reading from a client whose replies it cannot
  send, and shares each turn of its loop among the clients with work.

The probe's round trip is reported as the median and the worst of its samples.
``--redis-server`` picks another Redis binary (a Redis 8 build, say).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import selectors
import socket
import statistics
import time
from typing import Any

from bench.common import CLIENT_CPU, Server, rss_bytes, start

PROBE_INTERVAL_S = 0.1
PASSWORD = "bench-secret"


def encode(*args: bytes | str) -> bytes:
    items = [a if isinstance(a, bytes) else a.encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        chunk = sock.recv(size - len(got))
        if not chunk:
            raise ConnectionError("server closed the connection")
        got += chunk
    return got


def _pipeliners_main(port: int, count: int, authenticate: bool, stop: Any, ready: Any,
                     out: Any) -> None:
    """The pipeliners' process: send GETs on every connection the server takes them on,
    never read; report (bytes sent, connections the server closed)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(CLIENT_CPU)})
    socks: list[socket.socket] = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        if authenticate:
            sock.sendall(encode("AUTH", PASSWORD))
            _read_exactly(sock, 5)
        sock.setblocking(False)
        socks.append(sock)
    selector = selectors.DefaultSelector()
    for sock in socks:
        selector.register(sock, selectors.EVENT_WRITE)
    ready.set()
    chunk = encode("GET", "k") * 2000
    sent = closed = 0
    while not stop.is_set():
        for key, _ in selector.select(0.05):
            sock = key.fileobj  # type: ignore[assignment]
            try:
                sent += sock.send(chunk)
            except BlockingIOError:
                pass
            except OSError:
                selector.unregister(sock)
                sock.close()
                closed += 1
    for sock in socks:
        sock.close()
    out.send((sent, closed))


def probe(port: int) -> float:
    """Seconds from the start of a connect to the PONG of a new client's AUTH + PING."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(encode("AUTH", PASSWORD) + encode("PING"))
        reply = _read_exactly(sock, 12)
    if reply != b"+OK\r\n+PONG\r\n":
        raise RuntimeError(reply.decode(errors="replace"))
    return time.perf_counter() - started


def info_field(port: int, field: str) -> int:
    """A field of INFO everything (-1 where the server has no such field)."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(encode("AUTH", PASSWORD) + encode("INFO", "everything"))
        data = b""
        while b"\r\n" not in data[5:]:
            data += _read_exactly(sock, 1)
        size = int(data[6:-2])
        data = _read_exactly(sock, size + 2)
    found = re.search(b"\r\n" + field.encode() + rb":(\d+)", data)
    return int(found[1]) if found else -1


def run_case(server: Server, authenticate: bool, clients: int, value_size: int,
             seconds: float) -> dict[str, float]:
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(encode("AUTH", PASSWORD) + encode("SET", "k", b"v" * value_size))
        _read_exactly(sock, 10)
    read_before = info_field(server.port, "total_net_input_bytes")
    commands_before = info_field(server.port, "total_commands_processed")
    base_rss = peak_rss = rss_bytes(server.pid)
    ctx = multiprocessing.get_context("spawn")
    stop, ready = ctx.Event(), ctx.Event()
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_pipeliners_main,
                       args=(server.port, clients, authenticate, stop, ready, send),
                       daemon=True)
    proc.start()
    samples: list[float] = []
    try:
        ready.wait(60)
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            samples.append(probe(server.port))
            peak_rss = max(peak_rss, rss_bytes(server.pid))
            time.sleep(PROBE_INTERVAL_S)
    finally:
        stop.set()
        sent, closed = receive.recv() if receive.poll(60) else (0, 0)
        proc.join(10)
        if proc.is_alive():
            proc.kill()
    read = info_field(server.port, "total_net_input_bytes") - read_before
    commands = info_field(server.port, "total_commands_processed") - commands_before
    return {"median": statistics.median(samples), "worst": max(samples),
            "probes": len(samples), "closed": closed, "sent": sent, "read": read,
            "rss": peak_rss - base_rss, "rate": commands / seconds,
            "obl": info_field(server.port, "client_output_buffer_limit_disconnections")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--only", choices=("unauth", "auth"))
    parser.add_argument("--redis-server", help="the Redis binary (default: redis-server on PATH)")
    parser.add_argument("--resplite-args", default="",
                        help="extra resplite directives, e.g. '--uvloop no'")
    args = parser.parse_args()
    cases = [c for c in ("unauth", "auth") if args.only in (None, c)]
    rows: list[tuple[str, str, dict[str, float]]] = []
    for case in cases:
        for kind in ("redis", "resplite"):
            extra = ["--requirepass", PASSWORD]
            if kind == "resplite":
                extra += args.resplite_args.split()
            with start(kind, *extra, exe=args.redis_server) as server:
                rows.append((case, kind, run_case(server, case == "auth", args.clients,
                                                  args.value_size, args.seconds)))
    print(f"\n{args.clients} clients pipelining GET of {args.value_size} bytes, never "
          f"reading, for {args.seconds:g} s; a new client's AUTH + PING every "
          f"{PROBE_INTERVAL_S * 1e3:.0f} ms")
    print(f"{'case':8} {'server':9} {'median ms':>10} {'worst ms':>10} {'probes':>7} "
          f"{'closed':>7} {'obuf-disc':>9} {'read MB':>8} {'cmds/s':>9} {'RSS +MB':>8}")
    for case, kind, r in rows:
        print(f"{case:8} {kind:9} {r['median'] * 1e3:>10.1f} {r['worst'] * 1e3:>10.1f} "
              f"{r['probes']:>7.0f} {r['closed']:>7.0f} {r['obl']:>9.0f} "
              f"{r['read'] / 2**20:>8.1f} {r['rate']:>9,.0f} {r['rss'] / 2**20:>8.1f}")


if __name__ == "__main__":
    main()
