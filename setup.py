"""Compiled parts of resplite, all optional: where one cannot be built (no C compiler),
the install goes on and resplite uses the pure-Python code it replaces."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        # LZF compression for RDB strings (resplite.algorithms.lzf.compress, in C).
        Extension("resplite.algorithms._lzf", ["resplite/algorithms/_lzf.c"],
                  depends=["resplite/algorithms/lzf_codec.h"], optional=True),
        # RDB strings, the commonest record of a snapshot (resplite.formats.rdb_format).
        Extension("resplite.formats._rdb", ["resplite/formats/_rdb.c"],
                  depends=["resplite/algorithms/lzf_codec.h"], optional=True),
        # Listpacks as snapshots read them, and stream nodes' listpacks as they write them.
        Extension("resplite.store._listpack", ["resplite/store/_listpack.c"], optional=True),
    ],
)
