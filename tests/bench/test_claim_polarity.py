"""The setting choice of `bench/claim_polarity.py`: no strong match for a different claim on a
debunked claim's topic, whatever the precision allows."""

from __future__ import annotations

from typing import cast

import numpy as np

from bench.claim_polarity import Similarities, choose

CORRECT = 120  # enough right strong matches that one wrong one keeps precision above 0.99


class _Scores:
    """Each case's best record (always record 0), its score and no polarity mismatch, under
    every weight: 120 exact restatements, a paraphrase scoring 0.77 and a different claim on
    the same topic scoring 0.78."""

    def __init__(self) -> None:
        self.kinds = np.array(["exact"] * CORRECT + ["reworded", "different"])
        self.expected = np.array([0] * (CORRECT + 1) + [-1])
        self._score = np.array([0.95] * CORRECT + [0.77, 0.78])

    def best(self, minilm: float, multilingual: float) -> tuple[object, object, object]:
        n = len(self.kinds)
        return np.zeros(n, dtype=np.int64), self._score, np.zeros(n, dtype=bool)


def test_the_chosen_threshold_keeps_a_different_claim_from_matching_strongly() -> None:
    sims = cast(Similarities, _Scores())
    chosen = choose(sims, np.ones(CORRECT + 2, dtype=bool))
    # 0.77 would keep precision at 121/122 and catch the paraphrase, but the different
    # claim would be strong with it.
    assert chosen.threshold > 0.78
