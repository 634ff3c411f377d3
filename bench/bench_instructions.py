"""``python -m bench.bench_instructions``: instructions per request of the server's Python path.

The steadiest figure there is on a busy machine: bench_hotpath's measurement (a Connection
on a fake transport, redis-benchmark's exact requests, one ``data_received`` per read of
``-P`` requests) is run under ``valgrind --tool=cachegrind`` twice, with two request counts,
and the difference of the two totals divided by the difference of the counts is what one
request costs, start-up and warm-up left out. Needs valgrind on PATH; each figure takes
about a minute.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

from bench.bench_hotpath import REQUESTS, measure

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(name: str, pipeline: int, count: int) -> int:
    """Instructions one run of ``count`` requests executes, start-up included."""
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, "-m", "bench.bench_instructions", "--run", name, str(pipeline),
         str(count)],
        capture_output=True, text=True, check=True, env=os.environ.copy())
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr}")
    return int(found.group(1).replace(",", ""))


def per_request(name: str, pipeline: int, low: int, high: int) -> float:
    return (instructions(name, pipeline, high) - instructions(name, pipeline, low)) / (
        high - low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--requests", type=int, default=32_000,
                        help="requests of the larger run beyond the smaller one")
    parser.add_argument("-P", "--pipeline", type=int, action="append",
                        help="pipeline depths (default: 1 and 16)")
    parser.add_argument("--run", nargs=3, metavar=("NAME", "PIPELINE", "COUNT"),
                        help=argparse.SUPPRESS)  # one measured run, under valgrind
    args = parser.parse_args()
    if args.run:
        name, pipeline, count = args.run
        measure(REQUESTS[name], int(pipeline), int(count))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH")
    pipelines = tuple(args.pipeline or (1, 16))
    low = 16_000
    print(f"{'':12}" + "".join(f" {f'-P {p} instr':>14}" for p in pipelines)
          + "   (per request)")
    for name in REQUESTS:
        figures = [per_request(name, p, low, low + args.requests) for p in pipelines]
        print(f"{name:12}" + "".join(f" {figure:>14,.0f}" for figure in figures))


if __name__ == "__main__":
    main()
