"""One connection to the server, speaking raw commands through redis-py.

The connector uses redis-py only for connecting (URL parsing, AUTH, HELLO, SELECT) and for
framing; it sends commands on a single connection and reads the replies exactly as hiredis
decodes them, without redis-py's per-command reply callbacks. That keeps the hot paths (XRANGE
pages, pipelined XADD) cheap and makes RESP2 and RESP3 differences explicit: :func:`as_map`
accepts both a RESP3 map and a RESP2 flat array.

Invariants: a :class:`StreamServer` is used by one thread; pipelined replies are always read in
full before an error is raised, so the connection never goes out of step; server errors that a
user can act on (wrong type, missing group, refused connection, bad password) become
:class:`~resplite.spark.errors.ServerError` with a message naming the key, group or URL.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import redis
from redis.backoff import ConstantBackoff
from redis.exceptions import ResponseError
from redis.retry import Retry

from resplite.spark.errors import ServerError
from resplite.spark.options import StreamsOptions

log = logging.getLogger("resplite.spark")

Command = Sequence[str | bytes | int]


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def as_map(reply: Any) -> dict[str, Any]:
    """A RESP3 map or a RESP2 flat ``[k, v, k, v]`` array as a dict with str keys."""
    if isinstance(reply, dict):
        return {text(k): v for k, v in reply.items()}
    return {text(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}


class StreamServer:
    """A connected client: raw commands, pipelines, and the checks the connector needs."""

    def __init__(self, options: StreamsOptions) -> None:
        self.options = options
        try:
            self._client = redis.Redis.from_url(
                options.url,
                protocol=options.protocol,
                socket_connect_timeout=options.connect_timeout,
                socket_keepalive=True,
                # One quick retry of the connection, and never a silent re-send of a command:
                # a repeated XREADGROUP > would leave the lost reply's entries pending unseen.
                retry=Retry(ConstantBackoff(0.2), 1),
            )
            self._conn: Any = self._client.connection_pool.get_connection()
        except redis.AuthenticationError as exc:
            raise ServerError(f"authentication failed for {options.safe_url}: {exc}") from None
        except (redis.ConnectionError, OSError) as exc:
            raise ServerError(
                f"cannot connect to {options.safe_url} (option 'url'): {exc}"
            ) from None
        except ResponseError as exc:
            raise ServerError(f"{options.safe_url} refused the connection set-up: {exc}") from None
        except ValueError as exc:
            raise ServerError(f"option 'url' cannot be used: {exc}") from None

    def __enter__(self) -> StreamServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._client.connection_pool.release(conn)
        self._client.close()

    # -- raw commands -------------------------------------------------------------------------

    def call(self, *args: str | bytes | int) -> Any:
        """Send one command and return its reply; an error reply raises ResponseError."""
        conn = self._connection()
        try:
            conn.send_command(*args)
            return conn.read_response()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise ServerError(f"lost the connection to {self.options.safe_url}: {exc}") from None

    def pipeline(self, commands: Iterable[Command]) -> list[Any]:
        """Send many commands in one write; error replies come back as ResponseError values."""
        conn = self._connection()
        batch = list(commands)
        try:
            conn.send_packed_command(conn.pack_commands(batch))
            replies: list[Any] = []
            for _ in batch:
                try:
                    replies.append(conn.read_response())
                except ResponseError as exc:
                    replies.append(exc)
            return replies
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise ServerError(f"lost the connection to {self.options.safe_url}: {exc}") from None

    def _connection(self) -> Any:
        if self._conn is None:
            raise ServerError("connection already closed")
        return self._conn

    # -- checks -------------------------------------------------------------------------------

    def key_type(self, key: str) -> str:
        return text(self.call("TYPE", key))

    def check_stream(self, key: str, *, missing_ok: bool) -> bool:
        """True if ``key`` is a stream; False if it does not exist (and that is allowed)."""
        kind = self.key_type(key)
        if kind == "stream":
            return True
        if kind == "none":
            if missing_ok:
                return False
            raise ServerError(f"stream key {key!r} does not exist")
        raise ServerError(f"key {key!r} holds a {kind}, not a stream")

    def ensure_group(self, key: str, group: str) -> None:
        """Make sure ``group`` exists on ``key``, creating it only when the options ask to."""
        opts = self.options
        exists = self.check_stream(key, missing_ok=opts.create_group and opts.mkstream)
        if exists and any(text(g.get("name")) == group for g in self.groups(key)):
            return
        if not opts.create_group:
            where = "does not exist" if exists else "has no stream"
            raise ServerError(
                f"consumer group {group!r} on stream {key!r} {where}; create it with "
                f"XGROUP CREATE or set option 'createGroup' to true"
            )
        args: list[str] = ["XGROUP", "CREATE", key, group, opts.group_start_id]
        if opts.mkstream:
            args.append("MKSTREAM")
        try:
            self.call(*args)
            log.info("created consumer group %r on stream %r at %s", group, key, args[4])
        except ResponseError as exc:
            if not str(exc).startswith("BUSYGROUP"):
                raise self.explain(exc, key, group) from None

    def groups(self, key: str) -> list[dict[str, Any]]:
        try:
            return [as_map(g) for g in self.call("XINFO", "GROUPS", key)]
        except ResponseError as exc:
            raise self.explain(exc, key) from None

    def explain(self, exc: ResponseError, key: str, group: str | None = None) -> ServerError:
        """Turn a server error about ``key``/``group`` into a message a Spark user can act on."""
        message = str(exc)
        if message.startswith("WRONGTYPE"):
            kind = self.key_type(key)
            return ServerError(f"key {key!r} holds a {kind}, not a stream")
        if message.startswith("NOGROUP") and group is not None:
            return ServerError(f"consumer group {group!r} on stream {key!r} does not exist")
        if "no such key" in message:
            return ServerError(f"stream key {key!r} does not exist")
        return ServerError(f"server error on stream {key!r}: {message}")

    def command_arguments(self, name: str) -> set[str] | None:
        """Tokens of a command's arguments per COMMAND DOCS, or None when it cannot say."""
        try:
            reply = self.call("COMMAND", "DOCS", name)
        except ResponseError:
            return None
        docs = as_map(reply)
        if not docs:
            return None
        doc = as_map(next(iter(docs.values())))
        tokens: set[str] = set()
        stack = list(doc.get("arguments") or [])
        while stack:
            arg = as_map(stack.pop())
            for field in ("token", "name"):
                if arg.get(field) is not None:
                    tokens.add(text(arg[field]).upper())
            stack.extend(arg.get("arguments") or [])
        return tokens


def configure_logging(level: str) -> None:
    """Send the connector's log records to stderr, where Spark collects worker output.

    Python workers have no logging configuration of their own; without a handler the INFO
    records about claims and acknowledgements would be dropped.
    """
    logger = logging.getLogger("resplite.spark")
    logger.setLevel(level)
    if not any(getattr(h, "_resplite", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S")
        )
        handler._resplite = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False
