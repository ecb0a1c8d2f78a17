"""The runtime's intake on the local adapter: what a poll stores, what it skips and why, and
that one bad entry, summons or platform never stops the others."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.base import (
    FetchResult,
    PlatformError,
    RateBudget,
    SocialPost,
    Summons,
    TargetStatus,
)
from adapters.local import LocalAdapter
from bot import cli
from bot.config import RuntimeConfig
from bot.ops.metrics import registry_for
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot, build_adapters
from bot.ops.summary import overview
from bot.requests.intake import poll
from pipeline.records import utcnow
from storage.models import RequestState
from tests.bot.runtime.harness import CLAIM, Env, FailingAdapter, dated, summons


def test_dry_run_decides_and_records_without_posting(env: Env) -> None:
    settings = env.run_one_summons("dry-run")
    [request] = env.requests(settings)
    assert request.state == RequestState.DRY_RUN.value
    assert request.reply_text and "ministry.example" in request.reply_text
    assert request.mode == "dry-run"
    assert env.outbox_lines() == []


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
    monkeypatch.setattr("bot.requests.triage.utcnow", lambda: later)
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


def test_malformed_summons_is_recorded_and_skipped_without_losing_others(env: Env) -> None:
    (env.inbox / "broken.json").write_text('{"id": "9", "text": 5}', encoding="utf-8")
    settings = env.run_one_summons()
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
