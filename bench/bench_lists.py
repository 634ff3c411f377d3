"""``python -m bench.bench_lists``: list figures of resplite side by side with Redis.

Two measurements, each on both servers (started fresh, pinned to their own core), printed
with the ratio resplite / Redis:

1. LPUSH and RPOP through redis-benchmark (``-c 50``, ``-P 16`` by default), with SET run the
   same way as the baseline of what the machine allows: requests per second (best round) and
   the server's CPU time per request (median round). Each round pushes N elements onto one
   list and then pops the same N, so every RPOP finds an element, as redis-benchmark's own
   ``-t lpush,rpop`` does. The figure to hold a list command to is its ratio next to SET's.
2. Memory per element: the growth of the server's resident set while 1 million elements of
   8 bytes are pushed onto one list (RPUSH, 1000 elements a call), divided by the count.

``--quick`` shrinks the runs for a smoke test. The servers are started by :mod:`bench.common`.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.bench_streams import Conn
from bench.common import cpu_seconds, print_table, redis_benchmark, rss_bytes, start

KEY = "bench:list"
TESTS = (
    ("SET (baseline)", ("SET", "bench:key", "value123")),
    ("LPUSH", ("LPUSH", KEY, "value123")),
    ("RPOP", ("RPOP", KEY)),
)


def bench_throughput(requests: int, rounds: int, pipelines: tuple[int, ...]) -> None:
    rps: dict[tuple[str, str, int], list[float]] = {}
    cpu: dict[tuple[str, str, int], list[float]] = {}
    with start("redis") as redis, start("resplite") as ours:
        for pipeline in pipelines:
            n = requests * (4 if pipeline > 1 else 1)
            for i in range(rounds):
                for server in (redis, ours) if i % 2 == 0 else (ours, redis):
                    Conn(server.port).call("DEL", KEY)
                    for name, command in TESTS:
                        before = cpu_seconds(server.pid)
                        figures = redis_benchmark(server.port, "", requests=n,
                                                  pipeline=pipeline, extra=command)
                        used = cpu_seconds(server.pid) - before
                        key = (server.name, name, pipeline)
                        rps.setdefault(key, []).append(max(figures.values()))
                        cpu.setdefault(key, []).append(used * 1e6 / n)
                    left = Conn(server.port).call("LLEN", KEY)
                    assert left == 0, f"{server.name}: {left} elements left after RPOP"
    for pipeline in pipelines:
        print_table(f"redis-benchmark -c 50 -P {pipeline}: requests/s (best of {rounds})",
                    [(name, max(rps[("resplite", name, pipeline)]),
                      max(rps[("redis", name, pipeline)])) for name, _ in TESTS])
        print_table(f"redis-benchmark -c 50 -P {pipeline}: server CPU µs per request "
                    f"(median of {rounds})",
                    [(name, statistics.median(cpu[("resplite", name, pipeline)]),
                      statistics.median(cpu[("redis", name, pipeline)])) for name, _ in TESTS],
                    unit="µs", digits=2)
        base = max(rps[("resplite", TESTS[0][0], pipeline)]) / max(
            rps[("redis", TESTS[0][0], pipeline)])
        for name, _ in TESTS[1:]:
            ratio = max(rps[("resplite", name, pipeline)]) / max(rps[("redis", name, pipeline)])
            print(f"{name} ratio / SET ratio at -P {pipeline}: {ratio / base:.2f}")


def fill(port: int, key: str, count: int, batch: int = 1000) -> None:
    """Push ``count`` distinct 8-byte elements (``v0000000`` ...) onto ``key``."""
    conn = Conn(port)
    try:
        done = 0
        while done < count:
            n = min(batch, count - done)
            commands: list[list[bytes | str | int]] = [
                ["RPUSH", key, *[f"v{done + j + k:07d}" for k in range(min(100, n - j))]]
                for j in range(0, n, 100)
            ]
            conn.pipeline(commands)
            done += n
    finally:
        conn.close()


def bench_memory(elements: int) -> None:
    per_element = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            conn = Conn(server.port)
            conn.call("RPUSH", "warmup", "v0000000")  # code paths loaded before measuring
            conn.call("DEL", "warmup")
            time.sleep(0.2)
            before = rss_bytes(server.pid)
            fill(server.port, "mem", elements)
            time.sleep(0.2)
            after = rss_bytes(server.pid)
            assert conn.call("LLEN", "mem") == elements
            conn.close()
            per_element[kind] = (after - before) / elements
    print_table(f"Memory: resident-set growth per element ({elements:,} elements of 8 bytes "
                "in one list)", [("bytes/element", per_element["resplite"],
                                  per_element["redis"])], unit="B", digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--requests", type=int, default=100_000,
                        help="requests per unpipelined run (pipelined runs send 4x)")
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("-P", "--pipeline", type=int, action="append",
                        help="pipeline depths to run (default: 16)")
    parser.add_argument("--elements", type=int, default=1_000_000,
                        help="elements pushed for the memory figure")
    parser.add_argument("--only", choices=("throughput", "memory"), action="append")
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.rounds, args.elements = 20_000, 1, 50_000
    parts = args.only or ["throughput", "memory"]
    if "throughput" in parts:
        bench_throughput(args.requests, args.rounds, tuple(args.pipeline or (16,)))
    if "memory" in parts:
        bench_memory(args.elements)


if __name__ == "__main__":
    main()
