"""Calibrate the relevance thresholds (`RelevanceConfig`) on the HealthVer dev split.

Positives are each claim paired with its own evidence, whatever the label: Supports, Refutes
and Neutral evidence are all on the claim's topic, and that is what relevance must detect.
Negatives pair each claim with evidence drawn (fixed seed) from other topics (`topic_ip`).
Scores are computed exactly as the pipeline does (`score_page`: evidence split into passages,
best passage cosine with the default model), then a threshold sweep gives precision, recall
and F1. Chosen values:

* passage threshold: the highest threshold keeping recall >= 0.90, because a few extra
  passages sent to the LLM cost little while lost evidence cannot be recovered later;
* page threshold: the F1-optimal threshold.

Usage: python bench/calibrate_relevance.py [--data CSV] [--negatives-per-claim N] [--json]
"""

from __future__ import annotations

import csv
import json
import random
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from pipeline.config import RelevanceConfig  # noqa: E402
from pipeline.relevance import Embedder, get_embedder, split_passages  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/healthver/healthver_dev.csv"
RECALL_FLOOR = 0.90
LABELS = ("Supports", "Refutes", "Neutral")


@dataclass(frozen=True)
class Pair:
    claim: str
    evidence: str
    positive: bool
    label: str  # the HealthVer label for positives, "" for negatives


@dataclass(frozen=True)
class Row:
    threshold: float
    precision: float
    recall: float
    f1: float


def load_pairs(path: Path, negatives_per_claim: int, seed: int) -> list[Pair]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise typer.BadParameter(f"no rows in {path}")
    pairs = [
        Pair(r["claim"].strip(), r["evidence"].strip(), True, r["label"].strip()) for r in rows
    ]
    # One topic per claim (a claim belongs to one question in HealthVer); evidence pools by
    # topic, deduplicated, in file order so that the seeded sample is reproducible.
    claim_topic: dict[str, str] = {}
    evidence_by_topic: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        claim_topic.setdefault(r["claim"].strip(), r["topic_ip"])
        ev = r["evidence"].strip()
        if ev not in evidence_by_topic[r["topic_ip"]]:
            evidence_by_topic[r["topic_ip"]].append(ev)
    rng = random.Random(seed)
    for claim, topic in claim_topic.items():
        pool = [ev for t, evs in evidence_by_topic.items() if t != topic for ev in evs]
        for ev in rng.sample(pool, min(negatives_per_claim, len(pool))):
            pairs.append(Pair(claim, ev, False, ""))
    return pairs


def score_pairs(embedder: Embedder, pairs: list[Pair], cfg: RelevanceConfig) -> np.ndarray:
    """The pipeline's page score for each pair: the best passage's cosine with the claim."""
    claims = sorted({p.claim for p in pairs})
    evidences = sorted({p.evidence for p in pairs})
    passages: list[str] = []
    owner: list[int] = []
    for i, ev in enumerate(evidences):
        for passage in split_passages(ev, cfg.passage_words):
            passages.append(passage)
            owner.append(i)
    batch = 64
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    console = Console(stderr=True)
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("claims", total=len(claims))
        claim_vecs = []
        for start in range(0, len(claims), batch):
            claim_vecs.append(embedder.encode(claims[start : start + batch]))
            progress.advance(task, len(claims[start : start + batch]))
        task = progress.add_task("passages", total=len(passages))
        passage_vecs = []
        for start in range(0, len(passages), batch):
            passage_vecs.append(embedder.encode(passages[start : start + batch]))
            progress.advance(task, len(passages[start : start + batch]))
    c_matrix = np.vstack(claim_vecs)
    p_matrix = np.vstack(passage_vecs)
    claim_index = {c: i for i, c in enumerate(claims)}
    passages_of: dict[int, list[int]] = defaultdict(list)
    for j, i in enumerate(owner):
        passages_of[i].append(j)
    evidence_index = {e: i for i, e in enumerate(evidences)}
    scores = np.empty(len(pairs), dtype=np.float64)
    for k, pair in enumerate(pairs):
        rows = passages_of[evidence_index[pair.evidence]]
        scores[k] = float((p_matrix[rows] @ c_matrix[claim_index[pair.claim]]).max())
    return scores


