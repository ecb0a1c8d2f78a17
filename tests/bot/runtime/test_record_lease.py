"""A worker records its decision only while it holds the request's lease (issue 12): a result
whose lease went to another worker is dropped whole (no decision row, no event, no post),
whether the lease was gone before the worker read the request or went between that read and
its guarded update (the update is the guard: the recording transaction is rolled back)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

import pytest
from sqlalchemy import event, func, select, update

from adapters.local import LocalAdapter
from bot.config import load_settings
from bot.ops.queue import claim_request
from bot.requests import lifecycle
from bot.requests.worker import Worker
from pipeline.check import Checker
from pipeline.records import Decision, DecisionStatus, Platform, Post, Verdict, utcnow
from storage.db import Database
from storage.models import DecisionRow, Request, RequestEvent, RequestState

_POST = {"id": "7", "author": "asker", "text": "Lemon water kills flu.", "created_at": "2026-11-30"}
_SUMMONS = {**_POST, "platform": "local", "target": _POST}


class _Checker:
    """The pipeline at `Checker.check`'s interface: a live reply, after `during` has run."""

    def __init__(self, during: Callable[[], None] = lambda: None) -> None:
        self.during = during

    def check(self, post: Post, platform: Platform = Platform.X, **_: Any) -> Decision:
        self.during()
        return Decision(
            status=DecisionStatus.REPLY,
            verdict=Verdict.REFUTED,
            confidence=0.9,
            platform=platform,
            reply="No evidence supports this.",
            as_of=utcnow(),
        )


def _queued(db: Database) -> int:
    with db.transaction() as session:
        row = Request(
            platform="local", summons_id="7", state=RequestState.RECEIVED.value, summons=_SUMMONS
        )
        session.add(row)
        session.flush()
        actor = lifecycle.Actor(lifecycle.ActorKind.TRIAGE)
        lifecycle.transition(session, row, RequestState.QUEUED, "", actor)
        return row.id


def _take_over(db: Database) -> None:
    """Another worker now holds the (only) request: its lease ran out and it was claimed
    again."""
    with db.transaction() as session:
        session.execute(update(Request).values(lease_owner="other:1:1"))


def _run(db: Database, tmp: Any, checker: _Checker) -> tuple[int, LocalAdapter]:
    settings = load_settings(database_url=db.url)
    settings.mode = "live"
    outbox = LocalAdapter(tmp / "inbox.jsonl", tmp / "outbox.jsonl")
    worker = Worker(settings, db, cast(Checker, checker), {"local": outbox})
    request_id = _queued(db)
    assert claim_request(worker, request_id)
    worker.process(request_id)
    worker.stop()
    return request_id, outbox


def _assert_dropped(db: Database, request_id: int, outbox: LocalAdapter) -> None:
    with db.session() as session:
        stored = session.get(Request, request_id)
        assert stored is not None
        assert (stored.state, stored.lease_owner) == ("processing", "other:1:1")
        assert stored.reply_text is None and stored.post_attempts == 0
        decisions = session.scalar(select(func.count()).select_from(DecisionRow))
        assert decisions == 0
        moves = session.scalars(select(RequestEvent.to_state).order_by(RequestEvent.id))
        assert list(moves) == ["queued", "processing"]
    assert outbox.replies() == []


def test_a_worker_whose_lease_went_while_it_checked_drops_its_result(
    main_db: Database, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        request_id, outbox = _run(main_db, tmp_path, _Checker(lambda: _take_over(main_db)))
    _assert_dropped(main_db, request_id, outbox)
    assert "lease lost while checking; result dropped" in caplog.text


@pytest.mark.postgres
def test_a_lease_lost_between_the_read_and_the_update_rolls_the_record_back(
    pg_db: Database, tmp_path: Any
) -> None:
    # The worker's read found its lease; another worker takes the request over before the
    # recording UPDATE, which the lease guards: nothing of the result may remain.
    fired: list[bool] = []

    def take_over_before_the_decision_insert(*args: Any) -> None:
        statement = str(args[2])
        if statement.startswith("INSERT INTO decisions") and not fired:
            fired.append(True)
            _take_over(pg_db)  # a connection of its own: committed at once

    event.listen(pg_db.engine, "before_cursor_execute", take_over_before_the_decision_insert)
    try:
        request_id, outbox = _run(pg_db, tmp_path, _Checker())
    finally:
        event.remove(pg_db.engine, "before_cursor_execute", take_over_before_the_decision_insert)
    assert fired
    _assert_dropped(pg_db, request_id, outbox)
