"""``python -m bench`` (``make bench``): what a request costs resplite, side by side with Redis.

One run starts a real ``redis-server`` and resplite (each pinned to its own core, the
clients on the other; see :mod:`bench.common`) and measures both, in alternating rounds
(which server goes first alternates), one command at a time:

1. **Throughput** at ``-c 50`` with ``-P 1`` and ``-P 16``, for PING, SET, GET, INCR, LPUSH,
   RPOP, SADD, HSET, ZADD, XADD, XADD ``MAXLEN ~ 100000``, XREADGROUP+XACK, EVALSHA of a
   one-call script and PUBLISH to one subscriber. Two figures per command and server:

   * the server's CPU time per request in microseconds (user + system of all its threads,
     read from ``/proc``'s clock before and after the run), the median round. It hardly
     depends on what else the machine is doing: the figure to trust on a busy machine;
   * requests per second, the best round (other work on the machine only ever lowers it).

2. **Latency** of one unpipelined client: the p50 and p99 in microseconds, the median
   round of each. A Python client (:func:`bench.clients.timed_calls`, hiredis parsing) sends
   the same command lines, each once the previous reply is parsed, timed from the send to
   the reply parsed; the client's own few microseconds are in both servers' figures alike.
   (redis-benchmark's ``-c 1 --precision 3`` reports latencies in 8 µs steps at this scale,
   its histogram's smallest unit: too coarse to tell the two servers apart.)

3. **Start** (``startup``): process start to first PONG of ``resplite-server`` and
   ``redis-server`` (``--save "" --appendonly no`` in an empty folder, polled with a PING
   every 2 ms, as :mod:`bench.bench_startup` does), wall-clock and CPU milliseconds, medians.

Every table has a ratio column, resplite / Redis, as :func:`bench.common.print_table` has
always printed it: for requests per second above 1 means resplite is faster; for CPU time,
latency and start time (costs) it is how many times Redis's cost resplite pays, so there
lower is better.

How each command is driven:

* redis-benchmark ``-t`` tests: PING (``PING_MBULK``), SET, GET, INCR, LPUSH, RPOP, SADD,
  HSET, ZADD, with ``-r KEYSPACE`` (keys and members ``...:__rand_int__``). GET reads keys
  that exist: the keyspace is written with MSET first. RPOP pops from a list filled with as
  many elements as the run pops.
* redis-benchmark with a command line: ``XADD bench:stream * field xxx`` (the stream
  deleted before each run), ``XADD bench:capped MAXLEN ~ 100000 * field xxx`` (the stream
  filled to 100000 entries first, so every run trims), ``EVALSHA <sha> 1
  counter:__rand_int__`` of ``return redis.call('incr', KEYS[1])`` (loaded with SCRIPT
  LOAD), ``PUBLISH bench:channel xxx`` with one SUBSCRIBEd connection kept open and read
  on the client core (the run ends when the subscriber has every message).
* XREADGROUP+XACK: :func:`bench.clients.consumer_cycles`, 50 connections (one consumer
  each) that send ``-P`` ``XREADGROUP ... COUNT 1 STREAMS s >`` at once, then one ``XACK``
  per entry delivered. Its figures are per *cycle* (one entry read and acknowledged, two
  commands), and a run makes ``-n`` / 2 cycles (so ``-n`` commands) from a stream filled
  with that many entries first. The client is Python (hiredis parses the replies): its
  requests per second are bounded by the client as well, the CPU figure is the server's
  own; its latency includes the client's own time, for both servers alike.

Preparation (filling, SCRIPT LOAD, subscribing) happens before a run's CPU reading starts.
The header says which build ran: ``resplite_build`` from ``INFO server`` where the server
reports one, else ``pure``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import statistics
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.bench_startup import command_line_start, resplite_server_argv, side_by_side
from bench.cases import CASES, CHANNEL, GROUP_STREAM, NAMES, Case
from bench.clients import (
    Client,
    Subscriber,
    consumer_cycles,
    encode,
    message_size,
    pinned_to,
    timed_calls,
    total_cycles,
)
from bench.common import CLIENT_CPU, Server, cpu_seconds, redis_benchmark_csv, start


@dataclass
class Context:
    """The run's keyspace, and which once-only preparations each server has had."""

    keyspace: int
    done: set[tuple[int, str]] = field(default_factory=set)

    def prepare(self, case: Case, server: Server, requests: int) -> None:
        if case.setup is None:
            return
        if case.once:
            if (server.port, case.name) in self.done:
                return
            self.done.add((server.port, case.name))
        with Client(server.port) as client:
            client.pipeline(case.setup(requests, self.keyspace), chunk=100)


