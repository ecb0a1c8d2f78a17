"""`factnote memory`: the operator's audit and governance of the stored memory, via typer's
runner on a real SQLite database."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.commands.memory import app
from bot.config import Settings
from bot.memory.store import StoredMemory
from pipeline.config import MemoryConfig
from pipeline.learning.memory import MemoryItem, Phase
from pipeline.records import Decision, DecisionStatus, Platform, Verdict
from storage.db import Database
from storage.models import ReviewAction
from storage.repositories import add_decision, create_cli_request
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import POST

runner = CliRunner()


def test_items_can_be_listed_disabled_deleted_and_carried_to_another_deployment(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    db = Database(url)
    kept = StoredMemory(db, MemoryConfig()).learn(
        [
            MemoryItem(
                phase=Phase.SEARCH,
                trigger="vaccine claims",
                strategy="use WHO",
                kind="reuse",
                status="approved",
                sources=["review:1"],
            ),
            MemoryItem(
                phase=Phase.WRITING,
                trigger="diet fads",
                strategy="be brief",
                kind="avoid",
                status="approved",
            ),
        ],
        "review:1",
    )
    db.dispose()
    settings = Settings(database_url=url)
    listed = runner.invoke(app, ["list", "vaccine"], obj=settings)
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["trigger"], r["sources"]) for r in rows] == [("vaccine claims", ["review:1"])]
    assert runner.invoke(app, ["disable", kept[0].id], obj=settings).exit_code == 0
    assert runner.invoke(app, ["delete", kept[1].id], obj=settings).exit_code == 0
    assert runner.invoke(app, ["delete", "no-such-id"], obj=settings).exit_code == 1
    out = tmp_path / "memory.json"
    assert runner.invoke(app, ["export", "--out", str(out)], obj=settings).exit_code == 0
    exported = json.loads(out.read_text())
    assert [(i["trigger"], i["disabled"]) for i in exported] == [("vaccine claims", True)]
    other = Settings(database_url=f"sqlite:///{tmp_path / 'other.db'}")
    imported = runner.invoke(app, ["import", str(out)], obj=other)
    assert imported.exit_code == 0 and "1 items added" in imported.stdout


def test_learn_distills_moderator_actions_and_judges_recent_decisions(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    db = Database(url)
    with db.transaction() as session:
        request = create_cli_request(session, POST)
        add_decision(
            session,
            request,
            Decision(
                status=DecisionStatus.REPLY,
                verdict=Verdict.REFUTED,
                platform=Platform.X,
                reply="Not true.",  # no URL: the judge's rule gate fails it without a call
                as_of=POST.created_at,
            ),
        )
        session.add(
            ReviewAction(
                request_id=request.id, actor="mod", action="reject", detail={"reason": "other"}
            )
        )
    db.dispose()
    fake_llm.script(
        "memory_distill",
        Reply.json(
            {"items": [{"phase": "writing", "trigger": "flu remedies", "strategy": "cite"}]}
        ),
    )
    settings = Settings(database_url=url, llm=fake_llm.config())
    learned = runner.invoke(app, ["learn", "--judge", "5"], obj=settings)
    assert learned.exit_code == 0, learned.output
    assert "moderator actions 1  items 1" in learned.stdout
    assert "judged 1  items 1" in learned.stdout and "decayed 0" in learned.stdout
    assert fake_llm.calls("memory_distill") == 2


def test_learn_needs_an_llm_endpoint(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'factnote.db'}")
    assert runner.invoke(app, ["learn"], obj=settings).exit_code == 2
