"""`bench/claim_segments.py` and the post cases of `bench/matching_cases.py`: the paraphrase
misses counted by why, and rewordings and reversals placed inside a longer post."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np

from bench.claim_polarity import Similarities
from bench.claim_segments import missed
from bench.matching_cases import Case, Source, add_post_cases


def test_paraphrase_misses_are_counted_by_why_and_by_origin() -> None:
    cases = [
        Case("right and strong", "reworded", "own", "a", "u0"),
        Case("right but low", "reworded", "task5", "b", "u1"),
        Case("right but demoted", "reworded", "own", "c", "u2"),
        Case("another record on top", "reworded", "task5", "d", "u3"),
        Case("a negation, weak as it should be", "negated", "own", "a", None),
    ]
    sims = SimpleNamespace(data=SimpleNamespace(cases=cases), expected=np.array([0, 1, 2, 3, -1]))
    best = (
        np.array([0, 1, 2, 0, 0]),
        np.array([0.9, 0.6, 0.9, 0.9, 0.9]),
        np.array([False, False, True, False, True]),
    )
    counts = missed(cast(Similarities, sims), best, 0.665)
    assert counts == {"below_threshold_task5": 1, "demoted_own": 1, "wrong_record_task5": 1}


def test_rewordings_and_reversals_of_our_claims_also_appear_inside_a_post() -> None:
    source = Source("own-99", "Microwaving food destroys all of its nutrients.", "own")
    cases = [
        Case(source.text, "exact", "own", source.key, source.url),
        Case(
            "Heating food in a microwave removes its nutrients.",
            "reworded",
            "own",
            "own-99",
            source.url,
        ),
        Case("Microwaving food does not destroy its nutrients.", "negated", "own", "own-99", None),
    ]
    add_post_cases([source], cases)
    posts = [c for c in cases if c.kind.startswith("post_")]
    assert [(c.kind, c.expected_url, c.group) for c in posts] == [
        ("post_reworded", source.url, "own-99"),
        ("post_reversed", None, "own-99"),
    ]
    for post, inner in zip(posts, cases[1:3], strict=True):
        # The claim is the middle sentence, between a lead and a closing sentence.
        lead, _, tail = post.text.partition(inner.text)
        assert lead.strip() and tail.strip()
