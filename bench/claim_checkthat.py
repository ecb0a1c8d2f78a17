"""Claim matching on real posts: CheckThat! 2022 Task 2A tweets against 14,231 Snopes
fact-checks (`python -m bench checkthat`; issue 29).

Everything here runs the shipped path: the collection goes through the ClaimReview importer
(`evaluation.checkthat`) into a claim index, and each tweet through `ClaimIndex.match` with the
default `ClaimsConfig`. Printed, for train and dev: MAP@5, top-1, R@5, the share of tweets whose
best match is strong and the precision of those; the fusion weights re-chosen by 5 folds of
the train tweets (`fusion_cv`, on the index's own MiniLM vectors and BM25); the weight of the
review's title (`title_cv`, `pipeline.claims.review_titles`) by the same folds, and what it costs
on fact-checks held out of the index (`held_out`); the age rule's
effect (`pipeline.claims.age`); strong rates of generated reversals of train fact-checks
(`bench.claim_reversals`); the warm `match` latency at this size.

Data: `../shared/data/checkthat2022_task2a_en/` beside the repository, or the folder
`FACTNOTE_CHECKTHAT_DIR` names; read in place, never copied. The test tweets are not there.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench import claim_reversals
from evaluation.checkthat import read_collection, read_qrels, read_queries
from evaluation.claim_matching import QueryResult, average_precision, collection_report
from pipeline.claims.age import possibly_outdated
from pipeline.claims.index import ClaimIndex, ClaimMatch
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.post.platform_text import posted_date
from pipeline.relevance.lexical import clean_text
from pipeline.relevance.scoring import get_embedder
from pipeline.web.urls import canonical_url
from storage.indexes import open_claim_rows

Log = Callable[[str], None]
REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared/data/checkthat2022_task2a_en"
FOLDS = 5
BM25_GRID = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
TITLE_GRID = (0.0, 0.5, 0.7, 1.0)
HELD_OUT = 400  # fact-checks left out of the index and asked as posts (`held_out`)
REVERSAL_CLAIMS = 150


def data_dir() -> Path:
    return Path(os.environ.get("FACTNOTE_CHECKTHAT_DIR") or DATA)


def _results(
    rows: dict[str, list[ClaimMatch]], gold: dict[str, frozenset[str]]
) -> list[QueryResult]:
    out = []
    for query_id, wanted in gold.items():
        found = rows.get(query_id, [])
        ranked = [canonical_url(m.record.review_url) for m in found]
        out.append(
            QueryResult(
                query_id,
                ranked,
                found[0].strength.value if found else "none",
                bool(ranked) and ranked[0] in wanted,
                wanted,
            )
        )
    return out


def _folds(gold: dict[str, frozenset[str]], seed: int) -> tuple[list[str], list[list[str]]]:
    """`gold`'s query ids in a seeded order, and the `FOLDS` folds they fall in."""
    ids = list(gold)
    random.Random(seed).shuffle(ids)
    return ids, [f for f in (ids[i::FOLDS] for i in range(FOLDS)) if f]


def fusion_cv(
    index: ClaimIndex, queries: dict[str, str], gold: dict[str, frozenset[str]], seed: int = 0
) -> dict[str, float]:
    """5-fold choice of the BM25 weight (MiniLM cosine gets the rest) on `gold`'s queries,
    from the index's stored vectors; the gain of the chosen weight over the cosine alone,
    fold by fold, and its spread."""
    matrix = index._dense_matrix()
    lexical = index._lexical(matrix)
    urls = _urls(index, matrix.ids)
    ids, folds = _folds(gold, seed)
    texts = [clean_text(queries[q]) or queries[q] for q in ids]
    vectors = index._embedder.encode(texts)
    cos = {q: matrix.vectors @ v for q, v in zip(ids, vectors, strict=True)}
    bm25 = {q: lexical.scores(clean_text(queries[q])) for q in ids}

    def ap(q: str, weight: float) -> float:
        scores = (1 - weight) * cos[q] + weight * bm25[q]
        top = np.argsort(-scores)[:5]
        return average_precision([urls[int(n)] for n in top], gold[q])

    table = {w: [float(np.mean([ap(q, w) for q in fold])) for fold in folds] for w in BM25_GRID}
    chosen = max(BM25_GRID, key=lambda w: float(np.mean(table[w])))
    gains = np.array(table[chosen]) - np.array(table[0.0])
    return {
        "cv_plain_map": round(float(np.mean(table[0.0])), 4),
        "cv_chosen_bm25_weight": chosen,
        "cv_chosen_map": round(float(np.mean(table[chosen])), 4),
        "cv_gain": round(float(gains.mean()), 4),
        "cv_gain_spread": round(float(gains.std()), 4),
    }


