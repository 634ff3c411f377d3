"""Compiled parts of resplite, all optional: where one cannot be built (no C compiler),
the install goes on and resplite uses the pure-Python code it replaces."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        # LZF compression for RDB strings (resplite.algorithms.lzf.compress, in C).
        Extension("resplite.algorithms._lzf", ["resplite/algorithms/_lzf.c"], optional=True),
    ],
)
