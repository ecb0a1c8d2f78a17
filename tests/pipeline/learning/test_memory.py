"""Experience memory: distillation (scripted LLM), retrieval, merging, the cap and decay;
and retrieval into each phase of a real check (the pipeline end to end against the scripted
server, as tests/pipeline/test_check.py runs it)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from pipeline.check import Checker
from pipeline.config import MemoryConfig
from pipeline.learning.memory import (
    Episode,
    MemoryIndex,
    MemoryItem,
    Phase,
    Recall,
    distill,
    edit_diff,
)
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.records import DecisionStatus, Platform, utcnow
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import POST, build_index, make_shared_parts, script_happy_path


def item(
    phase: Phase, trigger: str, strategy: str = "check the original study", **kw: Any
) -> MemoryItem:
    kw.setdefault("status", "approved")  # retrieval is tested here, not the approval
    kw.setdefault("decided_at", utcnow())
    return MemoryItem(phase=phase, trigger=trigger, strategy=strategy, kind="improve", **kw)


def distilled_items(*items: dict[str, str]) -> Reply:
    return Reply.json({"items": list(items)})


def test_a_moderator_edit_is_distilled_from_its_word_diff(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        "memory_distill",
        distilled_items(
            {
                "phase": "writing",
                "trigger": "home remedy claims about flu",
                "strategy": "Name the agency instead of 'experts'; see https://x.example @mod",
            }
        ),
    )
    episode = Episode(
        source="review:4",
        signal="edit",
        claims=["Lemon water kills flu"],
        reply="Experts say no.",
        feedback="moderator edit: " + edit_diff("Experts say no.", "The health agency says no."),
        actor="mod",
    )
    items = distill(LLMClient(fake_llm.config()), CallLedger(), episode, MemoryConfig())
    assert [(i.phase, i.kind, i.sources) for i in items] == [
        (Phase.WRITING, "improve", ["review:4"])
    ]
    # A moderator's own edit is used at once, as the moderator's.
    assert (items[0].status, items[0].origin, items[0].decided_by) == ("approved", "edit", "mod")
    # Links and handles are instance details, and a way to plant text in later prompts.
    assert "http" not in items[0].strategy and "@mod" not in items[0].strategy
    user = fake_llm.requests_for("memory_distill")[0].messages[-1]["content"]
    assert "-[Experts say] +[The health agency says]" in user and "<episode>" in user


def test_a_rejection_teaches_what_to_avoid(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        "memory_distill",
        distilled_items({"phase": "search", "trigger": "diet claims", "strategy": "avoid blogs"}),
    )
    episode = Episode(source="review:5", signal="reject", feedback="moderator rejected: weak")
    items = distill(LLMClient(fake_llm.config()), CallLedger(), episode, MemoryConfig())
    assert items[0].kind == "avoid" and items[0].phase is Phase.SEARCH


def test_the_judges_mode_routes_what_an_episode_teaches(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        "memory_distill", distilled_items({"phase": "analysis", "trigger": "t", "strategy": "s"})
    )
    llm = LLMClient(fake_llm.config())
    kinds = [
        distill(llm, CallLedger(), Episode(source="d", signal="judge", mode=m), MemoryConfig())[
            0
        ].kind
        for m in ("unsatisfactory", "satisfactory", "excellent")
    ]
    assert kinds == ["avoid", "improve", "reuse"]


def test_what_the_bot_learned_from_itself_is_proposed_and_not_retrieved(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script(
        "memory_distill",
        distilled_items({"phase": "search", "trigger": "flu remedies", "strategy": "use WHO"}),
    )
    llm = LLMClient(fake_llm.config())
    for signal in ("judge", "approve"):
        episode = Episode(source="d", signal=signal, mode="excellent")  # type: ignore[arg-type]
        learned = distill(llm, CallLedger(), episode, MemoryConfig())[0]
        assert (learned.status, learned.origin, learned.decided_by) == ("proposed", signal, None)
        index = MemoryIndex(MemoryConfig(), [learned])
        assert index.search(Phase.SEARCH, "flu remedies", 3) == []
        shown = MemoryIndex(MemoryConfig(use_proposed=True), [learned])
        assert [i.id for i, _ in shown.search(Phase.SEARCH, "flu remedies", 3)] == [learned.id]


def test_retrieval_returns_the_matching_items_of_the_phase_only() -> None:
    index = MemoryIndex(
        MemoryConfig(k=2),
        [
            item(Phase.WRITING, "claims about vaccines and autism"),
            item(Phase.SEARCH, "claims about vaccines and autism"),
            item(Phase.WRITING, "election fraud statistics"),
        ],
    )
    hits = index.search(Phase.WRITING, "New post says vaccines cause autism in kids", 5)
    assert [(i.phase, i.trigger) for i, _ in hits] == [
        (Phase.WRITING, "claims about vaccines and autism")
    ]
    # Two of the trigger's three content words (vaccin, autism; not "claim") are in the post.
    assert hits[0][1] == 0.6667


def test_near_duplicates_merge_and_the_cap_drops_the_weakest() -> None:
    index = MemoryIndex(MemoryConfig(max_items=10))
    first, _ = index.add(item(Phase.WRITING, "vaccine autism claims", sources=["decision:1"]))
    merged, _ = index.add(item(Phase.WRITING, "vaccine autism claims", sources=["decision:2"]))
    assert merged.id == first.id and merged.sources == ["decision:1", "decision:2"]
    for n in range(10):
        index.add(item(Phase.SEARCH, f"topic{n} claims", f"strategy {n}", weight=0.5 + n / 100))
    assert len(index) == 10
    assert index.get(first.id) is not None  # weight 1.0: not among the weakest
    assert all(i.trigger != "topic0 claims" for i in index.items)


def test_unused_items_decay_and_are_deleted() -> None:
    cfg = MemoryConfig(half_life_days=30, min_weight=0.2)
    old = item(Phase.ANALYSIS, "old pattern", created=utcnow() - timedelta(days=90))
    fresh = item(Phase.ANALYSIS, "fresh pattern")
    index = MemoryIndex(cfg, [old, fresh])
    assert index.decay(utcnow()) == [old.id]  # 1.0 × 0.5³ = 0.125 < 0.2
    assert [i.id for i in index.items] == [fresh.id]


def test_items_used_by_an_episode_judged_unsatisfactory_are_weakened_then_deleted() -> None:
    cfg = MemoryConfig(penalty=0.5, min_weight=0.3)
    used = item(Phase.WRITING, "x")
    index = MemoryIndex(cfg, [used])
    index.credit([used.id], "unsatisfactory", utcnow())
    assert used.weight == 0.5 and index.decay(utcnow()) == []
    index.credit([used.id], "unsatisfactory", utcnow())
    assert index.decay(utcnow()) == [used.id]


def test_frozen_memory_is_shown_but_never_changed_and_off_memory_is_not_shown() -> None:
    stored = item(Phase.ANALYSIS, "lemon flu remedies")
    index = MemoryIndex(MemoryConfig(), [stored])
    frozen = Recall(index, MemoryConfig(mode="frozen"))
    assert "lemon flu remedies" in frozen.guidance([Phase.ANALYSIS], "lemon flu")
    assert stored.uses == 0 and [u.id for u in frozen.used] == [stored.id]
    off = Recall(index, MemoryConfig(mode="off"))
    assert off.guidance([Phase.ANALYSIS], "lemon flu") == "" and off.used == []


def test_each_phase_of_a_check_is_shown_its_items_and_the_trace_records_them(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    build_index(tmp_path / "index.sqlite")
    script_happy_path(fake_llm)
    shared = make_shared_parts(fake_llm, tmp_path / "index.sqlite")
    items = [
        item(Phase.ANALYSIS, "lemon flu remedy", "Separate the remedy claim from the cure claim"),
        item(Phase.SEARCH, "flu virus remedy", "Search health agencies for remedy claims"),
        item(Phase.WRITING, "lemon flu throat", "Say what the remedy does and does not do"),
        item(Phase.WRITING, "election ballots", "never shown for this post"),
    ]
    shared.memory = MemoryIndex(shared.cfg.memory, items)
    decision = Checker(shared).check(POST, Platform.X)
    shared.close()
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    analysis_prompt = fake_llm.requests_for("analyze")[0].messages[-1]["content"]
    writing_prompt = fake_llm.requests_for("write")[0].messages[-1]["content"]
    assert "Separate the remedy claim" in analysis_prompt
    assert "Search health agencies" in analysis_prompt  # the analysis writes the queries
    approved = f"approved by a moderator on {utcnow().date().isoformat()}"
    assert '<memory n="1" phase="analysis" provenance="distilled from the bot' in analysis_prompt
    assert approved in analysis_prompt and "reviewed" not in analysis_prompt
    assert "Say what the remedy does" in writing_prompt
    assert "Say what the remedy does" not in analysis_prompt
    assert "never shown" not in writing_prompt
    assert [(u.phase, u.id) for u in decision.trace.memory] == [
        ("analysis", items[0].id),
        ("search", items[1].id),
        ("writing", items[2].id),
    ]
    assert [i.uses for i in items] == [1, 1, 1, 0]
