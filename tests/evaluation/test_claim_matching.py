"""The claim-matching sweep and its case file, against a real claim index (the bundled
embedding model) holding two fact-checked claims."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation.claim_matching import (
    MatchingCase,
    read_cases,
    rumor_review_url,
    sweep,
)
from pipeline.claims.index import ClaimIndex, ClaimRecord
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.relevance.scoring import get_embedder
from testing import indexes

LEMON = "https://checks.example/lemon-water-flu"
TRAINS = "https://checks.example/trains-free"


@pytest.fixture
def index() -> Iterator[ClaimIndex]:
    with indexes.claim_index(":memory:", get_embedder(RelevanceConfig()), cfg=ClaimsConfig()) as ix:
        ix.add(
            [
                ClaimRecord(claim_text="Hot lemon water kills the flu virus.", review_url=LEMON),
                ClaimRecord(
                    claim_text="All trains in the country will be free from next year.",
                    review_url=TRAINS,
                ),
            ]
        )
        yield ix


def test_sweep_counts_a_paraphrase_right_and_any_match_of_a_negative_wrong(
    index: ClaimIndex,
) -> None:
    cases = [
        MatchingCase("Drinking hot lemon water kills flu viruses", LEMON),
        MatchingCase("Next year every train ride in the country costs nothing", TRAINS),
        MatchingCase("The museum opens a new wing for modern sculpture", None),
    ]
    low, high = sweep(index, cases, [0.0, 1.01])
    # At 0 every case predicts its best match: both paraphrases right, the negative wrong.
    assert (low.predicted, low.correct) == (3, 2)
    assert low.precision == pytest.approx(2 / 3)
    assert low.recall == pytest.approx(1.0)
    # Above any score nothing is predicted: precision is vacuously 1, recall 0.
    assert (high.predicted, high.correct, high.precision, high.recall) == (0, 0, 1.0, 0.0)


def test_a_paraphrase_matched_to_the_wrong_record_is_not_correct(index: ClaimIndex) -> None:
    [row] = sweep(index, [MatchingCase("Hot lemon water kills the flu virus.", TRAINS)], [0.0])
    assert (row.predicted, row.correct, row.recall) == (1, 0, 0.0)


def test_cases_file_has_positives_by_rumor_id_and_negatives_without(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"text": "a", "rumor_id": "T5_001"}\n\n{"text": "b"}\n', encoding="utf-8")
    assert read_cases(path) == [
        MatchingCase("a", rumor_review_url("T5_001")),
        MatchingCase("b", None),
    ]
    path.write_text('{"rumor_id": "T5_001"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"cases.jsonl:1: expected an object with a 'text'"):
        read_cases(path)
