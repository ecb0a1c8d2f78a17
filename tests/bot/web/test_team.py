"""Review as a team, without a browser: bulk actions that confirm and leave escalated items
out, approvals that confirm before a public post, escalation as a gate, claims, the next
item, the edit as a diff and the guard on the edited text, candidate passages, outcome
labels, and the migration that turns old escalation labels into escalations."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import select

from bot.moderation import actions as review
from storage.db import Database, upgrade
from storage.models import DecisionRow, Request, RequestState
from tests.bot.web.app_env import ADMIN, MODERATOR, SENIOR, AppEnv, Session
from tests.bot.web.seed import BLOG, MINISTRY, PAPER, REPLY


def _escalate(app_env: AppEnv, name: str) -> int:
    rid = app_env.world.ids[name]
    review.escalate(app_env.db, rid, MODERATOR, "needs a doctor")
    return rid


# --- 1. Nothing preselected; bulk actions confirm with the count; escalated items left out ---


def test_the_queue_preselects_nothing_and_offers_no_checkbox_for_escalated_items(
    app_env: AppEnv, moderator: Session
) -> None:
    escalated = _escalate(app_env, "review_x")
    html = moderator.client.get("/queue").text
    boxes = re.findall(r'<input type="checkbox" name="ids" value="(\d+)"([^>]*)>', html)
    assert sorted(int(i) for i, _ in boxes) == sorted(
        [app_env.world.ids["review_local"], app_env.world.ids["review_bsky"]]
    )
    assert all("checked" not in rest for _, rest in boxes)
    assert f'value="{escalated}"' not in html


def test_a_bulk_action_runs_only_once_confirmed_with_its_count(
    app_env: AppEnv, moderator: Session
) -> None:
    ids = app_env.world.ids
    escalated = _escalate(app_env, "review_x")
    selected = [str(ids["review_local"]), str(ids["review_bsky"]), str(escalated)]
    asked = moderator.client.post(
        "/queue/bulk",
        data={"csrf_token": moderator.token, "action": "approve", "ids": selected},
        follow_redirects=False,
    )
    # No confirmation: a page that asks, with the count of what it would do; nothing done.
    assert asked.status_code == 200
    assert "Approve 2 items?" in asked.text
    assert f"#{escalated}: escalated" in asked.text
    assert 'name="confirmed" value="2"' in asked.text
    assert all(
        app_env.request(int(i)).state == RequestState.AWAITING_REVIEW.value for i in selected
    )
    # A count that does not match (the selection changed) asks again.
    again = moderator.post("/queue/bulk", action="approve", ids=selected, confirmed="3")
    assert again.status_code == 200 and "Approve 2 items?" in again.text
    # Confirmed: both done, and the escalated item is still left out, server-side.
    done = moderator.post("/queue/bulk", action="approve", ids=selected, confirmed="2")
    assert done.status_code == 303
    assert app_env.request(ids["review_local"]).state == RequestState.POSTED.value
    assert app_env.request(ids["review_bsky"]).state == RequestState.POSTING.value
    assert app_env.request(escalated).state == RequestState.AWAITING_REVIEW.value
    assert app_env.history(escalated)[-1].action == "escalate"


def test_a_bulk_action_on_escalated_items_only_does_nothing(
    app_env: AppEnv, moderator: Session
) -> None:
    escalated = _escalate(app_env, "review_x")
    response = moderator.post("/queue/bulk", action="reject", ids=[escalated], confirmed="1")
    assert response.status_code == 303
    assert app_env.request(escalated).state == RequestState.AWAITING_REVIEW.value
    assert "Nothing to reject" in moderator.client.get("/queue").text


def test_approving_a_public_post_asks_first_and_a_file_post_does_not(
    app_env: AppEnv, moderator: Session
) -> None:
    x = app_env.world.ids["review_x"]
    asked = moderator.post(f"/requests/{x}/approve")
    assert asked.status_code == 200
    assert "Post this reply in public on x?" in asked.text
    assert 'name="confirmed" value="yes"' in asked.text
    assert app_env.request(x).state == RequestState.AWAITING_REVIEW.value
    # The item page's form says so to a browser that runs scripts.
    assert (
        'data-confirm="Post this reply in public on x?"'
        in moderator.client.get(f"/requests/{x}").text
    )
    assert moderator.post(f"/requests/{x}/approve", confirmed="yes").status_code == 303
    assert app_env.request(x).state == RequestState.POSTING.value
    # Save and approve asks too, after saving the edit.
    bsky = app_env.world.ids["review_bsky"]
    text = f"Lemon water cannot reach the airway cells where flu viruses grow. {PAPER}"
    asked = moderator.post(f"/requests/{bsky}/edit", text=text, then="approve")
    assert asked.status_code == 200 and "in public on bluesky" in asked.text
    assert app_env.request(bsky).reply_text == text
    assert app_env.request(bsky).state == RequestState.AWAITING_REVIEW.value
    # The local adapter writes to a file: no question.
    local = app_env.world.ids["review_local"]
    assert moderator.post(f"/requests/{local}/approve").status_code == 303
    assert app_env.request(local).state == RequestState.POSTED.value


# --- 2. Escalation is a gate -----------------------------------------------------------------


def test_only_a_senior_moderator_or_an_admin_edits_or_decides_an_escalated_item(
    app_env: AppEnv, moderator: Session, senior: Session, admin: Session
) -> None:
    ids = app_env.world.ids
    x = _escalate(app_env, "review_x")
    page = moderator.client.get(f"/requests/{x}").text
    assert 'id="escalation-notice"' in page and 'id="approve"' not in page
    assert 'id="draft-text"' not in page  # the text is the senior's to change now
    # Refused server-side whatever the page shows, and the refusal is in the history.
    assert moderator.post(f"/requests/{x}/approve", confirmed="yes").status_code == 303
    moderator.post(f"/requests/{x}/reject", reason="other")
    text = f"Lemon water cannot reach the airway cells where flu viruses grow. {BLOG}"
    moderator.post(f"/requests/{x}/edit", text=text, then="approve", confirmed="yes")
    row = app_env.request(x)
    assert row.state == RequestState.AWAITING_REVIEW.value and row.reply_text != text
    refused = [a for a in app_env.history(x) if a.action == "refused"]
    assert [(a.actor, a.detail["tried"]) for a in refused] == [
        (MODERATOR, "approve"),
        (MODERATOR, "reject"),
        (MODERATOR, "approve"),
    ]
    assert "only a senior moderator or an admin" in refused[0].detail["why"]
    assert "approve refused" in moderator.client.get(f"/requests/{x}").text
    # A plain edit is refused as well: the senior approves the text that was escalated.
    before = app_env.request(x).reply_text
    assert moderator.post(f"/requests/{x}/edit", text=text, then="save").status_code == 303
    assert app_env.request(x).reply_text == before
    assert [a.detail["tried"] for a in app_env.history(x) if a.action == "refused"][-1] == "edit"
    # A senior moderator edits and decides it; an admin decides another.
    assert 'id="approve"' in senior.client.get(f"/requests/{x}").text
    assert senior.post(f"/requests/{x}/edit", text=text, then="save").status_code == 303
    assert app_env.request(x).reply_text == text
    senior.post(f"/requests/{x}/approve", confirmed="yes")
    assert app_env.request(x).state == RequestState.POSTING.value
    assert app_env.history(x)[-1].actor == SENIOR
    bsky = _escalate(app_env, "review_bsky")
    admin.post(f"/requests/{bsky}/reject", reason="other", note="no")
    assert app_env.request(bsky).state == RequestState.REJECTED.value
    assert ids["review_local"]  # untouched by all this
    assert app_env.request(ids["review_local"]).state == RequestState.AWAITING_REVIEW.value


def test_the_queue_filters_escalated_items(app_env: AppEnv, moderator: Session) -> None:
    x = _escalate(app_env, "review_x")

    def queue(**params: str) -> list[int]:
        html = moderator.client.get("/queue", params=params).text
        return [int(i) for i in re.findall(r'<tr class="[^"]*" data-id="(\d+)"', html)]

    assert queue(escalated="only") == [x]
    assert x not in queue(escalated="exclude") and len(queue(escalated="exclude")) == 2
    assert len(queue()) == 3


# --- 3. Claims, the next item, diffs, the guard on edits, passages, outcomes ----------------


def test_a_claimed_item_is_shown_as_such_and_only_its_holder_works_on_it(
    app_env: AppEnv, moderator: Session, senior: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    assert moderator.post(f"/requests/{rid}/claim").status_code == 303
    assert app_env.request(rid).claimed_by == MODERATOR
    assert f'data-claimed-by="{MODERATOR}"' in senior.client.get("/queue").text
    page = senior.client.get(f"/requests/{rid}").text
    assert f"claimed by {MODERATOR}" in page and 'id="take-over"' in page
    assert 'id="approve"' not in page
    senior.post(f"/requests/{rid}/approve")
    assert app_env.request(rid).state == RequestState.AWAITING_REVIEW.value
    # Taking over is recorded; then the holder decides it and the claim ends.
    senior.post(f"/requests/{rid}/claim", take_over="yes")
    assert app_env.request(rid).claimed_by == SENIOR
    senior.post(f"/requests/{rid}/claim", assignee=MODERATOR)
    assert app_env.request(rid).claimed_by == MODERATOR
    senior.post(f"/requests/{rid}/claim", assignee="nobody_demo")
    assert app_env.request(rid).claimed_by == MODERATOR
    assert [(a.actor, a.action, a.detail) for a in app_env.history(rid)] == [
        (MODERATOR, "claim", {}),
        (SENIOR, "claim", {"from": MODERATOR}),
        (SENIOR, "assign", {"assignee": MODERATOR, "from": SENIOR}),
    ]
    assert "yours" in moderator.client.get(f"/requests/{rid}").text
    moderator.post(f"/requests/{rid}/reject", reason="other")
    row = app_env.request(rid)
    assert row.state == RequestState.REJECTED.value and row.claimed_by is None


def test_a_decision_moves_on_to_the_next_item(app_env: AppEnv, moderator: Session) -> None:
    ids = app_env.world.ids  # oldest first: review_x, review_local, review_bsky
    response = moderator.post(f"/requests/{ids['review_x']}/reject", reason="other")
    assert response.headers["location"] == f"/queue/next?after={ids['review_x']}"
    step = moderator.client.get(response.headers["location"], follow_redirects=False)
    assert step.headers["location"] == f"/requests/{ids['review_local']}?after={ids['review_x']}"
    page = moderator.client.get(step.headers["location"]).text
    assert f'id="previous" href="/requests/{ids["review_x"]}"' in page and "rejected" in page
    # Someone else's item and escalated items are skipped for a moderator.
    review.claim(app_env.db, ids["review_local"], ADMIN)
    review.escalate(app_env.db, ids["review_bsky"], ADMIN)
    last = moderator.client.get("/queue/next", follow_redirects=False)
    assert last.headers["location"] == "/queue"


def test_an_edit_is_shown_as_a_diff_and_the_guard_runs_on_the_edited_text(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    text = REPLY.replace("a drink cannot reach", "no drink can reach")
    moderator.post(f"/requests/{rid}/edit", text=text, then="save")
    page = moderator.client.get(f"/requests/{rid}").text
    diff = re.search(r'id="draft-diff".*?</details>', page, re.S)
    assert diff is not None
    assert "<del>a</del><ins>no</ins>" in diff.group(0) and "<del>cannot</del><ins>can</ins>" in (
        diff.group(0)
    )
    assert 'id="current-guard"' in page and "passes" in page
    # The live check while typing: the guard's verdict on the text in the box, and its diff.
    live = moderator.client.get(
        f"/requests/{rid}/measure", params={"text": text + " https://other.example/x"}
    ).json()
    assert live["valid"] is False and any("url_not_evidence" in p for p in live["problems"])
    assert live["changed"] is True and "<ins>" in live["diff"]
    # A text that no longer passes (changed behind the guard's back) cannot be approved.
    with app_env.db.transaction() as session:
        row = session.get(Request, rid)
        assert row is not None
        row.reply_text = "Trust me. https://other.example/x"
    page = moderator.client.get(f"/requests/{rid}").text
    assert "Guard on this text: <b>fails</b>" in page
    moderator.post(f"/requests/{rid}/approve")
    assert app_env.request(rid).state == RequestState.AWAITING_REVIEW.value
    assert "the guard refuses the draft" in moderator.client.get(f"/requests/{rid}").text


def test_a_needs_llm_item_shows_its_candidate_passages(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["needs_llm"]
    with app_env.db.transaction() as session:
        decision = session.scalars(select(DecisionRow).where(DecisionRow.request_id == rid)).one()
        decision.trace = {
            **decision.trace,
            "candidates": [
                {"url": MINISTRY, "index": 0, "text": "Lemon water <b>does not</b>.", "score": 0.4},
                {"url": "https://paper.example/", "index": 3, "text": "Best one.", "score": 0.9},
            ],
        }
    page = moderator.client.get(f"/requests/{rid}").text
    section = re.search(r'id="candidates".*?</section>', page, re.S)
    assert section is not None
    assert section.group(0).index("Best one.") < section.group(0).index("Lemon water")
    assert "&lt;b&gt;does not&lt;/b&gt;" in section.group(0)
    assert "Needs an LLM" in page


def test_posted_and_rejected_items_are_labelled(app_env: AppEnv, moderator: Session) -> None:
    posted = moderator.client.get(f"/requests/{app_env.world.ids['posted_as_is']}").text
    assert re.search(r'id="outcome">\s*<b>Posted</b>', posted)
    rejected = moderator.client.get(f"/requests/{app_env.world.ids['rejected']}").text
    assert re.search(r'id="outcome">\s*<b>Rejected</b>: nothing was or will be posted', rejected)
    assert 'id="approve"' not in rejected


# --- The migration -------------------------------------------------------------------------


def test_items_escalated_before_the_migration_stay_escalated(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0004")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for i, (state, reason) in enumerate(
            [
                ("awaiting_review", "escalated by mod_demo: needs a doctor"),
                ("awaiting_review", ""),
                ("rejected", "escalated by x"),
            ]
        ):
            conn.execute(
                sa.text(
                    "INSERT INTO requests (platform, summons_id, requester, summons, state, mode,"
                    " reason, attempts, post_attempts, created_at, updated_at) VALUES ('local',"
                    " :sid, 'a', '{}', :state, 'review', :reason, 0, 0, :at, :at)"
                ),
                {"sid": f"s{i}", "state": state, "reason": reason, "at": "2026-12-01 09:00:00"},
            )
    engine.dispose()
    db = Database(url)  # migrates to head
    with db.session() as session:
        rows = {r.summons_id: r for r in session.scalars(select(Request))}
        assert rows["s0"].escalated_by == "mod_demo" and rows["s0"].escalated_at is not None
        assert rows["s1"].escalated_by is None and rows["s2"].escalated_by is None
    db.dispose()


def test_an_escalated_item_gets_its_own_deadline_shown_and_expires_after_it(
    app_env: AppEnv, moderator: Session
) -> None:
    x = app_env.world.ids["review_x"]  # 30 h old: past its 24 h review deadline
    assert moderator.post(f"/requests/{x}/escalate", note="needs a doctor").status_code == 303
    row = app_env.request(x)
    assert row.escalated_at is not None and row.review_deadline is not None
    ttl = timedelta(hours=app_env.settings.runtime.escalation_ttl_h)
    assert row.review_deadline - row.escalated_at == pytest.approx(ttl, abs=timedelta(seconds=5))
    page = moderator.client.get(f"/requests/{x}").text
    deadline = row.review_deadline.strftime("%Y-%m-%d %H:%M UTC")
    assert f"a senior decides by {deadline} or it expires" in page
    queue = moderator.client.get("/queue", params={"escalated": "only"}).text
    assert deadline in queue
    before = review.expire_overdue(app_env.db, now=row.review_deadline - timedelta(minutes=1))
    assert x not in before  # the others, whose 24 h ran out first, are gone
    assert review.expire_overdue(app_env.db, now=row.review_deadline + timedelta(minutes=1)) == [x]
    assert app_env.request(x).state == RequestState.EXPIRED.value
