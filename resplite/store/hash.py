"""The hash value type: a map of field names to values, both byte strings.

Fields live in a ``dict``, whose insertion order is the order Redis keeps in a listpack:
a new field goes to the end, overwriting a field keeps its place, deleting and adding it
again moves it to the end. A ``listpackex`` keeps the fields with a TTL first, in TTL
order, as Redis does: a field whose TTL is set goes right before the first field whose TTL
is the same or later (or that has none), and one whose TTL is removed (an overwrite,
PERSIST) goes to the end (:meth:`Hash._place`). HGETALL, HKEYS, HVALS, HSCAN and HRANDFIELD
therefore answer small hashes in exactly Redis's order.

Encoding (what OBJECT ENCODING reports) follows Redis's one-way rule: a hash starts as a
``listpack`` and becomes a ``hashtable`` for good once it holds more fields than
``hash-max-listpack-entries`` or is given a field or value longer than
``hash-max-listpack-value`` bytes. The store does not read the configuration: commands pass
the limits to :meth:`Hash.fit_lengths` and :meth:`Hash.fit_size` at the points where Redis
checks them. Nothing ever converts a hash back, as in Redis (short of a reload).

Scanning: a listpack is answered whole, with cursor 0, as Redis does. A hashtable is walked
through a :class:`~resplite.store.scanindex.ScanIndex` over its fields, built by the first
HSCAN that needs it and kept up to date by :meth:`Hash.set` (new fields are queued for the
next merge); a cursor is a position in hash order, so it stays valid whatever is written
between two calls, and every field present for the whole iteration is returned.

Field expiry (Redis 7.4): ``ttls`` maps a field to its absolute expiry in Unix ms; a field
without an entry has no TTL. A min-heap of ``(time, field)`` finds the next field due in
O(log n); entries made stale by a later TTL, a PERSIST, an overwrite or a delete are skipped
when met (``ttls`` is the truth), and the heap is rebuilt when stale entries dominate. A
field whose time has come is removed by :meth:`Hash.expire_due`, which the commands call on
every lookup of the hash and the keyspace's active cycle calls on the hashes it tracks.
Writing a field with :meth:`Hash.set` clears its TTL (HSET), unless ``keep_ttl`` (HINCRBY,
HSETEX KEEPTTL). Once a listpack hash has been given a TTL it reports ``listpackex`` for
good, as Redis converts it and never back.

Size: ``strbytes`` is the sum of the lengths of every field and value, kept by each method
that changes ``fields``, so :meth:`Hash.memory_usage` costs O(1) (see
:mod:`resplite.store.sizes`).

Invariants: a hash stored in the keyspace is never empty (commands delete the key when its
last field goes); keys and values are ``bytes``; ``scan_index`` is None while listpack;
every field in ``ttls`` is in ``fields``; ``ttls`` is None until a TTL is first set;
``strbytes`` is the sum of ``len(f) + len(v)`` over ``fields``.
"""

from __future__ import annotations

import heapq
import random
from itertools import islice
from typing import Final

from resplite.store.scanindex import ScanIndex
from resplite.store.sizes import BYTES_HEADER, DICT_ENTRY, INT_OBJECT, POINTER, TUPLE2

Pair = tuple[bytes, bytes]

# What an empty hash costs (the object, its dict and its heap list), what each field adds
# beyond the bytes of its name and value, and what a field's TTL adds (its entry in
# ``ttls`` and in the heap).
_BASE = 200
_FIELD = DICT_ENTRY + 2 * BYTES_HEADER
_FIELD_TTL = DICT_ENTRY + INT_OBJECT + TUPLE2 + POINTER


