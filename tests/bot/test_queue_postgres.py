"""The Procrastinate backend on a real PostgreSQL: a request's move to the queue and its job
commit together or not at all, and requests left without a job get one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from bot import lifecycle
from bot.config import Settings, load_settings
from bot.queue import PROCESS_TASK, _sweep, attach, detach, enqueuer, ensure_schema
from storage.db import Database
from storage.models import Request, RequestState

pytestmark = pytest.mark.postgres
S = RequestState
TRIAGE = lifecycle.Actor(lifecycle.ActorKind.TRIAGE)


@pytest.fixture
def queued_db(pg_db: Database) -> Iterator[tuple[Database, Settings]]:
    settings = load_settings(database_url=pg_db.url)
    settings.queue.backend = "procrastinate"
    assert ensure_schema(pg_db.url) is True
    assert ensure_schema(pg_db.url) is False  # a second worker's start changes nothing
    attach(pg_db, enqueuer(settings))
    yield pg_db, settings
    detach(pg_db)


def _received(db: Database, sid: str) -> int:
    with db.transaction() as session:
        request = Request(platform="local", summons_id=sid, state=S.RECEIVED.value)
        session.add(request)
        lifecycle.created(session, request, lifecycle.Actor(lifecycle.ActorKind.INTAKE), "")
        session.flush()
        return request.id


def _jobs(db: Database) -> list[tuple[int, str]]:
    with db.session() as session:
        rows = session.execute(
            text(
                "SELECT (args ->> 'request_id')::int, status::text FROM procrastinate_jobs "
                "WHERE task_name = :task ORDER BY id"
            ),
            {"task": PROCESS_TASK},
        ).all()
    return [(row[0], row[1]) for row in rows]


def test_the_job_commits_with_the_queued_request_and_rolls_back_with_it(
    queued_db: tuple[Database, Settings],
) -> None:
    db, _ = queued_db
    kept, undone = _received(db, "1"), _received(db, "2")
    with db.transaction() as session:
        request = session.get(Request, kept)
        assert request is not None
        lifecycle.transition(session, request, S.QUEUED, "", TRIAGE)
    with pytest.raises(RuntimeError, match="crash"), db.transaction() as session:
        request = session.get(Request, undone)
        assert request is not None
        lifecycle.transition(session, request, S.QUEUED, "", TRIAGE)
        session.flush()  # the job row is written here, on this transaction's connection
        assert _count_in(session) == 2  # both jobs visible inside the transaction
        raise RuntimeError("crash before commit")
    assert _jobs(db) == [(kept, "todo")]
    with db.session() as session:
        assert session.get(Request, undone).state == S.RECEIVED.value  # type: ignore[union-attr]


def _count_in(session: Session) -> int:
    return int(session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one())


def test_claimable_requests_without_a_job_get_one_from_the_sweep(
    queued_db: tuple[Database, Settings],
) -> None:
    db, _ = queued_db
    orphan = _received(db, "1")
    detach(db)  # queued before the backend was switched on: no job
    with db.transaction() as session:
        request = session.get(Request, orphan)
        assert request is not None
        lifecycle.transition(session, request, S.QUEUED, "", TRIAGE)
    assert _jobs(db) == []
    _, settings = queued_db
    attach(db, enqueuer(settings))
    assert _sweep(db) == 1
    assert _sweep(db) == 0  # it has a pending job now
    assert _jobs(db) == [(orphan, "todo")]
