"""The item page's history reads the request's event log (issue 12): every state change with
its time, from, to, reason and actor, merged in time order with the moderators' actions."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from bot.web import queries
from storage.models import DecisionRow, RequestEvent, ReviewAction
from tests.bot.web.app_env import MODERATOR, AppEnv, Session


def _history_html(page: str) -> str:
    match = re.search(r'<ol id="history">(.*?)</ol>', page, re.S)
    assert match, "no history list on the page"
    return match.group(1)


def state_change(
    rid: int, at: datetime, old: str | None, new: str, actor: str, reason: str = ""
) -> RequestEvent:
    """One row of the request's event log, as the runtime writes it."""
    return RequestEvent(
        request_id=rid, at=at, from_state=old, to_state=new, actor=actor, reason=reason
    )


def test_a_rejection_shows_the_action_and_the_state_change_it_caused(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    moderator.post(f"/requests/{rid}/reject", reason="other", note="off topic")
    history = _history_html(moderator.client.get(f"/requests/{rid}").text)
    assert f'<b class="actor">{MODERATOR}</b> <span class="action">reject' in history
    change = history.index("awaiting_review &rarr;")
    assert 'state-rejected">rejected</span>' in history[change:]
    assert f'by <b class="actor">moderator:{MODERATOR}</b>' in history[change:]


def test_events_and_actions_are_merged_in_time_order(app_env: AppEnv, admin: Session) -> None:
    rid = app_env.world.ids["review_x"]
    t0, minute = app_env.world.now - timedelta(hours=2), timedelta(minutes=1)
    with app_env.db.transaction() as session:
        session.query(ReviewAction).filter(ReviewAction.request_id == rid).delete()
        session.add_all(
            [
                state_change(rid, t0, None, "received", "intake"),
                state_change(
                    rid, t0 + minute, "received", "queued", "triage", "triaged: fresh summons"
                ),
                ReviewAction(
                    request_id=rid,
                    actor="senior_demo",
                    action="escalate",
                    detail={"note": "needs a doctor"},
                    created_at=t0 + 30 * minute,
                ),
                state_change(
                    rid, t0 + 5 * minute, "queued", "awaiting_review", "worker:w1", "review mode"
                ),
            ]
        )
    with app_env.db.session() as session:
        entries = queries.item_history(session, rid)
    assert [(h.actor, h.event.to_state if h.event else h.action.action) for h in entries] == [  # type: ignore[union-attr]
        ("intake", "received"),
        ("triage", "queued"),
        ("worker:w1", "awaiting_review"),
        ("senior_demo", "escalate"),
    ]
    history = _history_html(admin.client.get(f"/requests/{rid}").text)
    assert history.index("new &rarr;") < history.index("triaged: fresh summons")
    assert history.index("review mode") < history.index("needs a doctor")
    assert 'by <b class="actor">worker:w1</b>: <span class="reason">review mode</span>' in history


def test_an_item_without_events_or_actions_says_so(app_env: AppEnv, admin: Session) -> None:
    rid = app_env.world.ids["dry_run"]
    with app_env.db.transaction() as session:
        session.query(ReviewAction).filter(ReviewAction.request_id == rid).delete()
        session.query(RequestEvent).filter(RequestEvent.request_id == rid).delete()
    assert "No history recorded." in admin.client.get(f"/requests/{rid}").text


def test_the_memory_a_check_was_shown_is_listed_and_links_to_its_item_for_admins(
    app_env: AppEnv, admin: Session, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    used = {"id": "a" * 32, "phase": "writing", "trigger": "lemon water flu", "score": 0.75}
    with app_env.db.transaction() as session:
        [decision] = session.query(DecisionRow).filter(DecisionRow.request_id == rid).all()
        decision.trace = {**(decision.trace or {}), "memory": [used]}
    page = admin.client.get(f"/requests/{rid}").text
    assert f'<a href="/admin/memory/{"a" * 32}">lemon water flu</a>' in page
    assert "(match 0.75)" in page
    plain = moderator.client.get(f"/requests/{rid}").text
    assert "lemon water flu" in plain and "/admin/memory/" not in plain
