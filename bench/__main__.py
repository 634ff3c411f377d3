"""``python -m bench`` (``make bench``): PING, SET and GET against resplite and Redis.

redis-benchmark runs at ``-c 50`` with ``-P 1`` and ``-P 16`` against both servers in
alternating rounds (the best round of each counts, which filters out noise from the shared
machine), then prints every figure and the ratio resplite / Redis.
"""

from __future__ import annotations

import argparse

from bench.common import print_table, redis_benchmark, start

TESTS = ("PING_MBULK", "SET", "GET")


def run(requests: int, rounds: int) -> None:
    best: dict[tuple[str, str, int], float] = {}
    with start("redis") as redis, start("resplite") as ours:
        for pipeline in (1, 16):
            n = requests * (4 if pipeline > 1 else 1)
            for _ in range(rounds):
                for server in (redis, ours):
                    figures = redis_benchmark(server.port, "ping,set,get", requests=n,
                                              pipeline=pipeline)
                    for test, rps in figures.items():
                        key = (server.name, test, pipeline)
                        best[key] = max(best.get(key, 0.0), rps)
    for pipeline in (1, 16):
        rows = [(test, best.get(("resplite", test, pipeline), 0.0),
                 best.get(("redis", test, pipeline), 0.0)) for test in TESTS]
        print_table(f"redis-benchmark -c 50 -P {pipeline} (best of {rounds} rounds)", rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--requests", type=int, default=100_000)
    parser.add_argument("-r", "--rounds", type=int, default=3)
    args = parser.parse_args()
    run(args.requests, args.rounds)


if __name__ == "__main__":
    main()
