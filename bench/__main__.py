"""``python -m bench`` (``make bench``): PING, SET and GET against resplite and Redis.

redis-benchmark runs at ``-c 50`` with ``-P 1`` and ``-P 16`` against both servers in
alternating rounds, one test at a time, then prints every figure and the ratio
resplite / Redis:

* requests per second, the best round of each (noise from other work on a shared machine
  only ever lowers it);
* the server's CPU time per request in microseconds (user + system, read from ``/proc``
  before and after each run), the median round. Unlike requests per second it hardly
  depends on what else the machine is doing, so it is the figure to compare changes with
  on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import statistics

from bench.common import cpu_seconds, print_table, redis_benchmark, start

# redis-benchmark's -t name and the name it reports the result under.
TESTS = (("ping_mbulk", "PING_MBULK"), ("set", "SET"), ("get", "GET"))


def run(requests: int, rounds: int, pipelines: tuple[int, ...]) -> None:
    rps: dict[tuple[str, str, int], list[float]] = {}
    cpu_us: dict[tuple[str, str, int], list[float]] = {}
    load_before = os.getloadavg()[0]
    with start("redis") as redis, start("resplite") as ours:
        for pipeline in pipelines:
            n = requests * (4 if pipeline > 1 else 1)
            for i in range(rounds):
                # Alternate which server goes first, so neither always follows the other.
                order = (redis, ours) if i % 2 == 0 else (ours, redis)
                for selector, test in TESTS:
                    for server in order:
                        before = cpu_seconds(server.pid)
                        figures = redis_benchmark(server.port, selector, requests=n,
                                                  pipeline=pipeline)
                        used = cpu_seconds(server.pid) - before
                        key = (server.name, test, pipeline)
                        rps.setdefault(key, []).append(figures.get(test, 0.0))
                        cpu_us.setdefault(key, []).append(used * 1e6 / n)
    # Other work on the machine lowers requests/s far more than CPU time per request.
    print(f"load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    for pipeline in pipelines:
        print_table(f"redis-benchmark -c 50 -P {pipeline}: requests/s (best of {rounds})",
                    [(test, max(rps[("resplite", test, pipeline)]),
                      max(rps[("redis", test, pipeline)])) for _, test in TESTS])
        print_table(f"redis-benchmark -c 50 -P {pipeline}: server CPU µs per request "
                    f"(median of {rounds})",
                    [(test, statistics.median(cpu_us[("resplite", test, pipeline)]),
                      statistics.median(cpu_us[("redis", test, pipeline)]))
                     for _, test in TESTS], unit="µs", digits=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--requests", type=int, default=100_000,
                        help="requests per unpipelined run (pipelined runs send 4 times more)")
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("-P", "--pipeline", type=int, action="append",
                        help="pipeline depths to run (default: 1 and 16)")
    args = parser.parse_args()
    run(args.requests, args.rounds, tuple(args.pipeline or (1, 16)))


if __name__ == "__main__":
    main()
