"""The image-similarity calibration's arithmetic on hand-made pairs (no model): how a threshold is
chosen, that a fold never sees its own originals, and the pooled held-out figures."""

from __future__ import annotations

from bench.image_similarity import Pair, choose_threshold, cross_validate, pooled, precision_recall


def pair(stored: str, probe: str, cos: float) -> Pair:
    return Pair(
        stored=stored,
        probe=probe,
        alteration="crop 75%" if stored == probe else "",
        positive=stored == probe,
        cos=cos,
        hash_distance=30,
    )


PAIRS = [
    pair("a", "a", 0.95),
    pair("a", "a", 0.80),
    pair("b", "b", 0.90),
    pair("a", "b", 0.85),  # a hard negative between the two positives of "a"
    pair("b", "a", 0.40),
]


def test_precision_and_recall_at_a_threshold() -> None:
    assert precision_recall(PAIRS, 0.85) == (2 / 3, 2 / 3)
    assert precision_recall(PAIRS, 0.99) == (1.0, 0.0)  # no hit: nothing wrong, nothing found


def test_the_precision_rule_takes_the_lowest_cosine_reaching_the_target() -> None:
    assert choose_threshold(PAIRS, 0.98) == (0.9, True)
    assert choose_threshold(PAIRS, None) == (0.8, False)  # best F1: 0.857 at 0.80


def test_a_fold_chooses_without_its_own_originals_and_is_scored_on_them() -> None:
    names = ["a", "b", "c"]
    pairs = [*PAIRS, pair("c", "c", 0.70), pair("c", "a", 0.75)]
    folds = cross_validate(pairs, names, 3, None)
    # Fold 0 holds out "a": chosen on b's and c's pairs only (0.90 and 0.70 positives).
    assert folds[0].threshold == 0.7 and (folds[0].positives, folds[0].negatives) == (2, 1)
    assert folds[0].recall == 1.0 and folds[0].precision == 2 / 3
    precision, recall = pooled(pairs, names, folds)
    assert 0 < precision <= 1 and 0 < recall <= 1
