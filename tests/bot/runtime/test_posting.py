"""The runtime's posting on the local adapter: modes, exactly one reply with the approved links,
and reconciliation after a crash or a lost database instead of a second reply."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, ClassVar

import pytest
from sqlalchemy import select

from adapters.base import ReplyReceipt, Summons
from adapters.local import LocalAdapter
from bot import overrides
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot
from pipeline.records import utcnow
from storage.db import Database
from storage.models import DecisionRow, Request, RequestState
from testing.scenarios import build_index
from tests.bot.runtime.harness import Env, summons


def test_live_mode_posts_exactly_one_reply_to_the_summons(env: Env) -> None:
    settings = env.run_one_summons("live")
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    lines = env.outbox_lines()
    assert len(lines) == 1
    assert lines[0]["in_reply_to"] == "1"  # the summons, never its parent
    assert lines[0]["reply_id"] == request.reply_id
    assert lines[0]["text"] == request.reply_text


def test_the_reply_goes_out_with_exactly_the_links_the_guard_approved(env: Env) -> None:
    settings = env.run_one_summons("live")
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
    settings = env.run_one_summons("review")
    with open_runtime(settings) as runtime, runtime.db.transaction() as session:
        request = session.scalars(select(Request)).one()
        request.state = RequestState.POSTING.value
        request.post_attempts = 1  # claimed, then the process died before posting
    env.run_once(env.settings("live"))
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    assert len(env.outbox_lines()) == 1


def test_a_deleted_database_does_not_answer_again(env: Env) -> None:
    # Issue 16.8: after `rm factnote.db` every summons was answered a second time.
    settings = env.run_one_summons("live")
    [first] = env.outbox_lines()
    for suffix in ("", "-wal", "-shm"):
        (env.tmp / f"factnote.db{suffix}").unlink(missing_ok=True)
    build_index(f"sqlite:///{env.tmp / 'factnote.db'}")  # the local index went with it
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
    # The backlog a new database starts with: looked up once.
    settings = env.run_one_summons("live")
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


def test_a_slow_platform_call_after_the_decision_is_not_reported_as_a_lost_lease(
    env: Env, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Posting runs after the decision has given up the processing lease; a heartbeat still
    # renewing it then would find it gone and log a lost lease that never happened.
    post = LocalAdapter.post_reply

    def slow_post(self: LocalAdapter, *args: Any, **kwargs: Any) -> ReplyReceipt:
        time.sleep(1.0)  # several heartbeats at a 0.3 s lease
        return post(self, *args, **kwargs)

    monkeypatch.setattr(LocalAdapter, "post_reply", slow_post)
    with caplog.at_level(logging.WARNING):
        settings = env.run_one_summons("live", lease_s=0.3)
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    assert "lease lost" not in caplog.text


class WitnessLocal(LocalAdapter):
    """The local platform, reading from a connection of its own what the database holds at
    the moment of the platform call."""

    url: ClassVar[str] = ""
    seen: ClassVar[list[tuple[str, int, str | None, bool]]] = []

    def post_reply(self, summons: Summons, text: str, links: Sequence[str] = ()) -> ReplyReceipt:
        db = Database(type(self).url, migrate=False)
        with db.session() as session:
            row = session.scalars(select(Request)).one()
            type(self).seen.append(
                (row.state, row.post_attempts, row.reply_text, row.next_attempt_at is not None)
            )
        db.dispose()
        return super().post_reply(summons, text, links)


def test_the_worker_commits_the_reply_and_its_first_attempt_before_the_platform_call(
    env: Env,
) -> None:
    # Issue 12: the decision, the intent to post and the attempt's claim are one commit, and
    # what another process sees during the platform call is a claimed attempt of that text.
    env.add(summons("1"))
    settings = env.settings("live")
    WitnessLocal.url, WitnessLocal.seen = settings.database_url, []
    with open_runtime(settings) as runtime:
        Bot(runtime, {"local": WitnessLocal(env.inbox, env.outbox)}).run_once()
    [line] = env.outbox_lines()
    assert WitnessLocal.seen == [(RequestState.POSTING.value, 1, line["text"], True)]
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTED.value
    assert request.post_attempts == 1


def test_a_pause_holds_the_reply_the_worker_just_decided_and_posts_nothing(env: Env) -> None:
    # The worker reads the kill switch in the commit that claims its first posting attempt,
    # the last step before the platform call (issue 12: no session of its own per post).
    env.add(summons("1"))
    settings = env.settings("live")
    db = Database(settings.database_url)
    assert overrides.pause(db, "local", "admin_demo", "bad replies")
    db.dispose()
    env.run_once(settings)
    [request] = env.requests(settings)
    assert request.state == RequestState.POSTING.value
    assert request.post_attempts == 0  # the attempt is given back, not burnt
    assert (request.last_error or "").startswith("held: posting to local paused by admin_demo")
    assert env.outbox_lines() == []
