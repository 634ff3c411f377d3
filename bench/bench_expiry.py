"""``python -m bench.bench_expiry``: keys with a TTL that nobody reads again, and a canary.

Each server (Redis, then resplite; started fresh and pinned to the server core, see
:mod:`bench.common`) is loaded with ``--keys`` keys (default 1,000,000; ``--quick`` makes it
100,000) by pipelined ``SET key value PX ttl`` (``--ttl-ms``, default 1000), and nothing
reads them afterwards. From the end of the load the run records:

* how long until ``DBSIZE`` answers 0 (polled every 50 ms), counted from the end of the
  load and from the moment the last key's TTL ran out;
* the worst and the 99th percentile round trip of a *canary*, a client sending ``PING``
  every 10 ms from another thread, over the same span: how long the expire cycle keeps
  other clients waiting;
* the server's CPU time over that span (from ``/proc``, as :func:`bench.common.cpu_seconds`),
  its resident memory at the end of the load and when the keys are gone, and INFO's
  ``expired_stale_perc``, ``expired_time_cap_reached_count`` and
  ``expire_cycle_cpu_milliseconds``.

With ``--hold`` active expiry is switched off for the load (``DEBUG SET-ACTIVE-EXPIRE 0``,
both servers started with ``--enable-debug-command yes``) and switched on once every key is
past its TTL, so the run times the reclaim of all the keys at once, apart from the load;
without it the keys start expiring during the load, as they would in production.

``--redis-server`` picks another Redis binary (a Redis 8 build, say); ``--resplite-args``
passes directives to resplite (``'--active-expire-effort 10'``, say). A server that has not
reclaimed the keys ``--limit`` seconds after the load is reported with the keys it still holds.
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import threading
import time

from bench.common import Server, cpu_seconds, rss_bytes, start

CANARY_INTERVAL_S = 0.01
POLL_INTERVAL_S = 0.05
BATCH = 10_000


def encode(*args: bytes | str) -> bytes:
    items = [a if isinstance(a, bytes) else a.encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


class Link:
    """A blocking connection that reads whole replies of the simple kinds this uses."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=300)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:size], self.buf[size:]
        return data

    def reply(self) -> bytes | int:
        line = self._line()
        if line[:1] == b"$":
            data = self._exactly(int(line[1:]) + 2)
            return data[:-2]
        if line[:1] == b":":
            return int(line[1:])
        if line[:1] == b"-":
            raise RuntimeError(line.decode(errors="replace"))
        return line[1:]

    def call(self, *args: bytes | str) -> bytes | int:
        self.sock.sendall(encode(*args))
        return self.reply()

    def expect_ok(self, count: int) -> None:
        """Read ``count`` +OK replies (pipelined SETs)."""
        size = 5 * count
        data = self._exactly(size)
        if data != b"+OK\r\n" * count:
            raise RuntimeError(data[:200].decode(errors="replace"))


def info_fields(link: Link, *names: str) -> dict[str, str]:
    text = link.call("INFO", "everything")
    assert isinstance(text, bytes)
    out: dict[str, str] = {}
    for name in names:
        found = re.search(b"\r\n" + name.encode() + rb":([^\r]*)", text)
        out[name] = found[1].decode() if found else "-"
    return out


def load(link: Link, keys: int, ttl_ms: int) -> None:
    # One formatting per key: the client must not be what sets the pace of the load.
    template = encode(b"SET", b"@", b"v" * 16, b"PX", str(ttl_ms).encode())
    head, tail = template.split(b"$1\r\n@\r\n")
    head += b"$%d\r\nkey:%s\r\n"
    sent = 0
    while sent < keys:
        n = min(BATCH, keys - sent)
        link.sock.sendall(b"".join(
            head % (len(b"%d" % i) + 4, b"%d" % i) + tail for i in range(sent, sent + n)))
        link.expect_ok(n)
        sent += n