def title_cv(
    index: ClaimIndex,
    queries: dict[str, str],
    gold: dict[str, frozenset[str]],
    log: Log,
    shipped_rows: dict[str, list[ClaimMatch]] | None = None,
    seed: int = 0,
) -> dict[str, float]:
    """The share of `gold`'s queries whose best match is strong, and its precision, at each
    `title_weight` of `TITLE_GRID`, over the same 5 folds as `fusion_cv`: per weight, the
    fold mean and spread of the gain over weight 0, and the pooled precision; and the gain
    in MAP@5 the same way (the title also ranks the best candidates). The weight
    chosen is the smallest whose gain is within one spread of the best gain, among those
    whose precision stays at or above 0.99 (the one-standard-error rule: a larger weight
    lets the shorter, more general title decide more, for a gain the folds cannot tell).
    `shipped_rows`: the matches already found at the shipped weight (limit 5, no floor)."""
    ids, folds = _folds(gold, seed)
    shipped = index.cfg
    outcome: dict[float, dict[str, tuple[bool, bool]]] = {}
    ap: dict[float, dict[str, float]] = {}
    try:
        for weight in TITLE_GRID:
            index.cfg = shipped.model_copy(update={"title_weight": weight})
            outcome[weight], ap[weight] = {}, {}
            reuse = shipped_rows if weight == shipped.title_weight else None
            for q in ids:
                if reuse is not None and q in reuse:
                    found = reuse[q]
                else:
                    found = index.match(queries[q], limit=5, min_score=0.0)
                strong = bool(found) and found[0].strength.value == "strong"
                right = bool(found) and canonical_url(found[0].record.review_url) in gold[q]
                outcome[weight][q] = (strong, strong and right)
                ranked = [canonical_url(m.record.review_url) for m in found]
                ap[weight][q] = average_precision(ranked, gold[q])
    finally:
        index.cfg = shipped
    out: dict[str, float] = {}
    gains: dict[float, tuple[float, float]] = {}
    for weight in TITLE_GRID:
        per_fold = [
            float(np.mean([outcome[weight][q][0] for q in fold]))
            - float(np.mean([outcome[0.0][q][0] for q in fold]))
            for fold in folds
        ]
        answered = sum(s for s, _ in outcome[weight].values())
        precision = sum(r for _, r in outcome[weight].values()) / max(1, answered)
        gains[weight] = (float(np.mean(per_fold)), float(np.std(per_fold)))
        map_gain = [float(np.mean([ap[weight][q] - ap[0.0][q] for q in fold])) for fold in folds]
        out[f"title_cv_w{weight}_map_gain_mean"] = round(float(np.mean(map_gain)), 4)
        out[f"title_cv_w{weight}_map_gain_spread"] = round(float(np.std(map_gain)), 4)
        out[f"title_cv_w{weight}_gain_mean"] = round(gains[weight][0], 4)
        out[f"title_cv_w{weight}_gain_spread"] = round(gains[weight][1], 4)
        out[f"title_cv_w{weight}_strong_precision"] = round(precision, 4)
        if precision < 0.99:
            del gains[weight]
    chosen = 0.0  # no weight keeps the precision: the title is not read
    if gains:
        best = max(gains, key=lambda w: gains[w][0])
        chosen = min(w for w in gains if gains[w][0] >= gains[best][0] - gains[best][1])
    out["title_cv_chosen_weight"] = chosen
    log(f"title weight: {chosen} (gains {gains})")
    return out


def held_out(records: Sequence[Any], log: Log) -> dict[str, float]:
    """`HELD_OUT` fact-checks left out of a second index, each asked by its claim and by its
    title, with the review's title read (the shipped `title_weight`) and not (0): every strong
    best match is then another fact-check, a claim on the same topic that says something else
    or the same claim checked again (Snopes re-checks recurring rumours), so the count bounds
    the strong matches a post near a debunked claim would wrongly get."""
    chosen = set(random.Random(7).sample(range(len(records)), min(HELD_OUT, len(records))))
    kept = [r for i, r in enumerate(records) if i not in chosen]
    asked = [q for i in sorted(chosen) for q in (records[i].claim_text, records[i].review_title)]
    asked = [q for q in asked if q]
    shipped = ClaimsConfig()
    out: dict[str, float] = {"held_out_queries": len(asked)}
    with tempfile.TemporaryDirectory() as tmp:
        rows = open_claim_rows(Path(tmp) / "held_out.sqlite")
        with ClaimIndex(rows, get_embedder(RelevanceConfig()), cfg=shipped) as index:
            for at in range(0, len(kept), 512):
                index.add(kept[at : at + 512])
            for name, weight in (("no_titles", 0.0), ("titles", shipped.title_weight)):
                index.cfg = shipped.model_copy(update={"title_weight": weight})
                found = [index.match(q, limit=1, min_score=0.0) for q in asked]
                strong = sum(bool(f) and f[0].strength.value == "strong" for f in found)
                out[f"held_out_strong_{name}"] = strong
    log(f"held-out fact-checks: {out}")
    return out


def _urls(index: ClaimIndex, ids: Any) -> list[str]:
    found = index.records_by_id([int(i) for i in ids])
    return [canonical_url(found[int(i)].review_url) for i in ids]


