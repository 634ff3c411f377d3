"""``python -m bench.bench_streams``: stream figures of resplite side by side with Redis.

Four measurements, each on both servers (started fresh, pinned to their own core), printed
with the ratio resplite / Redis:

1. XADD through redis-benchmark (``-c 50``, ``-P 1`` and ``-P 16``): requests per second
   (best round) and the server's CPU time per request (median round).
2. A consumer loop: entries are read with XREADGROUP COUNT 10 and acknowledged with XACK
   by several consumers at once; entries per second and server CPU per entry.
3. XAUTOCLAIM COUNT 10 with a pending entries list of 10 thousand and of 1 million
   entries: the server time of one call (the median of many, read from INFO
   commandstats), and its growth from 10k to 1M, which stays flat when the PEL is
   walked from the cursor instead of from its start.
4. Memory per entry: the growth of the server's resident set while 1 million entries of
   two fields with 8-byte values are added, divided by the number of entries.
5. Reference policies (Redis 8.2's ACKED and DELREF) with 1 and with 100 consumer groups:
   the server time per entry of XTRIM ... ACKED, XDELEX ACKED and XDELEX DELREF, and its
   growth from 1 to 100 groups, which stays flat when "is this entry still pending in some
   group" is answered without visiting every group. The reference Redis (7.0) has no
   ACKED or DELREF, so this part runs resplite alone; run it on an older tree (put that
   tree first on PYTHONPATH) to compare before and after.

Options shrink or grow the runs (``--quick`` for a smoke run). Nothing here needs the test
suite; the servers are started by :mod:`bench.common`.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time
from collections.abc import Iterable

from bench.common import Server, cpu_seconds, redis_benchmark, rss_bytes, start

_CRLF = b"\r\n"


def print_table(title: str, rows: list[tuple[str, float, float]], unit: str = "req/s",
                digits: int = 0) -> None:
    """Rows of (label, resplite figure, redis figure), printed with the ratio."""
    print(f"\n{title}")
    print(f"{'':24} {'resplite':>14} {'redis':>14} {'ratio':>7}")
    for label, ours, ref in rows:
        ratio = ours / ref if ref else float("nan")
        print(f"{label:24} {ours:>14,.{digits}f} {ref:>14,.{digits}f} {ratio:>7.2f}   {unit}")


def encode(args: Iterable[bytes | str | int]) -> bytes:
    items = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


class Conn:
    """A minimal RESP2 client that returns replies as nested Python values."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb", buffering=1 << 16)

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def send(self, commands: list[list[bytes | str | int]]) -> None:
        self.sock.sendall(b"".join(encode(c) for c in commands))

    def read(self) -> object:
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2]
        n = int(rest)
        return None if n < 0 else [self.read() for _ in range(n)]

    def call(self, *args: bytes | str | int) -> object:
        self.send([list(args)])
        return self.read()

    def pipeline(self, commands: list[list[bytes | str | int]]) -> list[object]:
        self.send(commands)
        return [self.read() for _ in commands]


def fill(port: int, key: str, count: int, batch: int = 1000) -> None:
    """Add ``count`` entries of two fields with 8-byte values, with explicit ids."""
    conn = Conn(port)
    try:
        done = 0
        while done < count:
            n = min(batch, count - done)
            conn.pipeline([["XADD", key, f"{done + i + 1}-0", "f1", f"{done + i:08d}",
                            "f2", f"{(done + i) * 7 % 10**8:08d}"] for i in range(n)])
            done += n
    finally:
        conn.close()


# -- 1. XADD ---------------------------------------------------------------------------------


def bench_xadd(requests: int, rounds: int) -> None:
    """XADD, with SET run the same way as a baseline for what the machine allows."""
    rps: dict[tuple[str, str, int], list[float]] = {}
    cpu: dict[tuple[str, str, int], list[float]] = {}
    tests = (("XADD", ("XADD", "bench:stream", "*", "field", "value123")),
             ("SET (baseline)", ("SET", "bench:key", "value123")))
    with start("redis") as redis, start("resplite") as ours:
        for pipeline in (1, 16):
            n = requests * (4 if pipeline > 1 else 1)
            for i in range(rounds):
                for server in (redis, ours) if i % 2 == 0 else (ours, redis):
                    for name, command in tests:
                        Conn(server.port).call("DEL", "bench:stream")
                        before = cpu_seconds(server.pid)
                        figures = redis_benchmark(server.port, "", requests=n,
                                                  pipeline=pipeline, extra=command)
                        used = cpu_seconds(server.pid) - before
                        key = (server.name, name, pipeline)
                        rps.setdefault(key, []).append(max(figures.values()))
                        cpu.setdefault(key, []).append(used * 1e6 / n)
    for pipeline in (1, 16):
        print_table(f"redis-benchmark -c 50 -P {pipeline}: requests/s (best of {rounds})",
                    [(name, max(rps[("resplite", name, pipeline)]),
                      max(rps[("redis", name, pipeline)])) for name, _ in tests])
        print_table(f"redis-benchmark -c 50 -P {pipeline}: server CPU µs per request "
                    f"(median of {rounds})",
                    [(name, statistics.median(cpu[("resplite", name, pipeline)]),
                      statistics.median(cpu[("redis", name, pipeline)])) for name, _ in tests],
                    unit="µs", digits=2)


