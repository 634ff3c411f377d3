"""One client connection: a thin :class:`asyncio.Protocol` around the sans-IO reader.

Theory of operation: ``data_received`` feeds the request reader, then runs the complete
requests in order, encoding each reply into one list that is written with a single
``transport.write`` per batch (so a pipeline of 16 commands costs one system call). Keys made
ready by a command wake blocked clients right after it, as Redis does.

Fairness: no client's input holds the event loop for long. A batch runs in slices: after
about :data:`SLICE_NS` of work (the clock is read every few replies, see
:data:`_CHECK_PIECES`, and after every pre-encoded one) the rest of the input waits in the
reader and the connection waits for a later turn of the loop in the loop's queue
(:mod:`resplite.server.turns`), which gives each waiting connection one slice in turn and
does about :data:`~resplite.server.turns.TURN_NS` of such work per turn, so the loop polls
for I/O (accepts, reads the others' requests) that often however many clients pipeline at
once. Input that arrives is run at once while the turn has budget left (a read of at most
:data:`SMALL_READ` bytes always is), and otherwise waits at the head of the queue (a new
client's first request is not served after every busy client). Reading pauses while a
connection waits for its turn: what it sends meanwhile waits in the kernel, not in the
server, as Redis reads at most 16 KB per client per turn. Replies do not pile up either:
once the replies of a batch hold :data:`FLUSH_BYTES` (a large value, a long range, or many
small replies) they are written at once, the client's ``client-output-buffer-limit`` is
checked (past it the client is dropped, as Redis drops it), and if the transport is over its
high-water mark the batch stops until it drains, so the replies held for one read are
bounded by the transport's buffer and the output limits, not by the read. A request with
millions of arguments is framed a part at a time too: the reader stops (``framing``) after
every :data:`FRAME_QUOTA` arguments (:attr:`RequestReader.element_quota`), a check point
like the others, so however much of it one read delivers (uvloop reads up to 32 times 256 KB
in one turn) the others are served between parts.

A reply too large to build at once (a :class:`~resplite.protocol.replies.Chunked` one: a
stream read, an XPENDING or an array of thousands of elements) is sent as its pieces are
made (``_pump``): one slice's worth per turn, each piece written at once with the output
limit checked after it, stopping while the client does not read, and the batch goes on only
once the whole reply is sent. Its maker guarantees the pieces are the data as it was when
the command ran (the stream settles its readers before it changes an entry; other makers
encode their own copy). Meanwhile pushes to this client wait in ``after`` and
input waits in the reader. Replies held for the append-only file, and those pushes, count in
:meth:`Connection.output_buffer_size`, so the output limits bound them as well.

A command that blocks parks the client: later requests stay buffered, unparsed, until the
blocked command is answered (by another client's write, a timeout or CLIENT UNBLOCK), then
processing resumes. Reading continues while blocked so a disconnect is noticed, but stops
when the unparsed backlog grows past a limit.

Flow control: when the transport's write buffer passes its high-water mark (the client is
not reading its replies), reading pauses; it resumes when the buffer drains. A client that
never reads therefore costs the server its transport's buffer and one read at most, and no
work at all once its socket buffers are full: it is not read, so it runs nothing. The output
limits are checked after every write (and by the cron for soft limits), counted in INFO
``client_output_buffer_limit_disconnections``.

A protocol error is answered once with ``-ERR Protocol error: ...`` and the connection closes
after the replies already due are written; other clients are unaffected.

Push messages for this client (Pub/Sub, invalidations, MONITOR lines) wait in its outbox
(:mod:`resplite.engine.output`): the batch takes those queued before it first, and those a
command caused right after that command's reply. Pushes to other clients are written once
the batch is done, one write per client (``send``); a push goes out even while CLIENT REPLY
is OFF, as in Redis.

Limits, as Redis enforces them:

* protected mode: while ``protected-mode`` is on and the default user needs no password, a
  client that is not local (Unix socket, 127.x.x.x or ::1; 127.0.0.1 alone as Redis 7.0)
  gets Redis's ``-DENIED`` text and is closed at once;
* the query buffer: when the bytes waiting unparsed (the partial request, a huge bulk
  included) pass ``client-query-buffer-limit``, the client is closed, a warning logged and
  the event counted (INFO ``client_query_buffer_limit_disconnections``);
* before AUTH the request reader accepts 10 arguments of 16 KB at most, and a client that
  is not authenticated is closed once more than 16 KB of replies wait unsent, those of the
  batch not yet written included (:data:`resplite.engine.output.UNAUTH_OUTPUT_LIMIT`, Redis
  7.4.3 and 8: a client that does not read its -NOAUTH replies cannot grow the server's
  memory, nor keep it busy).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from resplite.engine import compat, gates
from resplite.engine.blocking import BlockRequest
from resplite.engine.client import REPLY_OFF, Client
from resplite.protocol.encoder import EMITTERS, encode_into
from resplite.protocol.errors import ProtocolError, error_reply
from resplite.protocol.reader import NEED_DATA, RequestReader
from resplite.protocol.replies import Chunked, Pushes, Raw
from resplite.server.turns import UNSHARED, Turns, turns_of

if TYPE_CHECKING:
    from resplite.engine.dispatch import Dispatcher
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.connection")

# Stop reading from a blocked, slow or sliced client once this much input waits unparsed.
_MAX_BACKLOG = 1 << 20
# A batch yields to the other clients after this much work (see the module docstring).
SLICE_NS = 2_000_000
# Replies are written as soon as this much of them waits. Both are checked every this many
# reply pieces (16 bulk replies, 48 short ones) and after every pre-encoded reply.
FLUSH_BYTES = 64 * 1024
_CHECK_PIECES = 48
# Arguments of a long request framed between two check points (about a millisecond).
FRAME_QUOTA = 4096
# A read this small (a request or a few) runs at once even when the loop's turn has done
# its share of work: it costs little, and putting it off would cost more (resplite.server.turns).
SMALL_READ = 1024
_now_ns = time.perf_counter_ns
# The batch loop's emitters: a Chunked reply is not encoded there but sent by _pump (found
# through the KeyError path, so the common replies pay nothing for it).
_EMITTERS = {cls: emit for cls, emit in EMITTERS.items() if cls is not Chunked}


def _sent(out: list[bytes], reply: Any, resp: int) -> None:
    """The emitter of a reply already sent."""
_MAX_CLIENTS_ERROR = b"-ERR max number of clients reached\r\n"
_DENIED_70 = (
    b"-DENIED Redis is running in protected mode because protected "
    b"mode is enabled and no password is set for the default user. "
    b"In this mode connections are only accepted from the loopback interface. "
    b"If you want to connect from external computers to Redis you "
    b"may adopt one of the following solutions: "
    b"1) Just disable protected mode sending the command "
    b"'CONFIG SET protected-mode no' from the loopback interface "
    b"by connecting to Redis from the same host the server is "
    b"running, however MAKE SURE Redis is not publicly accessible "
    b"from internet if you do so. Use CONFIG REWRITE to make this "
    b"change permanent. "
    b"2) Alternatively you can just disable the protected mode by "
    b"editing the Redis configuration file, and setting the protected "
    b"mode option to 'no', and then restarting the server. "
    b"3) If you started the server manually just for testing, restart "
    b"it with the '--protected-mode no' option. "
    b"4) Setup a an authentication password for the default user. "
    b"NOTE: You only need to do one of the above things in order for "
    b"the server to start accepting connections from the outside.\r\n"
)
# Redis 7.2 corrected the fourth solution's wording ("Set up an").
DENIED = _DENIED_70.replace(b"4) Setup a an authentication", b"4) Set up an authentication")


class Connection(asyncio.Protocol):
    __slots__ = (
        "after",
        "backlog",
        "client",
        "closing",
        "dispatcher",
        "held",
        "producing",
        "reader",
        "reading_paused",
        "release_scheduled",
        "server",
        "sliced",
        "transport",
        "turns",
        "waiting",
        "writing_paused",
    )

    def __init__(self, server: ServerState, dispatcher: Dispatcher) -> None:
        self.server = server
        self.dispatcher = dispatcher
        self.transport: asyncio.Transport | None = None
        self.reader = RequestReader(server.config["proto-max-bulk-len"])
        self.reader.element_quota = FRAME_QUOTA
        self.client: Client | None = None
        self.closing = False
        self.writing_paused = False
        self.reading_paused = False
        self.backlog = 0
        # Replies waiting for the append-only file (see _write).
        self.held: list[bytes] = []
        self.release_scheduled = False
        # A batch stopped at the end of its slice; the rest runs in a later turn of the
        # loop (resplite.server.turns), where the connection is queued (waiting).
        self.sliced = False
        self.waiting = False
        self.turns: Turns | None = None  # the event loop's, found when first needed
        # The pieces of a Chunked reply still to send (see _pump), and what waits for it
        # to end (pushes to this client).
        self.producing: Iterator[bytes] | None = None
        self.after: list[bytes] = []

    # -- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.client is not None:
            # The event loop's transport taking over from the stand-in every connection is
            # accepted on (resplite.server.busy): same client, nothing else changes.
            self.transport = cast("asyncio.Transport", transport)
            return
        self.transport = transport = cast("asyncio.Transport", transport)
        server = self.server
        peer = transport.get_extra_info("peername")
        sock = transport.get_extra_info("sockname")
        fd_sock = transport.get_extra_info("socket")
        loopback = compat.follows(server.config["redis-compat-version"], "local-loopback")
        local = is_local(fd_sock, peer, loopback)
        if not local and protected_mode_refuses(server):
            # Refused before it counts as a connection, as Redis's clientAcceptHandler does.
            server.rejected_connections += 1
            transport.write(DENIED if loopback else _DENIED_70)
            transport.close()
            self.closing = True
            return
        server.total_connections += 1
        if len(server.clients) >= server.config["maxclients"]:
            server.rejected_connections += 1
            transport.write(_MAX_CLIENTS_ERROR)
            transport.close()
            self.closing = True
            return
        client = Client(
            server,
            server.new_client_id(),
            self,
            # A Unix-socket peer has no name: Redis shows the socket's path for both ends.
            addr=_format_addr(peer or sock),
            laddr=_format_addr(sock),
            fd=fd_sock.fileno() if fd_sock is not None else -1,
            local=local,
        )
        self.reader.authenticated = client.authenticated
        server.clients[client.id] = client
        self.client = client

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self.producing = None  # the rest of a reply nobody will read is never made
        if self.client is not None:
            self.server.forget_client(self.client)

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        server = self.server
        size = len(data)
        server.net_input_bytes += size
        server.reads_processed += 1
        # Not closing, so connection_made has accepted the client and set it.
        client: Client = self.client  # type: ignore[assignment]
        client.net_in += size
        client.read_events += 1
        if self.reader.feed(data) > server.query_buffer_limit:
            self._query_buffer_overflow(client)
            return
        if client.blocked is not None or self.writing_paused or self.sliced:
            self.backlog += size
            if self.backlog > _MAX_BACKLOG and not self.reading_paused:
                self.reading_paused = True
                self.transport.pause_reading()  # type: ignore[union-attr]
            return
        turns = self.turns or self._find_turns()
        if size > SMALL_READ and not turns.admit():
            # This turn has done its share of work: first in line for the next one.
            self._wait_turn(first=True)
            return
        started = _now_ns()
        parsed = self.process()
        turns.charge(_now_ns() - started)
        if parsed:
            client.parse_batch_cmds += parsed
            client.parse_batches += 1

    def data_received_while_busy(self, data: bytes) -> None:
        """Input read by the busy pump while a script runs past busy-reply-threshold.

        Requests are answered through the dispatcher's busy path (-BUSY for all but the
        allow-busy commands); blocked clients are never served from here, since the script
        is still running.
        """
        if self.closing or self.client is None:
            return
        client = self.client
        server = self.server
        server.net_input_bytes += len(data)
        server.reads_processed += 1
        client.net_in += len(data)
        client.read_events += 1
        self.reader.feed(data)
        if self.producing is not None:
            return  # the rest of a reply goes first: these wait for the script to end
        out: list[bytes] = []
        while not self.closing and client.blocked is None:
            try:
                argv = self.reader.get()
            except ProtocolError as exc:
                server.count_error("ERR " + exc.message)
                out.append(error_reply(exc.message))
                self._flush(out)
                self.close()
                return
            if argv is NEED_DATA:
                if not self.reader.framing:
                    break
                self.reader.framing = False
                continue
            reply = self.dispatcher.execute_while_busy(client, argv)  # type: ignore[arg-type]
            if type(reply) is BlockRequest:
                server.blocking.block(client, reply)
                break
            if not client.reply_mode or client.reply_wanted():
                encode_into(out, reply, client.resp)
            if client.close_after_reply:
                self._flush(out)
                self.close()
                return
        self._flush(out)

    def pause_writing(self) -> None:
        self.writing_paused = True
        if not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.writing_paused = False
        turns = self.turns or self._find_turns()
        if not turns.admit():
            self._wait_turn(first=True)
            return
        started = _now_ns()
        self.resume()
        turns.charge(_now_ns() - started)

    def eof_received(self) -> bool | None:
        return None  # close the transport once the peer has finished sending

    # -- request processing ----------------------------------------------------------------

    def process(self) -> int:
        """Run buffered requests until input runs out, the client blocks or stops reading;
        returns how many it parsed."""
        # Only called for an accepted client (see data_received), so both are set.
        client: Client = self.client  # type: ignore[assignment]
        transport: asyncio.Transport = self.transport  # type: ignore[assignment]
        reader = self.reader
        dispatcher = self.dispatcher
        server = self.server
        blocking = server.blocking
        emitters = _EMITTERS
        output = server.output
        # Pushes queued for this client before the batch go before its replies.
        out: list[bytes] = output.take(client) if client.outbox else []
        client.last_interaction_ms = server.clock.monotonic_ms()
        started = 0  # read at the first check: a short batch never reads the clock
        parsed = 0
        check_at = _CHECK_PIECES
        # Bytes of the replies in ``out``, summed as they come (the first ``counted``).
        size = counted = 0
        raw = Raw
        sliced = False
        # The client acting for every command of the batch (blocked clients served on the
        # way act for themselves and hand back).
        server.current_client = client
        while not self.closing:
            try:
                argv = reader.get()
            except ProtocolError as exc:
                server.count_error("ERR " + exc.message)
                out.append(error_reply(exc.message))  # the exact bytes, raw byte included
                self._flush(out)
                self.close()
                return parsed
            if argv is NEED_DATA:
                if not reader.framing:
                    break
                # A part of a request with many arguments is framed: a check point like
                # any other, so one read of it never holds the loop for long.
                reader.framing = False
                now = _now_ns()
                if not started:
                    started = now
                elif now - started > SLICE_NS:
                    sliced = True
                    break
                continue
            reply = dispatcher.execute(client, argv)  # type: ignore[arg-type]
            parsed += 1
            if client.pushes_first:
                out.extend(output.take_first(client))
            cls = type(reply)
            if cls is BlockRequest:
                blocking.block(client, reply)
                if blocking.ready:
                    blocking.serve_ready()
                break
            if not client.reply_mode or client.reply_wanted() or cls is Pushes:
                try:
                    emit = emitters[cls]
                except KeyError:
                    if cls is Chunked:
                        # What is due so far goes first, then the pieces as they are made;
                        # the batch goes on once they are all sent.
                        chunked = cast("Chunked", reply)
                        out.append(chunked.head)
                        self._flush(out)
                        size = counted = 0
                        self.producing = chunked.pieces
                        if not self._pump():
                            break
                        emit = _sent
                    else:
                        emit = encode_into  # subclasses of the reply types
                emit(out, reply, client.resp)
            if client.outbox:
                # What the command pushed to its own client follows its reply (Redis 7.2+).
                out.extend(output.take(client))
            if blocking.ready:
                self._flush(out)
                size = counted = 0
                blocking.serve_ready()
                # Only a write can pause writing, and this loop writes only here.
                if self.writing_paused:
                    break
                # Serving the blocked clients is work of this batch: the slice is checked
                # below, so a pipeline of writes that each wake readers still yields.
                check_at = 0
            if client.close_after_reply:
                self._flush(out)
                self.close()
                return parsed
            if cls is raw or len(out) >= check_at:
                # Every few replies (16 values at most) and after every pre-encoded one (a
                # range, a read):
                # large replies are written now rather than held for the whole batch, and
                # a batch that has run its slice lets the other clients go first.
                size += sum(map(len, out[counted:]))
                counted = len(out)
                if size < FLUSH_BYTES:
                    check_at = counted + _CHECK_PIECES
                    if not client.authenticated and output.check_limits(client, size):
                        server.current_client = None
                        return parsed  # not logged in and not reading: dropped (engine.output)
                else:
                    check_at = _CHECK_PIECES
                    self._flush(out)
                    size = counted = 0
                    if self.closing or output.check_limits(client):
                        server.current_client = None
                        return parsed
                    if self.writing_paused:
                        break  # the rest waits until the client reads (resume_writing)
                    if self.held and reader.pending_size():
                        # Held for the append-only file until the next turn: end the slice
                        # there rather than hold more.
                        sliced = True
                        break
                now = _now_ns()
                if not started:
                    started = now
                elif now - started > SLICE_NS and reader.pending_size():
                    sliced = True  # the others' turn; the rest waits for a later one
                    break
        server.current_client = None
        if out and not transport.is_closing():
            data = b"".join(out)
            server.net_output_bytes += len(data)
            client.net_out += len(data)
            self._write(data)
            # All of it taken by the kernel (the common case): nothing to check.
            if (transport.get_write_buffer_size() or self.held or client.obuf_soft_since) \
                    and output.check_limits(client):
                return parsed
        if output.pending:
            output.flush()
        if server.gates & gates.MEMORY:
            # What this client holds counts towards used_memory (see ServerState), and
            # towards maxmemory-clients, checked here as Redis checks it before sleeping.
            server.charge_client(client)
            server.evict_clients()
        if self.closing:
            return parsed
        if sliced:
            self._wait_turn()
            return parsed
        if self.reading_paused and not self.writing_paused and client.blocked is None:
            self.reading_paused = False
            self.backlog = 0
            transport.resume_reading()
        return parsed

    def _pump(self) -> bool:
        """Send the pieces of the Chunked reply being produced, one slice's worth; True
        once all are sent. Otherwise the rest waits: for a later turn of the loop (a slice
        is spent, or replies are held for the append-only file), for the client to read
        (``resume_writing``), or for nothing (the client was closed, or dropped for its
        output limit, checked after every piece)."""
        pieces = self.producing
        assert pieces is not None
        server = self.server
        output = server.output
        client: Client = self.client  # type: ignore[assignment]
        started = _now_ns()
        for piece in pieces:
            transport = self.transport
            if self.closing or transport is None or transport.is_closing():
                self.producing = None
                return False
            server.net_output_bytes += len(piece)
            client.net_out += len(piece)
            self._write(piece)
            if output.check_limits(client):
                self.producing = None
                return False
            if self.writing_paused:
                return False  # resume_writing carries on
            if self.held or _now_ns() - started > SLICE_NS:
                self._wait_turn()
                return False
        self.producing = None
        if self.after:
            data = b"".join(self.after)
            self.after = []
            self._write(data)
        return True

    def _find_turns(self) -> Turns:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return UNSHARED  # driven by hand, outside a loop: nothing to share
        self.turns = turns = turns_of(loop)
        return turns

    def _wait_turn(self, first: bool = False) -> None:
        """Leave the rest of the work for a later turn of the loop (see
        :mod:`resplite.server.turns`), reading nothing more meanwhile: what a client sends
        waits in the kernel, not here, while it waits for its turn."""
        self.sliced = True
        if not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        (self.turns or self._find_turns()).wait(self, first)

    def take_turn(self) -> None:
        self._next_slice()

    def _next_slice(self) -> None:
        self.sliced = False
        self.resume()

    def _flush(self, out: list[bytes]) -> None:
        if out and self.transport is not None and not self.transport.is_closing():
            # One piece (a large value or range) goes out as it is, not copied by a join.
            data = out[0] if len(out) == 1 else b"".join(out)
            self.server.net_output_bytes += len(data)
            if self.client is not None:
                self.client.net_out += len(data)
            self._write(data)
        out.clear()

    def _write(self, data: bytes) -> None:
        """Send ``data``, or hold it while the append-only file has writes not yet written
        (and, with appendfsync always, fsynced): the writes behind a reply reach the log
        before anyone hears of them. Held replies leave in the next turn of the event loop,
        after one write (and one fsync) of everything every client logged in this turn, as
        Redis's beforeSleep does it: a group commit, not one fsync per connection."""
        if self.held or self.server.aof.buffer:
            self.held.append(data)
            if not self.release_scheduled:
                self.release_scheduled = True
                asyncio.get_running_loop().call_soon(self.release)
            return
        transport = self.transport
        if transport is not None:
            self.server.writes_processed += 1
            transport.write(data)

    def release(self) -> None:
        """Make the log durable (as appendfsync asks), then send the held replies."""
        self.release_scheduled = False
        if not self.held:
            return
        self.server.aof.before_reply()
        data = b"".join(self.held)
        self.held = []
        transport = self.transport
        if transport is not None and not transport.is_closing():
            self.server.writes_processed += 1
            transport.write(data)
            if self.client is not None and not self.closing:
                self.server.output.check_limits(self.client)

    def _query_buffer_overflow(self, client: Client) -> None:
        from resplite.commands.client import client_info_line
        from resplite.engine.config import quote

        head = self.reader.pending_head(64)
        log.warning("Closing client that reached max query buffer length: %s "
                    "(qbuf initial bytes: %s)",
                    client_info_line(client).decode("utf-8", "replace"),
                    quote(head.decode("utf-8", "surrogateescape")))
        self.server.qbuf_limit_disconnections += 1
        self.abort()

    # -- ClientConnection -----------------------------------------------------------------

    def deliver(self, reply: Any) -> None:
        """Send the reply of a command that was blocked, then go on with buffered input."""
        client = self.client
        if client is None or self.closing:
            return
        # Pushes queued before the command was served go first (client.pushes_first of
        # them, counted by whoever serves it), those it caused itself after its reply.
        output = self.server.output
        out: list[bytes] = output.take_first(client) if client.outbox else []
        if client.reply_mode != REPLY_OFF:
            encode_into(out, reply, client.resp)
        if client.outbox:
            out.extend(output.take(client))
        self._flush(out)
        if self.server.output.check_limits(client):
            return
        self.backlog = 0
        asyncio.get_running_loop().call_soon(self.resume)

    def set_authenticated(self, authenticated: bool) -> None:
        self.reader.authenticated = authenticated

    def set_max_bulk_len(self, limit: int) -> None:
        self.reader.max_bulk_len = limit

    def send(self, data: bytes) -> None:
        """Write bytes already encoded for this client (its pushes, one call per batch)."""
        transport = self.transport
        if self.closing or transport is None or transport.is_closing():
            return
        self.server.net_output_bytes += len(data)
        if self.client is not None:
            self.client.net_out += len(data)
        if self.producing is not None:
            self.after.append(data)  # after the reply being sent, not inside it
            return
        self._write(data)

    def query_buffer_size(self) -> int:
        return self.reader.pending_size()

    def output_buffer_size(self) -> int:
        transport = self.transport
        if transport is None:
            return 0
        # Replies held for the append-only file and pushes waiting for a reply being sent
        # count too: they wait unsent all the same.
        held = sum(map(len, self.held)) if self.held else 0
        if self.after:
            held += sum(map(len, self.after))
        try:
            return transport.get_write_buffer_size() + held
        except Exception:  # a closing transport may refuse
            return held

    def resume(self) -> None:
        client = self.client
        if (self.closing or client is None or client.blocked is not None
                or self.writing_paused or self.sliced):
            return
        # A reply being sent goes on first (while one is, data_received only buffers: the
        # batch that started it stopped sliced or paused, so only this path resumes it).
        if self.producing is not None and not self._pump():
            return
        self.process()

    def close(self) -> None:
        self.closing = True
        if self.held:
            self.release()  # a last reply (QUIT's, an error's) still leaves, after the log
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.abort()


def _format_addr(addr: Any) -> str:
    if isinstance(addr, tuple) and len(addr) >= 2:
        host, port = addr[0], addr[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    if isinstance(addr, str):
        return f"{addr}:0"
    return ""


def is_local(sock: socket.socket | None, peer: Any, loopback: bool = True) -> bool:
    """Redis's connIsLocal: a Unix socket peer, or one at ::1 or at 127.x.x.x (``loopback``,
    Redis 7.2 on), else exactly 127.0.0.1 (Redis 7.0: 127.0.0.2 is not local)."""
    if sock is not None and sock.family == socket.AF_UNIX:
        return True
    if not isinstance(peer, tuple) or not peer:
        return False
    address = str(peer[0])
    if loopback and address.startswith("127."):
        return True
    return address in ("127.0.0.1", "::1")


def protected_mode_refuses(server: ServerState) -> bool:
    """Whether non-local clients are refused: protected mode on and the default user open."""
    return bool(server.config["protected-mode"]) and server.default_user_nopass()
