"""Memory in the database: learning from recorded moderator actions and judged decisions
(scripted LLM at the far side), governance, and judgments stored with their decisions."""

from __future__ import annotations

from pathlib import Path

from bot.memory.learn import judge_decisions, learn_from_judgment, learn_from_reviews
from bot.memory.store import StoredMemory, judgments_of, save_judgment
from pipeline.config import GuardConfig, MemoryConfig
from pipeline.learning.judge import Judge, Judgment, Lesson
from pipeline.learning.memory import MemoryItem, Phase
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.records import (
    MemoryUse,
)
from storage.db import Database
from testing.fakes.openai_server import FakeLLM
from tests.bot.memory_seed import distiller, lemon_decision, request_with_actions


def test_moderator_edits_and_rejections_are_distilled_once(db: Database, fake_llm: FakeLLM) -> None:
    request_with_actions(
        db,
        ("edit", {"before": "Experts say no.", "after": "The health agency says no."}),
        ("reject", {"reason": "weak or irrelevant evidence", "note": "a blog"}),
        ("escalate", {"note": "not learned from"}),
    )
    fake_llm.script("memory_distill", distiller)
    memory = StoredMemory(db, MemoryConfig())
    llm = LLMClient(fake_llm.config())
    report = learn_from_reviews(db, memory, llm, CallLedger())
    assert (report.episodes, report.items) == (2, 2)
    prompts = [r.messages[-1]["content"] for r in fake_llm.requests_for("memory_distill")]
    assert "+[The health agency says]" in prompts[0]
    assert "weak or irrelevant evidence (a blog)" in prompts[1]
    kinds = {i.phase: i.kind for i in StoredMemory(db, MemoryConfig()).index.items}
    assert kinds == {Phase.WRITING: "improve", Phase.SEARCH: "avoid"}  # reloaded from the db
    again = learn_from_reviews(db, memory, llm, CallLedger())
    assert again.episodes == 0 and fake_llm.calls("memory_distill") == 2


def test_frozen_memory_learns_nothing(db: Database, fake_llm: FakeLLM) -> None:
    request_with_actions(db, ("reject", {"reason": "other"}))
    memory = StoredMemory(db, MemoryConfig(mode="frozen"))
    report = learn_from_reviews(db, memory, LLMClient(fake_llm.config()), CallLedger())
    assert report.episodes == 0 and fake_llm.requests == []


def test_a_judged_decision_credits_the_items_it_used_and_is_distilled(
    db: Database, fake_llm: FakeLLM
) -> None:
    decision_id = request_with_actions(db)
    memory = StoredMemory(db, MemoryConfig(penalty=0.5))
    used = MemoryItem(
        phase=Phase.WRITING, trigger="lemon", strategy="s", kind="reuse", status="approved"
    )
    memory.learn([used], "seed")
    fake_llm.script("memory_distill", distiller)
    judgment = Judgment(
        kind="reply",
        mode="unsatisfactory",
        helpful=False,
        failed_gate="represented_correctly",
        reasons=["overstates the quote"],
        lessons=[Lesson(phase="writing", lesson="quote the hedge")],
    )
    decision = lemon_decision([MemoryUse(id=used.id, phase="writing", trigger="lemon", score=1.0)])
    learn_from_judgment(
        memory,
        LLMClient(fake_llm.config()),
        CallLedger(),
        source=f"decision:{decision_id}",
        decision=decision,
        judgment=judgment,
    )
    reloaded = {i.id: i for i in StoredMemory(db, MemoryConfig()).index.items}
    assert reloaded[used.id].weight == 0.5
    assert (
        "overstates the quote" in fake_llm.requests_for("memory_distill")[0].messages[-1]["content"]
    )
    assert len(reloaded) == 2


def test_admins_can_find_disable_delete_and_export_items(db: Database, tmp_path: Path) -> None:
    memory = StoredMemory(db, MemoryConfig())
    kept = memory.learn(
        [
            MemoryItem(
                phase=Phase.SEARCH,
                trigger="vaccine claims",
                strategy="use WHO",
                kind="reuse",
                status="approved",
            ),
            MemoryItem(
                phase=Phase.WRITING,
                trigger="diet fads",
                strategy="be brief",
                kind="improve",
                status="approved",
            ),
        ],
        "seed",
    )
    assert [i.trigger for i in memory.find("vaccine")] == ["vaccine claims"]
    assert memory.set_disabled(kept[0].id, True)
    assert memory.search(Phase.SEARCH, "vaccine claims", 3) == []
    assert memory.delete(kept[1].id)
    reloaded = StoredMemory(db, MemoryConfig())
    assert [(i.trigger, i.disabled) for i in reloaded.index.items] == [("vaccine claims", True)]
    exported = reloaded.export_items()
    elsewhere = Database(f"sqlite:///{tmp_path / 'other.db'}")
    assert StoredMemory(elsewhere, MemoryConfig()).import_items(exported) == 1
    elsewhere.dispose()


def test_a_judgment_is_stored_with_its_decision(db: Database) -> None:
    decision_id = request_with_actions(db)
    judgment = Judgment(
        kind="reply",
        mode="excellent",
        helpful=True,
        gates={"rules": True},
        qualities={"usable": "strong"},
        model="judge-model",
    )
    save_judgment(db, decision_id, judgment)
    assert judgments_of(db, decision_id) == [judgment]


def test_recent_decisions_are_judged_once_stored_and_learned_from(
    db: Database, fake_llm: FakeLLM
) -> None:
    decision_id = request_with_actions(db)
    fake_llm.script("memory_distill", distiller)
    memory = StoredMemory(db, MemoryConfig())
    judge = Judge(LLMClient(fake_llm.config()), GuardConfig())
    first = judge_decisions(db, memory, judge, CallLedger())
    # The stored reply cites no URL: the rule gate fails it without an LLM call.
    assert (first.episodes, first.items) == (1, 1) and fake_llm.calls("judge") == 0
    [judgment] = judgments_of(db, decision_id)
    assert judgment.failed_gate == "rules" and judgment.mode == "unsatisfactory"
    assert [i.kind for i in memory.index.items] == ["avoid"]
    again = judge_decisions(db, memory, judge, CallLedger())
    assert again.episodes == 0 and fake_llm.calls("memory_distill") == 1


def test_a_running_bank_catches_up_with_what_another_process_changed(db: Database) -> None:
    running = StoredMemory(db, MemoryConfig(), refresh_s=0)
    command = StoredMemory(db, MemoryConfig())  # `factnote memory import`, say
    [added] = command.learn(
        [
            MemoryItem(
                phase=Phase.SEARCH,
                trigger="vaccine claims",
                strategy="WHO",
                kind="reuse",
                status="approved",
            )
        ],
        "import:test",
    )
    assert [i.id for i, _ in running.search(Phase.SEARCH, "vaccine claims", 3)] == [added.id]
    command.set_disabled(added.id, True)
    assert running.search(Phase.SEARCH, "vaccine claims", 3) == []
    command.delete(added.id)
    running.refresh()
    assert running.index.items == []
    running.record_uses([added.id], added.created)  # nothing to write: it stays deleted
    assert StoredMemory(db, MemoryConfig()).index.items == []