# -- 2. consumer loop ------------------------------------------------------------------------


def consume(port: int, consumer: str, counts: list[int]) -> None:
    conn = Conn(port)
    try:
        while True:
            reply = conn.call("XREADGROUP", "GROUP", "g", consumer, "COUNT", 10,
                              "STREAMS", "work", ">")
            if reply is None:
                return
            entries = reply[0][1]  # type: ignore[index]
            ids = [entry[0] for entry in entries]  # type: ignore[index]
            conn.call("XACK", "work", "g", *ids)
            counts.append(len(ids))
    finally:
        conn.close()


def consumer_loop(server: Server, entries: int, consumers: int) -> tuple[float, float]:
    fill(server.port, "work", entries)
    Conn(server.port).call("XGROUP", "CREATE", "work", "g", "0")
    counts: list[int] = []
    threads = [threading.Thread(target=consume, args=(server.port, f"c{i}", counts))
               for i in range(consumers)]
    before = cpu_seconds(server.pid)
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    used = cpu_seconds(server.pid) - before
    assert sum(counts) == entries, (sum(counts), entries)
    return entries / elapsed, used * 1e6 / entries


def bench_consumers(entries: int, consumers: int) -> None:
    results = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            results[kind] = consumer_loop(server, entries, consumers)
    print_table(f"Consumer loop, {consumers} consumers, XREADGROUP COUNT 10 + XACK: "
                f"{entries:,} entries",
                [("entries/s", results["resplite"][0], results["redis"][0])])
    print_table("Consumer loop: server CPU per entry",
                [("µs/entry", results["resplite"][1], results["redis"][1])], unit="µs",
                digits=2)


# -- 3. XAUTOCLAIM ----------------------------------------------------------------------------


def commandstats_usec(conn: Conn, name: str) -> tuple[int, int]:
    info = conn.call("INFO", "commandstats")
    assert isinstance(info, bytes)
    for line in info.split(_CRLF):
        if line.startswith(b"cmdstat_" + name.encode() + b":"):
            fields = dict(part.split(b"=") for part in line.split(b":", 1)[1].split(b","))
            return int(fields[b"calls"]), int(fields[b"usec"])
    return 0, 0


def autoclaim_time(server: Server, pel: int, calls: int) -> float:
    """Median server µs of XAUTOCLAIM COUNT 10 with a PEL of ``pel`` entries."""
    fill(server.port, "claims", pel, batch=2000)
    conn = Conn(server.port)
    try:
        conn.call("XGROUP", "CREATE", "claims", "g", "0")
        delivered = 0
        while delivered < pel:
            reply = conn.call("XREADGROUP", "GROUP", "g", "first", "COUNT", 20000,
                              "STREAMS", "claims", ">")
            delivered += len(reply[0][1])  # type: ignore[index]
        # Start the walk at the middle of the PEL, then follow the cursor.
        cursor: bytes | str = f"{pel // 2}-0"
        samples = []
        for _ in range(calls):
            conn.call("CONFIG", "RESETSTAT")
            reply = conn.call("XAUTOCLAIM", "claims", "g", "second", 0, cursor, "COUNT", 10,
                              "JUSTID")
            calls_done, usec = commandstats_usec(conn, "xautoclaim")
            assert calls_done == 1
            samples.append(usec)
            cursor = reply[0]  # type: ignore[index]
            if cursor == b"0-0":
                cursor = f"{pel // 2}-0"
        return statistics.median(samples)
    finally:
        conn.close()


def bench_autoclaim(small: int, large: int, calls: int) -> None:
    rows = []
    times: dict[tuple[str, int], float] = {}
    for kind in ("redis", "resplite"):
        for pel in (small, large):
            with start(kind) as server:
                times[(kind, pel)] = autoclaim_time(server, pel, calls)
    for pel in (small, large):
        rows.append((f"PEL {pel:,}", times[("resplite", pel)], times[("redis", pel)]))
    print_table(f"XAUTOCLAIM COUNT 10: server µs per call (median of {calls})", rows,
                unit="µs", digits=1)
    growth_ours = times[("resplite", large)] / max(times[("resplite", small)], 1e-9)
    growth_ref = times[("redis", large)] / max(times[("redis", small)], 1e-9)
    print(f"{'growth ' + f'{large:,}/{small:,}':24} {growth_ours:>14.2f} {growth_ref:>14.2f}")


# -- 4. memory per entry ---------------------------------------------------------------------


