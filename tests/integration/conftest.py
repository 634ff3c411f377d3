"""The fixtures the integration tests share.

* ``server``: a resplite server process for the module (``support.servers``), stopped after
  its last test.
* ``r``: a redis-py client of ``server``, once per protocol and parser
  (``support.redis_py.COMBOS``), on an empty data set; closed after the test.
* ``frozen``: the pytest plugin's in-process server (``resplite_instance``) with its clock
  frozen at ``support.newer.T0``, so that blocking timeouts, idle times and expiries move
  only when the test advances the clock; the clock is given back running.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from support.newer import T0
from support.redis_py import COMBO_IDS, COMBOS, sync_client
from support.servers import ServerProcess, start_resplite


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    srv = start_resplite()
    yield srv
    srv.stop()


@pytest.fixture(params=COMBOS, ids=COMBO_IDS)
def r(request: pytest.FixtureRequest, server: ServerProcess) -> Iterator[redis.Redis]:
    protocol, hiredis = request.param
    client = sync_client(server, protocol, hiredis, decode_responses=True)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def frozen(resplite_instance: Any, resplite_clock: Any) -> Iterator[Any]:
    resplite_clock.freeze()  # first: a running clock would move on before the freeze
    resplite_clock.set(T0)
    yield resplite_instance
    resplite_clock.reset()
