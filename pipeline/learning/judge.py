"""The hierarchical judge of a finished decision (EvoNote, seed 002, §5 and App. B.1/D).

A reply goes through a rule gate first, in plain code: the platform's length (counted by
`pipeline.reply.formats` through the guard), at least one URL, and URLs only from the evidence (the
guard's URL rules), with the guard's other wording rules. A reply failing it is unsatisfactory
without an LLM call, as the paper's length filter marks a note Not Helpful outright. Otherwise
one structured call grades three progressive gates (evidence relevant, represented correctly,
helpful style), the four utility qualities and a mode. The gates are progressive in code too:
the first failed gate is the one reported, and any failure caps the mode at unsatisfactory,
whatever the model said, so the mode routes memory consistently.

An abstention is judged by its own call: was staying silent right, given what was found?

The pairwise mode compares two replies per quality and overall; their order is shuffled by a
seeded generator (positional bias, App. D.2) and the answer mapped back to the first reply's
win, tie or loss.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from pipeline.config import GuardConfig
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.llm.output import (
    AbstentionJudgeAnswer,
    JudgeAnswer,
    LessonAnswer,
    PairwiseAnswer,
    Preference,
)
from pipeline.llm.prompts import (
    ABSTAIN_JUDGE_SYSTEM,
    JUDGE_SYSTEM,
    PAIRWISE_SYSTEM,
    judge_user,
    pairwise_user,
)
from pipeline.post.describe import post_block
from pipeline.records import Decision, DecisionStatus, Post
from pipeline.reply import guard
from pipeline.web.links import find_urls

GATES = ("rules", "evidence_relevant", "represented_correctly", "helpful_style")
QUALITIES = ("understandable", "meaningful", "usable", "trustworthy")
Mode = Literal["unsatisfactory", "satisfactory", "excellent"]
Outcome = Literal["win", "tie", "loss"]
A = TypeVar("A", bound=BaseModel)

JUDGED_STATUSES = (DecisionStatus.REPLY, DecisionStatus.ABSTAIN)


class Lesson(BaseModel):
    phase: Literal["analysis", "search", "writing"]
    lesson: str


class Judgment(BaseModel):
    """One decision judged. `gates` maps each gate reached to passed or not; a gate after the
    first failure is not listed. `qualities` are empty when no LLM grading happened."""

    kind: Literal["reply", "abstention"]
    mode: Mode
    helpful: bool  # a reply passing every gate, or an abstention judged right
    failed_gate: str | None = None
    gates: dict[str, bool] = Field(default_factory=dict)
    qualities: dict[str, str] = Field(default_factory=dict)
    reasons: list[str] = Field(default_factory=list)
    lessons: list[Lesson] = Field(default_factory=list)
    rule_problems: list[str] = Field(default_factory=list)
    model: str = ""


class PairwiseJudgment(BaseModel):
    """Reply A against reply B, from A's side, whatever order the judge saw them in."""

    qualities: dict[str, Outcome]
    overall: Outcome
    reason: str
    a_shown_first: bool
    model: str = ""


def rule_problems(reply: str, decision: Decision, post: Post, cfg: GuardConfig) -> list[str]:
    """The rule gate: the guard's wording rules (platform length, URLs only from the evidence,
    written plainly; no mentions, insults or copying) and at least one URL."""
    report = guard.check_text(
        reply,
        decision.platform,
        evidence_urls=[e.url for e in decision.evidence],
        cfg=cfg,
        post_text=post.text,
    )
    problems = [str(p) for p in report.problems]
    if not find_urls(reply):
        problems.append("no_url: a reply must cite at least one evidence URL")
    return problems