def bench_memory(entries: int) -> None:
    per_entry = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            conn = Conn(server.port)
            conn.call("XADD", "warmup", "1-0", "f", "v")  # code paths loaded before measuring
            conn.call("DEL", "warmup")
            time.sleep(0.2)
            before = rss_bytes(server.pid)
            fill(server.port, "mem", entries, batch=2000)
            time.sleep(0.2)
            after = rss_bytes(server.pid)
            assert conn.call("XLEN", "mem") == entries
            conn.close()
            per_entry[kind] = (after - before) / entries
    print_table(f"Memory: resident-set growth per entry ({entries:,} entries, two fields, "
                "8-byte values)", [("bytes/entry", per_entry["resplite"], per_entry["redis"])],
                unit="B", digits=1)


# -- 5. ACKED / DELREF with many groups ---------------------------------------------------------


def _groups_read_and_ack(conn: Conn, key: str, groups: int, entries: int, keep: str) -> None:
    """Each group reads every entry; all but group ``keep`` acknowledge them all."""
    ids = [f"{i + 1}-0" for i in range(entries)]
    for g in range(groups):
        name = f"g{g}"
        conn.call("XGROUP", "CREATE", key, name, "0")
        conn.call("XREADGROUP", "GROUP", name, "c", "COUNT", entries, "STREAMS", key, ">")
        if name != keep:
            for k in range(0, entries, 1000):
                conn.call("XACK", key, name, *ids[k : k + 1000])


def refs_times(server: Server, groups: int, entries: int) -> dict[str, float]:
    """Server µs per entry of the three reference-policy commands with ``groups`` groups."""
    conn = Conn(server.port)
    out: dict[str, float] = {}
    try:
        # XTRIM ACKED: every entry acknowledged by every group, all trimmed.
        fill(server.port, "acked", entries)
        _groups_read_and_ack(conn, "acked", groups, entries, keep="")
        conn.call("CONFIG", "RESETSTAT")
        removed = conn.call("XTRIM", "acked", "MINID", "=", f"{entries + 1}-0", "ACKED")
        assert removed == entries, removed
        out["XTRIM MINID ACKED"] = commandstats_usec(conn, "xtrim")[1] / entries
        # XDELEX ACKED and DELREF: the last group keeps every entry pending.
        ids = [f"{i + 1}-0" for i in range(entries)]
        for policy in ("ACKED", "DELREF"):
            key = f"del{policy}"
            fill(server.port, key, entries)
            _groups_read_and_ack(conn, key, groups, entries, keep=f"g{groups - 1}")
            conn.call("CONFIG", "RESETSTAT")
            for k in range(0, entries, 1000):
                chunk = ids[k : k + 1000]
                conn.call("XDELEX", key, policy, "IDS", len(chunk), *chunk)
            out[f"XDELEX {policy}"] = commandstats_usec(conn, "xdelex")[1] / entries
    finally:
        conn.close()
    return out


def bench_refs(entries: int) -> None:
    times: dict[int, dict[str, float]] = {}
    for groups in (1, 100):
        with start("resplite") as server:
            times[groups] = refs_times(server, groups, entries)
    print(f"\nReference policies: resplite server µs per entry ({entries:,} entries)")
    print(f"{'':24} {'1 group':>14} {'100 groups':>14} {'growth':>7}")
    for name, one in times[1].items():
        many = times[100][name]
        print(f"{name:24} {one:>14.2f} {many:>14.2f} {many / max(one, 1e-9):>7.2f}   µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--requests", type=int, default=100_000,
                        help="XADD requests per unpipelined run (pipelined runs send 4x)")
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("--entries", type=int, default=200_000,
                        help="entries the consumer loop drains")
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--pel-small", type=int, default=10_000)
    parser.add_argument("--pel-large", type=int, default=1_000_000)
    parser.add_argument("--claims", type=int, default=200, help="XAUTOCLAIM calls timed")
    parser.add_argument("--memory-entries", type=int, default=1_000_000)
    parser.add_argument("--refs-entries", type=int, default=10_000,
                        help="entries per stream in the reference-policy part")
    parser.add_argument("--only", choices=("xadd", "consumers", "autoclaim", "memory", "refs"),
                        action="append", help="run only these parts")
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.rounds, args.entries = 20_000, 1, 20_000
        args.pel_small, args.pel_large, args.claims = 1_000, 20_000, 50
        args.memory_entries, args.refs_entries = 50_000, 2_000
    parts = args.only or ["xadd", "consumers", "autoclaim", "memory", "refs"]
    if "xadd" in parts:
        bench_xadd(args.requests, args.rounds)
    if "consumers" in parts:
        bench_consumers(args.entries, args.consumers)
    if "autoclaim" in parts:
        bench_autoclaim(args.pel_small, args.pel_large, args.claims)
    if "memory" in parts:
        bench_memory(args.memory_entries)
    if "refs" in parts:
        bench_refs(args.refs_entries)


if __name__ == "__main__":
    main()
