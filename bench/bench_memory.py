"""``python -m bench.bench_memory``: memory per element, and how closely ``maxmemory``
holds, side by side with Redis.

**Per element** (``--only elements``): for each type, a fresh server of each kind is
loaded through the protocol with ``--elements`` N elements (1 million by default), and the
figure is its resident-set growth (``/proc``) from the empty server, warmed up (the code
paths and first tables loaded), to the loaded one, divided by N:

* sorted-set member: N members of 8 bytes (``%08d``) with random scores, in one key
  (ZADD, 1000 members a call; :func:`bench.bench_zsets.fill`);
* SET key: N string keys ``key:%08d`` holding ``value123`` (MSET, 100 keys a call);
* hash field: N fields ``%08d`` holding ``value123`` in one key (HSET, 100 a call);
* stream entry: N entries of two fields with 8-byte values (:func:`bench.bench_streams.fill`).

The header says which resplite build ran (``compiled`` or ``pure``): run it once as is and
once with ``RESPLITE_PURE_PYTHON=1`` to see both.  A figure can differ by about 15 bytes
from one run to the next (SET keys mostly: whether the tables a dict outgrew are given back
to the system or stay resident depends on where the allocator placed them); compare runs,
not single figures.

**maxmemory** (``--only maxmemory``): both servers start with ``--maxmemory 100mb``
(``noeviction``, then ``allkeys-lru``), then:

1. one pipeline of 140 ``SET`` of 1 MB values is sent at once; the table shows how many
   were accepted, ``used_memory`` afterwards and the server's resident memory growth (peak
   while answering, and after), i.e. how far past the limit one pipeline gets;
2. ``FLUSHALL``, then 50 more 1 MB ``SET``: how many succeed (all of them, once memory
   follows the data) and ``used_memory`` after the flush;
3. with ``allkeys-lru``, 300 more 1 MB ``SET`` one at a time: all accepted, evicted keys,
   and ``used_memory`` and resident growth at the end.

resplite's ``used_memory`` counts the data set, client buffers and a 1 MB allowance, not
the interpreter, so its resident size sits above ``used_memory`` by a roughly constant
amount: the growth columns compare like with like.
"""

from __future__ import annotations

import argparse
import re
import socket
import threading
import time

from bench import bench_streams, bench_zsets
from bench.bench_streams import Conn
from bench.common import Server, print_table, rss_bytes, start

VALUE = b"v" * (1 << 20)
MB = 1 << 20


def command(*args: bytes | str | int) -> bytes:
    items = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


class Client:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")

    def reply(self) -> bytes:
        line = self.file.readline()
        if line[:1] == b"$":
            n = int(line[1:-2])
            return line + (self.file.read(n + 2) if n >= 0 else b"")
        return line

    def call(self, *args: bytes | str | int) -> bytes:
        self.sock.sendall(command(*args))
        return self.reply()

    def info(self, field: str) -> int:
        text = self.call("INFO", "memory")
        found = re.search(field.encode() + rb":(\d+)", text)
        return int(found[1]) if found else 0

    def evicted(self) -> int:
        found = re.search(rb"evicted_keys:(\d+)", self.call("INFO", "stats"))
        return int(found[1]) if found else 0


def run(server: Server) -> dict[str, float]:
    client = Client(server.port)
    base = rss_bytes(server.pid)
    peak = [base]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes(server.pid))
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    sender = threading.Thread(target=client.sock.sendall, args=(b"".join(
        command("SET", f"big:{i}", VALUE) for i in range(140)),), daemon=True)
    sender.start()
    replies = [client.reply() for _ in range(140)]
    sender.join()
    done.set()
    watcher.join()
    figures = {
        "accepted of 140": replies.count(b"+OK\r\n"),
        "used_memory MB": client.info("used_memory") / MB,
        "RSS growth peak MB": (peak[0] - base) / MB,
        "RSS growth after MB": (rss_bytes(server.pid) - base) / MB,
    }
    client.call("FLUSHALL")
    figures["used after FLUSHALL MB"] = client.info("used_memory") / MB
    figures["SET ok after FLUSHALL /50"] = sum(
        client.call("SET", f"again:{i}", VALUE) == b"+OK\r\n" for i in range(50))
    client.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    before = client.evicted()
    figures["lru: SET ok /300"] = sum(
        client.call("SET", f"lru:{i}", VALUE) == b"+OK\r\n" for i in range(300))
    figures["lru: evicted"] = client.evicted() - before
    figures["lru: used_memory MB"] = client.info("used_memory") / MB
    figures["lru: RSS growth MB"] = (rss_bytes(server.pid) - base) / MB
    client.sock.close()
    return figures


