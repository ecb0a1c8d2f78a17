"""Moderator actions from the web: the guard on edits, approve/post, reject, escalate, bulk
actions, and the action log that records who did what, when."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from sqlalchemy import select

from pipeline.records import utcnow
from storage.models import RequestState, ReviewAction
from tests.bot.web.app_env import MODERATOR, AppEnv, Session
from tests.bot.web.seed import MINISTRY, PAGE_MINISTRY, REPLY


def _outbox(app_env: AppEnv) -> list[dict[str, str]]:
    if not app_env.outbox.exists():
        return []
    return [json.loads(line) for line in app_env.outbox.read_text().splitlines()]


def test_an_edit_adding_a_url_that_is_not_evidence_is_refused_and_changes_nothing(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    text = "Lemon water does not kill flu viruses. https://other.example/miracle"
    response = moderator.post(f"/requests/{rid}/edit", text=text, then="approve")
    assert response.status_code == 422
    assert "url_not_evidence" in response.text and "other.example/miracle" in response.text
    assert "nothing was changed or approved" in response.text
    row = app_env.request(rid)
    assert row.reply_text == REPLY and row.state == RequestState.AWAITING_REVIEW.value
    assert app_env.history(rid) == []
    assert _outbox(app_env) == []


def test_an_edit_too_long_for_the_platform_is_refused(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["review_local"]
    text = "Lemon water does not kill flu viruses in the throat. " * 6 + MINISTRY
    response = moderator.post(f"/requests/{rid}/edit", text=text, then="save")
    assert response.status_code == 422
    assert "too_long" in response.text
    assert app_env.request(rid).reply_text == REPLY
    # The refused text stays in the box to be fixed.
    assert "Lemon water does not kill flu viruses in the throat. Lemon water" in response.text


def test_a_valid_edit_is_saved_and_logged_with_before_and_after(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    text = f"Lemon water cannot reach the cells where flu viruses multiply.\r\n{MINISTRY}"
    before = utcnow()
    response = moderator.post(f"/requests/{rid}/edit", text=text, then="save")
    assert response.status_code == 303
    row = app_env.request(rid)
    assert row.reply_text == text.replace("\r\n", "\n")  # browsers send CRLF
    assert row.state == RequestState.AWAITING_REVIEW.value
    [action] = app_env.history(rid)
    assert (action.actor, action.action) == (MODERATOR, "edit")
    assert action.detail == {"before": REPLY, "after": text.replace("\r\n", "\n")}
    assert before - timedelta(seconds=1) <= action.created_at <= utcnow()
    page = moderator.client.get(f"/requests/{rid}").text
    assert 'id="history"' in page and MODERATOR in page and "changed the draft" in page


def test_approve_posts_through_an_enabled_adapter(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["review_local"]
    response = moderator.post(f"/requests/{rid}/approve")
    assert response.status_code == 303
    row = app_env.request(rid)
    assert row.state == RequestState.POSTED.value and row.reply_id
    [line] = _outbox(app_env)
    assert line["text"] == REPLY and line["in_reply_to"] == "s-review_local"
    [action] = app_env.history(rid)
    assert (action.actor, action.action, action.detail) == (MODERATOR, "approve", {"text": REPLY})
    page = moderator.client.get(f"/requests/{rid}").text
    assert "approved: posted" in page


def test_save_and_approve_posts_the_edited_text(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["review_local"]
    text = f"Flu viruses multiply in airway cells a drink cannot reach. {MINISTRY}"
    moderator.post(f"/requests/{rid}/edit", text=text, then="approve")
    assert [a.action for a in app_env.history(rid)] == ["edit", "approve"]
    assert _outbox(app_env)[0]["text"] == text
    assert app_env.request(rid).state == RequestState.POSTED.value


def test_approve_leaves_the_item_for_the_bot_when_the_adapter_is_not_enabled(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_x"]  # X is not enabled in these settings
    page = moderator.client.get(f"/requests/{rid}").text
    assert "x adapter is not enabled" in page
    moderator.post(f"/requests/{rid}/approve", confirmed="yes")
    assert app_env.request(rid).state == RequestState.POSTING.value
    assert "the running bot will post it" in moderator.client.get(f"/requests/{rid}").text
    assert _outbox(app_env) == []


def test_reject_needs_a_listed_reason_and_records_the_note(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    moderator.post(f"/requests/{rid}/reject", reason="made up", note="x")
    assert app_env.request(rid).state == RequestState.AWAITING_REVIEW.value
    moderator.post(f"/requests/{rid}/reject", reason="tone or wording", note="too curt")
    row = app_env.request(rid)
    assert row.state == RequestState.REJECTED.value
    assert row.reason == f"rejected by {MODERATOR}: tone or wording (too curt)"
    [action] = app_env.history(rid)
    assert action.detail == {"reason": "tone or wording", "note": "too curt"}
    assert _outbox(app_env) == []


def test_escalate_keeps_the_item_queued_with_the_escalation_deadline(
    app_env: AppEnv, moderator: Session
) -> None:
    # Issue 32: an escalated item waits `runtime.escalation_ttl_h` for a senior, then expires
    # like any other (it once had no deadline at all).
    rid = app_env.world.ids["review_local"]
    before = utcnow()
    moderator.post(f"/requests/{rid}/escalate", note="needs a doctor")
    row = app_env.request(rid)
    ttl = timedelta(hours=app_env.settings.runtime.escalation_ttl_h)
    assert row.state == RequestState.AWAITING_REVIEW.value and row.review_deadline is not None
    assert before + ttl <= row.review_deadline <= utcnow() + ttl
    assert [a.action for a in app_env.history(rid)] == ["escalate"]
    assert "escalated" in moderator.client.get("/queue").text


def test_actions_on_an_item_no_longer_awaiting_review_are_refused(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["dry_run"]
    moderator.post(f"/requests/{rid}/approve")
    moderator.post(f"/requests/{rid}/edit", text="anything", then="save")
    assert app_env.request(rid).state == RequestState.DRY_RUN.value
    assert app_env.history(rid) == []
    page = moderator.client.get(f"/requests/{rid}").text
    assert "not awaiting review" in page
    assert "Approve as shown" not in page


def test_bulk_approve_acts_on_the_selected_items_only(app_env: AppEnv, moderator: Session) -> None:
    ids = app_env.world.ids
    response = moderator.client.post(
        "/queue/bulk",
        data={
            "csrf_token": moderator.token,
            "action": "approve",
            "ids": [str(ids["review_local"]), str(ids["review_x"]), str(ids["dry_run"])],
            "back": "/queue?platform=local",
            "confirmed": "2",  # the two awaiting review
        },
        follow_redirects=False,
    )
    assert response.headers["location"] == "/queue?platform=local"
    assert app_env.request(ids["review_local"]).state == RequestState.POSTED.value
    assert app_env.request(ids["review_x"]).state == RequestState.POSTING.value
    assert app_env.request(ids["review_bsky"]).state == RequestState.AWAITING_REVIEW.value
    assert app_env.request(ids["dry_run"]).state == RequestState.DRY_RUN.value
    page = moderator.client.get("/queue").text
    assert "approved 2 item(s), 1 posted now, 1 left for the bot to post" in page


def test_bulk_reject_records_the_reason_for_each_item(app_env: AppEnv, moderator: Session) -> None:
    ids = [app_env.world.ids["review_x"], app_env.world.ids["review_bsky"]]
    moderator.client.post(
        "/queue/bulk",
        data={
            "csrf_token": moderator.token,
            "action": "reject",
            "ids": [str(i) for i in ids],
            "reason": "not worth a reply",
            "note": "batch",
            "confirmed": "2",
        },
    )
    with app_env.db.session() as session:
        actions = session.scalars(
            select(ReviewAction).where(ReviewAction.request_id.in_(ids))
        ).all()
    assert sorted(a.request_id for a in actions) == sorted(ids)
    assert {(a.actor, a.action, a.detail["reason"]) for a in actions} == {
        (MODERATOR, "reject", "not worth a reply")
    }
    assert all(app_env.request(i).state == RequestState.REJECTED.value for i in ids)


def test_untrusted_text_is_escaped_everywhere(app_env: AppEnv, moderator: Session) -> None:
    rid = app_env.world.ids["review_bsky"]  # its post contains <b> and &
    page = moderator.client.get(f"/requests/{rid}").text
    assert "<b>destroys</b>" not in page
    assert "&lt;b&gt;destroys&lt;/b&gt; viruses &amp; bacteria" in page
    item = moderator.client.get(f"/requests/{app_env.world.ids['review_local']}").text
    assert "<script>alert" not in item  # the stored page text has a script tag
    assert "&lt;script&gt;alert(" in item
    log = moderator.client.get("/decisions?q=destroys").text
    assert "&lt;b&gt;destroys" in log and "<b>destroys" not in log


def test_the_quote_is_highlighted_inside_the_stored_snapshot(
    app_env: AppEnv, moderator: Session
) -> None:
    page = moderator.client.get(f"/requests/{app_env.world.ids['review_local']}").text
    assert (
        "<mark>There is no evidence that lemon water kills influenza viruses in the throat.</mark>"
        " Influenza viruses multiply" in page
    )
    assert f"snapshot {hashlib.sha256(PAGE_MINISTRY.encode()).hexdigest()}" in page


def test_the_length_meter_measures_with_the_platform_rules(
    app_env: AppEnv, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]  # local replies use X's counting
    meter = moderator.client.get(
        f"/requests/{rid}/measure", params={"text": "Hi https://www.who.int/news"}
    )
    measured = {k: meter.json()[k] for k in ("length", "limit", "over")}
    assert measured == {"length": 26, "limit": 280, "over": False}  # a URL weighs 23 on X
    bsky = app_env.world.ids["review_bsky"]
    meter = moderator.client.get(f"/requests/{bsky}/measure", params={"text": "é" * 301})
    measured = {k: meter.json()[k] for k in ("length", "limit", "over")}
    assert measured == {"length": 301, "limit": 300, "over": True}
