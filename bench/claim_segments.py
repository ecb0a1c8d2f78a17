"""Segment-level matching measured (`pipeline.claims.segments`): each case's best match by the
whole texts against its best match when a pair of sentences (on the claim's side also a run
of two or three consecutive sentences: `pipeline.claims.segments.windows`) may score instead,
at the shipped weights, with the threshold alone chosen by the cross-validation of
`bench.claim_polarity` (the same folds and rules: precision at least 0.99 on the training
folds, no more same-topic claims strong than allowed, none of the different claims strong),
its kinds counted with the posts of `bench.matching_cases.POST_KINDS` (a rewording or
reversal inside a longer post).

Both variants see the same polarity rules, on the whole texts, or when a pair of segments
scored the match on that pair (and the whole texts too when the pair holds only part of the
claim: `SegmentPair.checked`), as `ClaimIndex.match` does.

Usage: part of `python -m bench.claim_polarity` ("segments_*" and "whole_*" figures).
"""

from __future__ import annotations

import numpy as np

from bench.claim_polarity import (
    HEADLINE_KINDS,
    Array,
    Bools,
    Ints,
    Log,
    PrimedEmbedder,
    Setting,
    Similarities,
    choose,
    cross_validate,
    outcome,
)
from bench.claim_variants import Variant, covered_best, measure_levers
from bench.matching_cases import POST_KINDS
from pipeline.claims.multilingual import get_multilingual
from pipeline.claims.polarity.compare import compare
from pipeline.claims.segments import SegmentPair, SegmentScorer, segments, windows, word_overlap
from pipeline.relevance.lexical import clean_text, terms

KINDS_WITH_POSTS = HEADLINE_KINDS | frozenset(POST_KINDS)


def _scorer(embedder: PrimedEmbedder, weights: tuple[float, float]) -> SegmentScorer:
    multi = get_multilingual()
    assert multi is not None  # Similarities refused to start without it
    cached_terms: dict[str, list[str]] = {}

    def overlap(a: str, b: str) -> float:
        for text in (a, b):
            if text not in cached_terms:
                cached_terms[text] = terms(text)
        return word_overlap(cached_terms[a], cached_terms[b])

    return SegmentScorer(
        minilm=lambda texts: embedder.encode([clean_text(t) or t for t in texts]),
        multilingual=lambda texts: multi.encode([clean_text(t) or t for t in texts]),
        overlap=overlap,
        weights=weights,
    )


Pairs = dict[tuple[int, int], SegmentPair]


def segment_best(
    sims: Similarities, embedder: PrimedEmbedder, setting: Setting
) -> tuple[tuple[Ints, Array, Bools], tuple[Ints, Array, Bools], Pairs]:
    """Per case, by whole texts and with segments: the best record, its score, and whether
    the polarity rules demote it; and the (case, record) pairs that segments scored."""
    cases = [c.text for c in sims.data.cases]
    claims = [s.text for s in sims.data.sources]
    split = [t for t in {*cases, *claims} if segments(t)]
    parts = [p for t in split for p in segments(t)]
    parts += [w for t in claims for w in windows(t)]
    embedder.prime([clean_text(t) or t for t in [*split, *parts]])
    scorer = _scorer(embedder, (setting.minilm, setting.multilingual))
    whole = setting.score(sims)
    with_segments = whole.copy()
    pairs: Pairs = {}
    long_claims = [j for j, c in enumerate(claims) if segments(c)]
    for i, case in enumerate(cases):
        for j in range(len(claims)) if segments(case) else long_claims:
            pair = scorer.best_pair(case, claims[j])
            if pair is not None and pair.score > whole[i, j]:
                with_segments[i, j] = pair.score
                pairs[(i, j)] = pair
    whole_best = sims.best(setting.minilm, setting.multilingual)
    return whole_best, _best(sims, with_segments, pairs), pairs


def _best(sims: Similarities, scores: Array, pairs: Pairs) -> tuple[Ints, Array, Bools]:
    top: Ints = scores.argmax(axis=1).astype(np.int64)
    best = scores[np.arange(len(top)), top]
    demoted = []
    for i, j in enumerate(top.tolist()):
        pair = pairs.get((i, j))
        if pair is None:
            demoted.append(bool(sims.reasons(i, j)))
        else:
            checked = pair.checked()
            demoted.append(any(compare(post, claim, kinds=k) for post, claim, k in checked))
    return top, best, np.array(demoted, dtype=bool)


def measure(
    sims: Similarities, embedder: PrimedEmbedder, setting: Setting, log: Log
) -> dict[str, float]:
    """Whole-set figures at `setting`'s threshold and cross-validated ones, for both."""
    result: dict[str, float] = {}
    whole, with_segments, pairs = segment_best(sims, embedder, setting)
    grid = [(setting.minilm, setting.multilingual)]
    everything = np.ones(len(sims.kinds), dtype=bool)
    for label, best in (("whole", whole), ("segments", with_segments)):
        variant = Variant(sims, grid[0], best)
        found = outcome(variant, setting)
        result[f"{label}_precision"] = found.precision
        result[f"{label}_recall_paraphrase"] = found.recall
        for kind, rate in found.strong_rates.items():
            result[f"{label}_strong_rate_{kind}"] = rate
        cv = cross_validate(variant, grid=grid, headline_kinds=KINDS_WITH_POSTS)
        for name, (mean, spread) in cv.items():
            if name.endswith("_weight"):
                continue
            result[f"{label}_cv_{name}_mean"] = mean
            result[f"{label}_cv_{name}_spread"] = spread
        chosen = choose(variant, everything, grid=grid, headline_kinds=KINDS_WITH_POSTS)
        result[f"{label}_cv_all_threshold"] = chosen.threshold
        result[f"{label}_cv_all_recall_paraphrase"] = outcome(variant, chosen).recall
        for category, count in missed(sims, best, setting.threshold).items():
            result[f"{label}_missed_{category}"] = float(count)
    texts = ([c.text for c in sims.data.cases], [s.text for s in sims.data.sources])
    covered = covered_best(texts, with_segments, pairs)
    result.update(measure_levers(sims, with_segments, covered, KINDS_WITH_POSTS))
    log(
        f"segments at {setting}: paraphrase recall {result['whole_recall_paraphrase']:.4f} "
        f"-> {result['segments_recall_paraphrase']:.4f}, in posts "
        f"{result['whole_strong_rate_post_reworded']:.4f} -> "
        f"{result['segments_strong_rate_post_reworded']:.4f}"
    )
    return result


def missed(sims: Similarities, best: tuple[Ints, Array, Bools], threshold: float) -> dict[str, int]:
    """The paraphrases (reworded) not matched strongly to their record, by why and by where
    the case comes from (own, task5): wrong record on top, demoted by the polarity rules,
    or right but scoring below `threshold`. Every case of the set is English (the Task 5
    rumours are English translations), so none is a cross-language miss."""
    top, score, demoted = best
    counts: dict[str, int] = {}
    for i, case in enumerate(sims.data.cases):
        if case.kind != "reworded":
            continue
        if top[i] != sims.expected[i]:
            why = "wrong_record"
        elif demoted[i] and score[i] >= threshold:
            why = "demoted"
        elif score[i] < threshold:
            why = "below_threshold"
        else:
            continue
        key = f"{why}_{case.origin}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))
