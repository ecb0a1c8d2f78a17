"""`factnote eval posts`: the whole bot on labelled posts, in replay mode, with its metrics.

Each line of the data file is a post in the local inbox's shape (`id`, `author`, `text`,
`created_at`, optional `links`, `images`), with an optional `gold` verdict (refuted,
misleading, supported, not_enough_evidence, not_checkable) and optional `references`
(reference notes or replies to compare against): the shape of MUSE's and EvoNote's
(MM-HealthCN) post/label/note records. Every post is checked as of its own time (replay).

What a post counts as: `predicted` is the verdict when the bot replied, the abstention's own
verdict when it was not-enough-evidence or not-checkable, else "abstain" (a guard refusal).
Accuracy and macro-F1 are over posts with gold (F1 per gold label, abstain counting as a wrong
answer); the risk-coverage points answer only replies with confidence >= c.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from pipeline.check import Checker
from pipeline.config import GuardConfig, MemoryConfig
from pipeline.learning.judge import GATES, Judge, Judgment
from pipeline.learning.memory import Episode, MemoryIndex, distill
from pipeline.learning.memory_checks import stranger_texts
from pipeline.llm.client import CallLedger, LLMClient, LLMError
from pipeline.records import (
    Decision,
    DecisionStatus,
    Image,
    Platform,
    Post,
    Verdict,
)
from pipeline.reply import guard

CONFIDENCE_GRID = tuple(round(c / 10, 1) for c in range(10))  # 0.0 … 0.9
LABELS = tuple(v.value for v in Verdict)
ABSTAIN = "abstain"


class EvalPost(BaseModel):
    id: str
    author: str = "unknown"
    text: str
    created_at: datetime
    links: list[str] = Field(default_factory=list)
    images: list[str] = Field(default_factory=list)
    gold: Verdict | None = None
    references: list[str] = Field(default_factory=list)

    def post(self) -> Post:
        return Post(
            id=self.id,
            author=self.author,
            text=self.text,
            created_at=self.created_at,
            links=self.links,
            images=[Image(source=s) for s in self.images],
        )


class DataError(ValueError):
    pass


def read_posts(path: Path) -> list[EvalPost]:
    posts: list[EvalPost] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            posts.append(EvalPost.model_validate_json(line))
        except ValidationError as exc:
            raise DataError(f"{path}:{number}: not a post: {exc.errors()[0]['msg']}") from exc
    return posts


@dataclass
class PostResult:
    id: str
    status: str
    predicted: str
    gold: str | None
    confidence: float
    reply: str | None = None
    length_ok: bool | None = None  # replies only
    grounded: bool | None = None  # replies only: some URL, every one from the evidence
    tiers: list[str] = field(default_factory=list)  # tiers of the evidence the reply cites
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    memory_items: int = 0
    judgment: dict[str, Any] | None = None
    pairwise: list[str] = field(default_factory=list)  # win/tie/loss against each reference

    @property
    def answered(self) -> bool:
        return self.status == DecisionStatus.REPLY.value


def predicted_label(decision: Decision) -> str:
    if decision.status is DecisionStatus.REPLY and decision.verdict is not None:
        return decision.verdict.value
    if decision.verdict in (Verdict.NOT_ENOUGH_EVIDENCE, Verdict.NOT_CHECKABLE):
        return decision.verdict.value
    return ABSTAIN


def post_result(item: EvalPost, decision: Decision, cfg: GuardConfig, seconds: float) -> PostResult:
    calls = decision.trace.llm_calls
    result = PostResult(
        id=item.id,
        status=decision.status.value,
        predicted=predicted_label(decision),
        gold=item.gold.value if item.gold else None,
        confidence=decision.confidence,
        reply=decision.reply,
        prompt_tokens=sum(c.prompt_tokens for c in calls),
        completion_tokens=sum(c.completion_tokens for c in calls),
        cost_usd=sum(c.cost_usd for c in calls),
        seconds=round(seconds, 3),
        memory_items=len(decision.trace.memory),
    )
    if decision.status is DecisionStatus.REPLY and decision.reply:
        length, limit = guard.measure(decision.reply, decision.platform, cfg)
        cited = guard.urls_in(decision.reply)
        evidence = {e.url: e for e in decision.evidence}
        result.length_ok = length <= limit
        result.grounded = bool(cited) and not any(
            p.code.value.startswith("url_") for p in _url_problems(decision, cfg)
        )
        result.tiers = [evidence[u].tier.value for u in decision.urls if u in evidence]
    return result


def _url_problems(decision: Decision, cfg: GuardConfig) -> list[Any]:
    report = guard.check_text(
        decision.reply or "",
        decision.platform,
        evidence_urls=[e.url for e in decision.evidence],
        cfg=cfg,
    )
    return list(report.problems)


# --- the run ---------------------------------------------------------------------------------


@dataclass
class EvalRun:
    """What a run needs: the checker, and optionally the judge and an in-memory bank. The
    bank is a copy: an evaluation never writes the deployment's memory."""

    checker: Checker
    guard_cfg: GuardConfig
    platform: Platform = Platform.X
    judge: Judge | None = None
    memory: MemoryIndex | None = None
    memory_cfg: MemoryConfig = field(default_factory=MemoryConfig)
    distiller: LLMClient | None = None
    judge_ledger: CallLedger = field(default_factory=CallLedger)

    def run(
        self, posts: Sequence[EvalPost], on_post: Callable[[PostResult], None] = lambda _r: None
    ) -> list[PostResult]:
        results = []
        for item in posts:
            post = item.post()
            start = time.perf_counter()
            decision = self.checker.check(post, self.platform, as_of=post.created_at, replay=True)
            result = post_result(item, decision, self.guard_cfg, time.perf_counter() - start)
            if self.judge is not None:
                self._judge(item, post, decision, result)
            results.append(result)
            on_post(result)
        return results

    def _judge(self, item: EvalPost, post: Post, decision: Decision, result: PostResult) -> None:
        assert self.judge is not None
        try:
            judgment = self.judge.judge(post, decision, self.judge_ledger)
            if decision.reply:
                result.pairwise = [
                    self.judge.compare(
                        post, decision.reply, ref, self.judge_ledger, key=str(n)
                    ).overall
                    for n, ref in enumerate(item.references)
                ]
        except LLMError as exc:
            result.judgment = {"error": str(exc)}
            return
        if judgment is None:
            return
        result.judgment = judgment.model_dump(mode="json")
        if self.memory is not None and self.memory_cfg.mode == "learn":
            self._learn(item, decision, judgment)

    def _learn(self, item: EvalPost, decision: Decision, judgment: Judgment) -> None:
        assert self.memory is not None
        now = decision.as_of
        self.memory.credit([u.id for u in decision.trace.memory], judgment.mode, now)
        if self.distiller is None:
            return
        strangers = stranger_texts(item.post(), decision)  # the copy check, as the bot's
        episode = Episode.judged(f"eval:{item.id}", decision, judgment, strangers)
        try:
            items = distill(self.distiller, self.judge_ledger, episode, self.memory_cfg)
        except LLMError:
            return
        for new in items:
            self.memory.add(new.model_copy(update={"created": now}), now)


