"""The compat tests' pair of raw connections: one to a real redis-server, one to resplite.

XINFO STREAM replies are compared without the fields Redis 8.6 and 8.8 added (the
idempotency fields and each group's ``nacked-count``), which the 7.0 reference does not
send: the tests marked with those versions assert them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from support import normalize
from support.raw import RawClient
from support.resptree import Node, dump, parse, to_python
from support.servers import ServerProcess

Normalizer = Callable[[bytes], bytes]
InfoSections = dict[str, list[tuple[str, str]]]


STREAM_ID = re.compile(rb"\d{13}-\d+")


def loose_ids(data: bytes) -> bytes:
    """Replace millisecond stream ids (from ``*``) with a placeholder of fixed length."""
    return STREAM_ID.sub(b"<id>", data)


NEWER_XINFO_FIELDS = frozenset({
    b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked", b"iids-added",
    b"iids-duplicates", b"nacked-count",
})


def _drop_fields(node: Node) -> Node:
    """``node`` without the :data:`NEWER_XINFO_FIELDS` entries of its maps (RESP3 maps, or
    RESP2 arrays of alternating names and values)."""
    kind, payload = node
    if kind == b"%" and payload is not None:
        return kind, [(k, _drop_fields(v)) for k, v in payload if k[1] not in NEWER_XINFO_FIELDS]
    if kind == b"*" and payload is not None:
        if len(payload) % 2 == 0 and any(
            item[0] == b"$" and item[1] in NEWER_XINFO_FIELDS for item in payload[::2]
        ):
            kept: list[Node] = []
            for name, value in zip(payload[::2], payload[1::2], strict=True):
                if not (name[0] == b"$" and name[1] in NEWER_XINFO_FIELDS):
                    kept += [name, _drop_fields(value)]
            return kind, kept
        return kind, [_drop_fields(item) for item in payload]
    return node


def without_newer_xinfo_fields(data: bytes) -> bytes:
    """An XINFO STREAM reply as Redis 7.0 shapes it (errors pass through unchanged)."""
    if data[:1] not in (b"*", b"%"):
        return data
    return dump(_drop_fields(parse(data)))


def _is_xinfo_stream(args: tuple[bytes | str | int, ...]) -> bool:
    head = [a.upper() if isinstance(a, bytes) else str(a).upper().encode() for a in args[:2]]
    return head == [b"XINFO", b"STREAM"]


class Pair:
    """One connection to the reference Redis and one to resplite."""

    def __init__(self, ref: RawClient, ours: RawClient, resp: int) -> None:
        self.ref = ref
        self.ours = ours
        self.resp = resp
        # Applied by check() when it is given none (connect_extra() passes it on).
        self.normalize: Normalizer | None = None

    def both(self, *args: bytes | str | int) -> tuple[bytes, bytes]:
        return self.ref.call(*args), self.ours.call(*args)

    def check(self, *args: bytes | str | int, normalize: Normalizer | None = None) -> bytes:
        expected, got = self.both(*args)
        if normalize is None:
            normalize = self.normalize
        if normalize is None and _is_xinfo_stream(args):
            normalize = without_newer_xinfo_fields
        if normalize is not None:
            expected, got = normalize(expected), normalize(got)
        cmd = " ".join(a.decode(errors="replace") if isinstance(a, bytes) else str(a)
                       for a in args)
        assert got == expected, (
            f"RESP{self.resp} {cmd}\n redis:    {expected!r}\n resplite: {got!r}"
        )
        return got

    def check_all(self, commands: Iterable[Sequence[bytes | str | int]]) -> None:
        for cmd in commands:
            self.check(*cmd)

    def raw_both(self, data: bytes) -> tuple[bytes, bytes]:
        self.ref.send_raw(data)
        self.ours.send_raw(data)
        return self.ref.read_reply(), self.ours.read_reply()

    def info(self, *sections: str) -> tuple[InfoSections, InfoSections]:
        """INFO from both servers, as sections of fields (the reply type checked: verbatim
        text under RESP3, a bulk string under RESP2)."""
        ref, ours = self.both("INFO", *sections)
        if self.resp == 3:
            assert ref.startswith(b"=") and ours.startswith(b"=") and b"txt:" in ours[:16]
        else:
            assert ref.startswith(b"$") and ours.startswith(b"$")
        return (normalize.info_sections(normalize.verbatim_text(ref)),
                normalize.info_sections(normalize.verbatim_text(ours)))

    @contextlib.contextmanager
    def configured(self, **settings: str) -> Iterator[None]:
        """CONFIG SET on both servers for the block (``proto_max_bulk_len="1mb"``), then
        resplite's previous values set back on both, since the servers outlive the test."""
        names = [name.replace("_", "-") for name in settings]
        saved = []
        for name in names:
            value = to_python(parse(self.ours.call("CONFIG", "GET", name)))
            saved.append(value[1] if isinstance(value, list) else value[name])
        try:
            for name, value in zip(names, settings.values(), strict=True):
                self.check("CONFIG", "SET", name, value)
            yield
        finally:
            for name, value in zip(names, saved, strict=True):
                self.ref.call("CONFIG", "SET", name, value)
                self.ours.call("CONFIG", "SET", name, value)

    def connect_extra(self) -> Pair:
        """A second pair of connections to the same two servers, same protocol."""
        ref = RawClient(self.ref.sock.getpeername()[0], self.ref.sock.getpeername()[1])
        ours = RawClient(self.ours.sock.getpeername()[0], self.ours.sock.getpeername()[1])
        extra = Pair(ref, ours, self.resp)
        extra.normalize = self.normalize
        if self.resp == 3:
            ref.call("HELLO", "3")
            ours.call("HELLO", "3")
        return extra

    def close(self) -> None:
        self.ref.close()
        self.ours.close()


class PairFactory(Protocol):
    """Starts a redis-server and a resplite with the same extra arguments, as a Pair."""

    def __call__(self, *extra: str, resp: int = 2) -> Pair: ...


def open_pair(redis: ServerProcess, ours: ServerProcess, resp: int) -> Pair:
    pair = Pair(RawClient(redis.host, redis.port), RawClient(ours.host, ours.port), resp)
    if resp == 3:
        pair.ref.call("HELLO", "3")
        pair.ours.call("HELLO", "3")
    return pair
