"""``python -m bench.bench_scripting``: EVALSHA against resplite and Redis side by side.

Two scripts, loaded with SCRIPT LOAD on both servers, run through redis-benchmark at
``-c 50 -P 16`` (and ``-P 1`` with ``--pipelines 1 16``), in alternating rounds:

* one call: ``return redis.call('INCR', KEYS[1])`` -- the cost of running a script at all
  (the Lua call, KEYS/ARGV, one redis.call and its reply);
* ten calls: the same INCR ten times in a loop -- what each further redis.call costs.

Printed as in ``python -m bench``: requests per second (best round) and the server's CPU
time per request (median round), with the ratio resplite / Redis. The target for the
one-call script is a requests-per-second ratio of at least 0.25.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess

from bench.common import cpu_seconds, print_table, redis_benchmark, start

SCRIPTS = {
    "EVALSHA 1 call": "return redis.call('INCR', KEYS[1])",
    "EVALSHA 10 calls": "local v for i = 1, 10 do v = redis.call('INCR', KEYS[1]) end return v",
}


def _load(port: int, script: str) -> str:
    done = subprocess.run(["redis-cli", "-p", str(port), "SCRIPT", "LOAD", script],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def run(requests: int, rounds: int, pipelines: tuple[int, ...]) -> None:
    rps: dict[tuple[str, str, int], list[float]] = {}
    cpu_us: dict[tuple[str, str, int], list[float]] = {}
    load_before = os.getloadavg()[0]
    with start("redis") as redis, start("resplite") as ours:
        shas = {label: _load(redis.port, body) for label, body in SCRIPTS.items()}
        for label, body in SCRIPTS.items():
            assert _load(ours.port, body) == shas[label]
        for pipeline in pipelines:
            n = requests * (4 if pipeline > 1 else 1)
            for i in range(rounds):
                order = (redis, ours) if i % 2 == 0 else (ours, redis)
                for label in SCRIPTS:
                    command = ("EVALSHA", shas[label], "1", "counter")
                    for server in order:
                        before = cpu_seconds(server.pid)
                        figures = redis_benchmark(server.port, "", requests=n, pipeline=pipeline,
                                                  extra=command)
                        used = cpu_seconds(server.pid) - before
                        key = (server.name, label, pipeline)
                        rps.setdefault(key, []).append(max(figures.values(), default=0.0))
                        cpu_us.setdefault(key, []).append(used * 1e6 / n)
    print(f"load average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    for pipeline in pipelines:
        print_table(f"redis-benchmark -c 50 -P {pipeline}: requests/s (best of {rounds})",
                    [(label, max(rps[("resplite", label, pipeline)]),
                      max(rps[("redis", label, pipeline)])) for label in SCRIPTS])
        print_table(f"redis-benchmark -c 50 -P {pipeline}: server CPU µs per request "
                    f"(median of {rounds})",
                    [(label, statistics.median(cpu_us[("resplite", label, pipeline)]),
                      statistics.median(cpu_us[("redis", label, pipeline)]))
                     for label in SCRIPTS], unit="µs", digits=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pipelines", type=int, nargs="+", default=[16])
    args = parser.parse_args()
    run(args.requests, args.rounds, tuple(args.pipelines))


if __name__ == "__main__":
    main()
