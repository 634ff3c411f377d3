"""Test-double kit: an embeddable resplite server and a pytest plugin.

* :func:`serve` (also ``resplite.serve``) starts a server in a background thread or a child
  process and returns a handle with its ``url`` and its ``clock``
  (:mod:`resplite.testing.embedded`).
* The pytest plugin (:mod:`resplite.testing.plugin`, registered through the ``pytest11``
  entry point) gives the fixtures ``resplite_server``, ``redis_url``, ``redis_client``,
  ``aredis_client``, ``resplite_clock`` and ``resplite_factory``.

Importing this package is cheap: the server is only imported when a server is started, so the
plugin costs nothing to test runs that do not use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, ServerHandle, serve

__all__ = ["ClockControl", "ServerHandle", "serve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from resplite.testing import embedded

        return getattr(embedded, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