class Judge:
    """Grades finished decisions with its own LLM client (`JudgeConfig.llm_config`)."""

    def __init__(self, llm: LLMClient, guard_cfg: GuardConfig, *, seed: int = 0) -> None:
        self.llm = llm
        self.guard_cfg = guard_cfg
        self.seed = seed

    def judge(self, post: Post, decision: Decision, ledger: CallLedger) -> Judgment | None:
        """The judgment of a reply or an abstention; None for other outcomes (needs_llm,
        failed, suppressed: nothing was decided on the merits)."""
        if decision.status not in JUDGED_STATUSES:
            return None
        if decision.status is DecisionStatus.REPLY and decision.reply:
            return self._reply(post, decision, decision.reply, ledger)
        return self._abstention(post, decision, ledger)

    def _reply(self, post: Post, decision: Decision, reply: str, ledger: CallLedger) -> Judgment:
        problems = rule_problems(reply, decision, post, self.guard_cfg)
        if problems:
            return Judgment(
                kind="reply",
                mode="unsatisfactory",
                helpful=False,
                failed_gate="rules",
                gates={"rules": False},
                reasons=[f"rule gate: {p}" for p in problems],
                lessons=[Lesson(phase="writing", lesson="; ".join(problems))],
                rule_problems=problems,
            )
        answer = self._ask("judge", JUDGE_SYSTEM, JudgeAnswer, post, decision, reply, ledger)
        gates: dict[str, bool] = {"rules": True}
        failed: str | None = None
        reasons = list(answer.reasons)
        for name in GATES[1:]:
            gate = getattr(answer, name)
            gates[name] = gate.passed
            if not gate.passed:
                failed = name
                reasons.insert(0, f"{name}: {gate.reason}")
                break
        mode: Mode = "unsatisfactory" if failed else answer.mode
        return Judgment(
            kind="reply",
            mode=mode,
            helpful=failed is None,
            failed_gate=failed,
            gates=gates,
            qualities={q: getattr(answer, q).rating for q in QUALITIES},
            reasons=reasons,
            lessons=_lessons(answer.lessons),
            model=self.llm.model,
        )

    def _ask(
        self,
        step: str,
        system: str,
        schema: type[A],
        post: Post,
        decision: Decision,
        reply: str | None,
        ledger: CallLedger,
    ) -> A:
        """The judge model's answer on `decision` (its evidence and reasons), and on `reply`
        when there is one."""
        user = judge_user(post_block(post), decision.evidence, reply, decision.reasons)
        return self.llm.structured(step, system=system, user=user, schema=schema, ledger=ledger)

    def _abstention(self, post: Post, decision: Decision, ledger: CallLedger) -> Judgment:
        answer = self._ask(
            "judge_abstention",
            ABSTAIN_JUDGE_SYSTEM,
            AbstentionJudgeAnswer,
            post,
            decision,
            None,
            ledger,
        )
        right = answer.abstention_right.passed
        reasons = [f"abstention_right: {answer.abstention_right.reason}", *answer.reasons]
        return Judgment(
            kind="abstention",
            mode=answer.mode if right else "unsatisfactory",
            helpful=right,
            failed_gate=None if right else "abstention_right",
            gates={"abstention_right": right},
            reasons=reasons,
            lessons=_lessons(answer.lessons),
            model=self.llm.model,
        )

    def compare(
        self, post: Post, reply_a: str, reply_b: str, ledger: CallLedger, *, key: str = ""
    ) -> PairwiseJudgment:
        """A against B per quality and overall. The order shown is drawn from a generator
        seeded with the judge's seed and `key` (the post's id, say): reproducible, and
        independent of which reply is whose."""
        a_first = random.Random(f"{self.seed}:{key}:{post.id}").random() < 0.5
        first, second = (reply_a, reply_b) if a_first else (reply_b, reply_a)
        answer = self.llm.structured(
            "judge_pairwise",
            system=PAIRWISE_SYSTEM,
            user=pairwise_user(post_block(post), first, second),
            schema=PairwiseAnswer,
            ledger=ledger,
        )
        return PairwiseJudgment(
            qualities={q: _outcome(getattr(answer, q), a_first) for q in QUALITIES},
            overall=_outcome(answer.overall, a_first),
            reason=answer.reason,
            a_shown_first=a_first,
            model=self.llm.model,
        )


def _outcome(preference: Preference, a_first: bool) -> Outcome:
    if preference == "tie":
        return "tie"
    a_won = (preference == "first") == a_first
    return "win" if a_won else "loss"


def _lessons(items: Sequence[LessonAnswer]) -> list[Lesson]:
    return [Lesson(phase=i.phase, lesson=i.lesson.strip()) for i in items if i.lesson.strip()]