def sweep(scores: np.ndarray, labels: np.ndarray, thresholds: np.ndarray) -> list[Row]:
    table = []
    positives = int(labels.sum())
    for t in thresholds:
        predicted = scores >= t
        tp = int((predicted & labels).sum())
        fp = int((predicted & ~labels).sum())
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / positives if positives else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        table.append(Row(round(float(t), 2), precision, recall, f1))
    return table


def recall_by_label(scores: np.ndarray, pairs: list[Pair], threshold: float) -> dict[str, float]:
    result = {}
    for label in LABELS:
        picked = [s for s, p in zip(scores, pairs, strict=True) if p.positive and p.label == label]
        result[label] = float(np.mean(np.array(picked) >= threshold)) if picked else 0.0
    return result


def main(
    data: Path = typer.Option(DEFAULT_DATA, help="HealthVer dev CSV"),
    negatives_per_claim: int = typer.Option(8, help="off-topic evidence sampled per claim"),
    seed: int = typer.Option(13, help="sampling seed"),
    as_json: bool = typer.Option(False, "--json", help="print JSON instead of tables"),
) -> None:
    if not data.is_file():
        raise typer.BadParameter(f"{data} not found (pass --data)")
    cfg = RelevanceConfig()
    pairs = load_pairs(data, negatives_per_claim, seed)
    scores = score_pairs(get_embedder(cfg), pairs, cfg)
    labels = np.array([p.positive for p in pairs])
    thresholds = np.round(np.arange(0.0, 0.901, 0.01), 2)
    table = sweep(scores, labels, thresholds)

    passage_row = max((r for r in table if r.recall >= RECALL_FLOOR), key=lambda r: r.threshold)
    # Ties in F1 go to the higher threshold: the same F1 with fewer pages to fetch and read.
    page_row = max(table, key=lambda r: (round(r.f1, 4), r.threshold))
    summary = {
        "data": str(data),
        "pairs": len(pairs),
        "positives": int(labels.sum()),
        "negatives": int((~labels).sum()),
        "positive_score_mean": float(scores[labels].mean()),
        "negative_score_mean": float(scores[~labels].mean()),
        "passage_threshold": asdict(passage_row),
        "page_threshold": asdict(page_row),
        "recall_by_label_at_passage_threshold": recall_by_label(
            scores, pairs, passage_row.threshold
        ),
        "recall_by_label_at_page_threshold": recall_by_label(scores, pairs, page_row.threshold),
    }
    if as_json:
        summary["table"] = [asdict(r) for r in table]
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return

    console = Console()
    sweep_table = Table(title="Relevance threshold sweep (HealthVer dev)")
    for name in ("threshold", "precision", "recall", "F1"):
        sweep_table.add_column(name, justify="right")
    chosen = {passage_row.threshold, page_row.threshold}
    for r in table:
        if round(r.threshold * 100) % 5 == 0 or r.threshold in chosen:
            mark = " *" if r.threshold in chosen else ""
            sweep_table.add_row(
                f"{r.threshold:.2f}{mark}", f"{r.precision:.3f}", f"{r.recall:.3f}", f"{r.f1:.3f}"
            )
    console.print(sweep_table)
    console.print(
        f"pairs {summary['pairs']} (positives {summary['positives']}, "
        f"negatives {summary['negatives']}); mean score positive "
        f"{summary['positive_score_mean']:.3f}, negative {summary['negative_score_mean']:.3f}"
    )
    for name, row, key in (
        ("passage_threshold", passage_row, "recall_by_label_at_passage_threshold"),
        ("page_threshold", page_row, "recall_by_label_at_page_threshold"),
    ):
        by_label = summary[key]
        assert isinstance(by_label, dict)
        breakdown = ", ".join(f"{k} {v:.3f}" for k, v in by_label.items())
        console.print(
            f"{name} = {row.threshold:.2f}: precision {row.precision:.3f}, "
            f"recall {row.recall:.3f}, F1 {row.f1:.3f}; recall by label: {breakdown}"
        )


if __name__ == "__main__":
    typer.run(main)
