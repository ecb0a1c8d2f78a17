"""`bench/claim_variants.py`: a variant's scores for the cross-validation, the coverage lever
and the same-topic sensitivity that the claim benchmark measures (neither lever is shipped)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np

from bench.claim_polarity import Scores
from bench.claim_variants import MARGIN, UNBOUNDED, Variant, coverage, covered_best
from pipeline.claims.segments import SegmentPair

MICROWAVE = "Microwaving food destroys all of its nutrients."
MASKS = "Face masks lower the amount of oxygen you breathe to dangerous levels."
BEST = (np.array([0, 1]), np.array([0.64, 0.64]), np.array([False, False]))


def _sims() -> Scores:
    whole = (np.array([0, 1]), np.array([0.9, 0.9]), np.array([False, False]))
    return cast(
        Scores,
        SimpleNamespace(
            kinds=np.array(["reworded", "same_topic"]),
            expected=np.array([0, -1]),
            groups=["a", "b"],
            best=lambda minilm, multilingual: whole,
            reasons=lambda case, record: (),
        ),
    )


def test_coverage_is_the_share_of_the_claims_content_words_the_post_has() -> None:
    # food and nutrient of microwav, food, destroy, nutrient ("all", "its" are stopwords).
    post = "Heating food in a microwave oven removes every nutrient from it."
    assert coverage(post, MICROWAVE) == 0.5
    # face and mask of eight: the same topic, another claim.
    assert coverage("Face masks reduce the spread of respiratory droplets.", MASKS) == 0.25
    assert coverage("anything at all", "") == 0.0


def test_a_variant_answers_for_its_own_weights_and_leaves_the_others_to_the_similarities() -> None:
    variant = Variant(_sims(), (0.3, 0.5), BEST)
    assert variant.best(0.3, 0.5)[1].tolist() == [0.64, 0.64]
    # The former defaults, which `choose` bounds the same-topic matches by.
    assert variant.best(0.95, 0.0)[1].tolist() == [0.9, 0.9]


def test_the_margin_lifts_only_the_matches_that_cover_the_claim() -> None:
    variant = Variant(_sims(), (0.0, MARGIN), BEST, covered=np.array([True, False]))
    top, score, demoted = variant.best(0.03, MARGIN)
    assert np.allclose(score, [0.67, 0.64])
    assert top.tolist() == [0, 1] and not demoted.any()


def test_without_the_bound_the_same_topic_queries_are_a_kind_choose_does_not_count() -> None:
    assert Variant(_sims(), (0.3, 0.5), BEST).kinds.tolist() == ["reworded", "same_topic"]
    unbounded = Variant(_sims(), (0.3, 0.5), BEST, bound_same_topic=False)
    assert unbounded.kinds.tolist() == ["reworded", UNBOUNDED]


def test_a_match_scored_by_a_pair_of_segments_is_covered_by_that_pair() -> None:
    sentence = "Heating food in a microwave removes every nutrient."
    post = f"Look what my aunt found out. {sentence}"
    best = (np.array([0]), np.array([0.7]), np.array([False]))
    pair = SegmentPair(0.7, sentence, MICROWAVE, post, MICROWAVE)
    assert covered_best(([post], [MICROWAVE]), best, {(0, 0): pair}).tolist() == [True]
    # The pair is what is counted: another pair of the same texts may cover less.
    other = SegmentPair(0.7, "Look what my aunt found out.", MICROWAVE, post, MICROWAVE)
    assert covered_best(([post], [MICROWAVE]), best, {(0, 0): other}).tolist() == [False]
    # Without a pair, the whole texts.
    masks = "Face masks reduce the spread of droplets."
    assert covered_best(([masks], [MASKS]), best, {}).tolist() == [False]
