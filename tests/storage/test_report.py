"""The audit report's reads (storage/report.py) on SQLite and on PostgreSQL: the guard's part
of each trace is extracted with each backend's JSON operator, a trace without one reads as
none, and a batch keeps to its size and id order."""

from __future__ import annotations

from datetime import UTC, datetime

from storage import report
from storage.db import Database
from storage.models import DecisionRow, Request

WHEN = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def test_guard_reports_come_from_each_trace_and_a_missing_one_is_empty(main_db: Database) -> None:
    guard = [{"ok": False, "problems": ["a URL not from evidence"]}]
    with main_db.transaction() as session:
        request = Request(platform="x", summons_id="s1", summons={})
        session.add(request)
        session.flush()
        checked = DecisionRow(
            request_id=request.id, status="reply", platform="x", as_of=WHEN, trace={"guard": guard}
        )
        bare = DecisionRow(request_id=request.id, status="reply", platform="x", as_of=WHEN)
        session.add_all([checked, bare])
        session.flush()
        ids = (request.id, checked.id, bare.id)
    request_id, checked_id, bare_id = ids
    with main_db.session() as session:
        assert report.guard_reports(session, [request_id]) == {checked_id: guard, bare_id: []}


def test_a_batch_holds_at_most_its_size_in_id_order(main_db: Database) -> None:
    with main_db.transaction() as session:
        session.add_all(Request(platform="x", summons_id=f"s{n}", summons={}) for n in range(5))
    with main_db.session() as session:
        first = report.request_batch(session, 0, None, 3)
        rest = report.request_batch(session, first[-1].id, None, 3)
    assert [r.summons_id for r in first] == ["s0", "s1", "s2"]
    assert [r.summons_id for r in rest] == ["s3", "s4"]
