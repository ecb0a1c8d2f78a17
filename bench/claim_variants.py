"""Variants of the matcher scored by the cross-validation of `bench.claim_polarity`, and two
levers for paraphrase recall measured with them (neither is shipped: neither passes).

`Variant` holds one variant's best matches (segment-level ones, `bench.claim_segments`) in the
shape that `choose`, `outcome` and `cross_validate` read. The levers:

* coverage as a second signal: a best match scoring at most `margin` under the threshold is
  strong when the post's scored part holds at least `COVERAGE_FLOOR` of the content words
  (`pipeline.relevance.lexical.terms`, stemmed) of the claim's scored part (a rewording under the
  threshold that still names what the claim names, "Heating food in a microwave oven removes
  every nutrient from it" against "Microwaving food destroys all of its nutrients"). The floor
  is fixed ("most of the claim's words"); the margin is the one knob, chosen with the
  threshold by the grouped cross-validation (`MARGINS`; 0 switches the lever off). In effect
  the score gains `margin` when the coverage reaches the floor.
* the same-topic bound: `bench.claim_polarity.choose` lets a threshold match at most half as
  many of the unlabelled same-topic HealthVer queries strongly as the former defaults did.
  The same cross-validation without that bound shows how much held-out recall it costs (a
  sensitivity only: some of those queries are near-paraphrases, others not, and nothing tells
  which).

Both at the shipped weights, with the rewordings and reversals inside longer posts among the
headline kinds. Usage: part of `python -m bench.claim_polarity` ("coverage_*", "unbounded_*").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bench.claim_polarity import Array, Bools, Ints, Scores, cross_validate
from pipeline.claims.segments import SegmentPair
from pipeline.relevance.lexical import terms

COVERAGE_FLOOR = 0.5
MARGINS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08)
UNBOUNDED = "same_topic_unbounded"  # a kind `choose` does not bound
MARGIN = -1.0  # the multilingual weight of a grid of margins (no real weight is negative)


class Variant:
    """The shape of `Similarities` that `choose`, `outcome` and `cross_validate` read, with
    `best` as the best matches at `weights`; other weights (the former defaults, which
    `choose` bounds the same-topic matches by) are `sims`'. Given a grid of `weights` alone,
    the cross-validation chooses the threshold. A grid of `(margin, MARGIN)` chooses the
    coverage margin as well: the `covered` matches' scores gain it. Without
    `bound_same_topic`, the same-topic queries are a kind `choose` does not bound."""

    def __init__(
        self,
        sims: Scores,
        weights: tuple[float, float],
        best: tuple[Ints, Array, Bools],
        *,
        covered: Bools | None = None,
        bound_same_topic: bool = True,
    ) -> None:
        kinds = sims.kinds
        self.kinds = (
            kinds if bound_same_topic else np.where(kinds == "same_topic", UNBOUNDED, kinds)
        )
        self.expected = sims.expected
        self.groups = sims.groups
        self._sims = sims
        self._weights = weights
        self._best = best
        self._covered = np.zeros(len(kinds), dtype=bool) if covered is None else covered

    def best(self, minilm: float, multilingual: float) -> tuple[Ints, Array, Bools]:
        if multilingual == MARGIN:
            top, score, demoted = self._best
            return top, score + minilm * self._covered, demoted
        if (minilm, multilingual) == self._weights:
            return self._best
        return self._sims.best(minilm, multilingual)

    def reasons(self, case: int, record: int) -> tuple[str, ...]:
        return self._sims.reasons(case, record)


def coverage(post: str, claim: str) -> float:
    """The share of the claim's content words that the post has too."""
    wanted = set(terms(claim))
    return len(wanted & set(terms(post))) / len(wanted) if wanted else 0.0


def covered_best(
    texts: tuple[list[str], list[str]],
    best: tuple[Ints, Array, Bools],
    pairs: Mapping[tuple[int, int], SegmentPair],
) -> Bools:
    """Per case: whether its best match's post part covers `COVERAGE_FLOOR` of its claim part
    (the pair of segments that scored it, else the whole texts). `texts`: cases, claims."""
    cases, claims = texts
    found = []
    for i, j in enumerate(best[0].tolist()):
        pair = pairs.get((i, j))
        post, claim = (cases[i], claims[j]) if pair is None else (pair.post, pair.claim)
        found.append(coverage(post, claim) >= COVERAGE_FLOOR)
    return np.array(found, dtype=bool)


def measure_levers(
    sims: Scores,
    best: tuple[Ints, Array, Bools],
    covered: Bools,
    headline_kinds: frozenset[str],
) -> dict[str, float]:
    """Held-out figures (fold mean and spread) with the coverage lever, its margin chosen by
    the cross-validation, and with the threshold alone but no same-topic bound."""
    result: dict[str, float] = {}
    levers = {
        "coverage": (Variant(sims, (0.0, MARGIN), best, covered=covered), MARGINS),
        "unbounded": (Variant(sims, (0.0, MARGIN), best, bound_same_topic=False), (0.0,)),
    }
    for label, (variant, margins) in levers.items():
        grid = [(margin, MARGIN) for margin in margins]
        cv = cross_validate(variant, grid=grid, headline_kinds=headline_kinds)
        for name, (mean, spread) in cv.items():
            if name == "multilingual_weight":
                continue
            name = "margin" if name == "minilm_weight" else name
            result[f"{label}_cv_{name}_mean"] = mean
            result[f"{label}_cv_{name}_spread"] = spread
    return result
