"""The runtime end to end on the local adapter: intake, triage, modes, posting, review,
reconciliation and failures, with the real pipeline under a scripted fake LLM."""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import subprocess
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from adapters.base import (
    FetchResult,
    PlatformError,
    RateBudget,
    ReplyReceipt,
    SocialPost,
    Summons,
    TargetStatus,
)
from adapters.local import LocalAdapter
from bot import cli, review
from bot.config import RuntimeConfig, Settings, load_settings
from bot.intake import poll
from bot.metrics import registry_for
from bot.posting import post_one
from bot.runtime import Runtime, open_runtime
from bot.service import Bot, build_adapters
from bot.summary import overview
from pipeline.records import utcnow
from storage.db import Database, DatabaseBusy
from storage.models import Cursor, DecisionRow, OptOut, Request, RequestState, ReviewAction
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import TIERS, build_index, script_happy_path

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
        # The summonses here are dated 2026-11-29, days before the tests run: lift the age
        # limit (tests of the limit pass max_summons_age_s themselves).
        settings.runtime.max_summons_age_s = 0
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


def dated(item: dict[str, Any], age: timedelta) -> dict[str, Any]:
    return {**item, "created_at": (utcnow() - age).isoformat()}


def test_summonses_older_than_the_default_age_limit_are_skipped_not_answered(env: Env) -> None:
    default = RuntimeConfig().max_summons_age_s
    assert default == 6 * 3600
    env.add(
        dated(summons("1"), timedelta(hours=1)),
        dated(summons("2", author="late_demo"), timedelta(hours=7)),
        summons("3", author="backlog_demo"),  # 2026-11-29: days before the run
    )
    settings = env.settings("live", max_summons_age_s=default)
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["1"].state == RequestState.POSTED.value
    for sid in ("2", "3"):
        assert rows[sid].state == RequestState.SKIPPED.value
        assert rows[sid].reason.startswith("summons older than 6 h (created ")
    assert "(created 2026-11-29 09:00 UTC)" in rows["3"].reason
    assert [line["in_reply_to"] for line in env.outbox_lines()] == ["1"]