def age_effect(
    rows: dict[str, list[ClaimMatch]],
    queries: dict[str, str],
    gold: dict[str, frozenset[str]],
    cfg: ClaimsConfig,
) -> dict[str, float]:
    """For train tweets whose top match is their fact-check: how old it was at the tweet's
    date (the signature's), and the share the age rule answers then and today."""
    at_tweet: list[bool] = []
    today: list[bool] = []
    flat_today: list[bool] = []
    ages: list[int] = []
    now = datetime.now(UTC)
    for query_id, wanted in gold.items():
        found = rows.get(query_id)
        if not found or canonical_url(found[0].record.review_url) not in wanted:
            continue
        record = found[0].record
        posted = posted_date(queries[query_id])
        if posted is None or record.date is None:
            continue
        age = (posted - record.date).days
        ages.append(age)
        at_tweet.append(not possibly_outdated(max(age, 0), record.claim_text, cfg))
        age_now = (now - record.date).days
        today.append(not possibly_outdated(age_now, record.claim_text, cfg))
        flat_today.append(age_now <= 730)
    n = len(ages) or 1
    return {
        "age_pairs": len(ages),
        "age_tweet_first_share": round(sum(a < 0 for a in ages) / n, 4),
        "age_median_days": float(np.median(ages)) if ages else 0.0,
        "age_over_730_share": round(sum(a > 730 for a in ages) / n, 4),
        "age_answered_at_tweet_date": round(sum(at_tweet) / n, 4),
        "age_answered_today": round(sum(today) / n, 4),
        "age_answered_today_flat_730": round(sum(flat_today) / n, 4),
    }


def latency(index: ClaimIndex, texts: Sequence[str]) -> dict[str, float]:
    spent = []
    for text in texts:
        start = time.perf_counter()
        index.match(text, limit=5, min_score=0.0)
        spent.append((time.perf_counter() - start) * 1000)
    return {
        "match_p50_ms": round(float(np.percentile(spent, 50)), 1),
        "match_p95_ms": round(float(np.percentile(spent, 95)), 1),
    }


def run(log: Log = print, data: Path | None = None) -> dict[str, float]:
    folder = data or data_dir()
    collection = read_collection(folder / "vclaims.jsonl")
    queries = dict(read_queries(folder / "train_dev_queries.tsv"))
    splits = {
        name: {
            q: frozenset(canonical_url(collection.url_of[v]) for v in ids if v in collection.url_of)
            for q, ids in read_qrels(folder / f"{name}_qrels.tsv").items()
        }
        for name in ("train", "dev")
    }
    cfg = ClaimsConfig()
    numbers: dict[str, float] = {"not_imported": len(collection.failures)}
    with tempfile.TemporaryDirectory() as tmp:
        index = ClaimIndex(
            open_claim_rows(Path(tmp) / "claims.sqlite"), get_embedder(RelevanceConfig()), cfg=cfg
        )
        with index:
            start = time.perf_counter()
            for at in range(0, len(collection.records), 512):
                index.add(collection.records[at : at + 512])
            numbers["import_per_s"] = round(len(collection.records) / (time.perf_counter() - start))
            log(f"imported {len(collection.records)} at {numbers['import_per_s']}/s")
            index.match("warm up", min_score=0.0)
            rows = {
                q: index.match(queries[q], limit=5, min_score=0.0)
                for split in splits.values()
                for q in split
            }
            for name, gold in splits.items():
                report = collection_report(_results(rows, gold))
                for key in ("map_at_5", "top1", "recall_at_5", "strong_share", "strong_precision"):
                    numbers[f"{name}_{key}"] = getattr(report, key)
                log(f"{name}: {report}")
            numbers.update(age_effect(rows, queries, splits["train"], cfg))
            numbers.update(fusion_cv(index, queries, splits["train"]))
            numbers.update(title_cv(index, queries, splits["train"], log, rows))
            numbers.update(latency(index, [queries[q] for q in splits["dev"]]))
            numbers.update(_reversals(index, collection.records, splits["train"], log))
        numbers.update(held_out(collection.records, log))
    return numbers


def _reversals(
    index: ClaimIndex, records: Sequence[Any], train: dict[str, frozenset[str]], log: Log
) -> dict[str, float]:
    by_url = {canonical_url(r.review_url): r for r in records}
    wanted = sorted({u for urls in train.values() for u in urls if u in by_url})
    chosen = random.Random(1).sample(wanted, min(REVERSAL_CLAIMS, len(wanted)))
    cases = claim_reversals.variants([(u, by_url[u].claim_text) for u in chosen])
    rates = claim_reversals.strong_rates(index, cases)
    log(f"reversals: {rates}")
    out: dict[str, float] = {}
    for kind, cell in rates.items():
        out[f"reversal_{kind}_n"] = cell["n"]
        out[f"reversal_{kind}_strong"] = cell["strong"]
    return out


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
