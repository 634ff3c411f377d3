"""redis-py clients of a test server, with the reply parser chosen per connection.

redis-py picks its parser through the connection pool: the pure-Python RESP2 or RESP3 parser,
or hiredis for either protocol. The integration tests run their redis-py code under each of
the four combinations (:data:`COMBOS`, named by :data:`COMBO_IDS`).
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio
from redis._parsers import (
    _AsyncHiredisParser,
    _AsyncRESP2Parser,
    _AsyncRESP3Parser,
    _HiredisParser,
    _RESP2Parser,
    _RESP3Parser,
)

from support.servers import ServerProcess

COMBOS = [(2, False), (3, False), (2, True), (3, True)]  # (protocol, hiredis)
COMBO_IDS = ["resp2-python", "resp3-python", "resp2-hiredis", "resp3-hiredis"]
_SYNC_PARSERS = {2: _RESP2Parser, 3: _RESP3Parser}
_ASYNC_PARSERS = {2: _AsyncRESP2Parser, 3: _AsyncRESP3Parser}


def sync_client(srv: ServerProcess, protocol: int, hiredis: bool, **kw: Any) -> redis.Redis:
    """A client of ``srv`` whose pool is closed with it."""
    parser = _HiredisParser if hiredis else _SYNC_PARSERS[protocol]
    pool = redis.ConnectionPool(host=srv.host, port=srv.port, protocol=protocol,
                                parser_class=parser, **kw)
    client = redis.Redis(connection_pool=pool)
    client.auto_close_connection_pool = True
    return client


def async_client(
    srv: ServerProcess, protocol: int, hiredis: bool, **kw: Any
) -> redis.asyncio.Redis:
    """:func:`sync_client` for asyncio."""
    parser = _AsyncHiredisParser if hiredis else _ASYNC_PARSERS[protocol]
    pool = redis.asyncio.ConnectionPool(host=srv.host, port=srv.port, protocol=protocol,
                                        parser_class=parser, **kw)
    client = redis.asyncio.Redis(connection_pool=pool)
    client.auto_close_connection_pool = True
    return client