# --- metrics ---------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return round(sum(items) / len(items), 4) if items else None


def macro_f1(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Macro-F1 over the gold labels present; `pairs` are (gold, predicted)."""
    labels = sorted({gold for gold, _ in pairs})
    if not labels:
        return None
    scores = []
    for label in labels:
        tp = sum(1 for g, p in pairs if g == label and p == label)
        fp = sum(1 for g, p in pairs if g != label and p == label)
        fn = sum(1 for g, p in pairs if g == label and p != label)
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return round(sum(scores) / len(scores), 4)


def risk_coverage(
    results: Sequence[PostResult], grid: Sequence[float] = CONFIDENCE_GRID
) -> list[dict[str, Any]]:
    """For each c: coverage (share of gold posts answered with confidence >= c) and the
    accuracy and risk of those answers."""
    gold = [r for r in results if r.gold is not None]
    points = []
    for c in grid:
        kept = [r for r in gold if r.answered and r.confidence >= c]
        accuracy = _mean(1.0 if r.predicted == r.gold else 0.0 for r in kept)
        points.append(
            {
                "threshold": c,
                "coverage": round(len(kept) / len(gold), 4) if gold else None,
                "accuracy": accuracy,
                "risk": round(1 - accuracy, 4) if accuracy is not None else None,
            }
        )
    return points


def _judge_summary(results: Sequence[PostResult]) -> dict[str, Any] | None:
    judged = [r.judgment for r in results if r.judgment and "mode" in r.judgment]
    if not judged:
        return None
    replies = [j for j in judged if j["kind"] == "reply"]
    abstentions = [j for j in judged if j["kind"] == "abstention"]
    pairwise = Counter(o for r in results for o in r.pairwise)
    compared = sum(pairwise.values())
    return {
        "judged": len(judged),
        "errors": sum(1 for r in results if r.judgment and "error" in r.judgment),
        "gate_pass_rates": {
            g: _mean(1.0 if j["gates"].get(g) else 0.0 for j in replies) for g in GATES
        },
        "helpful_rate": _mean(1.0 if j["helpful"] else 0.0 for j in replies),
        "abstention_right_rate": _mean(1.0 if j["helpful"] else 0.0 for j in abstentions),
        "modes": dict(Counter(j["mode"] for j in judged)),
        "pairwise": dict(pairwise),
        "pairwise_win_rate": round(pairwise["win"] / compared, 4) if compared else None,
    }


def summarise(results: Sequence[PostResult]) -> dict[str, Any]:
    n = len(results)
    gold = [r for r in results if r.gold is not None]
    pairs = [(r.gold, r.predicted) for r in gold if r.gold is not None]
    replies = [r for r in results if r.answered]
    answered_gold = [r for r in gold if r.answered]
    return {
        "posts": n,
        "with_gold": len(gold),
        "answered": len(replies),
        "abstention_rate": round(1 - len(replies) / n, 4) if n else None,
        "accuracy": _mean(1.0 if g == p else 0.0 for g, p in pairs),
        "macro_f1": macro_f1(pairs),
        "answered_accuracy": _mean(1.0 if r.predicted == r.gold else 0.0 for r in answered_gold),
        "risk_coverage": risk_coverage(results),
        "length_compliance": _mean(1.0 if r.length_ok else 0.0 for r in replies),
        "url_grounding": _mean(1.0 if r.grounded else 0.0 for r in replies),
        "tiers_cited": dict(Counter(t for r in replies for t in r.tiers)),
        "statuses": dict(Counter(r.status for r in results)),
        "per_post": {
            "prompt_tokens": _mean(r.prompt_tokens for r in results),
            "completion_tokens": _mean(r.completion_tokens for r in results),
            "cost_usd": _mean(r.cost_usd for r in results),
            "seconds": _mean(r.seconds for r in results),
            "memory_items_shown": _mean(r.memory_items for r in results),
        },
        "judge": _judge_summary(results),
    }


def report_json(results: Sequence[PostResult], settings: dict[str, Any]) -> str:
    payload = {
        "settings": settings,
        "summary": summarise(results),
        "posts": [asdict(r) for r in results],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False)
