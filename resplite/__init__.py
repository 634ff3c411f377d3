"""resplite: a Redis-compatible server in Python, built around Redis Streams.

Run it with ``resplite-server`` or ``python -m resplite``; embed it in tests with
:func:`resplite.serve` (see :mod:`resplite.testing`).
"""

from __future__ import annotations

from resplite import build
from resplite.version import REDIS_VERSION, __version__

# Before any compiled module is imported: the finder settles whether they load from their
# extensions or from their sources (stale extensions, RESPLITE_PURE_PYTHON; see build.py).
build.install()

# typing.TYPE_CHECKING without importing typing: ``resplite-server --version`` imports this
# package, and typing would be most of what it costs (type checkers read the name itself).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["REDIS_VERSION", "__version__", "serve"]


def serve(**directives: Any) -> Any:
    """Start an embedded server; see :func:`resplite.testing.embedded.serve`."""
    from resplite.testing.embedded import serve as _serve

    return _serve(**directives)
