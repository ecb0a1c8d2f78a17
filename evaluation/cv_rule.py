"""The rule a tuned setting must pass to replace a plain default: its gain over the default,
averaged over cross-validation folds (each scored on rumors or queries it was not tuned on),
must exceed the fold spread, the standard deviation of the held-out scores across folds
(the larger of the two settings').

With a score that moves ± 0.19 from one fold to the next, a gain of 0.02 is a lucky draw of
queries, not a better retriever, and on held-back data it has gone the other way (issue 29:
the authority retriever chosen by cross-validation on CLEF 2024 Task 5 dev scored MAP 0.542 on
the test rumors against plain BM25's 0.655). The rule is deliberately stricter than a paired
test: the plain default costs nothing to keep, and a new knob must be worth its variance.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RuleDecision:
    """Whether `tuned` replaces `default`, and the figures that decided it."""

    default: str
    tuned: str
    default_mean: float
    tuned_mean: float
    gain: float  # tuned_mean - default_mean, over the same folds
    spread: float  # the larger standard deviation across folds of the two settings' scores
    replaces: bool

    def line(self) -> str:
        verdict = "replaces" if self.replaces else "does not replace"
        return (
            f"{self.tuned} ({self.tuned_mean:.3f}) {verdict} {self.default} "
            f"({self.default_mean:.3f}): fold gain {self.gain:+.3f} vs fold spread "
            f"{self.spread:.3f}"
        )


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def gain_beats_spread(
    default: str,
    default_folds: Sequence[float],
    tuned: str,
    tuned_folds: Sequence[float],
) -> RuleDecision:
    """Apply the rule to per-fold held-out scores of the same folds, in the same order."""
    if len(default_folds) != len(tuned_folds) or not default_folds:
        raise ValueError("both settings need a score for each of the same folds")
    default_mean = statistics.fmean(default_folds)
    tuned_mean = statistics.fmean(tuned_folds)
    gain = tuned_mean - default_mean
    spread = max(_sd(default_folds), _sd(tuned_folds))
    # Strictly above (with room for rounding): with one fold there is no spread to beat, and
    # a gain of zero never replaces anything.
    replaces = gain > spread + 1e-9 and gain > 0
    return RuleDecision(default, tuned, default_mean, tuned_mean, gain, spread, replaces)
