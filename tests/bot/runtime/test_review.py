"""The runtime in review mode on the local adapter: queued drafts, a moderator's checked edit,
approval, rejection and expiry, with the history kept."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.moderation import actions as review
from bot.ops.runtime import open_runtime
from bot.ops.service import build_adapters
from bot.requests.posting import post_one
from pipeline.records import utcnow
from storage.models import DecisionRow, RequestState, ReviewAction
from tests.bot.runtime.harness import Env, summons


def test_review_mode_queues_then_approve_posts_and_history_is_kept(env: Env) -> None:
    settings = env.run_one_summons("review")
    [request] = env.requests(settings)
    assert request.state == RequestState.AWAITING_REVIEW.value
    assert request.review_deadline is not None
    assert env.outbox_lines() == []
    with open_runtime(settings) as runtime:
        refused = review.edit(
            runtime.db, request.id, "See https://evil.example/x", "mod_demo", settings.guard
        )
        assert not refused.valid
        assert refused.problems[0].code == "url_not_evidence"
        too_long = review.edit(runtime.db, request.id, "x" * 300, "mod_demo", settings.guard)
        assert too_long.problems[0].code == "too_long"
        new_text = "Lemon water does not kill flu viruses: https://ministry.example/flu/lemon"
        ok = review.edit(runtime.db, request.id, new_text, "mod_demo", settings.guard)
        assert ok.valid
        review.approve(runtime.db, request.id, "mod_demo")
        adapter = build_adapters(settings)["local"]
        assert post_one(runtime.db, adapter, request.id, settings.runtime)
        with runtime.db.session() as session:
            actions = list(session.scalars(select(ReviewAction).order_by(ReviewAction.id)))
    assert [a.action for a in actions] == ["edit", "approve"]
    assert actions[0].detail["after"] == new_text and actions[0].actor == "mod_demo"
    [line] = env.outbox_lines()
    assert line["text"] == new_text


def test_a_moderators_edit_links_the_evidence_it_cites_and_nothing_else(env: Env) -> None:
    settings = env.run_one_summons("review")
    [request] = env.requests(settings)
    with open_runtime(settings) as runtime:
        with runtime.db.session() as session:
            [decision] = session.scalars(select(DecisionRow)).all()
            evidence = [e.url for e in decision.evidence]
            drafted = list(decision.urls)
        # Prefer an evidence page the draft did not cite: the edit adds a link of its own.
        cited = next((u for u in evidence if u not in drafted), evidence[0])
        new_text = f"Lemon water does not kill flu viruses: {cited}"
        assert review.edit(runtime.db, request.id, new_text, "mod_demo", settings.guard).valid
        review.approve(runtime.db, request.id, "mod_demo")
        adapter = build_adapters(settings)["local"]
        assert post_one(runtime.db, adapter, request.id, settings.runtime)
    [line] = env.outbox_lines()
    assert line["text"] == new_text
    assert line["links"] == [cited]


def test_rejected_and_expired_review_items_are_never_posted(env: Env) -> None:
    env.add(summons("1"), summons("2", parent_text="Hot lemon water cures the flu, really."))
    settings = env.settings("review")
    env.run_once(settings)
    first, second = env.requests(settings)
    with open_runtime(settings) as runtime:
        with pytest.raises(review.ReviewError):
            review.reject(runtime.db, first.id, "mod_demo", "because")
        review.reject(runtime.db, first.id, "mod_demo", "tone or wording", "too blunt")
        expired = review.expire_overdue(runtime.db, utcnow() + timedelta(days=2))
    assert expired == [second.id]
    first, second = env.requests(settings)
    assert first.state == RequestState.REJECTED.value and "tone or wording" in first.reason
    assert second.state == RequestState.EXPIRED.value
    env.run_once(env.settings("live"))
    assert env.outbox_lines() == []
