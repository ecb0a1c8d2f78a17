"""Claim matching measured on paraphrases: Task 5 rumors indexed as claim records, hand-written
paraphrases (positives) and unrelated sentences (negatives) matched against them, precision and
recall at the configured thresholds and over a threshold sweep.

Cases are JSONL lines: {"text": ..., "rumor_id": ID} for a positive, {"text": ...} for a
negative (`bench/data/claim_paraphrases.jsonl`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluation.taskfive import Rumor
from pipeline import safejson
from pipeline.claims.index import ClaimIndex, ClaimRecord, same_url
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.relevance.scoring import get_embedder
from pipeline.web.urls import canonical_url
from storage.indexes import open_claim_rows

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
    with ClaimIndex(open_claim_rows(":memory:"), get_embedder(relevance), cfg=cfg) as index:
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


# --- a real collection: ranked fact-checks per query (CheckThat! 2022 Task 2A) -----------------

K = 5  # the task's cut-off


@dataclass(frozen=True)
class QueryResult:
    query_id: str
    ranked: list[str]  # review URLs, best first (at most K)
    top_strength: str  # strength of the best match ("none" when nothing matched)
    top_right: bool  # the best match is a fact-check the query repeats
    gold: frozenset[str]


@dataclass(frozen=True)
class CollectionReport:
    queries: int
    map_at_5: float
    top1: float
    recall_at_5: float
    strong_share: float  # queries whose best match is strong
    strong_precision: float  # of those, the best match is right (1.0 when none is strong)
    strong: int
    strong_right: int


def average_precision(ranked: Sequence[str], gold: frozenset[str], k: int = K) -> float:
    """AP@k as the CheckThat scorer computes it: the precision at each relevant rank within
    the first k, summed, over the number of relevant fact-checks."""
    if not gold:
        return 0.0
    hits, total = 0, 0.0
    for rank, url in enumerate(ranked[:k], start=1):
        if url in gold:
            hits += 1
            total += hits / rank
    return total / len(gold)


def collection_report(results: Sequence[QueryResult]) -> CollectionReport:
    n = len(results) or 1
    strong = [r for r in results if r.top_strength == "strong"]
    right = sum(r.top_right for r in strong)
    return CollectionReport(
        queries=len(results),
        map_at_5=round(sum(average_precision(r.ranked, r.gold) for r in results) / n, 4),
        top1=round(sum(r.top_right for r in results) / n, 4),
        recall_at_5=round(sum(bool(r.gold & set(r.ranked[:K])) for r in results) / n, 4),
        strong_share=round(len(strong) / n, 4),
        strong_precision=round(right / len(strong), 4) if strong else 1.0,
        strong=len(strong),
        strong_right=right,
    )


def match_queries(
    index: ClaimIndex,
    queries: Sequence[tuple[str, str]],
    gold: dict[str, frozenset[str]],
    on_query: Callable[[], None] | None = None,
) -> list[QueryResult]:
    """Each query matched through `ClaimIndex.match` (the path `factnote claims match` and
    the pipeline use), every candidate ranked whatever its score."""
    results: list[QueryResult] = []
    for query_id, text in queries:
        found = index.match(text, limit=K, min_score=0.0)
        wanted = gold.get(query_id, frozenset())
        ranked = [canonical_url(m.record.review_url) for m in found]
        results.append(
            QueryResult(
                query_id=query_id,
                ranked=ranked,
                top_strength=found[0].strength.value if found else "none",
                top_right=bool(ranked) and ranked[0] in wanted,
                gold=wanted,
            )
        )
        if on_query is not None:
            on_query()
    return results


def evaluate_collection(
    records: Sequence[ClaimRecord],
    queries: Sequence[tuple[str, str]],
    gold: dict[str, frozenset[str]],
    cfg: ClaimsConfig,
    relevance: RelevanceConfig,
    on_query: Callable[[], None] | None = None,
) -> tuple[CollectionReport, list[QueryResult]]:
    """Index `records` in a throwaway claim index, match the queries that have gold (gold as
    canonical review URLs) and score the rankings."""
    judged = [(q, t) for q, t in queries if q in gold]
    with ClaimIndex(open_claim_rows(":memory:"), get_embedder(relevance), cfg=cfg) as index:
        for start in range(0, len(records), 512):
            index.add(records[start : start + 512])
        results = match_queries(index, judged, gold, on_query)
    return collection_report(results), results
