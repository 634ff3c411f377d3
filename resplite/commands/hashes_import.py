"""HIMPORT (Redis 8.10): hashes built from a connection's prepared fieldsets.

HIMPORT PREPARE names an ordered list of field names (a *fieldset*) for the connection that
sends it; HIMPORT SET then builds a hash from one fieldset and as many values, paired by
position; HIMPORT DISCARD and DISCARDALL drop fieldsets. Fieldsets live on the
:class:`~resplite.engine.client.Client` (``fieldsets``, created on first use): no other
connection sees them, and they go with the connection or a RESET.

HIMPORT SET replaces a hash at the key (its TTL and field TTLs included) and refuses any
other type (WRONGTYPE). The hash it builds has the fields in the fieldset's order and the
encoding HSET would give the same pairs (a listpack unless ``hash-max-listpack-entries`` or
``-value`` is exceeded); Redis may keep such hashes in a shared-layout encoding, which no
reply shows. It reports ``hset`` as its keyspace event and is logged to the append-only file
as ``DEL`` plus ``HSET`` of the pairs (in MULTI/EXEC, as one command logged as several is),
since a replay has no fieldset.

The error texts contain what client libraries' tests against Redis look for ("no such
fieldset", "duplicate field name", "value count"); their exact wording is resplite's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resplite.commands.hashes import listpack_limits, lookup_hash
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import HASH
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Status
from resplite.store.hash import Hash

if TYPE_CHECKING:
    from resplite.engine.client import Client


@command("himport|prepare")
def himport_prepare(client: Client, argv: list[bytes]) -> Status:
    name, fields = argv[2], argv[3:]
    if len(set(fields)) != len(fields):
        raise CommandError(errors.HIMPORT_DUPLICATE_FIELD)
    if client.fieldsets is None:
        client.fieldsets = {}
    client.fieldsets[name] = tuple(fields)  # a name prepared again is replaced
    return OK


@command("himport|set")
def himport_set(client: Client, argv: list[bytes]) -> Status:
    key, name, values = argv[2], argv[3], argv[4:]
    fieldsets = client.fieldsets
    fields = fieldsets.get(name) if fieldsets is not None else None
    if fields is None:
        raise CommandError(errors.HIMPORT_NO_FIELDSET)
    if len(values) != len(fields):
        raise CommandError(errors.HIMPORT_VALUE_COUNT)
    lookup_hash(client, key)  # WRONGTYPE for another type; a hash there is replaced
    max_entries, max_value = listpack_limits(client)
    h = Hash()
    if len(fields) > max_entries:
        h.convert()
    else:
        h.fit_lengths([*fields, *values], max_value)
    pairs: list[bytes] = []
    for field, value in zip(fields, values, strict=True):
        h.set(field, value)
        pairs.append(field)
        pairs.append(value)
    db = client.db
    db.set(key, h, looked_up=True)
    # A replay has no fieldset (it lives on the connection that prepared it): logged as
    # the hash it left.
    client.propagate_as([b"DEL", key])
    client.propagate_as([b"HSET", key, *pairs])
    db.signal_modified(key)
    client.server.notify(HASH, b"hset", key, db.index)
    return OK


@command("himport|discard")
def himport_discard(client: Client, argv: list[bytes]) -> int:
    fieldsets = client.fieldsets
    if fieldsets is None or fieldsets.pop(argv[2], None) is None:
        return 0
    return 1


@command("himport|discardall")
def himport_discardall(client: Client, argv: list[bytes]) -> int:
    fieldsets = client.fieldsets
    count = len(fieldsets) if fieldsets is not None else 0
    client.fieldsets = None
    return count
