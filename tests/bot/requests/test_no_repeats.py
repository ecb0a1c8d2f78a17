"""A reply that repeats one already sent on the platform carries its own reference."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import text

from bot.config import load_settings
from bot.ops.queue import claim_request
from bot.requests import lifecycle
from bot.requests.no_repeats import repeat_params, repeated_by_query, unrepeated_given
from bot.requests.worker import Worker
from pipeline.check import Checker
from pipeline.config import GuardConfig
from pipeline.records import Decision, DecisionStatus, Platform, Post
from pipeline.reply.guard import x_weighted_length
from storage.db import Database
from storage.models import Request, RequestState


def unrepeated(
    db: Database, request_id: int, platform: str, decision: Decision, cfg: GuardConfig
) -> Decision:
    """The repeat check in a session of its own (the worker runs it in its record's)."""
    with db.session() as session:
        params = repeat_params(request_id, platform, decision)
        earlier = session.scalars(repeated_by_query(), params).first()
        return unrepeated_given(earlier, request_id, platform, decision, cfg)


TEXT = "Lemon water does not kill flu viruses, says the ministry: https://ministry.example/flu"
AS_OF = datetime(2026, 11, 30, tzinfo=UTC)


def _request(db: Database, sid: str, state: RequestState, text: str | None) -> int:
    with db.transaction() as session:
        row = Request(platform="x", summons_id=sid, state=state.value, reply_text=text)
        session.add(row)
        session.flush()
        return row.id


def _decision(text: str) -> Decision:
    return Decision(
        status=DecisionStatus.REPLY,
        platform=Platform.X,
        reply=text,
        urls=["https://ministry.example/flu"],
        as_of=AS_OF,
    )


def test_a_new_reply_is_left_as_it_is(db: Database) -> None:
    _request(db, "1", RequestState.POSTED, "Something else entirely.")
    mine = _request(db, "2", RequestState.PROCESSING, None)
    assert unrepeated(db, mine, "x", _decision(TEXT), GuardConfig()) == _decision(TEXT)


def test_a_repeated_reply_gets_this_requests_reference_and_keeps_its_link(db: Database) -> None:
    first = _request(db, "1", RequestState.POSTED, TEXT)
    mine = _request(db, "2", RequestState.PROCESSING, None)
    varied = unrepeated(db, mine, "x", _decision(TEXT), GuardConfig())
    assert varied.reply == f"{TEXT} (ref. {mine})"
    assert varied.urls == ["https://ministry.example/flu"]
    assert varied.reasons[0].startswith(f"the reply repeats request #{first}'s")


def test_a_repeat_of_a_skipped_or_failed_request_is_no_repeat(db: Database) -> None:
    _request(db, "1", RequestState.FAILED, TEXT)
    mine = _request(db, "2", RequestState.PROCESSING, None)
    assert unrepeated(db, mine, "x", _decision(TEXT), GuardConfig()).reply == TEXT


def test_a_repeat_with_no_room_for_the_reference_abstains_with_the_reason(db: Database) -> None:
    # 275 of X's 280: the reply fits, " (ref. N)" does not.
    full = TEXT + " " + "x" * (275 - x_weighted_length(TEXT) - 1)
    assert x_weighted_length(full) == 275
    _request(db, "1", RequestState.POSTED, full)
    mine = _request(db, "2", RequestState.PROCESSING, None)
    result = unrepeated(db, mine, "x", _decision(full), GuardConfig())
    assert result.status is DecisionStatus.ABSTAIN
    assert "a reference does not fit: too_long" in result.reasons[0]


def test_the_repeat_check_looks_the_text_up_by_index_not_by_scanning_requests(
    db: Database,
) -> None:
    # It runs before every post: on a table that only grows, a scan would slow every post.
    mine = _request(db, "2", RequestState.PROCESSING, None)
    with db.session() as session:
        statement = repeated_by_query().params(platform="x", reply=TEXT, request_id=mine)
        compiled = statement.compile(db.engine, compile_kwargs={"literal_binds": True})
        plan = " ".join(
            str(row[-1]) for row in session.execute(text(f"EXPLAIN QUERY PLAN {compiled}"))
        )
    assert "ix_requests_reply_text" in plan, plan


_POST = {"id": "2", "author": "asker", "text": "Lemon water kills flu.", "created_at": "2026-11-30"}
_SUMMONS = {**_POST, "platform": "x", "target": _POST}  # the summons carries the claim itself


class _FixedChecker:
    """The pipeline at `Checker.check`'s interface, answering every post with `TEXT`."""

    def check(self, post: Post, platform: Platform = Platform.X, **_: Any) -> Decision:
        return _decision(TEXT)


def test_the_worker_adds_the_reference_from_the_query_that_loads_the_request(
    main_db: Database,
) -> None:
    # The repeat check rides on the worker's load of the request it records (one query fewer
    # per request, issue 12), on both databases.
    _request(main_db, "1", RequestState.POSTED, TEXT)
    settings = load_settings(database_url=main_db.url)
    settings.mode = "dry-run"
    worker = Worker(settings, main_db, cast(Checker, _FixedChecker()), {})
    with main_db.transaction() as session:
        row = Request(
            platform="x",
            summons_id="2",
            state=RequestState.RECEIVED.value,
            summons=_SUMMONS,
        )
        session.add(row)
        session.flush()
        lifecycle.transition(
            session, row, RequestState.QUEUED, "", lifecycle.Actor(lifecycle.ActorKind.TRIAGE)
        )
        mine = row.id
    assert claim_request(worker, mine)
    worker.process(mine)
    worker.stop()
    with main_db.session() as session:
        stored = session.get(Request, mine)
        assert stored is not None
        assert (stored.state, stored.reply_text) == ("dry_run", f"{TEXT} (ref. {mine})")