@dataclass
class Sample:
    rps: float
    cpu_us: float
    p50_us: float = float("nan")
    p99_us: float = float("nan")


def _consumer_run(case: Case, server: Server, ctx: Context, requests: int, clients: int,
                  pipeline: int, latency: bool) -> Sample:
    cycles = total_cycles(max(1, requests // 2), clients, pipeline)
    ctx.prepare(case, server, cycles)
    times: list[float] | None = [] if latency else None
    before = cpu_seconds(server.pid)
    with pinned_to(CLIENT_CPU):
        elapsed = consumer_cycles(server.port, GROUP_STREAM, b"g", cycles=cycles,
                                  clients=clients, pipeline=pipeline, latencies=times)
    used = cpu_seconds(server.pid) - before
    sample = Sample(cycles / elapsed, used * 1e6 / cycles)
    return _with_quantiles(sample, times) if times else sample


def measure(case: Case, server: Server, ctx: Context, *, requests: int, clients: int,
            pipeline: int) -> Sample:
    """One redis-benchmark run of ``case`` against ``server`` (the consumer-group loop for
    XREADGROUP+XACK): requests/s and server CPU µs per request (per cycle)."""
    if case.name == "XREADGROUP":
        return _consumer_run(case, server, ctx, requests, clients, pipeline, latency=False)
    ctx.prepare(case, server, requests)
    with _subscribed(case, server) as wait:
        before = cpu_seconds(server.pid)
        rows = redis_benchmark_csv(server.port, case.tests, requests=requests,
                                   clients=clients, pipeline=pipeline,
                                   extra=("-r", str(ctx.keyspace)),
                                   command=() if case.tests else case.line)
        wait(requests)
        used = cpu_seconds(server.pid) - before
    figures = rows.get(case.report) if case.report else next(iter(rows.values()), None)
    if figures is None:
        raise RuntimeError(f"redis-benchmark reported no figures for {case.label}: {rows}")
    return Sample(figures["rps"], used * 1e6 / requests)


def measure_latency(case: Case, server: Server, ctx: Context, requests: int) -> Sample:
    """One client, unpipelined: each request sent once the previous reply is read, timed
    from its send to its reply parsed; the p50 and p99 (and the server's CPU per request)."""
    if case.name == "XREADGROUP":
        return _consumer_run(case, server, ctx, requests * 2, 1, 1, latency=True)
    ctx.prepare(case, server, requests)
    rand = random.Random(requests)
    batch = [encode(*(arg.replace("__rand_int__", f"{rand.randrange(ctx.keyspace):012d}")
                      for arg in case.line)) for _ in range(requests)]
    with _subscribed(case, server) as wait:
        before = cpu_seconds(server.pid)
        with pinned_to(CLIENT_CPU):
            times = timed_calls(server.port, batch)
        wait(requests)
        used = cpu_seconds(server.pid) - before
    return _with_quantiles(Sample(requests / sum(times), used * 1e6 / requests), times)


def _with_quantiles(sample: Sample, times: list[float]) -> Sample:
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    sample.p50_us, sample.p99_us = cuts[49] * 1e6, cuts[98] * 1e6
    return sample


@contextlib.contextmanager
def _subscribed(case: Case, server: Server) -> Iterator[Callable[[int], None]]:
    """For PUBLISH, a subscriber reading on the client core; yields a function that waits
    until it has read a number of messages (the deliveries are the server's work too)."""
    if case.name != "PUBLISH":
        yield lambda count: None
        return
    subscriber = Subscriber(server.port, CHANNEL, CLIENT_CPU)
    subscriber.start()
    size = message_size(CHANNEL, b"xxx")
    try:
        yield lambda count: subscriber.wait_for(count * size)
    finally:
        subscriber.close()


def server_build(server: Server) -> str:
    """``resplite_build`` from INFO server (``compiled`` or ``pure``); ``pure`` where the
    server does not report one."""
    with Client(server.port) as client:
        info = client.call("INFO", "server").decode()
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    return fields.get("resplite_build", "pure").strip()


def redis_version(server: Server) -> str:
    with Client(server.port) as client:
        info = client.call("INFO", "server").decode()
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    return fields.get("redis_version", "?").strip()


def commit() -> str:
    here = Path(__file__).resolve().parent.parent
    if shutil.which("git") is None:
        return "unknown"
    done = subprocess.run(["git", "-C", str(here), "describe", "--always", "--dirty"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


Pair = tuple[float, float]  # (resplite, redis)


def print_side_by_side(title: str, groups: list[tuple[str, int]],
                       rows: list[tuple[str, list[Pair]]]) -> None:
    """A table of ``rows`` (label, one (resplite, redis) pair per group), each group printed
    as resplite, redis and their ratio resplite / Redis, with ``digits`` decimals."""
    width = 11 + 11 + 7
    print(f"\n{title}")
    print(f"{'':26}" + "".join(f"   {name:^{width}}" for name, _ in groups))
    print(f"{'command':26}" + "   ".join(
        [""] + [f"{'resplite':>11}{'redis':>11}{'ratio':>7}" for _ in groups]))
    for label, pairs in rows:
        cells = []
        for (ours, ref), (_, digits) in zip(pairs, groups, strict=True):
            ratio = ours / ref if ref else float("nan")
            cells.append(f"{ours:>11,.{digits}f}{ref:>11,.{digits}f}{ratio:>7.2f}")
        print(f"{label:26}" + "   ".join(["", *cells]))


def _alternating(redis: Server, ours: Server, i: int) -> tuple[Server, Server]:
    return (redis, ours) if i % 2 == 0 else (ours, redis)


def run(names: tuple[str, ...], *, requests: int, rounds: int, pipelines: tuple[int, ...],
        keyspace: int, latency_requests: int, startup_runs: int) -> None:
    cases = [case for case in CASES if case.name in names]
    ctx = Context(keyspace)
    load_before = os.getloadavg()
    throughput: dict[tuple[str, str, int], list[Sample]] = {}
    latency: dict[tuple[str, str], list[Sample]] = {}
    with start("redis") as redis, start("resplite") as ours:
        build, version = server_build(ours), redis_version(redis)
        for pipeline in pipelines:
            n = requests * (4 if pipeline > 1 else 1)
            for i in range(rounds):
                for case in cases:
                    for server in _alternating(redis, ours, i):
                        throughput.setdefault((server.name, case.name, pipeline), []).append(
                            measure(case, server, ctx, requests=n, clients=50,
                                    pipeline=pipeline))
        for i in range(rounds):
            for case in cases:
                for server in _alternating(redis, ours, i):
                    latency.setdefault((server.name, case.name), []).append(
                        measure_latency(case, server, ctx, latency_requests))
    starts: tuple[list[tuple[float, float]], list[tuple[float, float]]] | None = None
    if "startup" in names:
        redis_exe = shutil.which("redis-server")
        assert redis_exe is not None  # start("redis") above has found it
        quiet = ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
        argv = resplite_server_argv()
        starts = side_by_side(startup_runs,
                              lambda: command_line_start([*argv, *quiet]),
                              lambda: command_line_start([redis_exe, *quiet]))
    load_after = os.getloadavg()

    print(f"resplite {commit()}, build: {build}; redis-server {version}; "
          f"{os.cpu_count()} cores")
    print(f"load average (1, 5, 15 min): {'/'.join(f'{x:.2f}' for x in load_before)} before, "
          f"{'/'.join(f'{x:.2f}' for x in load_after)} after")
    print("ratio = resplite / Redis: for req/s higher is better, for costs (CPU µs, latency,"
          " start) lower is better")
    for pipeline in pipelines:
        n = requests * (4 if pipeline > 1 else 1)
        rows = []
        for case in cases:
            mine, ref = (throughput[(name, case.name, pipeline)]
                         for name in ("resplite", "redis"))
            rows.append((case.label, [
                (statistics.median(s.cpu_us for s in mine),
                 statistics.median(s.cpu_us for s in ref)),
                (max(s.rps for s in mine), max(s.rps for s in ref))]))
        print_side_by_side(
            f"redis-benchmark -c 50 -P {pipeline}, {n:,} requests, {rounds} round(s)",
            [("server CPU µs/request (median)", 2), ("requests/s (best)", 0)], rows)
    if cases:
        rows = []
        for case in cases:
            mine, ref = (latency[(name, case.name)] for name in ("resplite", "redis"))
            rows.append((case.label, [
                (statistics.median(s.p50_us for s in mine),
                 statistics.median(s.p50_us for s in ref)),
                (statistics.median(s.p99_us for s in mine),
                 statistics.median(s.p99_us for s in ref))]))
        print_side_by_side(
            f"one client, unpipelined (-c 1 -P 1), {latency_requests:,} requests: latency µs, "
            f"median of {rounds} round(s)",
            [("p50 µs", 1), ("p99 µs", 1)], rows)
    if starts is not None:
        mine_s, ref_s = starts
        print_side_by_side(
            f"process start to first PONG, median of {startup_runs} start(s)",
            [("wall ms", 1), ("CPU ms", 1)],
            [("resplite-server / redis-server", [
                (statistics.median(w for w, _ in mine_s) * 1000,
                 statistics.median(w for w, _ in ref_s) * 1000),
                (statistics.median(c for _, c in mine_s) * 1000,
                 statistics.median(c for _, c in ref_s) * 1000)])])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="Names for --only: " + " ".join((*NAMES, "startup")) + ". The module's "
               "docstring (python -c 'import bench.__main__ as m; help(m)') says how each "
               "command is driven.")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 2000 requests, one round, one start")
    parser.add_argument("--only", nargs="+", metavar="CMD", type=str.upper,
                        help="measure only these (case-insensitive; default: all, and the start)")
    parser.add_argument("-n", "--requests", type=int,
                        help="requests per unpipelined run; pipelined runs send 4 times more "
                             "(default 50000)")
    parser.add_argument("-r", "--rounds", type=int, help="rounds per figure (default 3)")
    parser.add_argument("-P", "--pipeline", type=int, action="append",
                        help="a pipeline depth to run, may repeat (default: 1 and 16)")
    parser.add_argument("--keyspace", type=int, default=100_000,
                        help="redis-benchmark's -r: keys and members ...:__rand_int__ drawn "
                             "from this many (default 100000)")
    parser.add_argument("--latency-requests", type=int,
                        help="requests per latency run (default: -n / 10, at least 1000)")
    parser.add_argument("--startup-runs", type=int, help="starts of each server (default 10)")
    args = parser.parse_args(argv)
    names = (*NAMES, "STARTUP") if args.only is None else tuple(args.only)
    unknown = sorted(set(names) - {*NAMES, "STARTUP"})
    if unknown:
        parser.error(f"unknown --only name(s) {' '.join(unknown)}; choose from "
                     + " ".join((*NAMES, "startup")))
    names = tuple("startup" if name == "STARTUP" else name for name in names)
    requests = args.requests or (2000 if args.quick else 50_000)
    run(names, requests=requests, rounds=args.rounds or (1 if args.quick else 3),
        pipelines=tuple(args.pipeline or (1, 16)), keyspace=args.keyspace,
        latency_requests=args.latency_requests or max(1000, requests // 10),
        startup_runs=args.startup_runs or (1 if args.quick else 10))


if __name__ == "__main__":
    main()
