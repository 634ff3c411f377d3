"""Protocol fuzzing: random and mutated frames never stop the server from serving others.

Valid requests (multibulk and inline, transactions, streams, hashes) are mutated (bytes
flipped, inserted, dropped, lengths replaced by huge, negative or malformed numbers, frames
cut or repeated, RESP3 types where requests have none) or replaced by random bytes, and sent
in random chunks over many connections at once, some of them left half-sent. After every
round a canary connection that arrived first must still be answered, and so must a new one.
The run is bounded by a count and a time budget (whichever ends first) and seeded, so a
failure names the seed that reproduces it.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import time
from collections.abc import Iterator

import pytest
from support.raw import RawClient, encode_command
from support.servers import ServerProcess, start_resplite

SEEDS = [
    encode_command(cmd) for cmd in (
        ("PING",), ("SET", "k", "v"), ("GET", "k"), ("HSET", "h", "f", "v", "g", "w"),
        ("XADD", "s", "*", "f", "v"), ("XRANGE", "s", "-", "+"), ("MULTI",), ("EXEC",),
        ("INCRBY", "n", "5"), ("MGET", "k", "h", "s"), ("CLIENT", "SETNAME", "x"),
        ("HELLO", "3"), ("AUTH", "nobody", "pw"), ("ECHO", "x" * 300), ("CONFIG", "GET", "*"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"), ("SUBSTR", "k", "0", "-1"),
    )
] + [b"PING\r\n", b'SET a "x\\x41y"\r\n', b"GET a\n", b"  \r\n", b"*0\r\n", b"*-1\r\n"]
ROUNDS = 60
PER_ROUND = 12
BUDGET_S = 20.0


def _mutate(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(9)
        pos = rng.randrange(len(data) + 1)
        if choice == 0 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif choice == 1:
            data[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif choice == 2 and data:
            del data[pos:pos + rng.randint(1, 6)]
        elif choice == 3:
            number = rng.choice([b"-1", b"-5", b"0", b"99999999999", b"2147483648", b"+3",
                                 b"007", b"1e3", b"", b" 4", b"9" * 30, b"16385", b"11"])
            marker = rng.choice([b"*", b"$"])
            data[pos:pos] = marker + number + b"\r\n"
        elif choice == 4:
            data = data[:pos]
        elif choice == 5:
            data = data + data
        elif choice == 6:
            data[pos:pos] = rng.choice([b"%1\r\n", b"~2\r\n", b">1\r\n", b":1\r\n", b"+x\r\n",
                                        b"_\r\n", b",1.5\r\n", b"#t\r\n", b"\0", b"\r", b"\n",
                                        b'"', b"'", b"\\x"])
        elif choice == 7:
            data[pos:pos] = b"x" * rng.choice([100, 16385, 70_000])
        else:
            data = bytearray(rng.randbytes(rng.randint(1, 200)))
    return bytes(data)


def _send_in_chunks(rng: random.Random, sock: socket.socket, data: bytes) -> None:
    i = 0
    while i < len(data):
        step = rng.choice([1, 2, 7, 64, 4096, len(data)])
        try:
            sock.sendall(data[i:i + step])
        except OSError:
            return  # the server closed this one (a protocol error): expected
        i += step


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[ServerProcess]:
    # Its own server: fuzzed frames may change settings or flush data.
    server = start_resplite("--requirepass", "", "--maxclients", "1000")
    yield server
    server.stop()


def test_random_and_mutated_frames_never_stop_the_server(fuzz_server: ServerProcess) -> None:
    seed = int(os.environ.get("RESPLITE_FUZZ_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    host, port = fuzz_server.host, fuzz_server.port
    canary = RawClient(host, port)
    assert canary.call("PING") == b"+PONG\r\n"
    deadline = time.monotonic() + BUDGET_S
    sent = 0
    for round_no in range(ROUNDS):
        if time.monotonic() > deadline:
            break
        socks = []
        for _ in range(PER_ROUND):
            sock = socket.create_connection((host, port), timeout=5)
            frames = [_mutate(rng, rng.choice(SEEDS)) for _ in range(rng.randint(1, 4))]
            _send_in_chunks(rng, sock, b"".join(frames))
            socks.append(sock)
            sent += 1
        # Read whatever came back without waiting for it, then close (some half-sent).
        for sock in socks:
            sock.setblocking(False)
            with contextlib.suppress(OSError):
                sock.recv(1 << 20)
            sock.close()
        where = f"seed {seed}, round {round_no}"
        assert canary.call("PING") == b"+PONG\r\n", where
        fresh = RawClient(host, port)
        assert fresh.call("ECHO", "alive") == b"$5\r\nalive\r\n", where
        fresh.close()
    assert sent > 0
    info = canary.call("INFO", "stats")
    assert b"total_connections_received" in info
    canary.close()
