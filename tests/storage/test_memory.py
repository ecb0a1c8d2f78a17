"""The experience memory's queries (storage/memory.py) on SQLite and on PostgreSQL: the
source key of a judged decision is built in SQL ("decision:" || id), and a search is
case-insensitive, on both."""

from __future__ import annotations

from datetime import UTC, datetime

from storage import memory
from storage.db import Database
from storage.models import DecisionRow, MemoryItemRow, MemorySource, Request
from storage.models import Judgment as JudgmentRow

WHEN = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def _judged_decisions(db: Database, count: int) -> list[int]:
    with db.transaction() as session:
        request = Request(platform="x", summons_id="s1", summons={})
        session.add(request)
        session.flush()
        decisions = [
            DecisionRow(request_id=request.id, status="reply", platform="x", as_of=WHEN)
            for _ in range(count)
        ]
        session.add_all(decisions)
        session.flush()
        for decision in decisions:
            session.add(
                JudgmentRow(
                    decision_id=decision.id, kind="reply", mode="satisfactory", helpful=True
                )
            )
        return [d.id for d in decisions]


def test_only_judgments_whose_decision_was_never_distilled_are_pending(main_db: Database) -> None:
    first, second = _judged_decisions(main_db, 2)
    with main_db.transaction() as session:
        memory.mark_distilled(session, f"decision:{first}", 1, WHEN)
    with main_db.session() as session:
        pending = memory.undistilled_judgments(session, limit=10)
    assert [decision.id for _, decision in pending] == [second]


def test_a_search_matches_trigger_or_strategy_in_any_case(main_db: Database) -> None:
    with main_db.transaction() as session:
        for item_id, trigger, strategy in [
            ("a" * 32, "Vaccine claims", "cite the agency"),
            ("b" * 32, "election dates", "quote the VACCINE schedule"),
            ("c" * 32, "weather", "check the forecast"),
        ]:
            session.add(
                MemoryItemRow(
                    id=item_id,
                    phase="search",
                    trigger=trigger,
                    strategy=strategy,
                    kind="improve",
                    created_at=WHEN,
                )
            )
    with main_db.session() as session:
        found = memory.matching_items(session, "vaccine", "search")
        proposed = memory.matching_items(session, "", None, status="proposed", disabled=False)
        approved = memory.matching_items(session, "", None, status="approved")
    assert sorted(r.id for r in found) == ["a" * 32, "b" * 32]
    assert len(proposed) == 3
    assert approved == []


def test_distilled_sources_names_only_those_recorded(main_db: Database) -> None:
    with main_db.transaction() as session:
        session.add(MemorySource(source="review:1", items=0, distilled_at=WHEN))
    with main_db.session() as session:
        assert memory.distilled_sources(session, ["review:1", "review:2"]) == {"review:1"}
        assert memory.distilled_sources(session, []) == set()
