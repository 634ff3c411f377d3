"""This server's link to its primary (REPLICAOF host port): the network side of
:mod:`resplite.engine.replication`.

One asyncio task per link does what a Redis replica does: connect; the handshake (PING,
AUTH with ``masteruser``/``masterauth`` when set, ``REPLCONF listening-port``, ``REPLCONF
capa eof capa psync2``, then ``PSYNC <replid> <offset+1>`` when this server has a history
to continue, else ``PSYNC ? -1``); on ``+FULLRESYNC`` read the snapshot (a ``$<len>``
bulk, or the diskless ``$EOF:<40-byte mark>`` form, up to the mark), empty the data set and
load it with the RDB loader (``-LOADING`` to clients meanwhile, as at start); then read
the stream, running each command as the master client and passing its bytes on to this
server's own replicas and backlog. ``REPLCONF ACK <offset>`` goes to the primary every
second. When the link drops it is opened again a second later, asking to continue from
the offset reached (``+CONTINUE`` sends only what was missed).

Invariants: at most one task per server; the master client exists (in CLIENT LIST,
flag ``M``) exactly while the stream is being applied; nothing here blocks the loop
except the snapshot's load, which serves other clients as the start-up load does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resplite.engine.aof import encode_command
from resplite.engine.client import Client
from resplite.engine.persistence import LoadError
from resplite.engine.replication import MASTER, StreamParser

if TYPE_CHECKING:
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.replication")

RETRY_S = 1.0  # Redis's replication cron tries again every second
ACK_EVERY_S = 1.0
_EOF_MARK_LEN = 40
_AUTH_ERRORS = (b"-NOAUTH", b"-NOPERM", b"-ERR operation not permitted")


class HandshakeError(Exception):
    pass


class _MasterConnection:
    """The master client's connection (engine.client.ClientConnection): its replies are
    dropped; ``send`` writes to the primary (REPLCONF ACK)."""

    def __init__(self, link: MasterLink, writer: asyncio.StreamWriter) -> None:
        self.link = link
        self.writer = writer

    def deliver(self, reply: Any) -> None:
        pass

    def send(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    def close(self) -> None:
        # CLIENT KILL TYPE master: the link drops, and is opened again (then continues).
        self.link.drop()

    def abort(self) -> None:
        self.link.drop()

    def resume(self) -> None:
        pass

    def set_authenticated(self, authenticated: bool) -> None:
        pass

    def set_max_bulk_len(self, limit: int) -> None:
        pass

    def output_buffer_size(self) -> int:
        transport = self.writer.transport
        try:
            return int(transport.get_write_buffer_size())
        except Exception:
            return 0

    def query_buffer_size(self) -> int:
        return 0


class MasterLink:
    """The shell's MasterConnector: one task keeping this server attached to its primary."""

    def __init__(self, state: ServerState, serve_while_loading: Callable[[], None],
                 loading_ended: Callable[[], None]) -> None:
        self.state = state
        self.serve_while_loading = serve_while_loading
        self.loading_ended = loading_ended
        self.task: asyncio.Task[None] | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.host = ""
        self.port = 0

    # -- MasterConnector --------------------------------------------------------------------

    def connect(self, host: str, port: int) -> None:
        self.disconnect()
        self.host, self.port = host, port
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # before the loop runs (a replicaof line): Server.start calls again
        self.task = loop.create_task(self._run())

    def disconnect(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
        self._close_writer()
        self._detach()

    def drop(self) -> None:
        """Close the connection; the task notices and opens a new one."""
        self._close_writer()

    # -- the task -----------------------------------------------------------------------------

    def _close_writer(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()

    def _detach(self) -> None:
        client = self.state.replication.link_down()
        if client is not None:
            self.state.forget_client(client)

    async def _run(self) -> None:
        repl = self.state.replication
        while repl.master_host:
            try:
                await self._session()
            except asyncio.CancelledError:
                raise
            except HandshakeError as exc:
                log.warning("%s", exc)
            except (OSError, ValueError, EOFError, asyncio.IncompleteReadError) as exc:
                if repl.link_status == "up":
                    log.info("Connection with master lost (%s).", exc or type(exc).__name__)
                else:
                    log.warning("Error condition on socket for SYNC: %s", exc or type(exc).__name__)
            except LoadError as exc:
                log.warning("Failed trying to load the MASTER synchronization DB: %s", exc)
            finally:
                self._close_writer()
                self._detach()
            await asyncio.sleep(RETRY_S)

    async def _session(self) -> None:
        state = self.state
        repl = state.replication
        config = state.config
        log.info("MASTER <-> REPLICA sync started")
        repl.link_attempt()
        reader, writer = await asyncio.open_connection(self.host, self.port)
        self.writer = writer
        repl.last_io_ms = state.clock.monotonic_ms()

        async def command(*args: bytes) -> bytes:
            writer.write(encode_command(list(args)))
            return await self._line(reader)

        reply = await command(b"PING")
        # As Redis: an authentication error is no reason to stop, AUTH comes next.
        if reply[:1] == b"-" and not reply.startswith(_AUTH_ERRORS):
            raise HandshakeError("Error reply to PING from master: "
                                 f"'{reply.decode(errors='replace')}'")
        if config["masterauth"]:
            args = [b"AUTH"]
            if config["masteruser"]:
                args.append(config["masteruser"].encode())
            args.append(config["masterauth"].encode())
            reply = await command(*args)
            if reply[:1] == b"-":
                raise HandshakeError(f"Unable to AUTH to MASTER: {reply.decode(errors='replace')}")
        port = config["replica-announce-port"] or state.tcp_port
        reply = await command(b"REPLCONF", b"listening-port", b"%d" % port)
        if reply[:1] == b"-":
            log.info("(Non critical) Master does not understand REPLCONF listening-port: %s",
                     reply.decode(errors="replace"))
        if config["replica-announce-ip"]:
            await command(b"REPLCONF", b"ip-address", config["replica-announce-ip"].encode())
        reply = await command(b"REPLCONF", b"capa", b"eof", b"capa", b"psync2")
        if reply[:1] == b"-":
            log.info("(Non critical) Master does not understand REPLCONF capa: %s",
                     reply.decode(errors="replace"))
        if repl.backlog is not None:
            replid, offset = repl.replid.encode(), b"%d" % (repl.offset + 1)
            log.info("Trying a partial resynchronization (request %s:%s).",
                     replid.decode(), offset.decode())
        else:
            replid, offset = b"?", b"-1"
        reply = await command(b"PSYNC", replid, offset)
        if reply.startswith(b"+FULLRESYNC"):
            words = reply.split()
            if len(words) != 3:
                raise HandshakeError("Master replied with wrong +FULLRESYNC syntax.")
            await self._full_sync(reader, words[1].decode(), int(words[2]))
        elif reply.startswith(b"+CONTINUE"):
            words = reply.split()
            log.info("Successful partial resynchronization with master.")
            repl.master_continued(words[1].decode() if len(words) > 1 else "")
        else:
            raise HandshakeError(f"Unexpected reply to PSYNC from master: "
                                 f"{reply.decode(errors='replace')}")
        await self._stream(reader, writer)

    async def _line(self, reader: asyncio.StreamReader) -> bytes:
        """One reply line, past the newlines a primary sends to keep the link alive."""
        while True:
            line = await reader.readuntil(b"\n")
            self.state.replication.last_io_ms = self.state.clock.monotonic_ms()
            line = line.rstrip(b"\r\n")
            if line:
                return line

    async def _full_sync(self, reader: asyncio.StreamReader, replid: str, offset: int) -> None:
        state = self.state
        repl = state.replication
        log.info("Full resync from master: %s:%d", replid, offset)
        repl.sync_in_progress = True
        header = await self._line(reader)
        if header[:1] != b"$":
            raise HandshakeError("Bad protocol from MASTER, the first byte is not '$' "
                                 f"(we received '{header[:32].decode(errors='replace')}')")
        chunks: list[bytes] = []
        if header.startswith(b"$EOF:"):
            mark = header[5:]
            if len(mark) != _EOF_MARK_LEN:
                raise HandshakeError("Bad EOF mark from MASTER")
            repl.sync_total = -1
            repl.sync_read = 0
            tail = b""
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    raise EOFError("connection closed during the snapshot")
                repl.last_io_ms = state.clock.monotonic_ms()
                repl.sync_read += len(data)
                tail += data
                if len(tail) >= _EOF_MARK_LEN and tail.endswith(mark):
                    chunks.append(tail[:-_EOF_MARK_LEN])
                    break
                keep = max(len(tail) - _EOF_MARK_LEN, 0)
                chunks.append(tail[:keep])
                tail = tail[keep:]
        else:
            total = int(header[1:])
            repl.sync_total = total
            repl.sync_read = 0
            while repl.sync_read < total:
                data = await reader.read(min(1 << 16, total - repl.sync_read))
                if not data:
                    raise EOFError("connection closed during the snapshot")
                repl.last_io_ms = state.clock.monotonic_ms()
                repl.sync_read += len(data)
                chunks.append(data)
        payload = b"".join(chunks)
        log.info("MASTER <-> REPLICA sync: receiving %d bytes from master", len(payload))
        self._load(payload)
        repl.master_synced(replid, offset)
        repl.sync_in_progress = False
        log.info("MASTER <-> REPLICA sync: Finished with success")

    def _load(self, payload: bytes) -> None:
        """Replace the data set with the primary's snapshot (clients get -LOADING)."""
        from resplite.commands.server import flush_database

        state = self.state
        persistence = state.persistence
        log.info("MASTER <-> REPLICA sync: Flushing old data")
        flush_database(state, None)
        if state.scripting.library_codes():
            state.scripting.flush_functions()  # the snapshot brings the primary's
        log.info("MASTER <-> REPLICA sync: Loading DB in memory")
        persistence.start_loading(len(payload))
        persistence.serve_while_loading = self.serve_while_loading
        try:
            persistence.load_bytes(payload, drop_expired=False, name="the primary's snapshot")
        finally:
            persistence.serve_while_loading = None
            persistence.stop_loading()
            self.loading_ended()
        state.dirty += 1

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state = self.state
        repl = state.replication
        client = Client(state, state.new_client_id(), _MasterConnection(self, writer),
                        addr=f"{self.host}:{self.port}", fd=-1)
        client.repl_kind = MASTER
        client.authenticated = True
        client.acl = None
        state.clients[client.id] = client
        repl.read_offset = repl.offset
        repl.link_up(client)
        repl.send_ack()
        acker = asyncio.get_running_loop().create_task(self._ack_every_second())
        parser = StreamParser()
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    raise EOFError("connection closed by the primary")
                repl.last_io_ms = state.clock.monotonic_ms()
                client.net_in += len(data)
                repl.read_offset += len(data)
                parser.feed(data)
                while True:
                    item = parser.next()
                    if item is None:
                        break
                    argv, raw = item
                    if argv:
                        repl.apply(argv)
                    repl.proxy(raw)
                    if repl.master_client is not client:
                        return
        finally:
            acker.cancel()

    async def _ack_every_second(self) -> None:
        repl = self.state.replication
        while True:
            await asyncio.sleep(ACK_EVERY_S)
            repl.send_ack()
