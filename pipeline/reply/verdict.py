"""From evidence items to a verdict with a confidence: plain arithmetic, no LLM.

Each item votes with strength = confidence × tier weight × relevance factor. Refuting and
supporting items form a signed mean (CLEF 2024 Task 5: supports +, refutes −, items that only
add context do not cancel real evidence), decided against a threshold. Context-only evidence
makes the post "misleading" (needs context) instead of being thrown away, as MUSE's code did.
The verdict's confidence is the tier-weighted mean confidence of the winning side, scaled by how
one-sided the evidence is, and multiplied by STEEL's over-confidence coefficient β.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.config import ResearchConfig
from pipeline.records import TIER_RANK, Evidence, Stance, Verdict


@dataclass(frozen=True)
class Assessment:
    verdict: Verdict
    confidence: float
    signed_score: float
    refuting_pages: int
    decided: bool
    explanation: str


def order_evidence(items: Sequence[Evidence]) -> list[Evidence]:
    """Tier first (best first), then relevance, then confidence; stable for ties. The writer
    uses the first items first, so this order is what the reply leans on."""
    return sorted(items, key=lambda e: (TIER_RANK[e.tier], -e.relevance, -e.confidence))


def refuting_pages(items: Sequence[Evidence]) -> int:
    return len({e.url for e in items if e.stance is Stance.REFUTES})


def _relevance_factor(relevance: float) -> float:
    # Relevance is a cosine in [-1, 1]; map to [0.5, 1] so it ranks evidence without letting a
    # modest cosine veto a quote the extractor found explicit.
    return 0.5 + 0.5 * max(0.0, min(1.0, relevance))


def _weight(e: Evidence, cfg: ResearchConfig) -> float:
    return cfg.tier_weights.get(e.tier.value, 0.0) * _relevance_factor(e.relevance)


def assess(items: Sequence[Evidence], cfg: ResearchConfig) -> Assessment:
    pages = refuting_pages(items)
    weighted = [(e, _weight(e, cfg)) for e in items if _weight(e, cfg) > 0]
    if not weighted:
        return Assessment(Verdict.NOT_ENOUGH_EVIDENCE, 0.0, 0.0, pages, False, "no usable evidence")

    def side(stance: Stance) -> list[tuple[Evidence, float]]:
        return [(e, w) for e, w in weighted if e.stance is stance]

    refute, support, context = side(Stance.REFUTES), side(Stance.SUPPORTS), side(Stance.CONTEXT)
    voters = refute + support
    signed = (
        (sum(w * e.confidence for e, w in support) - sum(w * e.confidence for e, w in refute))
        / len(voters)
        if voters
        else 0.0
    )

    if signed <= -cfg.vote_threshold:
        verdict, winners, losers = Verdict.REFUTED, refute, support
    elif signed >= cfg.vote_threshold:
        verdict, winners, losers = Verdict.SUPPORTED, support, refute
    elif context or voters:
        # Evidence both ways that cancels out, or evidence that only adds context: the post is
        # not simply false, but readers need the context.
        verdict, winners, losers = Verdict.MISLEADING, context + refute, support
    else:
        return Assessment(Verdict.NOT_ENOUGH_EVIDENCE, 0.0, signed, pages, False, "no stance")

    if not winners:
        return Assessment(Verdict.NOT_ENOUGH_EVIDENCE, 0.0, signed, pages, False, "no winner")
    win_weight = sum(w for _e, w in winners)
    mean_conf = sum(w * e.confidence for e, w in winners) / win_weight
    lose_strength = sum(w * e.confidence for e, w in losers)
    win_strength = sum(w * e.confidence for e, w in winners)
    agreement = win_strength / (win_strength + lose_strength) if win_strength else 0.0
    confidence = round(cfg.beta * mean_conf * agreement, 4)
    decided = confidence >= cfg.decide_confidence
    explanation = (
        f"{len(refute)} refuting, {len(context)} context, {len(support)} supporting item(s); "
        f"signed vote {signed:+.3f} (threshold ±{cfg.vote_threshold}); "
        f"confidence β={cfg.beta} × {mean_conf:.2f} × agreement {agreement:.2f}"
    )
    return Assessment(verdict, confidence, round(signed, 4), pages, decided, explanation)