# -- memory per element -----------------------------------------------------------------------


def fill_strings(port: int, count: int) -> None:
    """``count`` keys ``key:%08d`` holding ``value123``, 100 keys an MSET, 10 MSETs a pipeline."""
    conn = Conn(port)
    try:
        for start_at in range(0, count, 1000):
            stop_at = min(start_at + 1000, count)
            conn.pipeline([["MSET", *[x for i in range(j, min(j + 100, stop_at))
                                      for x in (f"key:{i:08d}", "value123")]]
                           for j in range(start_at, stop_at, 100)])
    finally:
        conn.close()


def fill_hash(port: int, key: str, count: int) -> None:
    """``count`` fields ``%08d`` holding ``value123``, 100 fields an HSET, 10 a pipeline."""
    conn = Conn(port)
    try:
        for start_at in range(0, count, 1000):
            stop_at = min(start_at + 1000, count)
            conn.pipeline([["HSET", key, *[x for i in range(j, min(j + 100, stop_at))
                                           for x in (f"{i:08d}", "value123")]]
                           for j in range(start_at, stop_at, 100)])
    finally:
        conn.close()


# (label, warm-up commands, fill, check command, expected reply of the check).
ELEMENT_KINDS = (
    ("sorted-set member",
     [["ZADD", "warmup", *[x for i in range(200) for x in (i, f"w{i}")]]],
     lambda port, n: bench_zsets.fill(port, "mem", n, batch=1000), ("ZCARD", "mem")),
    ("SET key", [["MSET", "warmup", "v"]], fill_strings, ("DBSIZE",)),
    ("hash field", [["HSET", "warmup", *[x for i in range(200) for x in (f"w{i}", "v")]]],
     lambda port, n: fill_hash(port, "mem", n), ("HLEN", "mem")),
    ("stream entry", [["XADD", "warmup", "1-0", "f", "v"]],
     lambda port, n: bench_streams.fill(port, "mem", n, batch=1000), ("XLEN", "mem")),
)


def build_of(port: int) -> str:
    """``resplite_build`` from INFO server, ``pure`` where the server reports none."""
    conn = Conn(port)
    info = conn.call("INFO", "server")
    conn.close()
    found = re.search(rb"resplite_build:(\w+)", info if isinstance(info, bytes) else b"")
    return found[1].decode() if found else "pure"


def per_element(kind: str, elements: int) -> tuple[dict[str, float], str]:
    """Resident-set growth per element of each type on a fresh ``kind`` server."""
    figures: dict[str, float] = {}
    build = ""
    for label, warmup, fill, check in ELEMENT_KINDS:
        with start(kind) as server:
            conn = Conn(server.port)
            build = build or build_of(server.port)
            conn.pipeline([*warmup, ["FLUSHALL"]])
            time.sleep(0.2)
            before = rss_bytes(server.pid)
            fill(server.port, elements)
            time.sleep(0.2)
            after = rss_bytes(server.pid)
            count = conn.call(*check)
            conn.close()
            assert count == elements, f"{kind} {label}: {count} of {elements} elements"
            figures[label] = (after - before) / elements
    return figures, build


def bench_elements(elements: int) -> None:
    results = {kind: per_element(kind, elements) for kind in ("redis", "resplite")}
    figures = {kind: result[0] for kind, result in results.items()}
    print_table(f"Memory: resident-set growth per element, {elements:,} elements "
                f"(resplite build: {results['resplite'][1]})",
                [(label, figures["resplite"][label], figures["redis"][label])
                 for label, *_ in ELEMENT_KINDS], unit="B", digits=1)


# -- maxmemory ------------------------------------------------------------------------------


def bench_maxmemory() -> None:
    results = {}
    for kind in ("redis", "resplite"):
        with start(kind, "--maxmemory", "100mb") as server:
            time.sleep(0.2)
            results[kind] = run(server)
    print_table("maxmemory 100mb: 140 pipelined 1 MB SETs, FLUSHALL, then allkeys-lru",
                [(name, float(results["resplite"][name]), float(results["redis"][name]))
                 for name in results["redis"]], unit="", digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elements", type=int, default=1_000_000,
                        help="elements loaded for the per-element figures")
    parser.add_argument("--only", choices=("elements", "maxmemory"), action="append",
                        help="run only these parts")
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.elements = 50_000
    parts = args.only or ["elements", "maxmemory"]
    if "elements" in parts:
        bench_elements(args.elements)
    if "maxmemory" in parts:
        bench_maxmemory()


if __name__ == "__main__":
    main()
