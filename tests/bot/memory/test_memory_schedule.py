"""The running bot's periodic memory learning (issue 17): the job is on the scheduler with
the configured interval, and each run distills what is new since the last one, once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from bot.config import Settings, load_settings
from bot.memory.learn import JOB_ID, ScheduledLearning, schedule_learning
from bot.memory.store import StoredMemory, save_judgment
from bot.ops.runtime import open_runtime
from bot.ops.service import Bot
from pipeline.config import MemoryConfig
from pipeline.learning.judge import Judgment
from pipeline.learning.memory import MemoryIndex
from pipeline.llm.client import LLMClient
from storage.db import Database
from storage.models import DecisionRow, ReviewAction
from testing.fakes.openai_server import FakeLLM
from tests.bot.memory_seed import distiller, request_with_actions


def _settings(db: Database, *, interval: float = 1800.0, judge_per_run: int = 0) -> Settings:
    settings = load_settings(database_url=db.url)
    settings.runtime.memory_learn_interval_s = interval
    settings.runtime.memory_judge_per_run = judge_per_run
    return settings


def _add_action(db: Database, request_id: int, action: str, detail: dict[str, str]) -> None:
    with db.transaction() as session:
        session.add(ReviewAction(request_id=request_id, actor="mod", action=action, detail=detail))


def _request_id(db: Database, decision_id: int) -> int:
    with db.session() as session:
        row = session.get(DecisionRow, decision_id)
        assert row is not None
        return row.request_id


def test_the_job_is_scheduled_at_the_configured_interval(db: Database) -> None:
    scheduler = BackgroundScheduler(timezone="UTC")
    memory = StoredMemory(db, MemoryConfig())
    job = schedule_learning(scheduler, _settings(db, interval=1800), memory)
    assert job is not None and scheduler.get_job(JOB_ID) is job
    assert isinstance(job.trigger, IntervalTrigger)
    assert job.trigger.interval == timedelta(seconds=1800)


@pytest.mark.parametrize(
    ("interval", "mode", "bank"),
    [(0.0, "learn", "stored"), (3600.0, "frozen", "stored"), (3600.0, "learn", "in-memory")],
)
def test_no_job_when_disabled_frozen_or_not_this_databases_memory(
    db: Database, interval: float, mode: str, bank: str
) -> None:
    cfg = MemoryConfig(mode=mode)
    memory = StoredMemory(db, cfg) if bank == "stored" else MemoryIndex(cfg)
    scheduler = BackgroundScheduler(timezone="UTC")
    assert schedule_learning(scheduler, _settings(db, interval=interval), memory) is None
    assert scheduler.get_jobs() == []


def test_a_run_learns_from_a_moderator_edit_made_since_the_last_run_and_only_once(
    db: Database, fake_llm: FakeLLM
) -> None:
    fake_llm.script("memory_distill", distiller)
    decision_id = request_with_actions(db)
    memory = StoredMemory(db, MemoryConfig())
    job = ScheduledLearning(_settings(db), memory, LLMClient(fake_llm.config()))
    first = job.run()
    assert first is not None and first.reviews.episodes == 0 and memory.index.items == []
    before, after = "Experts say no.", "The health agency says no."
    _add_action(db, _request_id(db, decision_id), "edit", {"before": before, "after": after})
    second = job.run()
    assert second is not None and (second.reviews.episodes, second.reviews.items) == (1, 1)
    [item] = memory.index.items  # the bot's own bank: retrieved from the next check on
    assert item.kind == "improve" and "+[The health agency says]" in item.strategy
    assert second.llm_calls == 1 and "1 LLM call(s)" in second.line()
    third = job.run()
    assert third is not None and third.reviews.episodes == 0 and third.llm_calls == 0
    assert fake_llm.calls("memory_distill") == 1


def test_a_run_judges_new_decisions_and_learns_from_each_once(
    db: Database, fake_llm: FakeLLM
) -> None:
    fake_llm.script("memory_distill", distiller)
    request_with_actions(db)  # its reply cites no URL: the judge's rule gate fails it
    memory = StoredMemory(db, MemoryConfig())
    job = ScheduledLearning(_settings(db, judge_per_run=5), memory, LLMClient(fake_llm.config()))
    first = job.run()
    assert first is not None and (first.judged.episodes, first.judged.items) == (1, 1)
    assert [i.kind for i in memory.index.items] == ["avoid"]
    again = job.run()
    assert again is not None and again.judged.episodes == 0 and again.judgments.episodes == 0
    assert fake_llm.calls("memory_distill") == 1


def test_a_stored_judgment_left_undistilled_is_distilled_by_the_next_run(
    db: Database, fake_llm: FakeLLM
) -> None:
    fake_llm.script("memory_distill", distiller)
    decision_id = request_with_actions(db)
    judgment = Judgment(kind="reply", mode="excellent", helpful=True, reasons=["clear"])
    save_judgment(db, decision_id, judgment)  # as when its distillation call failed
    memory = StoredMemory(db, MemoryConfig())
    job = ScheduledLearning(_settings(db), memory, LLMClient(fake_llm.config()))
    first = job.run()
    assert first is not None and (first.judgments.episodes, first.judgments.items) == (1, 1)
    assert [i.kind for i in memory.index.items] == ["reuse"]
    again = job.run()
    assert again is not None and again.judgments.episodes == 0
    assert fake_llm.calls("memory_distill") == 1


def test_without_an_llm_endpoint_a_run_does_nothing(db: Database) -> None:
    request_with_actions(db, ("reject", {"reason": "other"}))
    memory = StoredMemory(db, MemoryConfig())
    assert ScheduledLearning(_settings(db), memory).run() is None
    assert memory.index.items == []


class _Recorded(BackgroundScheduler):
    """The bot's scheduler, kept for the test to read what was put on it."""

    last: _Recorded | None = None
    jobs: dict[str, IntervalTrigger]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.jobs = {}
        _Recorded.last = self

    def add_job(self, *args: Any, **kwargs: Any) -> Any:
        job = super().add_job(*args, **kwargs)
        self.jobs[job.id] = job.trigger
        return job


def test_the_running_bot_puts_the_learning_job_on_its_scheduler(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(
        database_url=f"sqlite:///{tmp_path / 'factnote.db'}",
        index_path=str(tmp_path / "index.sqlite"),
    )
    settings.llm = fake_llm.config()
    settings.runtime.memory_learn_interval_s = 900
    monkeypatch.setattr("bot.ops.service.BackgroundScheduler", _Recorded)
    monkeypatch.setattr(Bot, "_install_signal_handlers", lambda self: None)
    with open_runtime(settings) as runtime:
        bot = Bot(runtime, {})
        bot.stop()  # run_forever schedules, starts, finds itself stopped and shuts down
        bot.run_forever()
    assert _Recorded.last is not None
    assert _Recorded.last.jobs[JOB_ID].interval == timedelta(seconds=900)
