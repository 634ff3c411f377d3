"""``python -m bench.bench_memory``: how closely ``maxmemory`` holds, side by side with Redis.

Both servers start with ``--maxmemory 100mb`` (``noeviction``, then ``allkeys-lru``), then:

1. one pipeline of 140 ``SET`` of 1 MB values is sent at once; the table shows how many
   were accepted, ``used_memory`` afterwards and the server's resident memory growth (peak
   while answering, and after), i.e. how far past the limit one pipeline gets;
2. ``FLUSHALL``, then 50 more 1 MB ``SET``: how many succeed (all of them, once memory
   follows the data) and ``used_memory`` after the flush;
3. with ``allkeys-lru``, 300 more 1 MB ``SET`` one at a time: all accepted, evicted keys,
   and ``used_memory`` and resident growth at the end.

resplite's ``used_memory`` counts the data set, client buffers and a 1 MB allowance, not
the interpreter, so its resident size sits above ``used_memory`` by a roughly constant
amount: the growth columns compare like with like.
"""

from __future__ import annotations

import argparse
import re
import socket
import threading
import time

from bench.common import Server, print_table, rss_bytes, start

VALUE = b"v" * (1 << 20)
MB = 1 << 20


def command(*args: bytes | str | int) -> bytes:
    items = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


class Client:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")

    def reply(self) -> bytes:
        line = self.file.readline()
        if line[:1] == b"$":
            n = int(line[1:-2])
            return line + (self.file.read(n + 2) if n >= 0 else b"")
        return line

    def call(self, *args: bytes | str | int) -> bytes:
        self.sock.sendall(command(*args))
        return self.reply()

    def info(self, field: str) -> int:
        text = self.call("INFO", "memory")
        found = re.search(field.encode() + rb":(\d+)", text)
        return int(found[1]) if found else 0

    def evicted(self) -> int:
        found = re.search(rb"evicted_keys:(\d+)", self.call("INFO", "stats"))
        return int(found[1]) if found else 0


def run(server: Server) -> dict[str, float]:
    client = Client(server.port)
    base = rss_bytes(server.pid)
    peak = [base]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes(server.pid))
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    sender = threading.Thread(target=client.sock.sendall, args=(b"".join(
        command("SET", f"big:{i}", VALUE) for i in range(140)),), daemon=True)
    sender.start()
    replies = [client.reply() for _ in range(140)]
    sender.join()
    done.set()
    watcher.join()
    figures = {
        "accepted of 140": replies.count(b"+OK\r\n"),
        "used_memory MB": client.info("used_memory") / MB,
        "RSS growth peak MB": (peak[0] - base) / MB,
        "RSS growth after MB": (rss_bytes(server.pid) - base) / MB,
    }
    client.call("FLUSHALL")
    figures["used after FLUSHALL MB"] = client.info("used_memory") / MB
    figures["SET ok after FLUSHALL /50"] = sum(
        client.call("SET", f"again:{i}", VALUE) == b"+OK\r\n" for i in range(50))
    client.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    before = client.evicted()
    figures["lru: SET ok /300"] = sum(
        client.call("SET", f"lru:{i}", VALUE) == b"+OK\r\n" for i in range(300))
    figures["lru: evicted"] = client.evicted() - before
    figures["lru: used_memory MB"] = client.info("used_memory") / MB
    figures["lru: RSS growth MB"] = (rss_bytes(server.pid) - base) / MB
    client.sock.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    results = {}
    for kind in ("redis", "resplite"):
        with start(kind, "--maxmemory", "100mb") as server:
            time.sleep(0.2)
            results[kind] = run(server)
    print_table("maxmemory 100mb: 140 pipelined 1 MB SETs, FLUSHALL, then allkeys-lru",
                [(name, float(results["resplite"][name]), float(results["redis"][name]))
                 for name in results["redis"]], unit="", digits=1)


if __name__ == "__main__":
    main()
