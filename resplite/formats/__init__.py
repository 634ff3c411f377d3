"""Redis's on-disk formats: RDB values, RDB files and the AOF, pure and free of I/O.

This layer sits between the engine and the data structures: it knows the store's value
types (to write and rebuild them) and uses the pure algorithms (LZF, CRC-64, score text), and
it is used only by the engine, which does the file work.
"""

# Value types defined outside rdb_values register their RDB codecs on import.
from resplite.formats import rdb_arrays, rdb_lists  # noqa: F401
