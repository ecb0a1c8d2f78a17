"""The runtime end to end on the local adapter: intake, triage, modes, posting, review,
reconciliation and failures, with the real pipeline under a scripted fake LLM."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from adapters.local import LocalAdapter
from bot import review
from bot.config import Settings, load_settings
from bot.posting import post_one
from bot.runtime import Runtime, open_runtime
from bot.service import Bot, build_adapters
from pipeline.records import utcnow
from storage.models import OptOut, Request, RequestState, ReviewAction
from tests.fakes.openai_server import FakeLLM, Reply
from tests.support import TIERS, build_index, script_happy_path

CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."


def summons(
    sid: str,
    *,
    author: str = "asker_demo",
    text: str = "@factnote is this true?",
    parent_text: str | None = CLAIM,
    parent_author: str = "claimer_demo",
    parent_id: str | None = None,
) -> dict[str, Any]:
    parent = (
        {
            "id": parent_id or f"p{sid}",
            "author": parent_author,
            "text": parent_text,
            "created_at": "2026-11-29T08:00:00Z",
        }
        if parent_text is not None
        else None
    )
    return {
        "id": sid,
        "author": author,
        "text": text,
        "created_at": "2026-11-29T09:00:00Z",
        "parent": parent,
        "quoted": None,
        "images": [],
    }


class Env:
    def __init__(self, tmp: Path, fake: FakeLLM) -> None:
        self.tmp = tmp
        self.fake = fake
        self.inbox = tmp / "inbox"
        self.inbox.mkdir()
        self.outbox = tmp / "outbox.jsonl"
        self.index = build_index(tmp / "index.sqlite")

    def add(self, *items: dict[str, Any]) -> None:
        for item in items:
            (self.inbox / f"{item['id']}.json").write_text(json.dumps(item), encoding="utf-8")

    def settings(self, mode: str = "dry-run", **runtime: Any) -> Settings:
        settings = load_settings(
            database_url=f"sqlite:///{self.tmp / 'factnote.db'}",
            index_path=str(self.index),
            mode=mode,
        )
        settings.local.inbox = str(self.inbox)
        settings.local.outbox = str(self.outbox)
        settings.credibility.overrides = dict(TIERS)
        settings.llm = self.fake.config()
        settings.runtime.retry_backoff_s = 0
        for key, value in runtime.items():
            setattr(settings.runtime, key, value)
        return settings

    def run_once(self, settings: Settings) -> None:
        with open_runtime(settings) as runtime:
            Bot(runtime, build_adapters(settings)).run_once()

    def requests(self, settings: Settings) -> list[Request]:
        from storage.db import Database

        db = Database(settings.database_url)
        with db.session() as session:
            rows = list(session.scalars(select(Request).order_by(Request.id)))
        db.dispose()
        return rows

    def outbox_lines(self) -> list[dict[str, Any]]:
        return LocalAdapter(self.inbox, self.outbox).replies()


@pytest.fixture
def env(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Env]:
    script_happy_path(fake_llm)
    yield Env(tmp_path, fake_llm)


def test_dry_run_decides_and_records_without_posting(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("dry-run")
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.DRY_RUN.value
    assert request.reply_text and "ministry.example" in request.reply_text
    assert request.mode == "dry-run"
    assert env.outbox_lines() == []


def test_the_same_summons_twice_is_one_request(env: Env) -> None:
    env.add(summons("1"))
    (env.inbox / "copy.json").write_text(json.dumps(summons("1")), encoding="utf-8")
    settings = env.settings()
    env.run_once(settings)
    env.run_once(settings)
    assert len(env.requests(settings)) == 1
    assert env.fake.calls("AnalysisAnswer") == 1


def test_live_mode_posts_exactly_one_reply_to_the_summons(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("live")
    env.run_once(settings)
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    lines = env.outbox_lines()
    assert len(lines) == 1
    assert lines[0]["in_reply_to"] == "1"  # the summons, never its parent
    assert lines[0]["reply_id"] == request.reply_id
    assert lines[0]["text"] == request.reply_text


def test_per_adapter_mode_overrides_the_global_mode(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("live")
    settings.local.mode = "dry-run"
    env.run_once(settings)
    assert env.requests(settings)[0].state == RequestState.DRY_RUN.value
    assert env.outbox_lines() == []


def test_crash_after_posting_before_commit_is_reconciled_not_reposted(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("live")
    adapter = LocalAdapter(env.inbox, env.outbox)
    # Decide in review mode, then put the request where a crash would leave it: claimed for
    # posting, the platform call made (the reply is in the outbox), the commit never done.
    settings.mode = "review"
    env.run_once(settings)
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        request = session.scalars(select(Request)).one()
        request.state = RequestState.POSTING.value
        request.post_attempts = 1
        receipt = adapter.post_reply(
            adapter.fetch_summons(None).summons[0], request.reply_text or ""
        )
    settings.mode = "live"
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    assert request.reply_id == receipt.reply_id
    assert "reconciled" in request.reason
    assert len(env.outbox_lines()) == 1


def test_crash_before_the_platform_call_posts_on_restart(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("review")
    env.run_once(settings)
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        request = session.scalars(select(Request)).one()
        request.state = RequestState.POSTING.value
        request.post_attempts = 1  # claimed, then the process died before posting
    env.run_once(env.settings("live"))
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    assert len(env.outbox_lines()) == 1


def test_stop_opts_out_and_start_opts_back_in(env: Env) -> None:
    env.add(summons("1", author="tired_demo", text="@factnote stop", parent_text=None))
    settings = env.settings()
    env.run_once(settings)
    env.add(summons("2", author="tired_demo"))
    env.run_once(settings)
    first, second = env.requests(settings)
    assert first.state == RequestState.SKIPPED.value and first.reason == "opt-out recorded"
    assert second.state == RequestState.SKIPPED.value and second.reason == "user opted out"
    env.add(summons("3", author="tired_demo", text="@factnote START", parent_text=None))
    env.add(summons("4", author="tired_demo", parent_text="Another claim about lemon water."))
    env.run_once(settings)
    rows = env.requests(settings)
    assert rows[2].reason == "opt-in recorded"
    assert rows[3].state != RequestState.SKIPPED.value
    from storage.db import Database

    db = Database(settings.database_url)
    with db.session() as session:
        assert session.get(OptOut, ("local", "tired_demo")).opted_out is False  # type: ignore[union-attr]
    db.dispose()


def test_loops_and_bots_are_skipped(env: Env) -> None:
    env.add(
        summons("1", parent_author="factnote", parent_text="Our own earlier reply."),
        summons("2", author="factnote"),
        summons("3", author="other_bot_demo"),
    )
    settings = env.settings(known_bots=["other_bot_demo"])
    env.run_once(settings)
    reasons = [r.reason for r in env.requests(settings)]
    assert reasons == [
        "reply to our own reply (no loops)",
        "our own post",
        "summoned by another bot",
    ]
    assert env.fake.calls("AnalysisAnswer") == 0


def test_hourly_limit_per_user(env: Env) -> None:
    env.add(*(summons(str(i), parent_text=f"{CLAIM} Claim number {i}.") for i in range(1, 5)))
    settings = env.settings(per_user_hourly=2)
    env.run_once(settings)
    states = [r.state for r in env.requests(settings)]
    assert states[:2] == [RequestState.DRY_RUN.value] * 2
    assert states[2:] == [RequestState.SKIPPED.value] * 2
    assert env.requests(settings)[3].reason.startswith("rate limit")


def test_a_claim_answered_recently_is_answered_again_without_the_pipeline(env: Env) -> None:
    env.add(summons("1", parent_id="same"))
    settings = env.settings()
    env.run_once(settings)
    calls = len(env.fake.requests)
    env.add(summons("2", author="someone_else_demo", parent_id="same"))
    env.run_once(settings)
    first, second = env.requests(settings)
    assert second.reused_from_id == first.id
    assert second.reply_text == first.reply_text
    assert second.state == RequestState.DRY_RUN.value
    assert len(env.fake.requests) == calls  # no LLM call for the reuse


def test_malformed_summons_is_recorded_and_skipped_without_losing_others(env: Env) -> None:
    (env.inbox / "broken.json").write_text('{"id": "9", "text": 5}', encoding="utf-8")
    env.add(summons("1"))
    settings = env.settings()
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["9"].state == RequestState.SKIPPED.value
    assert "malformed" in rows["9"].reason
    assert rows["1"].state == RequestState.DRY_RUN.value


def test_llm_failure_is_retried_then_failed_and_others_still_served(env: Env) -> None:
    env.fake.script(
        "AnalysisAnswer",
        lambda body: (
            Reply.text("not json")
            if any("broken" in str(m["content"]) for m in body["messages"])
            else Reply.json(
                {
                    "checkable": True,
                    "reason": "",
                    "claims": ["lemon water kills flu"],
                    "questions": [],
                    "queries": ["lemon water kills flu virus"],
                }
            )
        ),
    )
    env.add(summons("1", parent_text="A broken claim about lemon water."), summons("2"))
    settings = env.settings(max_attempts=2, retry_backoff_s=3600)
    env.run_once(settings)
    broken, fine = env.requests(settings)
    assert broken.state == RequestState.RETRY.value
    assert broken.next_attempt_at is not None and broken.next_attempt_at > utcnow()
    assert broken.last_error and "LLMInvalidOutput" in broken.last_error
    assert fine.state == RequestState.DRY_RUN.value
    env.run_once(settings)  # not due yet: untouched
    assert env.requests(settings)[0].attempts == 1
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        session.get(Request, broken.id).next_attempt_at = utcnow()  # type: ignore[union-attr]
    env.run_once(settings)
    broken = env.requests(settings)[0]
    assert broken.state == RequestState.FAILED.value
    assert broken.attempts == 2
    assert "failed after 2 attempt(s)" in broken.reason


def test_review_mode_queues_then_approve_posts_and_history_is_kept(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("review")
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.AWAITING_REVIEW.value
    assert request.review_deadline is not None
    assert env.outbox_lines() == []
    with open_runtime(settings) as runtime:
        refused = review.edit(
            runtime.db, request.id, "See https://evil.example/x", "mod_demo", settings.guard
        )
        assert not refused.valid
        assert refused.problems[0].startswith("url_not_evidence")
        too_long = review.edit(runtime.db, request.id, "x" * 300, "mod_demo", settings.guard)
        assert too_long.problems[0].startswith("too_long")
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


def test_requests_left_processing_by_a_dead_process_are_requeued(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings()
    with open_runtime(settings) as runtime:
        bot = Bot(runtime, build_adapters(settings))
        bot.poll_adapter("local")
        assert bot.worker.claim_next() is not None  # claimed, then "the process dies"
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.DRY_RUN.value
    assert request.attempts == 2


def test_runtime_object_is_usable_for_status(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings()
    env.run_once(settings)
    from bot.summary import overview

    with open_runtime(settings) as runtime:
        assert isinstance(runtime, Runtime)
        view = overview(runtime.db)
    assert view.by_state == {"dry_run": 1}
    assert view.polls[0].adapter == "local"
