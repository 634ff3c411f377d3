"""Stream entry ids as ordered values, and the few id manipulations the connector needs.

A Redis stream id is ``<ms>-<seq>``, two unsigned 64-bit integers compared as a pair. The
connector never does arithmetic on ids beyond stepping to the immediate neighbour and folding an
id into a single integer (``ms * 2**64 + seq``) for interpolation when planning partitions; every
id it sends to the server is printed back in the canonical ``ms-seq`` form.
"""

from __future__ import annotations

from typing import NamedTuple

U64_MAX = (1 << 64) - 1


class StreamId(NamedTuple):
    """An entry id; tuple ordering is stream ordering."""

    ms: int
    seq: int

    @classmethod
    def parse(cls, text: str | bytes, *, default_seq: int = 0) -> StreamId:
        """Parse ``ms-seq`` or ``ms`` (then ``default_seq`` fills in, as XRANGE does)."""
        raw = text.decode() if isinstance(text, bytes) else text
        ms_text, sep, seq_text = raw.partition("-")
        try:
            ms = int(ms_text)
            seq = int(seq_text) if sep else default_seq
        except ValueError:
            raise ValueError(f"invalid stream id {raw!r}") from None
        if not (0 <= ms <= U64_MAX and 0 <= seq <= U64_MAX) or ms_text.startswith("+"):
            raise ValueError(f"invalid stream id {raw!r}")
        return cls(ms, seq)

    @classmethod
    def from_int(cls, value: int) -> StreamId:
        return cls(value >> 64, value & U64_MAX)

    def as_int(self) -> int:
        return (self.ms << 64) | self.seq

    def next(self) -> StreamId:
        """The smallest id greater than this one."""
        if self.seq < U64_MAX:
            return StreamId(self.ms, self.seq + 1)
        return StreamId(self.ms + 1, 0)

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"


MIN_ID = StreamId(0, 0)
MAX_ID = StreamId(U64_MAX, U64_MAX)


def parse_bound(text: str, *, upper: bool) -> StreamId:
    """Parse an XRANGE-style bound: ``-``, ``+``, ``ms`` or ``ms-seq`` (inclusive)."""
    if text == "-":
        return MIN_ID
    if text == "+":
        return MAX_ID
    return StreamId.parse(text, default_seq=U64_MAX if upper else 0)
