"""Celery on resplite and on a real redis-server: the same behaviour from both.

A Celery app uses the server as its broker (kombu's Redis transport: BRPOP on the queue
lists, the ``unacked`` hash and ``unacked_index`` sorted set for acknowledgements, PUBLISH
and PSUBSCRIBE for the broadcast control commands, Lua scripts for the exchange bindings) and
as its result backend (SETEX of the task meta with ``result_expires`` as its TTL, PUBLISH to
the waiting client's SUBSCRIBE, EVALSHA of Celery's chord scripts). Every test runs on both
servers. A worker runs in a thread of the test process (the solo pool) for the tests of
``TestWithAWorker``; the tests after the class start their own, or none: two workers in one
process stop each other's consumers, so one runs at a time.

What is checked is what a Celery user sees: results, chains, groups, chords, retries with a
countdown, failures with their exception type, revocation, the TTL of stored results, a
message that was not acknowledged within the visibility timeout coming back, and a worker
that stops with a task it holds for later handing it back to its queue.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from support.servers import ServerProcess, redis_server_path, running

pytest.importorskip("celery")
from celery import Celery, chain, chord, group
from celery.contrib.testing.worker import start_worker
from celery.exceptions import TaskRevokedError
from kombu import Connection

# The backend's SETEX, which redis-py deprecates: Celery's code, not this test's.
pytestmark = pytest.mark.filterwarnings("ignore:Call to deprecated setex:DeprecationWarning")

TIMEOUT = 20.0  # a bound on every wait, never reached when things work
RESULT_EXPIRES = 600  # seconds: the TTL the backend gives a stored result
BROKER_DB, BACKEND_DB, KOMBU_DB = 0, 1, 2


class Flaky(Exception):
    """What the retried task raises before it succeeds."""


@dataclass
class Setup:
    server: ServerProcess
    app: Any  # celery.Celery: the package has no type information
    tasks: dict[str, Any]  # the registered tasks by short name
    broker: redis.Redis
    backend: redis.Redis


def _wait_until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def _make_app(url: str) -> tuple[Any, dict[str, Any]]:
    app = Celery("resplite_celery", broker=f"{url}/{BROKER_DB}", backend=f"{url}/{BACKEND_DB}",
                 set_as_current=False)
    app.conf.update(
        result_expires=RESULT_EXPIRES,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=False,
        task_default_retry_delay=0,
    )
    # start_worker's ping check runs this module's ``celery.ping`` task.
    app.loader.import_module("celery.contrib.testing.tasks")

    @app.task(name="t.add", shared=False)
    def add(a: int, b: int) -> int:
        return a + b

    @app.task(name="t.total", shared=False)
    def total(values: list[int]) -> int:
        return sum(values)

    @app.task(name="t.boom", shared=False)
    def boom(key: str) -> None:
        raise KeyError(key)

    @app.task(name="t.flaky", shared=False, bind=True, max_retries=3)
    def flaky(self: Any, failures: int) -> int:
        if self.request.retries < failures:
            raise self.retry(exc=Flaky(), countdown=0.2)
        return int(self.request.retries)

    return app, {"add": add, "total": total, "boom": boom, "flaky": flaky}


@pytest.fixture(scope="module", params=["redis", "resplite"])
def setup(request: pytest.FixtureRequest) -> Iterator[Setup]:
    if request.param == "redis" and redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    threads_before = set(threading.enumerate())
    with running(request.param) as server:
        app, tasks = _make_app(server.url)
        broker = redis.Redis(host=server.host, port=server.port, db=BROKER_DB)
        backend = redis.Redis(host=server.host, port=server.port, db=BACKEND_DB)
        try:
            yield Setup(server, app, tasks, broker, backend)
        finally:
            # Results still referenced would unsubscribe from a stopped server when collected.
            gc.collect()
            app.close()
            broker.close()
            backend.close()
    # The workers' threads are gone with the workers (kombu's and redis-py's too).
    _wait_until(lambda: set(threading.enumerate()) <= threads_before, "the workers' threads")


@pytest.fixture(scope="class")
def worker(setup: Setup) -> Iterator[None]:
    with start_worker(setup.app, pool="solo", perform_ping_check=True, shutdown_timeout=10):
        yield


@pytest.mark.usefixtures("worker")
class TestWithAWorker:
    def test_a_task_result_comes_back(self, setup: Setup) -> None:
        result = setup.tasks["add"].delay(2, 3)
        assert result.get(timeout=TIMEOUT) == 5
        assert result.state == "SUCCESS"
        assert result.successful()


    def test_stored_results_expire_after_result_expires(self, setup: Setup) -> None:
        result = setup.tasks["add"].delay(1, 1)
        assert result.get(timeout=TIMEOUT) == 2
        key = f"celery-task-meta-{result.id}"
        assert setup.backend.exists(key)
        assert RESULT_EXPIRES - 10 < setup.backend.ttl(key) <= RESULT_EXPIRES
        result.forget()
        assert not setup.backend.exists(key)


    def test_a_chain_passes_each_result_on(self, setup: Setup) -> None:
        add = setup.tasks["add"]
        assert chain(add.s(1, 2), add.s(3), add.s(4))().get(timeout=TIMEOUT) == 10


    def test_a_group_gathers_its_results_in_order(self, setup: Setup) -> None:
        add = setup.tasks["add"]
        assert group(add.s(i, i) for i in range(5))().get(timeout=TIMEOUT) == [0, 2, 4, 6, 8]


    def test_a_chord_runs_its_callback_once_and_cleans_up(self, setup: Setup) -> None:
        add, total = setup.tasks["add"], setup.tasks["total"]
        result = chord([add.s(i, i) for i in range(4)])(total.s())
        assert result.get(timeout=TIMEOUT) == 12
        group_id = result.parent.id
        # The callback's claim (CHORD_CLEANUP_LUA) ends as the "done" marker with its TTL, and
        # the header's results (the ``.j`` list), counters and dedup set are deleted.
        claim = f"celery-taskset-meta-{group_id}.c"
        assert setup.backend.get(claim) == b"done"
        assert 0 < setup.backend.ttl(claim) <= 300
        for suffix in (".j", ".t", ".s", ".d"):
            assert not setup.backend.exists(f"celery-taskset-meta-{group_id}{suffix}")


    def test_a_failing_task_reports_its_exception(self, setup: Setup) -> None:
        result = setup.tasks["boom"].delay("missing")
        with pytest.raises(KeyError, match="missing"):
            result.get(timeout=TIMEOUT)
        assert result.state == "FAILURE"
        assert isinstance(result.result, KeyError)
        assert "KeyError" in result.traceback
        assert result.get(timeout=TIMEOUT, propagate=False).args == ("missing",)


    def test_a_retry_with_a_countdown_runs_again(self, setup: Setup) -> None:
        # The retry is an ETA message the worker holds unacknowledged until its time comes.
        result = setup.tasks["flaky"].delay(1)
        assert result.get(timeout=TIMEOUT) == 1
        assert result.state == "SUCCESS"


    def test_a_task_revoked_before_it_arrives_is_not_run(self, setup: Setup) -> None:
        task_id = uuid.uuid4().hex
        # reply=True waits for the worker's answer (a broadcast, answered on a reply queue).
        replies = setup.app.control.revoke(task_id, reply=True, timeout=TIMEOUT, limit=1)
        assert len(replies) == 1
        assert "revoked" in next(iter(replies[0].values()))["ok"]
        result = setup.tasks["add"].apply_async((1, 2), task_id=task_id)
        with pytest.raises(TaskRevokedError):
            result.get(timeout=TIMEOUT)
        assert result.state == "REVOKED"


    def test_a_held_eta_task_revoked_is_not_run(self, setup: Setup) -> None:
        result = setup.tasks["add"].apply_async((2, 2), countdown=1)
        # Held by the worker: in the unacked hash, indexed by delivery time.
        _wait_until(lambda: setup.broker.zcard("unacked_index") >= 1, "the worker to hold it")
        assert len(setup.app.control.revoke(result.id, reply=True, timeout=TIMEOUT, limit=1)) == 1
        with pytest.raises(TaskRevokedError):
            result.get(timeout=TIMEOUT)
        assert result.state == "REVOKED"
        _wait_until(lambda: setup.broker.zcard("unacked_index") == 0, "the acknowledgement")
        assert setup.broker.hlen("unacked") == 0


    def test_the_worker_answers_a_broadcast_ping(self, setup: Setup) -> None:
        replies = setup.app.control.ping(timeout=TIMEOUT, limit=1)
        assert [list(r.values()) for r in replies] == [[{"ok": "pong"}]]


def test_an_unacknowledged_message_comes_back_after_the_visibility_timeout(
        setup: Setup) -> None:
    # kombu directly, on a database of its own (the worker's unacked index is per database).
    url = f"{setup.server.url}/{KOMBU_DB}"
    visibility_timeout = 0.3
    options = {"visibility_timeout": visibility_timeout}
    with Connection(url, transport_options=options) as first, \
            Connection(url, transport_options=options) as second:
        queue = first.SimpleQueue("vt")
        queue.put({"n": 1})
        message = queue.get(timeout=TIMEOUT)
        assert message.payload == {"n": 1}
        assert not message.headers.get("redelivered")
        db = redis.Redis(host=setup.server.host, port=setup.server.port, db=KOMBU_DB)
        with contextlib.closing(db):
            assert db.zcard("unacked_index") == 1
            assert db.llen("vt") == 0
            # Another consumer restores what stayed unacknowledged for longer than the
            # visibility timeout (ZRANGE BYSCORE REV under a lock, then a WATCH/MULTI per tag).
            delivered_at = db.zscore("unacked_index", message.delivery_tag)
            assert delivered_at is not None
            _wait_until(lambda: time.time() > delivered_at + visibility_timeout + 0.05,
                        "the visibility timeout")
            second.default_channel.qos.restore_visible()
            assert db.zcard("unacked_index") == 0
            assert db.hlen("unacked") == 0
            assert db.llen("vt") == 1
            again = second.SimpleQueue("vt")
            redelivered = again.get(timeout=TIMEOUT)
            assert redelivered.payload == {"n": 1}
            assert redelivered.headers["redelivered"] is True
            redelivered.ack()
            assert db.hlen("unacked") == 0
            again.close()
        queue.close()


def test_a_stopping_worker_hands_its_held_tasks_back(setup: Setup) -> None:
    # A worker of its own (the class's has stopped) on a queue of its own, stopped while it
    # holds an ETA task.
    result = setup.tasks["add"].apply_async((3, 3), countdown=60, queue="held")
    with start_worker(setup.app, pool="solo", perform_ping_check=False, queues=["held"],
                      shutdown_timeout=10):
        _wait_until(lambda: setup.broker.llen("held") == 0
                    and setup.broker.zcard("unacked_index") == 1, "the worker to hold it")
    assert setup.broker.zcard("unacked_index") == 0
    assert setup.broker.hlen("unacked") == 0
    assert setup.broker.llen("held") == 1
    assert result.state == "PENDING"
    setup.broker.delete("held")
