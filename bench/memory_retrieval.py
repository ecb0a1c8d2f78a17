"""Experience-memory retrieval at 10,000 items: latency per lookup, and prompt size added.

Items are built from HealthVer dev claims (COVID-19 health claims, read from ../shared/data,
never copied): each trigger is a claim's content words with a generic prefix, each strategy a
fixed-length sentence, phases in turn; distinct claims are reused with a numbered suffix to
reach 10k, so the inverted index holds realistic vocabulary. Queries are 200 other claims.
Measured: mean and p95 milliseconds of `MemoryIndex.search` (lexical, and dense with the
bundled MiniLM model, query encoding included), and the characters and estimated tokens (4
characters a token) a check's analysis call (analysis + search items) and writing call add.
"""

from __future__ import annotations

import csv
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pipeline.config import MemoryConfig, RelevanceConfig
from pipeline.learning.memory import MemoryIndex, MemoryItem, Phase, Recall, prompt_tokens_estimate
from pipeline.relevance.scoring import get_embedder

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "healthver" / "healthver_dev.csv"
ITEMS = 10_000
QUERIES = 200
STRATEGY = (
    "Check the original study and its population before writing; say what it found and "
    "what it did not, and name the health agency that states it."
)


def claims(path: Path = DATA) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(dict.fromkeys(row["claim"].strip() for row in csv.DictReader(handle)))


def build_items(texts: list[str], n: int, seed: int = 0) -> list[MemoryItem]:
    rng = random.Random(seed)
    phases = list(Phase)
    items = []
    for i in range(n):
        claim = texts[i % len(texts)]
        words = claim.split()
        rng.shuffle(words)
        trigger = f"claims like: {' '.join(words[:8])}" + (f" v{i}" if i >= len(texts) else "")
        items.append(
            MemoryItem(
                phase=phases[i % 3],
                trigger=trigger,
                strategy=STRATEGY,
                kind="improve",
                status="approved",
            )
        )
    return items


def _timed(search: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.fmean(times), times[int(0.95 * (len(times) - 1))]


def run(
    log: Callable[[str], None] = print, *, items: int = ITEMS, dense: bool = True
) -> dict[str, float]:
    texts = claims()
    rng = random.Random(1)
    queries = rng.sample(texts, min(QUERIES, len(texts)))
    built = build_items([t for t in texts if t not in set(queries)], items)
    out: dict[str, float] = {"items": float(items)}

    lexical = MemoryIndex(MemoryConfig(max_items=items), built)
    lexical.search(Phase.WRITING, "warm-up", 3)  # the inverted index is built on first use
    mean, p95 = _timed(lambda q: lexical.search(Phase.WRITING, q, 3), queries)
    out |= {"lexical_mean_ms": round(mean, 3), "lexical_p95_ms": round(p95, 3)}
    log(f"lexical: mean {mean:.3f} ms, p95 {p95:.3f} ms over {len(queries)} queries")

    analysis_chars, writing_chars = [], []
    for query in queries:
        recall = Recall(lexical, MemoryConfig(mode="frozen"))
        analysis_chars.append(len(recall.guidance((Phase.ANALYSIS, Phase.SEARCH), query)))
        writing_chars.append(len(recall.guidance((Phase.WRITING,), query)))
    for name, chars in (("analysis", analysis_chars), ("writing", writing_chars)):
        mean_chars = statistics.fmean(chars)
        out[f"{name}_added_chars"] = round(mean_chars, 1)
        out[f"{name}_added_tokens_est"] = float(prompt_tokens_estimate("x" * round(mean_chars)))
    log(
        f"added prompt: analysis {out['analysis_added_chars']} chars, writing "
        f"{out['writing_added_chars']} chars (mean)"
    )

    if not dense:
        return out
    embedder = get_embedder(RelevanceConfig())
    dense_cfg = MemoryConfig(max_items=items, retrieval="dense", min_score=0.3)
    start = time.perf_counter()
    dense_index = MemoryIndex(dense_cfg, built, embedder=embedder)
    dense_index.search(Phase.WRITING, "warm-up", 3)  # encodes every trigger once
    out["dense_index_build_s"] = round(time.perf_counter() - start, 2)
    mean, p95 = _timed(lambda q: dense_index.search(Phase.WRITING, q, 3), queries)
    out |= {"dense_mean_ms": round(mean, 3), "dense_p95_ms": round(p95, 3)}
    log(f"dense: build {out['dense_index_build_s']} s; mean {mean:.3f} ms, p95 {p95:.3f} ms")
    return out


if __name__ == "__main__":
    import sys

    print(run(dense="--no-dense" not in sys.argv))
