"""The rule that lets a tuned setting replace a plain default (evaluation/cv_rule.py)."""

from __future__ import annotations

import pytest

from evaluation.cv_rule import gain_beats_spread


def test_a_gain_smaller_than_the_fold_spread_keeps_the_default() -> None:
    # Issue 29's authority figures: +0.017 MAP against a spread of about 0.19.
    plain = [0.45, 0.90, 0.55, 0.80, 0.70]
    tuned = [0.48, 0.92, 0.57, 0.80, 0.72]
    decision = gain_beats_spread("bm25-plain", plain, "bm25", tuned)
    assert decision.gain == pytest.approx(0.018)
    assert decision.spread == pytest.approx(0.1823, abs=1e-4)
    assert not decision.replaces
    assert decision.line().startswith("bm25 (0.698) does not replace bm25-plain (0.680)")


def test_a_gain_larger_than_the_spread_replaces_it() -> None:
    plain = [0.50, 0.52, 0.48, 0.51, 0.49]
    tuned = [0.70, 0.71, 0.69, 0.72, 0.68]
    assert gain_beats_spread("plain", plain, "tuned", tuned).replaces


def test_the_larger_spread_of_the_two_counts() -> None:
    steady = [0.5, 0.5, 0.5, 0.5]
    wild = [0.95, 0.45, 0.95, 0.45]  # +0.2 on average, sd 0.29
    assert not gain_beats_spread("steady", steady, "wild", wild).replaces


def test_no_gain_never_replaces_even_without_spread() -> None:
    assert not gain_beats_spread("a", [0.5, 0.5], "b", [0.5, 0.5]).replaces
    assert not gain_beats_spread("a", [0.5], "b", [0.4]).replaces


def test_scores_must_come_from_the_same_folds() -> None:
    with pytest.raises(ValueError):
        gain_beats_spread("a", [0.5, 0.6], "b", [0.5])