class Hash:
    """A Redis hash."""

    __slots__ = ("_ttl_heap", "ex", "fields", "listpack", "scan_index", "strbytes", "ttls")

    type_name: Final = "hash"  # TYPE

    def __init__(self) -> None:
        self.fields: dict[bytes, bytes] = {}
        self.listpack = True
        self.scan_index: ScanIndex | None = None
        self.ttls: dict[bytes, int] | None = None
        self.ex = False  # a listpack that has had a field TTL: "listpackex"
        self._ttl_heap: list[tuple[int, bytes]] = []
        self.strbytes = 0

    def __len__(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        return f"<Hash {self.encoding} fields={len(self.fields)}>"

    @property
    def encoding(self) -> str:
        """OBJECT ENCODING's answer."""
        if self.listpack:
            return "listpackex" if self.ex else "listpack"
        return "hashtable"

    # -- encoding -------------------------------------------------------------------------

    def convert(self) -> None:
        """Become a hashtable for good."""
        self.listpack = False

    def fit_lengths(self, strings: list[bytes], max_value: int) -> None:
        """Convert when any of ``strings`` (fields and values about to be stored) is longer
        than ``max_value``, as Redis checks before a write."""
        if self.listpack:
            for s in strings:
                if len(s) > max_value:
                    self.listpack = False
                    return

    def fit_size(self, max_entries: int) -> None:
        """Convert when the hash holds more than ``max_entries`` fields (after a write)."""
        if self.listpack and len(self.fields) > max_entries:
            self.listpack = False

    # -- fields ---------------------------------------------------------------------------

    def get(self, field: bytes) -> bytes | None:
        return self.fields.get(field)

    def set(self, field: bytes, value: bytes, keep_ttl: bool = False) -> bool:
        """Store ``value`` under ``field``; returns whether the field is new. The field's
        TTL is cleared unless ``keep_ttl``."""
        fields = self.fields
        old = fields.get(field)
        fields[field] = value
        if self.ttls and not keep_ttl and self.ttls.pop(field, None) is not None and \
                self.listpack:
            self._place(field, None)
        if old is not None:
            self.strbytes += len(value) - len(old)
            return False
        self.strbytes += len(field) + len(value)
        index = self.scan_index
        if index is not None:
            index.pending.append(field)
            if len(index.pending) > len(fields) + 1024:
                self.scan_index = None  # cheaper to rebuild at the next HSCAN
        return True

    def delete(self, field: bytes) -> bool:
        """Remove ``field``; returns whether it was there. The scan index drops it lazily."""
        if self.ttls:
            self.ttls.pop(field, None)
        old = self.fields.pop(field, None)
        if old is None:
            return False
        self.strbytes -= len(field) + len(old)
        return True

    # -- field expiry ---------------------------------------------------------------------

    def ttl_of(self, field: bytes) -> int | None:
        """The absolute expiry (Unix ms) of ``field``, None when it has none."""
        return self.ttls.get(field) if self.ttls else None

    def set_ttl(self, field: bytes, when_ms: int, place: bool = True) -> None:
        """Give an existing ``field`` an expiry time (the hash becomes ``listpackex``).
        ``place=False`` keeps the field where it is (a loader, reading fields already in
        Redis's order)."""
        if self.ttls is None:
            self.ttls = {}
        self.ttls[field] = when_ms
        if place and self.listpack:
            self._place(field, when_ms)
        self.ex = True
        heap = self._ttl_heap
        heapq.heappush(heap, (when_ms, field))
        if len(heap) > 2 * len(self.ttls) + 64:
            self._ttl_heap = [(w, f) for f, w in self.ttls.items()]
            heapq.heapify(self._ttl_heap)

    def mark_ex(self) -> None:
        """Become ``listpackex`` (Redis converts a listpack before setting any TTL)."""
        self.ex = True

    def persist(self, field: bytes) -> bool:
        """Remove the TTL of ``field``; returns whether it had one."""
        ttls = self.ttls
        if ttls is None or ttls.pop(field, None) is None:
            return False
        if self.listpack:
            self._place(field, None)
        return True

    def _place(self, field: bytes, when_ms: int | None) -> None:
        """Move ``field`` where Redis's listpackex re-inserts a field whose TTL changed: with
        a TTL, before the first other field whose TTL is ``when_ms`` or later or that has
        none; without, to the end. O(n) in a listpack's few fields."""
        fields = self.fields
        value = fields.pop(field)
        if when_ms is not None:
            ttls = self.ttls or {}
            items = list(fields.items())
            for i, (other, _) in enumerate(items):
                when = ttls.get(other)
                if when is None or when >= when_ms:
                    fields.clear()
                    fields.update(items[:i])
                    fields[field] = value
                    fields.update(items[i:])
                    return
        fields[field] = value

    def next_expiry(self) -> int | None:
        """The earliest field expiry, or None when no field has a TTL."""
        ttls = self.ttls
        if not ttls:
            return None
        heap = self._ttl_heap
        while heap:
            when, field = heap[0]
            if ttls.get(field) == when:
                return when
            heapq.heappop(heap)
        return None

    def expire_due(self, now_ms: int) -> list[bytes]:
        """Remove the fields whose time has passed and return them.

        A field is due when its time is before ``now_ms``: it lives while ``now <= when``,
        Redis's lazy rule for fields (``hashTypeIsExpired``) and for keys alike. The keyspace's
        active cycle uses the same rule (see :mod:`resplite.store.keyspace`).
        """
        ttls = self.ttls
        if not ttls:
            return []
        heap = self._ttl_heap
        gone: list[bytes] = []
        while heap:
            when, field = heap[0]
            if when >= now_ms:
                break
            heapq.heappop(heap)
            if ttls.get(field) == when:
                del ttls[field]
                self.strbytes -= len(field) + len(self.fields.pop(field))
                gone.append(field)
        return gone

    # -- whole-value operations -----------------------------------------------------------

    def copy(self) -> Hash:
        """An independent copy (COPY), in the same encoding and field order."""
        twin = Hash()
        twin.fields = dict(self.fields)
        twin.strbytes = self.strbytes
        twin.listpack = self.listpack
        twin.ex = self.ex
        if self.ttls:
            twin.ttls = dict(self.ttls)
            twin._ttl_heap = [(w, f) for f, w in self.ttls.items()]
            heapq.heapify(twin._ttl_heap)
        return twin

    def recount(self) -> None:
        """Recompute ``strbytes`` after a loader filled ``fields`` directly (RDB)."""
        self.strbytes = sum(len(f) + len(v) for f, v in self.fields.items())

    def memory_usage(self) -> int:
        """An estimate of the bytes the hash occupies, in O(1) (MEMORY USAGE, used_memory)."""
        ttls = self.ttls
        return (_BASE + _FIELD * len(self.fields) + self.strbytes
                + (_FIELD_TTL * len(ttls) if ttls else 0))

    # -- iteration ------------------------------------------------------------------------

    def scan(self, cursor: int, count: int) -> tuple[int, list[bytes]]:
        """One HSCAN step: the next cursor and the fields it covers (values not included).

        A listpack answers every field and cursor 0 whatever the cursor and count, as Redis
        does; a hashtable about ``count`` fields from ``cursor`` on in hash order.
        """
        if self.listpack:
            return 0, list(self.fields)
        index = self.scan_index
        if index is None:
            index = self.scan_index = ScanIndex(self.fields)
        return index.scan(self.fields, cursor, count)

    def random_field(self, rng: random.Random | None = None) -> bytes:
        """One field drawn uniformly (the hash must not be empty)."""
        pick = (rng or random).randrange(len(self.fields))
        return next(islice(self.fields, pick, None))

    def random_pairs(self, count: int, rng: random.Random | None = None) -> list[Pair]:
        """``count`` pairs drawn with repetition, in draw order (a negative HRANDFIELD count)."""
        items = list(self.fields.items())
        return (rng or random).choices(items, k=count)

    def distinct_pairs(self, count: int, rng: random.Random | None = None) -> list[Pair]:
        """``count`` different pairs (``count`` below the size of the hash).

        A listpack answers them in its own order, as Redis samples a listpack front to back;
        a hashtable in no particular order.
        """
        items = list(self.fields.items())
        picks = (rng or random).sample(range(len(items)), count)
        if self.listpack:
            picks.sort()
        return [items[i] for i in picks]
