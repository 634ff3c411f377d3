"""``python -m bench.bench_hotpath``: CPU per request of the server's Python path, no sockets.

A :class:`~resplite.server.connection.Connection` on a fake transport gets the exact bytes
redis-benchmark sends for PING, SET and GET, one request per ``data_received`` (as an
unpipelined client's reads arrive) or 16 per call (``-P 16``), and the replies land in a
list. The figure is process CPU time per request, which leaves out the event loop and the
system calls and stays steady on a machine busy with other work: it measures reading,
dispatch, the command, statistics, encoding and the write call, and nothing else.
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from resplite.commands import command_table
from resplite.engine.config import Config
from resplite.engine.state import ServerState
from resplite.server.connection import Connection

REQUESTS = {
    "PING_MBULK": b"*1\r\n$4\r\nPING\r\n",
    "SET": b"*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n",
    "GET": b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n",
}


class FakeTransport:
    """Just enough of an asyncio transport for a Connection."""

    def __init__(self) -> None:
        self.written = 0

    def write(self, data: bytes) -> None:
        self.written += 1

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name in ("peername", "sockname") else default

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def measure(request: bytes, pipeline: int, count: int) -> float:
    """CPU microseconds per request for ``count`` requests in reads of ``pipeline``."""
    state = ServerState(Config(), table=command_table())
    conn = Connection(state, state.dispatcher)
    conn.connection_made(FakeTransport())  # type: ignore[arg-type]
    chunk = request * pipeline
    reads = count // pipeline
    feed = conn.data_received
    for _ in range(1000):
        feed(chunk)
    gc.collect()
    gc.freeze()
    start = time.process_time()
    for _ in range(reads):
        feed(chunk)
    used = time.process_time() - start
    gc.unfreeze()
    return used * 1e6 / (reads * pipeline)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--requests", type=int, default=200_000)
    parser.add_argument("-r", "--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'':12} {'-P 1 µs':>9} {'-P 16 µs':>9}   (min of {args.rounds} rounds)")
    for name, request in REQUESTS.items():
        figures = [min(measure(request, pipeline, args.requests) for _ in range(args.rounds))
                   for pipeline in (1, 16)]
        print(f"{name:12} {figures[0]:>9.2f} {figures[1]:>9.2f}")


if __name__ == "__main__":
    main()
