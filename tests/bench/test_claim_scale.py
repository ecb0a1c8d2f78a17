"""The scale bench's own arithmetic (`bench.claim_scale`); the run itself needs the CheckThat
collection and some 20 minutes."""

from __future__ import annotations

from bench.claim_scale import _copies, _verdicts
from pipeline.claims.records import ClaimRecord


def test_targets_are_judged_by_wall_time_and_by_cpu_time_apart() -> None:
    numbers = {
        "import_per_s": 99.9,
        "match_p95_ms_14k": 400.0,
        "match_cpu_p95_ms_14k": 120.0,
        "match_p95_ms_200k": 290.0,
        "match_cpu_p95_ms_200k": 310.0,
    }
    assert _verdicts(numbers) == {
        "import_target_met": 0.0,
        "p95_14k_target_met": 0.0,
        "cpu_p95_14k_target_met": 1.0,
        "p95_200k_target_met": 1.0,
        "cpu_p95_200k_target_met": 0.0,
    }


def test_synthetic_copies_are_new_reviews_of_the_same_claims() -> None:
    originals = [
        ClaimRecord(claim_text=f"Claim {n}", review_url=f"https://snopes.com/{n}/")
        for n in range(3)
    ]
    copies = _copies(originals, 50)
    assert len({c.key for c in copies} | {o.key for o in originals}) == 53
    assert all(
        c.claim_text.split(" [copy ")[0] in {o.claim_text for o in originals} for c in copies
    )
