"""``python -m bench.bench_wakeups``: serving many blocked stream readers, side by side with Redis.

Each case parks ``--consumers`` clients (1,000 by default), each on its own connection, in
``XREADGROUP GROUP g c<i> BLOCK 0 STREAMS ... >``, waits until the server reports them all
blocked, then sends ``--entries`` ``XADD`` (500) in one pipeline from another connection. Every
XADD is followed by serving the blocked readers (as Redis does after every command): the
first reader in line takes the new entry, the others keep waiting, so the pipeline ends with
as many readers answered as entries added. Measured while a *canary* client PINGs every
10 ms (:class:`bench.bench_fairness.Canary`):

* the time from the first byte of the pipeline to the last reply (the XADDs' and the
  readers'), the best of ``--rounds``;
* the worst canary round trip in that window: how long other clients wait meanwhile;
* the server's CPU time over the window (user + system, :func:`bench.common.cpu_seconds`),
  the steady figure on a busy machine.

Cases:

* ``one stream``: every reader blocks on one stream; the XADDs go to it;
* ``10 streams``: every reader blocks on the same ten streams (one group each); the XADDs
  go to them in turn.

The reference is ``--redis`` (Redis 8.6.3's build under ``~/.cache/redis-reference`` when it
is there, else ``redis-server`` on PATH). ``--quick`` parks 200 readers and adds 100 entries.
"""

from __future__ import annotations

import argparse
import os
import re
import selectors
import shutil
import socket
import threading
import time
from pathlib import Path

import hiredis

from bench.bench_fairness import CANARY_INTERVAL_S, Canary, ReplyReader, connect, encode
from bench.common import Server, cpu_seconds, print_table, start

REFERENCE = Path.home() / ".cache/redis-reference/redis-8.6.3/src/redis-server"


def blocked_clients(sock: socket.socket, reader: ReplyReader) -> int:
    sock.sendall(encode(["INFO", "clients"]))
    line = reader._line()  # the bulk string's header
    size = int(line[1:])
    while len(reader.buf) - reader.pos < size + 2:
        reader._fill()
    text = bytes(reader.buf[reader.pos : reader.pos + size])
    reader.pos += size + 2
    found = re.search(rb"blocked_clients:(\d+)", text)
    return int(found[1]) if found else 0


def run_case(server: Server, streams: int, consumers: int, entries: int, tag: str,
             ) -> tuple[float, float, float]:
    """Park the readers, send the XADDs; returns (seconds to the last reply, worst canary
    round trip, server CPU seconds), all over the pipeline's window."""
    names = [f"{tag}:s{i}" for i in range(streams)]
    admin = connect(server.port)
    admin_reader = ReplyReader(admin)
    for name in names:
        admin.sendall(encode(["XGROUP", "CREATE", name, "g", "$", "MKSTREAM"]))
        admin_reader.skip()
    readers: list[socket.socket] = []
    for i in range(consumers):
        sock = connect(server.port)
        sock.sendall(encode(["XREADGROUP", "GROUP", "g", f"c{i}", "BLOCK", 0, "STREAMS",
                             *names, *([">"] * streams)]))
        readers.append(sock)
    while blocked_clients(admin, admin_reader) < consumers:
        time.sleep(0.01)
    pipeline = b"".join(encode(["XADD", names[i % streams], "*", "f", f"v{i}"])
                        for i in range(entries))
    writer = connect(server.port)
    canary = Canary(server.port)
    canary.start()
    time.sleep(1.0)  # the canary's process starts
    selector = selectors.DefaultSelector()
    parsers: dict[socket.socket, hiredis.Reader] = {}
    for sock in [writer, *readers]:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        parsers[sock] = hiredis.Reader()
    expected = entries + min(entries, consumers)  # XADD replies, then the readers served
    got = 0
    cpu_before = cpu_seconds(server.pid)
    started = time.perf_counter()
    sender = threading.Thread(target=_send_all, args=(writer, pipeline), daemon=True)
    sender.start()
    while got < expected:
        for key, _ in selector.select(30):
            sock = key.fileobj  # type: ignore[assignment]
            assert isinstance(sock, socket.socket)
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed a connection")
            parser = parsers[sock]
            parser.feed(chunk)
            while (reply := parser.gets()) is not False:
                if isinstance(reply, hiredis.ReplyError):
                    raise RuntimeError(str(reply))
                got += 1
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(server.pid) - cpu_before
    sender.join()
    time.sleep(3 * CANARY_INTERVAL_S)  # the window's last round trips end
    canary.finish()
    selector.close()
    for sock in [writer, *readers]:
        sock.close()
    admin.sendall(encode(["DEL", *names]))
    admin_reader.skip()
    admin.close()
    return elapsed, canary.worst_between(started, started + elapsed), cpu


def _send_all(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
        except BlockingIOError:
            time.sleep(0.0005)
            continue
        view = view[sent:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200 readers, 100 entries")
    parser.add_argument("--consumers", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=500)
    parser.add_argument("-r", "--rounds", type=int, default=1)
    parser.add_argument("--only", choices=("one", "ten"), help="run one case only")
    parser.add_argument("--redis", default=str(REFERENCE) if os.access(REFERENCE, os.X_OK)
                        else shutil.which("redis-server"), help="the Redis server to compare with")
    args = parser.parse_args()
    consumers, entries = (200, 100) if args.quick else (args.consumers, args.entries)
    cases = [("one stream", 1), ("10 streams", 10)]
    if args.only:
        cases = cases[:1] if args.only == "one" else cases[1:]
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for kind in ("redis", "resplite"):
        exe = args.redis if kind == "redis" else None
        with start(kind, "--maxclients", "10000", exe=exe) as server:
            for name, streams in cases:
                for r in range(args.rounds):
                    results.setdefault((kind, name), []).append(
                        run_case(server, streams, consumers, entries, f"w{r}"))
    print(f"{consumers:,} readers blocked in XREADGROUP, {entries:,} XADD in one pipeline "
          f"(reference: {args.redis})")
    label = {name: f"{name}" for name, _ in cases}
    for title, index, unit, scale in (
        ("Time to the last reply", 0, "ms", 1e3),
        ("Worst canary PING round trip meanwhile", 1, "ms", 1e3),
        ("Server CPU over the window", 2, "ms", 1e3),
    ):
        print_table(f"{title} (best of {args.rounds})",
                    [(label[name], min(r[index] for r in results[("resplite", name)]) * scale,
                      min(r[index] for r in results[("redis", name)]) * scale)
                     for name, _ in cases], unit=unit, digits=1)


if __name__ == "__main__":
    main()
