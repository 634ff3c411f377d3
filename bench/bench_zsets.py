"""``python -m bench.bench_zsets``: sorted set figures of resplite side by side with Redis.

Three measurements, each on both servers (started fresh, pinned to their own core), printed
with the ratio resplite / Redis:

1. Throughput through redis-benchmark (``-c 50 -P 16``): ZADD of random members with random
   scores into one sorted set, and ``ZRANGEBYSCORE key <random min> +inf LIMIT 0 10`` on a
   sorted set of 100 thousand members, with SET run the same way as the baseline of what
   the machine allows: requests per second (best round), server CPU time per request
   (median round), and each command's ratio over SET's ratio.
2. The O(log n) check: the server time of ZADD (an existing member, a new random score),
   ZRANK and ``ZRANGEBYSCORE LIMIT 0 10`` (read from INFO commandstats) on sorted sets of
   10 thousand and of 1 million members, and the growth between the two. Two access
   patterns: uniform over the whole set (what memory caches make of it shows on Redis too)
   and a hot thousand members (the structure's own depth).
3. Memory per member: the growth of the server's resident set while 1 million members of
   8 bytes with random scores are added, divided by the number of members.

Options shrink or grow the runs (``--quick`` for a smoke run). Nothing here needs the test
suite; the servers are started by :mod:`bench.common`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from bench.bench_streams import Conn, commandstats_usec
from bench.common import Server, cpu_seconds, print_table, redis_benchmark, rss_bytes, start

KEYSPACE = 100_000


def fill(port: int, key: str, count: int, seed: int = 1, batch: int = 1000) -> None:
    """Add ``count`` members ``%08d`` with random scores in [0, KEYSPACE)."""
    rng = random.Random(seed)
    conn = Conn(port)
    try:
        done = 0
        while done < count:
            n = min(batch, count - done)
            args: list[bytes | str | int] = ["ZADD", key]
            for i in range(done, done + n):
                args += [repr(rng.random() * KEYSPACE), f"{i:08d}"]
            conn.call(*args)
            done += n
    finally:
        conn.close()


# -- 1. throughput ---------------------------------------------------------------------------

TESTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SET (baseline)", ("SET", "key:__rand_int__", "value123")),
    ("ZADD", ("ZADD", "bench:z", "__rand_int__", "element:__rand_int__")),
    ("ZRANGEBYSCORE LIMIT 0 10", ("ZRANGEBYSCORE", "bench:seeded", "__rand_int__", "+inf",
                                  "LIMIT", "0", "10")),
)


def bench_throughput(requests: int, rounds: int, pipeline: int) -> None:
    rps: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    with start("redis") as redis, start("resplite") as ours:
        for server in (redis, ours):
            fill(server.port, "bench:seeded", KEYSPACE)
        for i in range(rounds):
            for server in (redis, ours) if i % 2 == 0 else (ours, redis):
                for name, command in TESTS:
                    before = cpu_seconds(server.pid)
                    figures = redis_benchmark(server.port, "", requests=requests,
                                              pipeline=pipeline,
                                              extra=("-r", str(KEYSPACE), *command))
                    used = cpu_seconds(server.pid) - before
                    rps.setdefault((server.name, name), []).append(max(figures.values()))
                    cpu.setdefault((server.name, name), []).append(used * 1e6 / requests)
    print_table(f"redis-benchmark -c 50 -P {pipeline} -r {KEYSPACE:,}: requests/s "
                f"(best of {rounds})",
                [(name, max(rps[("resplite", name)]), max(rps[("redis", name)]))
                 for name, _ in TESTS])
    cpu_rows = [(name, statistics.median(cpu[("resplite", name)]),
                 statistics.median(cpu[("redis", name)])) for name, _ in TESTS]
    print_table(f"redis-benchmark -c 50 -P {pipeline}: server CPU µs per request "
                f"(median of {rounds})", cpu_rows, unit="µs", digits=2)
    base_rps = max(rps[("resplite", TESTS[0][0])]) / max(rps[("redis", TESTS[0][0])])
    base_cpu = cpu_rows[0][2] / cpu_rows[0][1]
    print("\nEach command's ratio over SET's ratio (1.0: as close to Redis as SET is)")
    for name, _ in TESTS[1:]:
        ratio_rps = max(rps[("resplite", name)]) / max(rps[("redis", name)])
        row = next(r for r in cpu_rows if r[0] == name)
        ratio_cpu = row[2] / row[1]
        print(f"{name:24} requests/s {ratio_rps / base_rps:>6.2f}   "
              f"CPU per request {ratio_cpu / base_cpu:>6.2f}")


# -- 2. O(log n) ------------------------------------------------------------------------------


def _commands(kind: str, key: str, size: int, count: int, hot: bool,
              rng: random.Random) -> list[list[bytes | str | int]]:
    def member() -> str:
        return f"{rng.randrange(1000) * (size // 1000) if hot else rng.randrange(size):08d}"

    def score() -> str:
        if hot:  # a narrow band of scores: the seek lands in the same region every time
            return repr(rng.random() * 10)
        return repr(rng.random() * KEYSPACE)

    if kind == "ZADD":
        return [["ZADD", key, score(), member()] for _ in range(count)]
    if kind == "ZRANK":
        return [["ZRANK", key, member()] for _ in range(count)]
    return [["ZRANGEBYSCORE", key, score(), "+inf", "LIMIT", 0, 10] for _ in range(count)]


def usec_per_call(server: Server, key: str, size: int, calls: int, hot: bool) -> dict[str, float]:
    rng = random.Random(7)
    conn = Conn(server.port)
    out = {}
    try:
        for kind in ("ZADD", "ZRANK", "ZRANGEBYSCORE"):
            commands = _commands(kind, key, size, calls, hot, rng)
            conn.call("CONFIG", "RESETSTAT")
            for i in range(0, len(commands), 100):
                conn.pipeline(commands[i : i + 100])
            done, usec = commandstats_usec(conn, kind.lower())
            assert done == calls, (kind, done)
            out[kind] = usec / done
    finally:
        conn.close()
    return out


def bench_logn(small: int, large: int, calls: int) -> None:
    times: dict[tuple[str, int, bool], dict[str, float]] = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            for size in (small, large):
                key = f"z{size}"
                fill(server.port, key, size, batch=2000)
                for hot in (False, True):
                    times[(kind, size, hot)] = usec_per_call(server, key, size, calls, hot)
    for hot in (False, True):
        pattern = "a hot thousand members" if hot else "uniform over the set"
        rows = []
        for command in ("ZADD", "ZRANK", "ZRANGEBYSCORE"):
            for size in (small, large):
                rows.append((f"{command} {size:,}", times[("resplite", size, hot)][command],
                             times[("redis", size, hot)][command]))
        print_table(f"O(log n): server µs per call, {pattern} ({calls:,} calls each)", rows,
                    unit="µs", digits=2)
        print(f"growth {large:,} / {small:,} (resplite, redis):")
        for command in ("ZADD", "ZRANK", "ZRANGEBYSCORE"):
            ours = times[("resplite", large, hot)][command] / times[("resplite", small, hot)][
                command]
            ref = times[("redis", large, hot)][command] / times[("redis", small, hot)][command]
            verdict = "within 2x" if ours <= 2 else "beyond 2x"
            print(f"  {command:22} {ours:>6.2f} {ref:>6.2f}   {verdict}")


# -- 3. memory per member ---------------------------------------------------------------------


def bench_memory(members: int) -> None:
    per_member = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            conn = Conn(server.port)
            # Code paths and the skiplist shape loaded before measuring.
            conn.call("ZADD", "warmup", *[x for i in range(200) for x in (i, f"w{i}")])
            conn.call("DEL", "warmup")
            time.sleep(0.2)
            before = rss_bytes(server.pid)
            fill(server.port, "mem", members, batch=2000)
            time.sleep(0.2)
            after = rss_bytes(server.pid)
            assert conn.call("ZCARD", "mem") == members
            conn.close()
            per_member[kind] = (after - before) / members
    print_table(f"Memory: resident-set growth per member ({members:,} members of 8 bytes)",
                [("bytes/member", per_member["resplite"], per_member["redis"])],
                unit="B", digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--requests", type=int, default=400_000,
                        help="requests per redis-benchmark run")
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("-P", "--pipeline", type=int, default=16)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=20_000, help="calls timed per command")
    parser.add_argument("--memory-members", type=int, default=1_000_000)
    parser.add_argument("--only", choices=("throughput", "logn", "memory"), action="append",
                        help="run only these parts")
    parser.add_argument("--quick", action="store_true", help="small runs, for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.rounds = 50_000, 1
        args.small, args.large, args.calls = 1_000, 20_000, 2_000
        args.memory_members = 50_000
    parts = args.only or ["throughput", "logn", "memory"]
    if "throughput" in parts:
        bench_throughput(args.requests, args.rounds, args.pipeline)
    if "logn" in parts:
        bench_logn(args.small, args.large, args.calls)
    if "memory" in parts:
        bench_memory(args.memory_members)


if __name__ == "__main__":
    main()
