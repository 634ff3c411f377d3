"""``python -m bench.bench_fairness``: how long one client's large request stalls the others.

A *canary* client sends PING every 10 ms on its own connection and records how long each
answer took. Meanwhile another client sends one large piece of work; the stall is the
longest canary round trip seen while that work was in progress (from the first byte sent
to the last byte of its reply read). Each case runs on Redis and on resplite, started
fresh and pinned to the server core (:mod:`bench.common`), and the table prints the ratio
resplite / Redis:

* ``args``: one request with 3 million arguments (``DEL`` of keys that do not exist by
  default, ``--args-command`` picks another), so the cost is in framing the request and
  walking its arguments;
* ``xrange``: ``XRANGE`` over a stream of 1 million entries (two fields, 8-byte values);
* ``xrevrange``: ``XREVRANGE`` over the same stream;
* ``xread``: ``XREAD COUNT 1000000 STREAMS <key> 0`` over the same stream;
* ``xrange-pipeline``: 500 pipelined ``XRANGE`` calls over a stream of 20 thousand entries;
* ``get-big``: one read of 500 pipelined ``GET`` of a 1 MB value, with the server's peak
  resident memory growth while it answers (the replies it holds at once) next to the
  stall;
* ``xreadgroup``: ``XREADGROUP GROUP fresh c STREAMS <key> >`` over the 1M-entry stream
  (the group made anew before each round: every entry delivered and made pending);
* ``xreadgroup-history``: ``XREADGROUP ... STREAMS <key> 0``, a consumer's own 1M pending
  entries;
* ``xpending``: ``XPENDING <key> pel - + 2000000`` over those 1M pending entries;
* ``script-ints``, ``script-strings``: ``EVAL`` of a script returning a table of 1M
  integers, or of 1M short strings it makes (that making is in the figure too);
* ``lrange-pipeline``: hiredis's throughput test, 10,000 pipelined ``LRANGE 0 499`` of a
  500-element list.

Printed for each: the worst and the 99th-percentile canary round trip during the work, the
time to the work's last reply byte, the server's CPU time for it (read from the process's
CPU clock: the steady figure on a busy machine) and its resident memory growth. The
issue's targets: the 3M-argument stall within 5 times Redis's, the 1M-entry XRANGE within
3 times; XREADGROUP ``>`` and XPENDING over 1M entries within 1.5 times; a 1M-element
script reply within 3 times. ``--quick`` divides the sizes by ten for a smoke run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import hiredis

from bench.common import Server, cpu_seconds, print_table, rss_bytes, start

CANARY_INTERVAL_S = 0.010


def encode(args: Iterable[bytes | str | int]) -> bytes:
    items = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class ReplyReader:
    """Reads whole RESP2 replies off a socket without decoding their contents."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.pos = 0

    def _fill(self) -> None:
        if self.pos > 1 << 20:
            del self.buf[: self.pos]
            self.pos = 0
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self) -> bytes:
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line = bytes(self.buf[self.pos : end])
                self.pos = end + 2
                return line
            self._fill()

    def integer(self) -> int:
        """Read one integer reply."""
        line = self._line()
        if line[:1] != b":":
            raise RuntimeError(line.decode())
        return int(line[1:])

    def skip(self, errors_ok: bool = False) -> None:
        """Consume one reply (nested arrays included); an error reply raises unless
        ``errors_ok``."""
        todo = 1
        while todo:
            todo -= 1
            line = self._line()
            kind = line[:1]
            if kind == b"-" and not errors_ok:
                raise RuntimeError(line[1:].decode())
            if kind == b"$":
                n = int(line[1:])
                if n >= 0:
                    while len(self.buf) - self.pos < n + 2:
                        self._fill()
                    self.pos += n + 2
            elif kind == b"*":
                todo += max(int(line[1:]), 0)