class Canary(threading.Thread):
    """PING every CANARY_INTERVAL_S until stopped; keeps every round trip."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.link = Link(port)
        self.samples: list[float] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        ping = encode("PING")
        try:
            while not self.stopping.is_set():
                started = time.perf_counter()
                self.link.sock.sendall(ping)
                self.link.reply()
                self.samples.append(time.perf_counter() - started)
                self.stopping.wait(CANARY_INTERVAL_S)
        finally:
            self.link.close()


def run_case(server: Server, keys: int, ttl_ms: int, limit_s: float,
             hold: bool) -> dict[str, float | str]:
    link = Link(server.port)
    try:
        if hold:
            link.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        load_started = time.monotonic()
        load(link, keys, ttl_ms)
        loaded = time.monotonic()
        last_expiry = loaded + ttl_ms / 1000
        rss_loaded = rss_bytes(server.pid)
        if hold:
            # Every key past its time before the cycle starts: the reclaim alone is timed.
            time.sleep(max(0.0, last_expiry + 0.1 - time.monotonic()))
        canary = Canary(server.port)
        canary.start()
        cpu_before = cpu_seconds(server.pid)
        started = time.monotonic()
        if hold:
            link.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        left = -1
        gone_at = float("nan")
        try:
            while time.monotonic() - started < limit_s:
                left = int(link.call("DBSIZE"))
                if left == 0:
                    gone_at = time.monotonic()
                    break
                time.sleep(POLL_INTERVAL_S)
        finally:
            canary.stopping.set()
            canary.join(30)
        cpu = cpu_seconds(server.pid) - cpu_before
        stats = info_fields(link, "expired_keys", "expired_stale_perc",
                            "expired_time_cap_reached_count", "expire_cycle_cpu_milliseconds")
        samples = sorted(canary.samples)
        return {
            "load_s": loaded - load_started,
            "gone_s": gone_at - started,
            "after_expiry_s": gone_at - last_expiry,
            "left": left,
            "cpu_s": cpu,
            "canary_worst_ms": samples[-1] * 1e3 if samples else float("nan"),
            "canary_p99_ms": (samples[int(len(samples) * 0.99)] * 1e3
                              if samples else float("nan")),
            "canary_median_ms": statistics.median(samples) * 1e3 if samples else float("nan"),
            "pings": len(samples),
            "rss_loaded_mb": rss_loaded / 2**20,
            "rss_after_mb": rss_bytes(server.pid) / 2**20,
            **stats,
        }
    finally:
        link.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 keys")
    parser.add_argument("--ttl-ms", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=60.0,
                        help="seconds after the load to wait for the keys to go")
    parser.add_argument("--hold", action="store_true",
                        help="switch active expiry off for the load (DEBUG SET-ACTIVE-EXPIRE 0) "
                             "and on once every key is past its TTL: times the reclaim alone")
    parser.add_argument("--only", choices=("redis", "resplite"))
    parser.add_argument("--redis-server", help="the Redis binary (default: redis-server on PATH)")
    parser.add_argument("--resplite-args", default="",
                        help="extra resplite directives, e.g. '--active-expire-effort 10'")
    args = parser.parse_args()
    keys = 100_000 if args.quick else args.keys
    rows: list[tuple[str, dict[str, float | str]]] = []
    for kind in ("redis", "resplite"):
        if args.only not in (None, kind):
            continue
        extra = ["--enable-debug-command", "yes"] if args.hold else []
        if kind == "resplite":
            extra += args.resplite_args.split()
        with start(kind, *extra, exe=args.redis_server) as server:
            rows.append((kind, run_case(server, keys, args.ttl_ms, args.limit, args.hold)))
    print(f"\n{keys:,} keys SET with PX {args.ttl_ms} (pipelined), never read again; "
          f"a canary PINGs every {CANARY_INTERVAL_S * 1e3:.0f} ms"
          + ("; active expiry held off until all are past their TTL" if args.hold else ""))
    print(f"{'server':9} {'load s':>7} {'gone s':>7} {'+ttl s':>7} {'left':>9} "
          f"{'cpu s':>6} {'canary ms: med':>14} {'p99':>6} {'worst':>6} {'pings':>6} {'RSS MB':>7} "
          f"{'after':>6} {'stale%':>6} {'capped':>6} {'cycle ms':>8}")
    for kind, r in rows:
        print(f"{kind:9} {r['load_s']:>7.2f} {r['gone_s']:>7.2f} "
              f"{r['after_expiry_s']:>7.2f} {r['left']:>9,} {r['cpu_s']:>6.2f} "
              f"{r['canary_median_ms']:>14.2f} {r['canary_p99_ms']:>6.1f} "
              f"{r['canary_worst_ms']:>6.1f} {r['pings']:>6} {r['rss_loaded_mb']:>7.0f} "
              f"{r['rss_after_mb']:>6.0f} {r['expired_stale_perc']:>6} "
              f"{r['expired_time_cap_reached_count']:>6} "
              f"{r['expire_cycle_cpu_milliseconds']:>8}")
    print("gone s: from the end of the load (--hold: from switching expiry on) until DBSIZE "
          "is 0; +ttl s: from the moment the last key's TTL ran out; cpu s: the server's "
          "CPU time over 'gone s'")


if __name__ == "__main__":
    main()
