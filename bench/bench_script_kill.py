"""``python -m bench.bench_script_kill``: how soon SCRIPT KILL ends a busy script.

Both servers run with ``busy-reply-threshold 100``. A client sends a script; another
PINGs until it is answered ``-BUSY``, sends SCRIPT KILL and times how long the script's
client then waits for its reply (the kill's error). Two scripts:

* ``loop``: ``while true do end``, busy in its own code (the same on both servers);
* ``huge reply``: a script that makes in a moment a table of ten million strings (the
  same 1,000-element row ten thousand times) and returns it. Redis writes a script's value
  as its reply in C, serving nobody meanwhile, so it never goes busy there and SCRIPT KILL
  cannot reach it: its column is how long it held the other client's PING instead.
  resplite writes it under the script's count hook, so it goes busy and the kill ends the
  writing.

Printed: the median and worst wait of ``--rounds`` rounds, in milliseconds.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time

import hiredis

from bench.common import start

SCRIPTS = {
    "loop": "while true do end",
    "huge reply": ("local row = {} for i = 1, 1000 do row[i] = 'v' .. i end "
                   "local t = {} for i = 1, 10000 do t[i] = row end return t"),
}


def _encode(*args: str) -> bytes:
    items = [a.encode() for a in args]
    return b"*%d\r\n" % len(items) + b"".join(b"$%d\r\n%s\r\n" % (len(i), i) for i in items)


class _Conn:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = hiredis.Reader()

    def send(self, *args: str) -> None:
        self.sock.sendall(_encode(*args))

    def reply(self) -> object:
        while True:
            reply = self.reader.gets()
            if reply is not False:
                return reply
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.reader.feed(chunk)

    def call(self, *args: str) -> object:
        self.send(*args)
        return self.reply()

    def close(self) -> None:
        self.sock.close()


def _busy(reply: object) -> bool:
    return isinstance(reply, hiredis.ReplyError) and str(reply).startswith("BUSY")


def one_round(port: int, script: str) -> tuple[float, bool]:
    """(seconds the script's client waited after the kill, or, when the server never went
    busy, how long it held a PING; whether the script was killed)."""
    runner, other = _Conn(port), _Conn(port)
    try:
        runner.send("EVAL", script, "0")
        while True:
            sent = time.perf_counter()
            # A server that writes the reply without serving anyone answers this PING
            # only once the reply is written.
            pong = other.call("PING")
            held = time.perf_counter() - sent
            if _busy(pong):
                break
            if held > 0.2:
                return held, False
            time.sleep(0.005)
        if other.call("SCRIPT", "KILL") != b"OK":
            raise RuntimeError("SCRIPT KILL refused")
        killed_at = time.perf_counter()
        reply = runner.reply()
        waited = time.perf_counter() - killed_at
        if not isinstance(reply, hiredis.ReplyError):
            raise RuntimeError("the killed script answered data")
        return waited, True
    finally:
        runner.close()
        other.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-r", "--rounds", type=int, default=5)
    args = parser.parse_args()
    results: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for kind in ("redis", "resplite"):
        with start(kind, "--busy-reply-threshold", "100") as server:
            for name, script in SCRIPTS.items():
                results[(kind, name)] = [one_round(server.port, script)
                                         for _ in range(args.rounds)]
    print(f"{'':14}{'resplite':>34}{'redis':>34}")
    for name in SCRIPTS:
        cells = []
        for kind in ("resplite", "redis"):
            runs = results[(kind, name)]
            waits = [w * 1e3 for w, _ in runs]
            what = "kill -> error" if all(k for _, k in runs) else "PING held"
            cells.append(f"{what} {statistics.median(waits):8.1f} / {max(waits):8.1f}")
        print(f"{name:14}{cells[0]:>34}{cells[1]:>34}   ms (median / worst)")


if __name__ == "__main__":
    main()
