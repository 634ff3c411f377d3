"""``python -m bench.bench_sets``: set figures of resplite side by side with Redis.

Two measurements, each on both servers (started fresh, pinned to their own core), printed
with the ratio resplite / Redis:

1. Commands through redis-benchmark (``-c 50``, ``-P 1`` and ``-P 16``), with SET run the
   same way as the baseline for what the machine allows: SADD of one member to a small set
   (a listpack: the member is always there after the first call), SADD of random members
   to a set that grows to 100,000 (a hashtable), SISMEMBER against it, and SPOP draining
   a filled set. Requests per second (best round) and the server's CPU time per request
   (median round); the line "x of SET" divides each command's ratio by SET's ratio, which
   is the figure to hold steady while the machine's noise moves both.
2. Memory per member: the growth of the server's resident set while 1 million members of 8
   bytes (``00000000`` .. ``00999999``, strings to both servers since they have leading
   zeros) are added to one set, divided by the number of members.

Options shrink or grow the runs (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.bench_streams import Conn, print_table
from bench.common import cpu_seconds, redis_benchmark, rss_bytes, start

RANDOM_RANGE = 100_000


def _tests() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(label, command, extra redis-benchmark options)."""
    rand = ("-r", str(RANDOM_RANGE))
    return [
        ("SET (baseline)", ("SET", "bench:key", "value123"), ()),
        ("SADD one member", ("SADD", "bench:small", "member123"), ()),
        ("SADD random", ("SADD", "bench:big", "m:__rand_int__"), rand),
        ("SISMEMBER random", ("SISMEMBER", "bench:big", "m:__rand_int__"), rand),
        ("SPOP", ("SPOP", "bench:big"), ()),
    ]


def _prepare(port: int, label: str) -> None:
    """SPOP drains a set that the previous SADD runs filled; refill it so no run pops from
    an empty set."""
    if label == "SPOP":
        conn = Conn(port)
        try:
            for start_at in range(0, RANDOM_RANGE * 4, 10_000):
                conn.call("SADD", "bench:big",
                          *[f"p:{i}" for i in range(start_at, start_at + 10_000)])
        finally:
            conn.close()


def bench_commands(requests: int, rounds: int, pipelines: tuple[int, ...]) -> None:
    rps: dict[tuple[str, str, int], list[float]] = {}
    cpu: dict[tuple[str, str, int], list[float]] = {}
    tests = _tests()
    with start("redis") as redis, start("resplite") as ours:
        for pipeline in pipelines:
            n = requests * (4 if pipeline > 1 else 1)
            for i in range(rounds):
                for server in (redis, ours) if i % 2 == 0 else (ours, redis):
                    for label, command, extra in tests:
                        _prepare(server.port, label)
                        before = cpu_seconds(server.pid)
                        figures = redis_benchmark(server.port, "", requests=n,
                                                  pipeline=pipeline, extra=(*extra, *command))
                        used = cpu_seconds(server.pid) - before
                        key = (server.name, label, pipeline)
                        rps.setdefault(key, []).append(max(figures.values()))
                        cpu.setdefault(key, []).append(used * 1e6 / n)
    for pipeline in pipelines:
        best = {k: max(v) for k, v in rps.items()}
        print_table(f"redis-benchmark -c 50 -P {pipeline}: requests/s (best of {rounds})",
                    [(label, best[("resplite", label, pipeline)], best[("redis", label, pipeline)])
                     for label, _, _ in tests])
        base = best[("resplite", tests[0][0], pipeline)] / best[("redis", tests[0][0], pipeline)]
        for label, _, _ in tests[1:]:
            ratio = best[("resplite", label, pipeline)] / best[("redis", label, pipeline)]
            print(f"{label + ' x of SET':40} {ratio / base:>7.2f}")
        print_table(f"redis-benchmark -c 50 -P {pipeline}: server CPU µs per request "
                    f"(median of {rounds})",
                    [(label, statistics.median(cpu[("resplite", label, pipeline)]),
                      statistics.median(cpu[("redis", label, pipeline)]))
                     for label, _, _ in tests], unit="µs", digits=2)


def fill(port: int, key: str, count: int, batch: int = 1000) -> None:
    """Add ``count`` members of 8 bytes, ``batch`` per SADD, pipelined 10 commands deep."""
    conn = Conn(port)
    try:
        done = 0
        while done < count:
            commands: list[list[bytes | str | int]] = []
            for _ in range(10):
                n = min(batch, count - done)
                if n <= 0:
                    break
                commands.append(["SADD", key, *[f"{done + i:08d}" for i in range(n)]])
                done += n
            conn.pipeline(commands)
    finally:
        conn.close()


def bench_memory(members: int) -> None:
    per_member = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            conn = Conn(server.port)
            conn.call("SADD", "warmup", "a", "1")  # code paths loaded before measuring
            conn.call("DEL", "warmup")
            time.sleep(0.2)
            before = rss_bytes(server.pid)
            fill(server.port, "mem", members)
            time.sleep(0.2)
            after = rss_bytes(server.pid)
            assert conn.call("SCARD", "mem") == members
            encoding = conn.call("OBJECT", "ENCODING", "mem")
            conn.close()
            per_member[kind] = (after - before) / members
    print_table(f"Memory: resident-set growth per member ({members:,} members of 8 bytes, "
                f"{encoding!r})",
                [("bytes/member", per_member["resplite"], per_member["redis"])],
                unit="B", digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--requests", type=int, default=100_000,
                        help="requests per unpipelined run (pipelined runs send 4x)")
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("-P", "--pipeline", type=int, action="append",
                        help="pipeline depths to run (default: 1 and 16)")
    parser.add_argument("--memory-members", type=int, default=1_000_000)
    parser.add_argument("--only", choices=("commands", "memory"), action="append",
                        help="run only these parts")
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.rounds, args.memory_members = 20_000, 1, 50_000
    parts = args.only or ["commands", "memory"]
    if "commands" in parts:
        bench_commands(args.requests, args.rounds, tuple(args.pipeline or (1, 16)))
    if "memory" in parts:
        bench_memory(args.memory_members)


if __name__ == "__main__":
    main()
