"""Claim matching measured on paraphrases: Task 5 rumors indexed as claim records, hand-written
paraphrases (positives) and unrelated sentences (negatives) matched against them, precision and
recall at the configured thresholds and over a threshold sweep.

Cases are JSONL lines: {"text": ..., "rumor_id": ID} for a positive, {"text": ...} for a
negative (`bench/data/claim_paraphrases.jsonl`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluation.taskfive import Rumor
from pipeline import safejson
from pipeline.claims import ClaimIndex, ClaimRecord, same_url
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.relevance import get_embedder

SWEEP = tuple(round(0.30 + 0.025 * i, 3) for i in range(25))  # 0.30 .. 0.90


@dataclass(frozen=True)
class MatchingCase:
    text: str
    expected_url: str | None  # the record it paraphrases; None for a negative


@dataclass(frozen=True)
class ThresholdRow:
    threshold: float
    precision: float
    recall: float
    predicted: int  # cases whose best match reaches the threshold
    correct: int  # of those, the expected record


@dataclass(frozen=True)
class ClaimsReport:
    strong: dict[str, float]
    weak: dict[str, float]
    sweep: list[dict[str, float]]
    positives: int
    negatives: int


def sweep(
    index: ClaimIndex, cases: Sequence[MatchingCase], thresholds: Sequence[float]
) -> list[ThresholdRow]:
    """Precision and recall of the best match per case at each threshold. A prediction is
    correct when the best match is the record the case paraphrases; any prediction for a
    negative is wrong. Recall is over the positive cases."""
    best: list[tuple[float, bool]] = []
    for case in cases:
        found = index.match(case.text, min_score=0.0, limit=1)
        if not found:
            best.append((-1.0, False))
            continue
        top = found[0]
        right = case.expected_url is not None and same_url(top.record.review_url, case.expected_url)
        best.append((top.score, right))
    positives = sum(1 for c in cases if c.expected_url is not None)
    rows: list[ThresholdRow] = []
    for threshold in thresholds:
        predicted = [right for score, right in best if score >= threshold]
        correct = sum(predicted)
        rows.append(
            ThresholdRow(
                threshold=threshold,
                precision=correct / len(predicted) if predicted else 1.0,
                recall=correct / positives if positives else 0.0,
                predicted=len(predicted),
                correct=correct,
            )
        )
    return rows


def rumor_review_url(rumor_id: str) -> str:
    """A stand-in review URL for a rumor indexed as a claim record (never fetched)."""
    return f"https://task5.invalid/rumor/{rumor_id}"


def read_cases(path: Path) -> list[MatchingCase]:
    """Paraphrase cases: {"text": ..., "rumor_id": ID} positives, {"text": ...} negatives."""
    cases: list[MatchingCase] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            obj = safejson.loads(line)  # a ValueError for anything unreadable, nesting included
            if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                raise ValueError(f"{path}:{number}: expected an object with a 'text' string")
            rumor_id = obj.get("rumor_id")
            expected = rumor_review_url(str(rumor_id)) if rumor_id else None
            cases.append(MatchingCase(obj["text"], expected))
    return cases


def evaluate_claims(
    rumors: list[Rumor],
    cases: list[MatchingCase],
    cfg: ClaimsConfig,
    relevance: RelevanceConfig,
) -> ClaimsReport:
    """Index the rumors as claim records and score the cases at every threshold."""
    with ClaimIndex(":memory:", get_embedder(relevance), cfg=cfg) as index:
        index.add(
            ClaimRecord(claim_text=r.text, review_url=rumor_review_url(r.id), language="en")
            for r in rumors
        )
        thresholds = sorted({*SWEEP, cfg.strong_threshold, cfg.weak_threshold})
        rows = {row.threshold: row for row in sweep(index, cases, thresholds)}

    def cell(threshold: float) -> dict[str, float]:
        row = rows[threshold]
        return {
            "threshold": threshold,
            "precision": round(row.precision, 4),
            "recall": round(row.recall, 4),
            "predicted": row.predicted,
            "correct": row.correct,
        }

    positives = sum(1 for c in cases if c.expected_url is not None)
    return ClaimsReport(
        strong=cell(cfg.strong_threshold),
        weak=cell(cfg.weak_threshold),
        sweep=[cell(t) for t in SWEEP],
        positives=positives,
        negatives=len(cases) - positives,
    )
