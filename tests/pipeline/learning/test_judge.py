"""The hierarchical judge against a scripted OpenAI-compatible server (testing/fakes).

The gates and qualities follow EvoNote (seed 002, §5 and App. B.1/D.2): a rule gate, then
evidence relevance, correct representation and helpful style, progressive."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from pipeline.config import GuardConfig, JudgeConfig, LLMConfig
from pipeline.learning.judge import Judge
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.records import (
    Decision,
    DecisionStatus,
    Evidence,
    Platform,
    Post,
    Stance,
    Tier,
    Verdict,
)
from testing.fakes.openai_server import FakeLLM, Reply

POST = Post(
    id="p1",
    author="someone",
    text="Hot lemon water every hour kills the flu virus in your throat.",
    created_at=datetime(2026, 11, 29, 8, 0, tzinfo=UTC),
)
URL = "https://health.example/flu/lemon"
EVIDENCE = Evidence(
    url=URL,
    domain="health.example",
    tier=Tier.HIGH,
    stance=Stance.REFUTES,
    confidence=0.9,
    quote="No drink kills influenza viruses in the throat.",
)
REPLY = f"No drink kills flu viruses in the throat, health officials say: {URL}"


def decision(reply: str | None = REPLY, status: DecisionStatus = DecisionStatus.REPLY) -> Decision:
    return Decision(
        status=status,
        verdict=Verdict.REFUTED if reply else Verdict.NOT_ENOUGH_EVIDENCE,
        confidence=0.7,
        platform=Platform.X,
        reply=reply,
        evidence=[EVIDENCE],
        reasons=[] if reply else ["not enough evidence: one weak page"],
        as_of=POST.created_at,
    )


def gate(passed: bool) -> dict[str, Any]:
    return {"passed": passed, "reason": "because"}


def answer(
    relevant: bool = True, correct: bool = True, style: bool = True, mode: str = "excellent"
) -> dict[str, Any]:
    quality = {"rating": "strong", "reason": "clear"}
    return {
        "evidence_relevant": gate(relevant),
        "represented_correctly": gate(correct),
        "helpful_style": gate(style),
        "understandable": quality,
        "meaningful": quality,
        "usable": {"rating": "adequate", "reason": "no action at stake"},
        "trustworthy": quality,
        "mode": mode,
        "reasons": ["cites the health agency"],
        "lessons": [{"phase": "search", "lesson": "prefer health agencies for remedy claims"}],
    }


@pytest.fixture
def judge(fake_llm: FakeLLM) -> Iterator[Judge]:
    yield Judge(LLMClient(fake_llm.config()), GuardConfig(), seed=7)


def test_a_reply_over_the_platform_limit_fails_the_rule_gate_without_an_llm_call(
    fake_llm: FakeLLM, judge: Judge
) -> None:
    long_reply = "No drink kills flu viruses. " * 12 + URL
    judgment = judge.judge(POST, decision(long_reply), CallLedger())
    assert judgment is not None
    assert judgment.failed_gate == "rules" and judgment.mode == "unsatisfactory"
    assert any(p.startswith("too_long") for p in judgment.rule_problems)
    assert fake_llm.requests == []


def test_a_reply_citing_a_url_outside_the_evidence_fails_the_rule_gate(judge: Judge) -> None:
    judgment = judge.judge(
        POST, decision("Not true, see https://elsewhere.example/x"), CallLedger()
    )
    assert judgment is not None and judgment.failed_gate == "rules"
    assert any(p.startswith("url_not_evidence") for p in judgment.rule_problems)


def test_a_reply_without_any_url_fails_the_rule_gate(judge: Judge) -> None:
    judgment = judge.judge(
        POST, decision("No drink kills flu viruses in the throat."), CallLedger()
    )
    assert judgment is not None and judgment.failed_gate == "rules"
    assert any(p.startswith("no_url") for p in judgment.rule_problems)


@pytest.mark.parametrize(
    ("flags", "failed"),
    [
        ((False, False, False), "evidence_relevant"),
        ((True, False, False), "represented_correctly"),
        ((True, True, False), "helpful_style"),
    ],
)
def test_the_first_failed_gate_is_reported_and_caps_the_mode(
    fake_llm: FakeLLM, judge: Judge, flags: tuple[bool, bool, bool], failed: str
) -> None:
    fake_llm.script("judge", Reply.json(answer(*flags, mode="excellent")))
    judgment = judge.judge(POST, decision(), CallLedger())
    assert judgment is not None
    assert judgment.failed_gate == failed
    assert judgment.mode == "unsatisfactory" and not judgment.helpful
    # Gates after the first failure are not reported as reached.
    assert list(judgment.gates)[-1] == failed and judgment.gates[failed] is False


def test_a_reply_passing_every_gate_keeps_the_judges_mode_and_qualities(
    fake_llm: FakeLLM, judge: Judge
) -> None:
    fake_llm.script("judge", Reply.json(answer(mode="satisfactory")))
    judgment = judge.judge(POST, decision(), CallLedger())
    assert judgment is not None and judgment.helpful and judgment.failed_gate is None
    assert judgment.mode == "satisfactory"
    assert judgment.qualities["usable"] == "adequate"
    assert judgment.lessons[0].phase == "search"
    user = fake_llm.requests_for("judge")[0].messages[-1]["content"]
    assert f"<draft>\n{REPLY}\n</draft>" in user and "<evidence" in user


def test_an_abstention_is_judged_on_whether_silence_was_right(
    fake_llm: FakeLLM, judge: Judge
) -> None:
    fake_llm.script(
        "judge_abstention",
        Reply.json(
            {
                "abstention_right": gate(False),
                "mode": "satisfactory",
                "reasons": ["the agency quote settles it"],
                "lessons": [],
            }
        ),
    )
    judgment = judge.judge(POST, decision(None, DecisionStatus.ABSTAIN), CallLedger())
    assert judgment is not None and judgment.kind == "abstention"
    assert judgment.failed_gate == "abstention_right" and judgment.mode == "unsatisfactory"
    user = fake_llm.requests_for("judge_abstention")[0].messages[-1]["content"]
    assert "one weak page" in user
    assert fake_llm.calls("judge") == 0


def test_failed_and_needs_llm_decisions_are_not_judged(judge: Judge) -> None:
    assert judge.judge(POST, decision(None, DecisionStatus.FAILED), CallLedger()) is None


def _prefer_reply_a(body: dict[str, Any]) -> Reply:
    user = body["messages"][-1]["content"]
    a_first = user.index("REPLY-A") < user.index('<draft n="2">')
    pick = "first" if a_first else "second"
    return Reply.json(
        {
            "understandable": pick,
            "meaningful": "tie",
            "usable": pick,
            "trustworthy": pick,
            "overall": pick,
            "reason": "A is clearer",
        }
    )


def test_pairwise_maps_the_answer_back_to_reply_a_whatever_order_was_shown(
    fake_llm: FakeLLM, judge: Judge
) -> None:
    fake_llm.script("judge_pairwise", _prefer_reply_a)
    results = [
        judge.compare(POST, "REPLY-A text", "REPLY-B text", CallLedger(), key=str(n))
        for n in range(8)
    ]
    assert {r.a_shown_first for r in results} == {True, False}  # the order is randomised
    assert all(r.overall == "win" and r.qualities["meaningful"] == "tie" for r in results)


def test_pairwise_order_is_reproducible_for_a_seed(judge: Judge, fake_llm: FakeLLM) -> None:
    fake_llm.script("judge_pairwise", _prefer_reply_a)
    first = judge.compare(POST, "REPLY-A", "REPLY-B", CallLedger(), key="k")
    again = judge.compare(POST, "REPLY-A", "REPLY-B", CallLedger(), key="k")
    assert first.a_shown_first == again.a_shown_first


def test_the_judge_model_is_configured_apart_from_the_writer() -> None:
    writer = LLMConfig(base_url="http://llm.example/v1", model="writer")
    cfg = JudgeConfig(model="judge-model").llm_config(writer)
    assert cfg.model == "judge-model" and cfg.base_url == "http://llm.example/v1"
    assert JudgeConfig().llm_config(writer).model == "writer"
