"""The Procrastinate backend without a server: Procrastinate's own in-memory connector (its
documented way to test tasks, `procrastinate.testing.InMemoryConnector`) with the runtime on
SQLite. The one-transaction enqueue is PostgreSQL's and is tested in test_queue_postgres.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from procrastinate import App
from procrastinate.testing import InMemoryConnector
from sqlalchemy import select

from bot.config import ConfigError, Settings
from bot.ops.leader import SoleLeader, leadership_for
from bot.ops.queue import (
    PROCESS_TASK,
    WORKER_KEY,
    WorkerContext,
    attach,
    build_app,
    claim_request,
    detach,
    uses_procrastinate,
)
from bot.ops.runtime import Runtime, open_runtime
from bot.ops.service import Bot, build_adapters
from bot.requests import lifecycle
from bot.requests.worker import Worker
from pipeline.records import utcnow
from storage.db import DatabaseBusy
from storage.models import Request, RequestEvent, RequestState
from testing.fakes.openai_server import FakeLLM, Reply
from tests.bot.runtime.harness import Env, summons

S = RequestState


@pytest.fixture
def env(tmp_path: Path, fake_llm: FakeLLM) -> Env:
    # Every post read as an opinion: the check ends after one LLM call, so these tests are
    # about the queue, not the research.
    fake_llm.script(
        "analyze",
        Reply.json(
            {
                "checkable": False,
                "reason": "an opinion",
                "claims": [],
                "questions": [],
                "queries": [],
            }
        ),
    )
    return Env(tmp_path, fake_llm)


class Deployment:
    """A scheduler and a worker process in one: the runtime, its bot, and a Procrastinate app
    on an in-memory job table that both share."""

    def __init__(self, runtime: Runtime, settings: Settings) -> None:
        self.runtime = runtime
        self.connector = InMemoryConnector()
        self.app: App = build_app(settings, self.connector)
        adapters = build_adapters(settings)
        self.bot = Bot(runtime, adapters)
        self.worker = Worker(runtime.settings, runtime.db, runtime.checker, adapters)
        attach(runtime.db, self.app)

    def jobs(self, task: str = PROCESS_TASK) -> list[dict[str, Any]]:
        return [job for job in self.connector.jobs.values() if job["task_name"] == task]

    def run_jobs(self, worker: Worker | None = None) -> None:
        context = WorkerContext(worker=worker or self.worker, stalled_after_s=30)
        self.app.run_worker(
            wait=False, install_signal_handlers=False, additional_context={WORKER_KEY: context}
        )


@pytest.fixture
def deployment(env: Env) -> Iterator[Deployment]:
    settings = env.settings(mode="live")
    with open_runtime(settings) as runtime:
        deployment = Deployment(runtime, runtime.settings)
        yield deployment
        detach(runtime.db)


def _states(deployment: Deployment) -> dict[str, str]:
    with deployment.runtime.db.session() as session:
        return {
            sid: state for sid, state in session.execute(select(Request.summons_id, Request.state))
        }


def test_triage_enqueues_one_job_per_request_it_queues_and_none_for_skipped(
    env: Env, deployment: Deployment
) -> None:
    env.add(summons("1"), summons("2"), summons("3", text="stop"))
    deployment.bot.poll_adapter("local")
    states = _states(deployment)
    assert states == {"1": "queued", "2": "queued", "3": "skipped"}
    with deployment.runtime.db.session() as session:
        queued = set(session.scalars(select(Request.id).where(Request.state == "queued")))
    assert sorted(job["args"]["request_id"] for job in deployment.jobs()) == sorted(queued)


def test_workers_running_every_job_twice_check_each_request_once(
    env: Env, deployment: Deployment
) -> None:
    env.add(*(summons(str(n)) for n in range(3)))
    deployment.bot.poll_adapter("local")
    # Every job deferred twice (a stalled-job retry, a sweep): the second run is a no-op.
    for job in list(deployment.jobs()):
        deployment.app.tasks[PROCESS_TASK].defer(request_id=job["args"]["request_id"])
    deployment.run_jobs()
    assert set(_states(deployment).values()) == {"abstained"}
    with deployment.runtime.db.session() as session:
        claims = session.scalars(
            select(RequestEvent.request_id).where(RequestEvent.reason == "claimed")
        ).all()
    assert sorted(claims) == [1, 2, 3]
    # Each of the six succeeded, and was deleted as finished jobs are (`delete_jobs`).
    assert deployment.jobs() == []


def test_a_job_for_a_request_another_worker_holds_changes_nothing(
    env: Env, deployment: Deployment
) -> None:
    env.add(summons("1"))
    deployment.bot.poll_adapter("local")
    (request_id,) = [job["args"]["request_id"] for job in deployment.jobs()]
    holder = Worker(
        deployment.runtime.settings,
        deployment.runtime.db,
        deployment.runtime.checker,
        {},
    )
    assert claim_request(holder, request_id)
    deployment.run_jobs()
    with deployment.runtime.db.session() as session:
        request = session.get(Request, request_id)
        assert request is not None
        assert (request.state, request.lease_owner) == ("processing", holder.name)
        actors = session.scalars(
            select(RequestEvent.actor).where(RequestEvent.request_id == request_id)
        ).all()
    assert not any(deployment.worker.name in actor for actor in actors)
    holder.stop()


def test_a_retry_gets_a_job_scheduled_at_the_retry_time(deployment: Deployment) -> None:
    db = deployment.runtime.db
    retry_at = utcnow() + timedelta(minutes=5)
    with db.transaction() as session:
        new = Request(platform="local", summons_id="r1", state=S.PROCESSING.value)
        session.add(new)
        session.flush()
        request_id = new.id
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        request.next_attempt_at = retry_at
        lifecycle.transition(
            session,
            request,
            S.RETRY,
            "attempt 1 failed",
            lifecycle.Actor(lifecycle.ActorKind.WORKER),
        )
    (job,) = deployment.jobs()
    assert job["args"] == {"request_id": request_id}
    assert job["scheduled_at"] is not None
    assert abs(job["scheduled_at"] - retry_at) < timedelta(seconds=1)
    # A worker reaching it early leaves it alone: the lifecycle keeps the retry time.
    deployment.connector.jobs[job["id"]]["scheduled_at"] = None
    deployment.run_jobs()
    with db.session() as session:
        assert session.get(Request, request_id).state == S.RETRY.value  # type: ignore[union-attr]


def test_only_transient_errors_are_retried_by_procrastinate(env: Env) -> None:
    app = build_app(env.settings(), InMemoryConnector())
    strategy = app.tasks[PROCESS_TASK].retry_strategy
    assert strategy is not None
    job = app.tasks[PROCESS_TASK].configure().job
    assert strategy.get_retry_exception(DatabaseBusy("locked"), job) is not None
    assert strategy.get_retry_exception(ValueError("a bug"), job) is None


def test_the_procrastinate_backend_needs_postgresql(env: Env) -> None:
    settings = env.settings()
    assert uses_procrastinate(settings) is False  # the embedded default
    settings.queue.backend = "procrastinate"
    with pytest.raises(ConfigError, match="PostgreSQL"):
        uses_procrastinate(settings)
    settings.database_url = "postgresql+psycopg://bot@db.internal/factnote"
    assert uses_procrastinate(settings) is True


def test_on_sqlite_the_one_process_is_always_the_leader(env: Env) -> None:
    leader = leadership_for(env.settings().database_url, retry_s=1)
    assert isinstance(leader, SoleLeader)
    leader.start()
    assert leader.is_leader()
    leader.stop()
