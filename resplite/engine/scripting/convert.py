"""A command's reply as the Lua value redis.call returns, the way Redis converts it.

Redis runs the command for the script's client, takes the reply *bytes* it wrote (in the
protocol the script chose with ``redis.setresp``, RESP2 by default) and parses them into Lua
values. This module does the same: the common replies (a bulk string, an integer, a null, a
status, an error) are converted directly, anything else is encoded with the server's own
encoder and parsed, so the RESP2 downgrades (maps as flat arrays, doubles as bulk strings,
booleans as integers, RESP2 nulls as ``false``) are exactly those clients see.

=================  =====================================================================
reply              Lua value
=================  =====================================================================
bulk string        string
integer            number
RESP2 null         false
RESP3 null         nil
status             {ok = "text"}
error              {err = "CODE text", ignore_error_stats_update = true}
array / set        table (RESP3 set: {set = {member = true, ...}})
RESP3 map          {map = {key = value, ...}}
RESP3 double       {double = number}
RESP3 big number   {big_number = "digits"}
RESP3 verbatim     {verbatim_string = {format = "txt", string = "text"}}
RESP3 boolean      true / false
=================  =====================================================================

:func:`to_lua` answers ``(value, kind)``: ``kind`` None for a finished value, ``OK_KIND``
for a status and ``ERROR_KIND`` for an error, which the Lua side wraps (raising it for
``redis.call``).
"""

from __future__ import annotations

from typing import Any

from resplite.protocol.encoder import encode_into
from resplite.protocol.replies import ErrorReply, Status

OK_KIND = 1
ERROR_KIND = 2  # an error reply from the command: statistics already counted
PLAIN_ERROR_KIND = 3  # an error of the call itself (bad arguments)


def error_text(message: str | bytes) -> bytes:
    """luaPushErrorBuff: the ``err`` field for an error reply ``-CODE text``."""
    raw = message.encode("utf-8", "surrogateescape") if isinstance(message, str) else message
    code, space, rest = raw.partition(b" ")
    if not space:
        code, rest = b"ERR", raw
    rest = rest.strip(b"\r\n")
    return (code + b" " + rest).split(b"\0", 1)[0]


class ReplyParser:
    """RESP bytes into Lua values, building tables in the given runtime."""

    __slots__ = ("_table", "_table_from", "data", "pos", "resp2")

    def __init__(self, runtime: Any) -> None:
        self._table = runtime.table
        self._table_from = runtime.table_from

    def parse(self, data: bytes, resp2: bool) -> Any:
        self.data = data
        self.pos = 0
        self.resp2 = resp2
        return self._value()

    def _line(self) -> bytes:
        data = self.data
        end = data.index(b"\r\n", self.pos)
        line = data[self.pos + 1 : end]
        self.pos = end + 2
        return line

    def _value(self) -> Any:
        data = self.data
        kind = data[self.pos : self.pos + 1]
        line = self._line()
        if kind == b"$":
            n = int(line)
            if n < 0:
                return False
            start = self.pos
            self.pos = start + n + 2
            return data[start : start + n]
        if kind == b":":
            return int(line)
        if kind == b"+":
            return self._table_from({b"ok": line})
        if kind == b"-":
            return self._table_from(
                {b"err": error_text(line), b"ignore_error_stats_update": True}
            )
        if kind in (b"*", b">"):
            n = int(line)
            if n < 0:
                return False
            return self._table_from([self._value() for _ in range(n)])
        if kind == b"%":
            inner = self._table()
            for _ in range(int(line)):
                key = self._value()
                value = self._value()
                if key is not None:
                    inner[key] = value
            return self._table_from({b"map": inner})
        if kind == b"~":
            inner = self._table()
            for _ in range(int(line)):
                member = self._value()
                if member is not None:
                    inner[member] = True
            return self._table_from({b"set": inner})
        if kind == b"_":
            return None
        if kind == b"#":
            return line == b"t"
        if kind == b",":
            return self._table_from({b"double": _parse_double(line)})
        if kind == b"(":
            return self._table_from({b"big_number": line})
        if kind == b"=":
            n = int(line)
            start = self.pos
            self.pos = start + n + 2
            body = data[start : start + n]
            verbatim = self._table_from({b"string": body[4:], b"format": body[:3]})
            return self._table_from({b"verbatim_string": verbatim})
        if kind == b"|":
            for _ in range(int(line) * 2):
                self._value()
            return self._value()
        raise ValueError(f"not a RESP reply: {kind!r}")


def _parse_double(text: bytes) -> float:
    low = text.lower()
    if low in (b"inf", b"+inf"):
        return float("inf")
    if low == b"-inf":
        return float("-inf")
    if low.lstrip(b"-") == b"nan":
        return float("nan")
    return float(text)


def to_lua(reply: Any, resp: int, parser: ReplyParser | None) -> tuple[Any, int | None]:
    """The Lua value redis.call returns for ``reply`` under the script's protocol ``resp``
    (``parser`` builds tables in the running script's Lua state)."""
    cls = reply.__class__
    if cls is bytes or cls is int:
        return reply, None
    if reply is None:
        return (None if resp == 3 else False), None
    if cls is Status:
        return str(reply).encode("utf-8", "surrogateescape"), OK_KIND
    if cls is ErrorReply:
        return error_text(reply.message), ERROR_KIND
    if cls is bool:
        if resp == 3:
            return reply, None
        return int(reply), None
    out: list[bytes] = []
    encode_into(out, reply, resp)
    data = b"".join(out)
    first = data[:1]
    if first == b"+":
        return data[1:-2], OK_KIND
    if first == b"-":
        return error_text(data[1:-2]), ERROR_KIND
    if parser is None:
        raise RuntimeError("no script is running")
    return parser.parse(data, resp == 2), None
