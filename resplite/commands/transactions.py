"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

Queueing itself happens in the dispatcher (every command but the transaction-control ones
is queued once its name, arity and gates pass). EXEC answers EXECABORT when a command failed
to queue, a null array when a WATCHed key changed (any write, deletion, FLUSH, or expiry of a
key that was live when watched), and otherwise the array of every queued command's reply,
errors included. Commands inside EXEC never block, and a restricted user's commands are
checked against the ACL again (rules may have changed since they were queued).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.engine import acl, errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import NULL_ARRAY, OK, ErrorReply

if TYPE_CHECKING:
    from resplite.engine.client import Client


_ACL_CHANGED_REASON = {
    acl.DENIED_CMD: errors.ACL_CHANGED_COMMAND,
    acl.DENIED_KEY: errors.ACL_CHANGED_KEY,
    acl.DENIED_CHANNEL: errors.ACL_CHANGED_CHANNEL,
}


@command("multi")
def multi(client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        raise CommandError(errors.MULTI_NESTED)
    client.multi = []
    client.multi_bytes = 0
    client.multi_dirty = False
    return OK


def _end_transaction(client: Client) -> None:
    client.multi = None
    client.multi_dirty = False
    client.server.unwatch_all(client)


@command("discard")
def discard(client: Client, argv: list[bytes]) -> Any:
    if client.multi is None:
        raise CommandError(errors.DISCARD_WITHOUT_MULTI)
    _end_transaction(client)
    return OK


@command("exec")
def exec_(client: Client, argv: list[bytes]) -> Any:
    queued = client.multi
    if queued is None:
        raise CommandError(errors.EXEC_WITHOUT_MULTI)
    server = client.server
    if client.multi_dirty:
        _end_transaction(client)
        raise CommandError(errors.EXECABORT)
    if client.watch_dirty or server.watched_key_expired(client):
        _end_transaction(client)
        return NULL_ARRAY
    client.multi = None
    server.unwatch_all(client)  # Redis unwatches before running so our own writes don't count
    call = server.dispatcher.call
    replies: list[Any] = []
    client.executing_multi = True
    # The queued commands all see one time, as in Redis 7+ (its command time snapshot is
    # taken once per outermost call): no key expires halfway through a transaction.
    pinned = server.clock.pin()
    try:
        for spec, args in queued:
            user = client.acl
            if user is not None:
                # Rules may have changed since the command was queued: Redis checks again.
                result, pos = acl.check_command(user, spec, args)
                if result != acl.OK:
                    obj = spec.fullname.encode() if result == acl.DENIED_CMD else args[pos]
                    server.log_acl_denial(client, result, obj)
                    message = errors.ACL_CHANGED_IN_MULTI + _ACL_CHANGED_REASON[result]
                    server.count_error(message)
                    replies.append(ErrorReply(message))
                    continue
            replies.append(call(client, spec, args))
    finally:
        if pinned:
            server.clock.unpin()
        client.executing_multi = False
        client.multi_dirty = False
    return replies


@command("watch")
def watch(client: Client, argv: list[bytes]) -> Any:
    if client.multi is not None:
        raise CommandError(errors.WATCH_INSIDE_MULTI)
    for key in argv[1:]:
        client.server.watch(client, key)
    return OK


@command("unwatch")
def unwatch(client: Client, argv: list[bytes]) -> Any:
    client.server.unwatch_all(client)
    return OK
