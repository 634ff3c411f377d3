"""``python -m bench.bench_aof``: write throughput with the append-only file, beside Redis.

redis-benchmark sends ``XADD bench:stream * field value`` and ``SET key:__rand_int__ value``
at ``-c 50 -P 16`` to both servers (each started fresh, pinned to its own core) with
``appendonly no``, ``appendonly yes`` + ``appendfsync everysec`` and ``appendfsync always``,
in alternating rounds; printed: requests per second (best round) and the ratio resplite /
Redis. ``--requests`` changes the count (200,000 by default; ``--quick`` runs 20,000).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import shutil
import subprocess

from bench.common import CLIENT_CPU, pinned, print_table, start

SETTINGS = (
    ("no aof", ()),
    ("everysec", ("--appendonly", "yes", "--appendfsync", "everysec")),
    ("always", ("--appendonly", "yes", "--appendfsync", "always")),
)
COMMANDS = (
    ("XADD", ("XADD", "bench:stream", "*", "field", "value")),
    ("SET", ("SET", "key:__rand_int__", "value", "-r", "100000")),
)


def _run(port: int, command: tuple[str, ...], requests: int) -> float:
    exe = shutil.which("redis-benchmark")
    if exe is None:
        raise SystemExit("redis-benchmark is not installed (Debian package redis-tools)")
    words = [w for w in command if w not in ("-r", "100000")]
    extra = ["-r", "100000"] if "-r" in command else []
    cmd = [exe, "-p", str(port), "-c", "50", "-n", str(requests), "-P", "16", "--csv",
           *extra, *words]
    out = subprocess.run(pinned(cmd, CLIENT_CPU), capture_output=True, text=True, check=True)
    for row in csv.reader(io.StringIO(out.stdout)):
        if len(row) >= 2 and row[0] != "test":
            with contextlib.suppress(ValueError):
                return float(row[1])
    return 0.0


def run(requests: int, rounds: int) -> None:
    best: dict[tuple[str, str, str], float] = {}
    for _ in range(rounds):
        for label, settings in SETTINGS:
            for kind in ("resplite", "redis"):
                with start(kind, *settings) as server:
                    for name, command in COMMANDS:
                        rps = _run(server.port, command, requests)
                        key = (kind, label, name)
                        best[key] = max(best.get(key, 0.0), rps)
    for name, _ in COMMANDS:
        print_table(f"redis-benchmark {name} -c 50 -P 16: requests/s (best of {rounds})",
                    [(label, best[("resplite", label, name)], best[("redis", label, name)])
                     for label, _ in SETTINGS])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.rounds = 20_000, 1
    run(args.requests, args.rounds)


if __name__ == "__main__":
    main()