def _canary_main(port: int, stop: Any, out: Any) -> None:
    """The canary's process: PING every 10 ms until told to stop, then send the samples."""
    sock = connect(port)
    reader = ReplyReader(sock)
    samples: list[tuple[float, float]] = []
    while not stop.is_set():
        sent = time.perf_counter()
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        reader.skip(errors_ok=True)  # -BUSY while a script runs long is an answer too
        samples.append((sent, time.perf_counter() - sent))
        pause = CANARY_INTERVAL_S - (time.perf_counter() - sent)
        if pause > 0:
            time.sleep(pause)
    sock.close()
    out.send(samples)


class Canary:
    """PINGs every 10 ms from a process of its own (so that the client reading the large
    reply never holds it back); keeps (time sent, round trip) of each. ``perf_counter`` is
    the system's monotonic clock, the same in both processes."""

    def __init__(self, port: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.stop_event = ctx.Event()
        self.receive, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_canary_main, args=(port, self.stop_event, send),
                                daemon=True)
        self.samples: list[tuple[float, float]] = []

    def start(self) -> None:
        self.proc.start()

    def finish(self) -> None:
        self.stop_event.set()
        self.samples = self.receive.recv()
        self.proc.join()

    def between(self, start: float, end: float) -> list[float]:
        """The round trips of the PINGs in flight at some moment in [start, end], sorted."""
        return sorted(rtt for sent, rtt in self.samples if sent <= end and sent + rtt >= start)

    def worst_between(self, start: float, end: float) -> float:
        """The longest round trip of a PING in flight at some moment in [start, end]."""
        return max(self.between(start, end), default=0.0)

    def p99_between(self, start: float, end: float) -> float:
        """The 99th percentile of those round trips."""
        rtts = self.between(start, end)
        return rtts[min(len(rtts) - 1, len(rtts) * 99 // 100)] if rtts else 0.0


def read_replies(sock: socket.socket, count: int) -> None:
    """Read ``count`` whole replies, parsed in C (hiredis) so the client keeps up."""
    reader = hiredis.Reader()
    while count:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        reader.feed(chunk)
        while count:
            reply = reader.gets()
            if reply is False:
                break
            if isinstance(reply, hiredis.ReplyError):
                raise RuntimeError(str(reply))
            count -= 1


def timed(server: Server, request: bytes, replies: int) -> tuple[float, float, int, float]:
    """Send ``request`` from a fresh client and read ``replies`` replies; returns (when it
    started, seconds to the last reply byte, peak RSS growth of the server meanwhile, the
    server's CPU seconds meanwhile)."""
    sock = connect(server.port)
    base_rss = rss_bytes(server.pid)
    cpu_before = cpu_seconds(server.pid)
    peak = [base_rss]
    done = threading.Event()

    def watch_rss() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes(server.pid))
            time.sleep(0.002)

    watcher = threading.Thread(target=watch_rss, daemon=True)
    watcher.start()
    started = time.perf_counter()
    sender = threading.Thread(target=sock.sendall, args=(request,), daemon=True)
    sender.start()
    read_replies(sock, replies)
    ended = time.perf_counter()
    cpu = cpu_seconds(server.pid) - cpu_before
    sender.join()
    done.set()
    watcher.join()
    sock.close()
    return started, ended - started, peak[0] - base_rss, cpu


def fill_stream(port: int, key: str, count: int, batch: int = 2000) -> None:
    sock = connect(port)
    reader = ReplyReader(sock)
    done = 0
    while done < count:
        n = min(batch, count - done)
        sock.sendall(b"".join(
            encode(["XADD", key, f"{done + i + 1}-0", "f1", f"{done + i:08d}",
                    "f2", f"{(done + i) * 7 % 10**8:08d}"]) for i in range(n)))
        for _ in range(n):
            reader.skip()
        done += n
    sock.close()


def call(port: int, *args: bytes | str | int) -> None:
    """Send one command of a case's setup; its reply is read and not looked at (an
    XGROUP CREATE of a group that is there already answers BUSYGROUP)."""
    sock = connect(port)
    sock.sendall(encode(args))
    ReplyReader(sock).skip(errors_ok=True)
    sock.close()


def stream_length(port: int, key: str) -> int:
    return integer(port, "XLEN", key)


def integer(port: int, *args: bytes | str | int) -> int:
    sock = connect(port)
    sock.sendall(encode(args))
    value = ReplyReader(sock).integer()
    sock.close()
    return value


def drain(port: int, *args: bytes | str | int) -> None:
    """Send one command and read its (possibly huge) reply."""
    sock = connect(port)
    sock.sendall(encode(args))
    read_replies(sock, 1)
    sock.close()


# (name, setup before each round, the request, how many replies it has)
Case = tuple[str, Callable[[Server], None], bytes, int]


def cases(scale: int, args_command: str) -> list[Case]:
    nargs = 3_000_000 // scale
    big_args = encode([*args_command.split(), *(f"m{i:07d}" for i in range(nargs))])
    stream_big = 1_000_000 // scale
    stream_small = 20_000 // scale
    xrange_calls = 500 // scale or 1
    gets = 500 // scale or 1
    script_items = 1_000_000 // scale
    lranges = 10_000 // scale

    def no_setup(server: Server) -> None:
        return None

    def big_stream(server: Server) -> None:
        # Shared by the cases that read it: filled by the first one that runs.
        if stream_length(server.port, "fair:big") != stream_big:
            fill_stream(server.port, "fair:big", stream_big)

    def small_stream(server: Server) -> None:
        if stream_length(server.port, "fair:small") != stream_small:
            fill_stream(server.port, "fair:small", stream_small)

    def fresh_group(server: Server) -> None:
        # Each round reads the whole stream as new entries: a group made anew.
        big_stream(server)
        call(server.port, "XGROUP", "DESTROY", "fair:big", "fresh")
        call(server.port, "XGROUP", "CREATE", "fair:big", "fresh", "0")

    def all_pending(server: Server) -> None:
        # Every entry delivered to consumer c of group "pel", once.
        big_stream(server)
        call(server.port, "XGROUP", "CREATE", "fair:big", "pel", "0")
        if integer(server.port, "XGROUP", "CREATECONSUMER", "fair:big", "pel", "c"):
            drain(server.port, "XREADGROUP", "GROUP", "pel", "c", "STREAMS", "fair:big", ">")

    def small_list(server: Server) -> None:
        # hiredis's throughput test: LRANGE of a 500-element list.
        call(server.port, "DEL", "fair:list")
        call(server.port, "RPUSH", "fair:list", *["foo"] * 500)

    def big_value(server: Server) -> None:
        call(server.port, "SET", "fair:value", b"v" * (1 << 20))

    return [
        (f"args: {args_command} x {nargs:,}", no_setup, big_args, 1),
        (f"xrange: {stream_big:,} entries", big_stream,
         encode(["XRANGE", "fair:big", "-", "+"]), 1),
        (f"xrevrange: {stream_big:,} entries", big_stream,
         encode(["XREVRANGE", "fair:big", "+", "-"]), 1),
        (f"xread: COUNT {stream_big:,} over {stream_big:,}", big_stream,
         encode(["XREAD", "COUNT", stream_big, "STREAMS", "fair:big", "0"]), 1),
        (f"xrange-pipeline: {xrange_calls} x {stream_small:,}", small_stream,
         encode(["XRANGE", "fair:small", "-", "+"]) * xrange_calls, xrange_calls),
        (f"get-big: {gets} x GET 1 MB", big_value, encode(["GET", "fair:value"]) * gets, gets),
        (f"xreadgroup: > over {stream_big:,}", fresh_group,
         encode(["XREADGROUP", "GROUP", "fresh", "c", "STREAMS", "fair:big", ">"]), 1),
        (f"xreadgroup-history: 0 over {stream_big:,} pending", all_pending,
         encode(["XREADGROUP", "GROUP", "pel", "c", "STREAMS", "fair:big", "0"]), 1),
        (f"xpending: {stream_big:,} pending", all_pending,
         encode(["XPENDING", "fair:big", "pel", "-", "+", 2 * stream_big]), 1),
        (f"script-ints: a table of {script_items:,} integers", no_setup,
         encode(["EVAL", f"local t = {{}} for i = 1, {script_items} do t[i] = i end return t",
                 0]), 1),
        (f"script-strings: a table of {script_items:,} strings", no_setup,
         encode(["EVAL", f"local t = {{}} for i = 1, {script_items} do t[i] = 'v' .. i end "
                 "return t", 0]), 1),
        (f"lrange-pipeline: {lranges:,} x LRANGE 0 499", small_list,
         encode(["LRANGE", "fair:list", 0, 499]) * lranges, lranges),
    ]


def run(scale: int, rounds: int, args_command: str, only: str | None) -> None:
    prefixes = tuple(only.split(",")) if only else ("",)
    selected = [c for c in cases(scale, args_command) if c[0].startswith(prefixes)]
    # Per round: (seconds to the last byte, worst canary round trip, its p99, RSS growth,
    # server CPU seconds).
    results: dict[tuple[str, str], list[tuple[float, float, float, int, float]]] = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            for name, setup, request, replies in selected:
                setup(server)
                canary = Canary(server.port)
                canary.start()
                time.sleep(1.0)  # the canary's process starts
                windows = []
                for round_ in range(rounds):
                    if round_:
                        setup(server)
                    windows.append(timed(server, request, replies))
                time.sleep(3 * CANARY_INTERVAL_S)  # the last window's round trips end
                canary.finish()
                results[(kind, name)] = [
                    (elapsed, canary.worst_between(started, started + elapsed),
                     canary.p99_between(started, started + elapsed), grown, cpu)
                    for started, elapsed, grown, cpu in windows]
    rows_stall = []
    rows_p99 = []
    rows_time = []
    rows_cpu = []
    rows_mem = []
    for name, *_ in selected:
        ours = results[("resplite", name)]
        ref = results[("redis", name)]
        # The best round of each: other work on the machine only ever adds to a stall.
        rows_stall.append((name, min(r[1] for r in ours) * 1e3, min(r[1] for r in ref) * 1e3))
        rows_p99.append((name, min(r[2] for r in ours) * 1e3, min(r[2] for r in ref) * 1e3))
        rows_time.append((name, min(r[0] for r in ours) * 1e3, min(r[0] for r in ref) * 1e3))
        rows_cpu.append((name, min(r[4] for r in ours) * 1e3, min(r[4] for r in ref) * 1e3))
        rows_mem.append((name, min(r[3] for r in ours) / 2**20, min(r[3] for r in ref) / 2**20))
    print_table(f"Worst canary PING round trip during the work (best of {rounds})",
                rows_stall, unit="ms", digits=1)
    print_table(f"p99 of the canary's round trips during the work (best of {rounds})",
                rows_p99, unit="ms", digits=1)
    print_table(f"Time to the work's last reply byte (best of {rounds})", rows_time,
                unit="ms", digits=1)
    print_table(f"Server CPU spent on the work (best of {rounds}; steadier than times on a "
                "busy machine)", rows_cpu, unit="ms", digits=1)
    print_table("Server resident memory growth while answering", rows_mem, unit="MB",
                digits=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="sizes divided by ten")
    parser.add_argument("-r", "--rounds", type=int, default=3)
    parser.add_argument("--args-command", default="DEL",
                        help="the command (with leading arguments) the 3M arguments follow")
    parser.add_argument("--only", help="run the cases whose name starts with this (several: a,b)")
    args = parser.parse_args()
    run(10 if args.quick else 1, args.rounds, args.args_command, args.only)


if __name__ == "__main__":
    main()
