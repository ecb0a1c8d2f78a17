"""The audit report reads the request event log (issue 12): its state changes, counted by
change and kind of actor, each linked to the requests behind it."""

from __future__ import annotations

import html
import re

from bot.reports.audit import collect, render_html
from storage.db import Database
from storage.models import RequestEvent
from tests.bot.web.seed import seed


def figures(page: str) -> dict[str, str]:
    return {
        html.unescape(k): v.strip() for k, v in re.findall(r'data-key="([^"]+)">([^<]*)<', page)
    }


def _event(request_id: int, from_state: str | None, to: str, actor: str) -> RequestEvent:
    return RequestEvent(
        request_id=request_id,
        from_state=from_state,
        to_state=to,
        actor=actor,
        reason="",
    )


def test_state_changes_are_counted_by_change_and_actor_kind(db: Database) -> None:
    world = seed(db)
    a, b = world.ids["review_local"], world.ids["posted_as_is"]
    with db.transaction() as session:
        session.query(RequestEvent).delete()
        session.add_all(
            [
                _event(a, None, "received", "intake"),
                _event(a, "received", "queued", "triage"),
                _event(a, "queued", "processing", "worker:w1"),
                _event(a, "processing", "retry", "worker:w1"),
                _event(a, "retry", "processing", "worker:w2"),
                _event(b, None, "received", "intake"),
                _event(b, "awaiting_review", "posting", "moderator:alice"),
            ]
        )
    data = collect(db)
    shown = figures(render_html(data))
    assert shown["transition:new -> received (intake)"] == "2"
    assert shown["transition:processing -> retry (worker)"] == "1"
    assert shown["transition:awaiting_review -> posting (moderator)"] == "1"
    assert data.drill.get("transition:new -> received (intake)") == sorted([a, b])
    assert sum(data.transitions.values()) == 7


def test_a_report_without_events_says_so(db: Database) -> None:
    seed(db)
    with db.transaction() as session:
        session.query(RequestEvent).delete()
    page = render_html(collect(db))
    assert "no state changes recorded" in page
