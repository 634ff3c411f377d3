"""resplite: a Redis-compatible server in Python, built around Redis Streams.

Run it with ``resplite-server`` or ``python -m resplite``; embed it in tests with
:func:`resplite.serve` (see :mod:`resplite.testing`).
"""

from __future__ import annotations

from typing import Any

from resplite.version import REDIS_VERSION, __version__

__all__ = ["REDIS_VERSION", "__version__", "serve"]


def serve(**directives: Any) -> Any:
    """Start an embedded server; see :func:`resplite.testing.embedded.serve`."""
    from resplite.testing.embedded import serve as _serve

    return _serve(**directives)