def test_the_age_is_counted_to_intake_and_a_stop_command_still_counts_when_old(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.add(
        dated(summons("1"), timedelta(minutes=50)),
        dated(summons("2", author="tired_demo", text="@factnote stop"), timedelta(days=2)),
    )
    settings = env.settings("dry-run", max_summons_age_s=3600)
    with open_runtime(settings) as runtime:
        poll(LocalAdapter(env.inbox, env.outbox), runtime.db, "dry-run")
    # Triage runs half an hour after intake: the 50-minute-old summons was young enough then.
    later = utcnow() + timedelta(minutes=30)
    monkeypatch.setattr("bot.triage.utcnow", lambda: later)
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["1"].state == RequestState.DRY_RUN.value
    assert rows["2"].state == RequestState.SKIPPED.value
    assert rows["2"].reason == "opt-out recorded"


def test_the_same_summons_twice_is_one_request(env: Env) -> None:
    env.add(summons("1"))
    (env.inbox / "copy.json").write_text(json.dumps(summons("1")), encoding="utf-8")
    settings = env.settings()
    env.run_once(settings)
    env.run_once(settings)
    assert len(env.requests(settings)) == 1
    assert env.fake.calls("analyze") == 1


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


def test_the_reply_goes_out_with_exactly_the_links_the_guard_approved(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("live")
    env.run_once(settings)
    db = Database(settings.database_url)
    with db.session() as session:
        [decision] = session.scalars(select(DecisionRow)).all()
        approved = list(decision.urls)
    db.dispose()
    [line] = env.outbox_lines()
    assert approved and line["links"] == approved
    assert all(link in line["text"] for link in approved)


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
    assert env.fake.calls("analyze") == 0


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
    # The same answer, never the same bytes: X refuses a duplicate of our own post.
    assert second.reply_text == f"{first.reply_text} (ref. {second.id})"
    assert second.state == RequestState.DRY_RUN.value
    assert len(env.fake.requests) == calls  # no LLM call for the reuse


def test_the_same_person_asking_twice_in_live_mode_never_gets_the_same_bytes(env: Env) -> None:
    env.add(summons("1", parent_id="same"))
    settings = env.settings("live")
    env.run_once(settings)
    env.add(summons("2", parent_id="same"))
    env.run_once(settings)
    first, second = env.requests(settings)
    assert [first.state, second.state] == [RequestState.POSTED.value] * 2
    texts = [line["text"] for line in env.outbox_lines()]
    assert len(texts) == 2 and texts[0] != texts[1]
    assert texts[1] == f"{texts[0]} (ref. {second.id})"


def test_malformed_summons_is_recorded_and_skipped_without_losing_others(env: Env) -> None:
    (env.inbox / "broken.json").write_text('{"id": "9", "text": 5}', encoding="utf-8")
    env.add(summons("1"))
    settings = env.settings()
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    broken = rows["malformed:broken.json"]
    assert broken.state == RequestState.SKIPPED.value
    assert "malformed summons in broken.json (id '9')" in broken.reason
    assert rows["1"].state == RequestState.DRY_RUN.value


def test_unreadable_inbox_entries_are_skipped_with_reasons_and_the_valid_one_is_served(
    env: Env,
) -> None:
    # Issue 16.2: a non-UTF-8 file, a directory named *.json and deeply nested JSON each
    # stopped the whole poll.
    env.add(summons("1"))
    (env.inbox / "latin1.json").write_bytes(
        json.dumps(summons("2", text="caf\u00e9?"), ensure_ascii=False).encode("latin-1")
    )
    (env.inbox / "folder.json").mkdir()
    deep = json.dumps(summons("3"))[:-1] + ', "links": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (env.inbox / "deep.json").write_text(deep, encoding="utf-8")
    (env.inbox / os.fsdecode(b"name\xff.json")).write_text("{", encoding="utf-8")
    settings = env.settings()
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["1"].state == RequestState.DRY_RUN.value
    skipped = {sid: r.reason for sid, r in rows.items() if sid != "1"}
    assert set(skipped) == {
        "malformed:latin1.json",
        "malformed:folder.json",
        "malformed:deep.json",
        "malformed:name\\xff.json",
    }
    assert all(rows[sid].state == RequestState.SKIPPED.value for sid in skipped)
    assert "not UTF-8" in skipped["malformed:latin1.json"]
    assert "not a regular file" in skipped["malformed:folder.json"]
    assert "recursion limit" in skipped["malformed:deep.json"]
    with open_runtime(settings) as runtime:
        [cursor] = overview(runtime.db).polls
    assert cursor.last_error is None  # bad entries are skipped requests, not a failed poll


def test_a_malformed_entry_does_not_shadow_the_valid_summons_with_its_id(env: Env) -> None:
    # Issue 16.3: the broken file was recorded under id "9", so the fixed one was never read.
    (env.inbox / "9.json").write_text('{"id": "9", "text": 5}', encoding="utf-8")
    settings = env.settings()
    env.run_once(settings)
    env.add(summons("9"))  # the same file, fixed
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["malformed:9.json"].state == RequestState.SKIPPED.value
    assert rows["9"].state == RequestState.DRY_RUN.value


class FailingAdapter:
    """A platform whose poll fails: with a PlatformError, or with a bug (any exception)."""

    name = "flaky"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        raise self.error

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        raise AssertionError("nothing to post")

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        return None

    def recent_posts(
        self, user: str, *, limit: int = 50, since: datetime | None = None
    ) -> list[SocialPost]:
        return []

    def budgets(self) -> list[RateBudget]:
        return []


@pytest.mark.parametrize(
    "error",
    [PlatformError("HTTP 503", retryable=True), KeyError("notifications")],
    ids=["platform-error", "adapter-bug"],
)
def test_a_failed_poll_shows_in_status_and_metrics_and_the_others_still_poll(
    env: Env, tmp_path: Path, error: Exception
) -> None:
    env.add(summons("1"))
    settings = env.settings()
    with open_runtime(settings) as runtime:
        adapters = {**build_adapters(settings), "flaky": FailingAdapter(error)}
        report = Bot(runtime, adapters).run_once()
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in registry_for(runtime.db).collect()
            for s in family.samples
        }
    assert [p.error is None for p in report.polls] == [True, False]
    assert env.requests(settings)[0].state == RequestState.DRY_RUN.value
    assert samples[("factnote_platform_poll_failing", (("adapter", "flaky"),))] == 1
    assert samples[("factnote_platform_poll_failing", (("adapter", "local"),))] == 0
    config = tmp_path / "status.toml"
    config.write_text(f'database_url = "{settings.database_url}"\n', encoding="utf-8")
    result = CliRunner().invoke(cli.app, ["--config", str(config), "status", "--json"])
    assert result.exit_code == 0, result.output
    polls = {p["adapter"]: p for p in json.loads(result.stdout)["polls"]}
    assert polls["flaky"]["failing"] is True
    assert type(error).__name__ in polls["flaky"]["last_error"]
    assert polls["local"]["failing"] is False


class OneBadSummonsAdapter(FailingAdapter):
    """A platform that hands over a summons the database cannot store (an emoji cut in half
    by the platform leaves a lone surrogate) beside a good one, and whose rate-limit
    figures cannot be read."""

    name = "halves"

    def __init__(self) -> None:
        super().__init__(AssertionError("unused"))

    def budgets(self) -> list[RateBudget]:
        raise KeyError("x-rate-limit-remaining")

    def fetch_summons(self, cursor: str | None) -> FetchResult:
        def one(sid: str, author: str) -> Summons:
            target = SocialPost(
                id=f"p{sid}", author="claimer_demo", text=CLAIM, created_at=utcnow()
            )
            return Summons(
                platform=self.name,
                id=sid,
                author=author,
                text="@factnote?",
                created_at=utcnow(),
                target=target,
                target_status=TargetStatus.OK,
            )

        return FetchResult(summons=[one("1\ud83d", "cut\ud83d"), one("2", "asker_demo")])


def test_a_summons_the_database_refuses_is_skipped_and_the_rest_stored(env: Env) -> None:
    settings = env.settings()
    with open_runtime(settings) as runtime:
        report = Bot(runtime, {"halves": OneBadSummonsAdapter()}).run_once()
    assert report.polls[0].error is None and report.polls[0].new == 2
    bad, good = env.requests(settings)
    assert bad.state == RequestState.SKIPPED.value
    assert bad.reason.startswith("could not store the summons")
    assert (bad.summons_id, bad.requester) == ("1\\ud83d", "cut\\ud83d")
    assert Summons.model_validate(bad.summons).target_status is TargetStatus.UNAVAILABLE
    assert good.state == RequestState.DRY_RUN.value


def test_llm_failure_is_retried_then_failed_and_others_still_served(env: Env) -> None:
    env.fake.script(
        "analyze",
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
    env.add(summons("1"))
    settings = env.settings("review")
    env.run_once(settings)
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


def test_requests_left_processing_by_a_dead_process_are_requeued(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings()
    with open_runtime(settings) as runtime:
        bot = Bot(runtime, build_adapters(settings))
        bot.poll_adapter("local")
        request_id = bot.worker.claim_next()
        assert request_id is not None
        bot.worker.stop()
        # ... then "the process dies": the lease names a process of this host that is gone.
        gone = subprocess.Popen(["true"])
        gone.wait()
        dead_worker = f"{socket.gethostname()}:{gone.pid}:1"
        with runtime.db.transaction() as session:
            row = session.get(Request, request_id)
            assert row is not None and row.lease_owner == bot.worker.name
            row.lease_owner = dead_worker
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.DRY_RUN.value
    assert request.attempts == 2


def test_a_request_held_by_a_live_worker_is_not_taken_over(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings()
    with open_runtime(settings) as runtime:
        bot = Bot(runtime, build_adapters(settings))
        bot.poll_adapter("local")
        assert bot.worker.claim_next() is not None  # another worker, alive, still checking
        bot.worker.stop()
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.PROCESSING.value
    assert request.attempts == 1


def test_runtime_object_is_usable_for_status(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings()
    env.run_once(settings)
    with open_runtime(settings) as runtime:
        assert isinstance(runtime, Runtime)
        view = overview(runtime.db)
    assert view.by_state == {"dry_run": 1}
    assert view.polls[0].adapter == "local"


def test_a_deleted_database_does_not_answer_again(env: Env) -> None:
    # Issue 16.8: after `rm factnote.db` every summons was answered a second time.
    env.add(summons("1"))
    settings = env.settings("live")
    env.run_once(settings)
    [first] = env.outbox_lines()
    for suffix in ("", "-wal", "-shm"):
        (env.tmp / f"factnote.db{suffix}").unlink(missing_ok=True)
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    assert request.reply_id == first["reply_id"]
    assert "reconciled" in request.reason
    assert env.outbox_lines() == [first]


class CountingLocal(LocalAdapter):
    """The local platform, counting how often the runtime asks it for our reply."""

    lookups = 0

    def find_reply(self, summons: Summons) -> ReplyReceipt | None:
        type(self).lookups += 1
        return super().find_reply(summons)


def test_summons_newer_than_the_database_are_posted_without_a_lookup(env: Env) -> None:
    env.add(summons("1"))
    settings = env.settings("live")
    env.run_once(settings)  # the backlog a new database starts with: looked up once
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        session.scalars(select(Request)).one().created_at = utcnow() - timedelta(days=2)
    later = summons("2", parent_text="Lemon water cures every cold, says my aunt.")
    later["created_at"] = (utcnow() - timedelta(days=1)).isoformat()
    env.add(later)
    CountingLocal.lookups = 0
    with open_runtime(settings) as runtime:
        Bot(runtime, {"local": CountingLocal(env.inbox, env.outbox)}).run_once()
    assert CountingLocal.lookups == 0
    assert [line["in_reply_to"] for line in env.outbox_lines()] == ["1", "2"]


def hold_write_lock(path: Path) -> sqlite3.Connection:
    """Another process's writer: a real SQLite write lock on the database."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_lock_held_past_the_busy_timeout_is_waited_out(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 16.9: a lock held past the busy timeout ended the run with a traceback.
    env.add(summons("1"))
    settings = env.settings(db_lock_attempts=8, db_lock_backoff_s=0.1)
    settings.database_busy_timeout_s = 0.05
    Database(settings.database_url).dispose()  # migrated, as a running bot's would be
    other = hold_write_lock(env.tmp / "factnote.db")
    release = threading.Timer(1.5, other.execute, args=["ROLLBACK"])
    release.start()
    try:
        with caplog.at_level(logging.WARNING, logger="storage.db"):
            env.run_once(settings)
    finally:
        release.cancel()
        other.close()
    assert env.requests(settings)[0].state == RequestState.DRY_RUN.value
    assert "locked by another connection" in caplog.text


def test_a_lock_outlasting_every_retry_ends_the_run_in_one_line(env: Env, tmp_path: Path) -> None:
    env.add(summons("1"))
    settings = env.settings()
    Database(settings.database_url).dispose()
    config = tmp_path / "locked.toml"
    config.write_text(
        f"""database_url = "{settings.database_url}"
database_busy_timeout_s = 0.05
index_path = "{env.index}"

[local]
inbox = "{env.inbox}"
outbox = "{env.outbox}"

[runtime]
db_lock_attempts = 2
db_lock_backoff_s = 0.01
""",
        encoding="utf-8",
    )
    other = hold_write_lock(env.tmp / "factnote.db")
    try:
        result = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once"])
    finally:
        other.close()
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 75
    assert "stayed locked by another connection through 2 attempt(s)" in result.stderr
    assert "Traceback" not in result.output
    # The same run in code: a typed error to report, not a crash.
    settings.database_busy_timeout_s = 0.05
    settings.runtime.db_lock_attempts = 2
    settings.runtime.db_lock_backoff_s = 0.01
    other = hold_write_lock(env.tmp / "factnote.db")
    try:
        with pytest.raises(DatabaseBusy):
            env.run_once(settings)
    finally:
        other.close()


def test_a_request_that_cannot_be_read_fails_alone_in_triage_and_processing(env: Env) -> None:
    # The same fault as issue 16.2 one step later: one unreadable row stopped every request
    # behind it (triage raised; a worker raised and left its request in `processing`).
    settings = env.settings()
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        for sid, state in (("old-1", "received"), ("old-2", "queued")):
            session.add(
                Request(platform="local", summons_id=sid, summons={"no": "summons"}, state=state)
            )
    env.add(summons("1"))
    env.run_once(settings)
    rows = {r.summons_id: r for r in env.requests(settings)}
    assert rows["old-1"].state == RequestState.FAILED.value
    assert rows["old-1"].reason.startswith("triage failed: ValidationError")
    assert rows["old-2"].state == RequestState.FAILED.value  # retried, then given up
    assert "internal error" in rows["old-2"].reason
    assert rows["1"].state == RequestState.DRY_RUN.value


def test_a_request_that_cannot_be_posted_does_not_hold_up_the_others(env: Env) -> None:
    env.add(summons("1"), summons("2", parent_text="Hot lemon water cures the flu, really."))
    settings = env.settings("review")
    env.run_once(settings)
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        first, second = session.scalars(select(Request).order_by(Request.id))
        first.state = second.state = RequestState.POSTING.value
        first.reply_text = None  # a row the poster cannot use
    env.run_once(env.settings("live"))
    first, second = env.requests(settings)
    assert second.state == RequestState.POSTED.value
    assert first.state == RequestState.POSTING.value  # set aside, never marked done
    assert first.last_error and "internal error" in first.last_error
    assert first.next_attempt_at is not None and first.next_attempt_at > utcnow()
    assert [line["in_reply_to"] for line in env.outbox_lines()] == ["2"]


def test_any_command_meeting_a_lock_ends_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "factnote.db"
    db = Database(f"sqlite:///{path}", busy_timeout_s=0.05)

    def a_command_that_writes() -> None:  # `review approve`, `users add`...
        with db.transaction() as session:
            session.add(Cursor(adapter="local"))

    monkeypatch.setattr(cli, "app", a_command_that_writes)
    other = hold_write_lock(path)
    try:
        with pytest.raises(SystemExit) as exit_:
            cli.main()
    finally:
        other.close()
        db.dispose()
    assert exit_.value.code == 75
    err = capsys.readouterr().err
    assert err == "factnote: the database is locked by another process; try again later\n"
