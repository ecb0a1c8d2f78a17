"""What a run tells its operator: one log line per request transition, and an exit status of
`run --once` that cron and supervisors can act on (issue 18 items 6 and 7)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from adapters.base import PlatformError
from bot import cli, overrides
from bot.commands.run import FAILED_EXIT
from bot.logs import JsonFormatter
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot, build_adapters
from bot.requests.intake import poll
from pipeline.records import utcnow
from storage.db import Database
from storage.models import Cursor, RequestState
from testing.fakes.openai_server import Reply
from testing.scenarios import TIERS
from tests.bot.runtime.harness import Env, FailingAdapter, summons


def transitions(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    formatter = JsonFormatter()
    return [
        json.loads(formatter.format(r)) for r in caplog.records if r.name == "factnote.requests"
    ]


def test_every_state_change_of_a_request_is_one_info_line(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    env.add(summons("1"), summons("2", author="factnote"))  # the second: our own post
    settings = env.settings("live")
    with caplog.at_level(logging.INFO, logger="factnote.requests"):
        env.run_once(settings)
    lines = transitions(caplog)
    first = [(t["previous"], t["state"]) for t in lines if t["request_id"] == 1]
    assert first == [
        (None, "received"),
        ("received", "queued"),
        ("queued", "processing"),
        ("processing", "posting"),
        ("posting", "posted"),
    ]
    decided = next(t for t in lines if t["request_id"] == 1 and t["state"] == "posting")
    assert decided["platform"] == "local"
    assert decided["verdict"] == "refuted"
    assert decided["timings"]["total"] > 0
    skipped = [t for t in lines if t["request_id"] == 2][-1]
    assert (skipped["state"], skipped["reason"]) == ("skipped", "our own post")
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "factnote.requests")


def test_a_technical_failure_is_logged_as_a_warning_with_its_error(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    env.fake.script("analyze", Reply.text("not json"))
    env.add(summons("1"))
    with caplog.at_level(logging.INFO, logger="factnote.requests"):
        env.run_once(env.settings(max_attempts=2, retry_backoff_s=3600))
    retry = [r for r in caplog.records if r.name == "factnote.requests"][-1]
    assert retry.levelno == logging.WARNING
    assert "processing -> retry" in retry.getMessage()
    assert "LLMInvalidOutput" in retry.getMessage()


def test_a_failed_poll_makes_the_cycle_not_ok_and_a_planned_wait_does_not(env: Env) -> None:
    settings = env.settings()
    with open_runtime(settings) as runtime:
        flaky = FailingAdapter(PlatformError("HTTP 503", retryable=True))
        report = Bot(runtime, {**build_adapters(settings), "flaky": flaky}).run_once()
        assert [p.adapter for p in report.failed_polls] == ["flaky"]
        assert not report.ok
        # A poll put off until a rate limit resets is the plan working, not a failure.
        with runtime.db.transaction() as session:
            cursor = session.get(Cursor, "flaky")
            assert cursor is not None  # the failed poll was recorded
            cursor.next_poll_at = utcnow().replace(year=2999)
        waited = poll(flaky, runtime.db, "dry-run")
    assert waited.deferred and waited.error and waited.error.startswith("rate limited until")


def write_config(env: Env, settings: Any) -> Path:
    config = env.tmp / "run.toml"
    overrides = "\n".join(f'"{domain}" = "{tier}"' for domain, tier in TIERS.items())
    config.write_text(
        f"""database_url = "{settings.database_url}"
index_path = "{env.index}"

[local]
inbox = "{env.inbox}"
outbox = "{env.outbox}"

[runtime]
retry_backoff_s = 3600
max_summons_age_s = 0

[llm]
base_url = "{env.fake.base_url}"
model = "fake-model"

[credibility.overrides]
{overrides}
""",
        encoding="utf-8",
    )
    return config


def test_run_once_exits_zero_when_all_went_through_and_69_when_a_request_failed(
    env: Env,
) -> None:
    env.add(summons("1"))
    config = write_config(env, env.settings())
    done = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once"])
    assert done.exit_code == 0, done.output
    # The LLM answers nonsense: the request waits for a retry, and the run says so.
    env.fake.script("analyze", Reply.text("not json"))
    env.add(summons("2", parent_text="Garlic in your socks cures a cold overnight."))
    failed = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once"])
    assert failed.exit_code == FAILED_EXIT == 69, failed.output
    assert "failed technically: 1 request(s): #2" in failed.stdout
    # The next run has nothing due (the retry waits an hour): all went through again.
    again = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once"])
    assert again.exit_code == 0, again.output
    db = Database(env.settings().database_url)
    try:
        states = {r.summons_id: r.state for r in env.requests(env.settings())}
    finally:
        db.dispose()
    assert states == {"1": RequestState.DRY_RUN.value, "2": RequestState.RETRY.value}


def test_run_once_with_a_reply_held_by_the_kill_switch_exits_zero_and_says_so(env: Env) -> None:
    # Issue 33: a pause is the switch working as told, not a failure for cron to page about.
    env.add(summons("1"))
    config = write_config(env, env.settings())
    db = Database(env.settings().database_url)
    try:
        overrides.pause(db, "local", "admin_demo", "bad replies")
    finally:
        db.dispose()
    held = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once", "--mode", "live"])
    assert held.exit_code == 0, held.output
    assert "replies held by the kill switch (not a failure): 1 request(s): #1" in held.stdout
    assert "failed technically" not in held.stdout
    assert env.outbox_lines() == []
    [request] = env.requests(env.settings())
    assert request.state == RequestState.POSTING.value


def test_run_once_summary_counts_the_reply_its_worker_posted(env: Env) -> None:
    # The worker posts right after its decision; the maintenance step then finds nothing due.
    # The summary once printed that step's count ("posted 0") beside a reply on the platform.
    env.add(summons("1"))
    config = write_config(env, env.settings())
    done = CliRunner().invoke(cli.app, ["--config", str(config), "run", "--once", "--mode", "live"])
    assert done.exit_code == 0, done.output
    [row] = env.requests(env.settings())
    assert row.state == RequestState.POSTED.value
    assert "triaged 1, processed 1, posted 1, expired 0" in done.stdout
    # The next cycle posts nothing new, and says so.
    again = CliRunner().invoke(
        cli.app, ["--config", str(config), "run", "--once", "--mode", "live"]
    )
    assert "posted 0," in again.stdout, again.output
