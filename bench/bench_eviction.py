"""``python -m bench.bench_eviction``: a write storm under ``maxmemory``, side by side with Redis.

Both servers start with ``--maxmemory 50mb`` and each ``--policy`` in turn (``allkeys-lru``,
``allkeys-lfu``, ``volatile-lru``, ``allkeys-random`` by default), are filled past the limit,
then take ``redis-benchmark -t set -c 4 -P 16 -d 1024 -r 1000000`` (four pipelined writers
of SET with random keys and 1 KB values; ``volatile-lru`` writes with ``SET ... EX``, so
that every key may be evicted) while a *canary* client PINGs every 10 ms
(:class:`bench.bench_fairness.Canary`). The tables show, per policy: requests per second,
the server's CPU time per SET (the steady figure on a busy machine) and the canary's 99th
percentile round trip.

``--quick`` sends a quarter of the requests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time

from bench.bench_fairness import Canary
from bench.common import CLIENT_CPU, Server, cpu_seconds, pinned, print_table, start

POLICIES = ("allkeys-lru", "allkeys-lfu", "volatile-lru", "allkeys-random")


def storm(server: Server, policy: str, requests: int) -> tuple[float, float, float]:
    """(requests/s, server CPU µs per request, canary p99 ms) of one write storm."""
    exe = shutil.which("redis-benchmark")
    if exe is None:
        raise SystemExit("redis-benchmark is not installed (Debian package redis-tools)")
    command = (["SET", "key:__rand_int__", "x" * 1024, "EX", "100000"]
               if policy.startswith("volatile-") else ["SET", "key:__rand_int__", "x" * 1024])
    base = [exe, "-p", str(server.port), "-c", "4", "-P", "16", "-r", "1000000", "-q"]
    # Past the limit first: the storm then evicts on every write.
    subprocess.run(pinned([*base, "-n", str(80_000), *command], CLIENT_CPU),
                   capture_output=True, check=True)
    canary = Canary(server.port)
    canary.start()
    time.sleep(1.0)  # the canary's process starts
    cpu_before = cpu_seconds(server.pid)
    started = time.perf_counter()
    subprocess.run(pinned([*base, "-n", str(requests), *command], CLIENT_CPU),
                   capture_output=True, check=True)
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(server.pid) - cpu_before
    time.sleep(0.05)
    canary.finish()
    rtts = sorted(rtt for sent, rtt in canary.samples if started <= sent <= started + elapsed)
    p99 = rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))] if rtts else 0.0
    return requests / elapsed, cpu * 1e6 / requests, p99 * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a quarter of the requests")
    parser.add_argument("-n", "--requests", type=int, default=200_000)
    parser.add_argument("--policy", action="append", choices=POLICIES,
                        help="the policies to run (default: all four)")
    args = parser.parse_args()
    requests = args.requests // 4 if args.quick else args.requests
    policies = tuple(args.policy or POLICIES)
    results: dict[tuple[str, str], tuple[float, float, float]] = {}
    load = os.getloadavg()[0]
    for policy in policies:
        for kind in ("redis", "resplite"):
            with start(kind, "--maxmemory", "50mb", "--maxmemory-policy", policy) as server:
                results[(kind, policy)] = storm(server, policy, requests)
    print(f"maxmemory 50mb, {requests:,} SET of 1 KB values, 4 pipelined writers "
          f"(load average {load:.2f} before, {os.getloadavg()[0]:.2f} after)")
    for title, index, unit, digits in (("Requests per second", 0, "req/s", 0),
                                       ("Server CPU per SET", 1, "µs", 2),
                                       ("Canary PING p99 round trip", 2, "ms", 1)):
        print_table(title, [(policy, results[("resplite", policy)][index],
                             results[("redis", policy)][index]) for policy in policies],
                    unit=unit, digits=digits)


if __name__ == "__main__":
    main()
