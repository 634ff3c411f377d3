"""``python -m bench.instructions``: instructions per request, counted by cachegrind.

    python -m bench.instructions SET -n 20000 -P 16
    python -m bench.instructions XREADGROUP PUBLISH -n 5000 -P 1 --server

A count of executed instructions hardly moves with the machine's load, so it is the figure
to quote for a change to the request path. Each command (names as for ``python -m bench``:
PING SET GET INCR LPUSH RPOP SADD HSET ZADD XADD XADD-MAXLEN XREADGROUP EVALSHA PUBLISH) is
run twice under ``valgrind --tool=cachegrind --cache-sim=no``: once with ``-n`` requests and
once with ``--baseline`` requests (default ``-n`` / 10), everything else alike. The
difference of the two totals divided by the difference of the requests is the figure: it
leaves out interpreter start, imports, preparation and shutdown, and the first requests'
warm-up (in both runs).

Two ways to run the requests:

* default, the server's Python path (as ``bench.bench_hotpath`` does): a
  :class:`~resplite.server.connection.Connection` on a fake transport in one process gets
  the requests' bytes, ``-P`` requests per ``data_received`` (as a pipelined client's reads
  arrive), the replies land nowhere. It counts reading, dispatch, the command, statistics,
  encoding and the write call: no event loop, no system calls. Only resplite.
* ``--server``: the real server (``python -m resplite``) and, side by side, ``redis-server``,
  each under cachegrind, driven as ``python -m bench`` drives them (redis-benchmark at
  ``-c 50``, the consumer-group cycle, a subscriber for PUBLISH) and stopped with SIGTERM.
  It adds the event loop and the system calls' user-space side; a slowed-down server's
  timers fire a little more often in the longer run, a small error at thousands of
  requests.

The preparation both runs share (a filled keyspace, list or stream, a loaded script) is
made for ``-n`` requests in both; for XREADGROUP a request is one cycle (XREADGROUP COUNT 1
and XACK of the entry it delivered). PYTHONHASHSEED is fixed for both runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench.bench_hotpath import FakeTransport
from bench.cases import CASES, CHANNEL, GROUP_STREAM, NAMES, Case
from bench.clients import (
    Client,
    Subscriber,
    consumer_cycles,
    encode,
    message_size,
    pinned_to,
)
from bench.common import (
    CLIENT_CPU,
    SERVER_CPU,
    free_port,
    pinned,
    redis_benchmark_csv,
    server_argv,
    stop,
    wait_for_port,
)

BY_NAME = {case.name: case for case in CASES}


def requests_for(case: Case, total: int, pipeline: int, keyspace: int) -> list[bytes]:
    """``total`` requests of ``case`` (``__rand_int__`` drawn from a seeded generator) in
    reads of ``pipeline`` requests."""
    if case.name == "XREADGROUP":
        reads = encode(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS",
                       GROUP_STREAM, b">") * pipeline
        return [reads + b"".join(encode(b"XACK", GROUP_STREAM, b"g", b"1-%d" % i)
                                 for i in range(first + 1, first + pipeline + 1))
                for first in range(0, total, pipeline)]
    rand = random.Random(0)
    one = [encode(*(arg.replace("__rand_int__", f"{rand.randrange(keyspace):012d}")
                    for arg in case.line)) for _ in range(total)]
    return [b"".join(one[i:i + pipeline]) for i in range(0, total, pipeline)]


def feed(name: str, count: int, total: int, pipeline: int, keyspace: int) -> None:
    """The measured process of the default mode: prepare for ``total`` requests, build all
    ``total``, feed the first ``count`` to a Connection."""
    from resplite.commands import command_table
    from resplite.engine.config import Config
    from resplite.engine.state import ServerState
    from resplite.server import connection as module
    from resplite.server.connection import Connection
    from resplite.server.turns import UNSHARED

    # A read is handled whole: with no event loop to hand the rest of a long one to a later
    # turn, and cachegrind's slowdown making any read "long", fairness slicing is off.
    module.SLICE_NS = 1 << 62
    case = BY_NAME[name]
    state = ServerState(Config(), table=command_table())

    def connection() -> Connection:
        conn = Connection(state, state.dispatcher)
        conn.connection_made(FakeTransport())  # type: ignore[arg-type]
        # No loop to share turns with: say so once, rather than have every read look for one.
        conn.turns = UNSHARED
        return conn

    conn = connection()
    setup = case.setup(total, keyspace) if case.setup is not None else []
    for command in setup:
        conn.data_received(command)
    if name == "PUBLISH":
        connection().data_received(encode(b"SUBSCRIBE", CHANNEL))
    reads = requests_for(case, total, pipeline, keyspace)[:count // pipeline]
    client = conn.client
    assert client is not None
    before = client.commands_processed
    data_received = conn.data_received
    for chunk in reads:
        data_received(chunk)
    per_request = 2 if name == "XREADGROUP" else 1
    done = client.commands_processed - before
    if done != len(reads) * pipeline * per_request:
        raise SystemExit(f"{done} commands run of {len(reads) * pipeline * per_request}")
    if state.total_error_replies:
        raise SystemExit(f"{state.total_error_replies} error replies: the count means nothing")


def cachegrind(argv: list[str], out: Path) -> list[str]:
    return ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
            "--log-file=/dev/null", *argv]


def total_instructions(out: Path) -> int:
    """The program's total ``Ir`` from a cachegrind output file's summary line."""
    for line in out.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"no summary in {out}")


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONHASHSEED": "0",
            "PYTHONPATH": root + (os.pathsep + path if path else "")}


def path_run(name: str, count: int, total: int, pipeline: int, keyspace: int) -> int:
    """Instructions of one default-mode process feeding ``count`` requests."""
    with tempfile.TemporaryDirectory(prefix="bench-cg-") as folder:
        out = Path(folder) / "cachegrind.out"
        argv = [sys.executable, "-m", "bench.instructions", "--feed", name, "-n", str(total),
                "--count", str(count), "-P", str(pipeline), "--keyspace", str(keyspace)]
        subprocess.run(cachegrind(argv, out), env=_env(), check=True)
        return total_instructions(out)


@contextlib.contextmanager
def valgrind_server(kind: str, out: Path, workdir: str) -> Iterator[int]:
    """``kind`` (``redis`` or ``resplite``) under cachegrind on a free port; stopped with
    SIGTERM and waited for (cachegrind writes its file as the process exits)."""
    port = free_port()
    proc = subprocess.Popen(pinned(cachegrind(server_argv(kind, port, workdir), out),
                                   SERVER_CPU),
                            cwd=workdir, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, timeout=300)
        yield port
    finally:
        stop(proc, timeout=300)


def server_run(kind: str, name: str, count: int, total: int, pipeline: int,
               keyspace: int) -> int:
    """Instructions of one server process that is sent ``count`` requests."""
    case = BY_NAME[name]
    with tempfile.TemporaryDirectory(prefix="bench-cg-") as folder:
        out = Path(folder) / "cachegrind.out"
        with valgrind_server(kind, out, folder) as port:
            if case.setup is not None:
                with Client(port) as client:
                    client.pipeline(case.setup(total, keyspace), chunk=100)
            if name == "XREADGROUP":
                with pinned_to(CLIENT_CPU):
                    consumer_cycles(port, GROUP_STREAM, b"g", cycles=count,
                                    clients=min(50, count // pipeline), pipeline=pipeline)
            else:
                with contextlib.ExitStack() as stack:
                    subscriber = None
                    if name == "PUBLISH":
                        subscriber = Subscriber(port, CHANNEL, CLIENT_CPU)
                        stack.callback(subscriber.close)
                        subscriber.start()
                    redis_benchmark_csv(port, case.tests, requests=count, clients=50,
                                        pipeline=pipeline, extra=("-r", str(keyspace)),
                                        command=() if case.tests else case.line)
                    if subscriber is not None:
                        subscriber.wait_for(count * message_size(CHANNEL, b"xxx"), 600)
        return total_instructions(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="The module's docstring says what is counted and how.")
    parser.add_argument("commands", nargs="*", metavar="CMD", type=str.upper,
                        help="commands to count (default: PING SET GET); one of "
                             + " ".join(NAMES))
    parser.add_argument("-n", "--requests", type=int, default=20_000,
                        help="requests in the measured run (default 20000)")
    parser.add_argument("--baseline", type=int,
                        help="requests in the baseline run (default: -n / 10)")
    parser.add_argument("-P", "--pipeline", type=int, default=16,
                        help="requests per read (-P of redis-benchmark; default 16)")
    parser.add_argument("-r", "--keyspace", type=int, default=10_000,
                        help="keys and members ...:__rand_int__ drawn from this many "
                             "(default 10000)")
    parser.add_argument("--server", action="store_true",
                        help="count the real servers, resplite and redis-server, driven "
                             "over TCP (slower)")
    parser.add_argument("--feed", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.feed:
        feed(args.feed, args.count, args.requests, args.pipeline, args.keyspace)
        return 0
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed")
    names = args.commands or ["PING", "SET", "GET"]
    unknown = [name for name in names if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown command(s) {' '.join(unknown)}; choose from {' '.join(NAMES)}")
    pipeline = args.pipeline
    # Whole reads only, so both runs end on a read boundary.
    total = max(pipeline, args.requests // pipeline * pipeline)
    base = args.baseline if args.baseline is not None else total // 10
    base = max(pipeline, base // pipeline * pipeline)
    if base >= total:
        parser.error("the baseline run must have fewer requests than -n")
    kinds = ("resplite", "redis") if args.server else ("resplite",)
    where = "real servers, redis-benchmark -c 50" if args.server else "Python path, fake transport"
    print(f"instructions per request ({where}; -P {pipeline}; runs of {total} and {base} "
          f"requests; cachegrind)")
    header = "".join(f"{kind:>14}" for kind in kinds) + ("   ratio" if args.server else "")
    print(f"{'command':24}{header}")
    for name in names:
        figures = []
        for kind in kinds:
            counts = []
            for count in (total, base):
                if args.server:
                    counts.append(server_run(kind, name, count, total, pipeline,
                                             args.keyspace))
                else:
                    counts.append(path_run(name, count, total, pipeline, args.keyspace))
            figures.append((counts[0] - counts[1]) / (total - base))
        line = "".join(f"{figure:>14,.0f}" for figure in figures)
        if args.server:
            line += f"{figures[0] / figures[1]:>8.2f}"
        print(f"{BY_NAME[name].label:24}{line}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
