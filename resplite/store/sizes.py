"""What the store's Python objects cost in memory, approximately: the terms every value's
``memory_usage()`` and the keyspace's running totals are made of.

Redis asks its allocator how many bytes it handed out. A Python server has no such figure
for its data (the process's resident size also holds the interpreter, and CPython keeps
freed memory for reuse), so each value estimates its own size from what it holds, in O(1):
the lengths of its strings, which it keeps as a running sum, times nothing, plus a fixed
cost per element for the Python objects and table slots around them. The constants below
were measured with ``tracemalloc`` on CPython 3.11 (64-bit) while building large and small
values through the store's own methods; they are averages over a table's growth, so a
figure is within a few per cent of the allocations for large values and an estimate of the
right order for small ones.

Invariant (what callers rely on): a value's ``memory_usage()`` is O(1), or O(number of
consumer groups) for a stream, never O(elements); it changes only when the value does.
"""

from __future__ import annotations

import sys
from typing import Final

from resplite.store.string_value import PrivateInt, RawString, TextString

# A bytes object's header (``sys.getsizeof(b"")``): every stored string pays it.
BYTES_HEADER: Final = sys.getsizeof(b"")
BYTEARRAY_HEADER: Final = sys.getsizeof(bytearray())
# One entry of a large dict, amortised over its growth (hash, key and value pointers, and
# its share of the index table and the spare room kept for growth).
DICT_ENTRY: Final = 52
# One entry of a large set (hash and key pointer, and the spare room).
SET_ENTRY: Final = 42
INT_OBJECT: Final = sys.getsizeof(1 << 40)
FLOAT_OBJECT: Final = sys.getsizeof(1.5)
TUPLE2: Final = sys.getsizeof((1, 2))
POINTER: Final = 8

# Immutable string values: their size follows from their length alone.
FLAT_STRINGS: Final = frozenset({bytes, RawString, TextString, PrivateInt})
