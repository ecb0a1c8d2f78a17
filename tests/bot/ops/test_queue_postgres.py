"""The Procrastinate backend on a real PostgreSQL: a request's move to the queue and its job
commit together or not at all, and requests left without a job get one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from bot.config import Settings, load_settings
from bot.ops.queue import (
    PROCESS_TASK,
    _sweep,
    attach,
    attached,
    detach,
    enqueuer,
    ensure_schema,
)
from bot.requests import lifecycle
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


def _queue(session: Session, request_id: int) -> None:
    request = session.get(Request, request_id)
    assert request is not None
    lifecycle.transition(session, request, S.QUEUED, "", TRIAGE)


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


@pytest.fixture
def two_received(queued_db: tuple[Database, Settings]) -> tuple[Database, int, int]:
    db, _ = queued_db
    return db, _received(db, "1"), _received(db, "2")


def test_the_job_commits_with_the_queued_request_and_rolls_back_with_it(
    two_received: tuple[Database, int, int],
) -> None:
    db, kept, undone = two_received
    with db.transaction() as session:
        _queue(session, kept)
    with pytest.raises(RuntimeError, match="crash"), db.transaction() as session:
        _queue(session, undone)
        # What the commit would do first: the job row, on this transaction's connection.
        writer = attached(db)
        assert writer is not None
        writer(session)
        assert _count_in(session) == 2  # both jobs visible inside the transaction
        raise RuntimeError("crash before commit")
    assert _jobs(db) == [(kept, "todo")]
    with db.session() as session:
        assert session.get(Request, undone).state == S.RECEIVED.value  # type: ignore[union-attr]


def test_a_move_to_the_queue_undone_by_a_savepoint_gets_no_job(
    two_received: tuple[Database, int, int],
) -> None:
    db, undone, kept = two_received
    with db.transaction() as session:
        try:
            with session.begin_nested():
                _queue(session, undone)
                session.flush()  # noted as queued here
                raise RuntimeError("this request's triage failed")
        except RuntimeError:
            pass
        _queue(session, kept)
    assert _jobs(db) == [(kept, "todo")]


def _count_in(session: Session) -> int:
    return int(session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one())


def test_claimable_requests_without_a_job_get_one_from_the_sweep(
    queued_db: tuple[Database, Settings],
) -> None:
    db, _ = queued_db
    orphan = _received(db, "1")
    detach(db)  # queued before the backend was switched on: no job
    with db.transaction() as session:
        _queue(session, orphan)
    assert _jobs(db) == []
    _, settings = queued_db
    attach(db, enqueuer(settings))
    assert _sweep(db) == 1
    assert _sweep(db) == 0  # it has a pending job now
    assert _jobs(db) == [(orphan, "todo")]
