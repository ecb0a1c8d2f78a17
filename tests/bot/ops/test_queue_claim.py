"""A queue job's claim (`bot.ops.queue.claim_request`) reads what processing needs, the mode its
platform is in included, in the claim's own query, on both databases (issue 12)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import event

from bot import overrides
from bot.config import load_settings
from bot.ops.queue import claim_request
from bot.requests import lifecycle
from bot.requests.worker import Worker
from pipeline.check import Checker
from storage.db import Database
from storage.models import Request, RequestState


@pytest.fixture
def worker(main_db: Database) -> Iterator[Worker]:
    settings = load_settings(database_url=main_db.url)
    settings.mode = "dry-run"
    found = Worker(settings, main_db, Checker.__new__(Checker), {})
    yield found
    found.stop()


def _queued(db: Database) -> int:
    with db.transaction() as session:
        request = Request(
            platform="x", summons_id="s1", state=RequestState.RECEIVED.value, summons={"id": "s1"}
        )
        session.add(request)
        lifecycle.created(session, request, lifecycle.Actor(lifecycle.ActorKind.INTAKE), "")
        session.flush()
        triage = lifecycle.Actor(lifecycle.ActorKind.TRIAGE)
        lifecycle.transition(session, request, RequestState.QUEUED, "", triage)
        return request.id


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({}, "dry-run"),
        ({"mode": "review"}, "review"),
        ({"mode": "review", "x.mode": "live"}, "live"),
        ({"mode": "review", "x.mode": ""}, "review"),  # empty: the platform follows the global
    ],
)
def test_the_claim_reads_the_mode_overrides_of_the_requests_platform(
    worker: Worker, main_db: Database, stored: dict[str, str], expected: str
) -> None:
    for key, value in stored.items():
        overrides.set_override(main_db, key, value, "admin")
    request_id = _queued(main_db)
    assert claim_request(worker, request_id)
    assert worker._claimed[request_id].mode == expected
    with main_db.session() as session:
        assert overrides.live_mode_in(session, worker.settings, "x") == expected


def test_the_claim_takes_three_statements_on_sqlite_and_two_on_postgresql(
    worker: Worker, main_db: Database
) -> None:
    request_id = _queued(main_db)
    seen: list[str] = []

    def note(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(main_db.engine, "before_cursor_execute", note)
    try:
        assert claim_request(worker, request_id)
    finally:
        event.remove(main_db.engine, "before_cursor_execute", note)
    # The candidate with its summons and mode overrides, the guarded move, its event; on
    # PostgreSQL the move writes its event in the same statement (an UPDATE in a WITH).
    if main_db.engine.dialect.name == "postgresql":
        assert [s.split()[0] for s in seen] == ["SELECT", "WITH"]
        assert "UPDATE requests" in seen[1] and "INSERT INTO request_events" in seen[1]
    else:
        assert [s.split()[0] for s in seen] == ["SELECT", "UPDATE", "INSERT"]
