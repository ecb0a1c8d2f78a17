"""Segment-level claim matching (`pipeline.claims.segments`, `ClaimsConfig.segment_matching`):
a long post is scored by its best sentence as well, with the real embedding models, and the
polarity rules still demote a reversed sentence."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.claims import segments as claim_segments
from pipeline.claims.index import ClaimIndex, ClaimRecord, MatchStrength
from pipeline.claims.segments import segments, windows
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.relevance.scoring import get_embedder
from testing import indexes
from tests.pipeline.claim_texts import LEMON, LEMON_URL, NEGATED, PARAPHRASE, RELATED

LEAD = (
    "My neighbour swears by this every single winter and she has been telling the whole "
    "street about it since October, so I finally looked into it myself."
)
TAIL = "Share this with everyone you love before the cold season starts!"
TWO_PART = (
    "The city will close every public library in March. The budget saved goes to road repairs."
)
TWO_PART_URL = "https://factcheck.invalid/library-closures"
# A rumour told in several sentences, as shared posts tell them (written for this test).
VISIT = (
    "Today the health minister visited the hospital in Leeds without informing the city "
    "council. He was received by the hospital director and his own party officials, and he "
    "held a meeting with them in the staff canteen. He did not meet any council member or any "
    "doctor, and he left the city before noon. This is called contempt for the city. He must "
    "apologise."
)
VISIT_URL = "https://factcheck.invalid/minister-visit"


def _index(segment_matching: bool, **weights: float) -> Iterator[ClaimIndex]:
    cfg = ClaimsConfig(segment_matching=segment_matching, **weights)
    with indexes.claim_index(":memory:", get_embedder(RelevanceConfig()), cfg=cfg) as index:
        index.add(
            ClaimRecord(claim_text=text, review_url=url, rating_text="False", language="en")
            for text, url in ((LEMON, LEMON_URL), (TWO_PART, TWO_PART_URL), (VISIT, VISIT_URL))
        )
        yield index


@pytest.fixture(scope="module")
def with_segments() -> Iterator[ClaimIndex]:
    yield from _index(True)


@pytest.fixture(scope="module")
def whole_only() -> Iterator[ClaimIndex]:
    # In a three-claim index BM25 gives the best claim its whole share whatever the post says;
    # the whole-text baseline is scored without it (the overlap takes its weight).
    yield from _index(False, bm25_weight=0.0)


def top(index: ClaimIndex, text: str) -> tuple[str, MatchStrength, list[str]]:
    found = index.match(text, min_score=0.0, limit=1, lang="en")
    assert found
    return found[0].record.review_url, found[0].strength, found[0].demoted


def test_segments_are_the_sentences_that_can_carry_a_claim() -> None:
    text = f"Urgent! {LEAD} {PARAPHRASE}\n{TAIL}"
    assert segments(text) == [LEAD, PARAPHRASE, TAIL]
    # One sentence: the whole text is its only segment.
    assert segments(PARAPHRASE) == []
    # A colon ends a segment ("Source: what happened").
    assert segments("Breaking news from the capital: the mayor has resigned tonight") == [
        "Breaking news from the capital:",
        "the mayor has resigned tonight",
    ]


def test_a_long_post_whose_second_sentence_is_the_checked_claim_matches_strongly(
    with_segments: ClaimIndex, whole_only: ClaimIndex
) -> None:
    post = f"{LEAD} {PARAPHRASE} {TAIL}"
    assert top(with_segments, post) == (LEMON_URL, MatchStrength.STRONG, [])
    # By the whole post alone the surrounding sentences dilute the match below strong.
    assert top(whole_only, post)[1] is not MatchStrength.STRONG


def test_a_negated_sentence_inside_a_long_post_stays_demoted(with_segments: ClaimIndex) -> None:
    url, strength, demoted = top(with_segments, f"{LEAD} {NEGATED} {TAIL}")
    assert (url, strength) == (LEMON_URL, MatchStrength.WEAK)
    assert any("negation" in reason for reason in demoted)


def test_a_different_claim_on_the_topic_inside_a_long_post_is_not_strong(
    with_segments: ClaimIndex,
) -> None:
    assert top(with_segments, f"{LEAD} {RELATED} {TAIL}")[1] is not MatchStrength.STRONG


@pytest.mark.parametrize(
    ("post", "url"),
    [
        # The second sentences are the same word for word, so that pair alone would score 1;
        # the whole texts are compared too, and the first sentence denies the claim's.
        (
            "The city will not close any public library in March. "
            "The budget saved goes to road repairs.",
            TWO_PART_URL,
        ),
        # A one-sentence summary of three sentences of a rumour, one of them reversed ("met
        # doctors" where the claim's third sentence says he did not).
        (
            "The health minister visited the Leeds hospital, met the director and his party "
            "officials in the canteen, and met doctors and council members too.",
            VISIT_URL,
        ),
    ],
)
def test_a_post_that_reverses_one_sentence_of_a_longer_claim_is_not_strong(
    with_segments: ClaimIndex, post: str, url: str
) -> None:
    found_url, strength, demoted = top(with_segments, post)
    assert (found_url, strength) == (url, MatchStrength.WEAK)
    assert any("negation" in reason for reason in demoted)


def test_a_post_denying_the_claim_in_another_sentence_stays_demoted(
    with_segments: ClaimIndex,
) -> None:
    # The sentence that scores repeats the claim word for word; the denial is next to it.
    post = f"This is a myth, sadly. {LEMON} Please stop sharing it in the family chat."
    url, strength, demoted = top(with_segments, post)
    assert (url, strength) == (LEMON_URL, MatchStrength.WEAK)
    assert any("myth" in reason for reason in demoted)


@pytest.mark.parametrize(
    "post",
    [
        f"Fake news again. {PARAPHRASE}",
        f"Not true at all: {PARAPHRASE}",
        f"{PARAPHRASE} Total nonsense, doctors say otherwise.",
    ],
)
def test_a_post_repeating_the_claim_to_dispute_it_is_not_strong(
    with_segments: ClaimIndex, whole_only: ClaimIndex, post: str
) -> None:
    # The claim's own sentence scores as high as the bare claim; the dispute around it is
    # what the whole post says, so a moderator decides (no templated "rated false" reply).
    for index in (with_segments, whole_only):
        url, strength, demoted = top(index, post)
        assert (url, strength) == (LEMON_URL, MatchStrength.WEAK)
        assert any("dispute" in reason for reason in demoted)


def test_windows_are_runs_of_two_and_three_consecutive_sentences() -> None:
    first, second, third = (
        "The mayor closed the old bridge today.",
        "Trucks must now drive around the lake.",
        "The council did not vote on it.",
    )
    assert windows(f"{first} {second} {third}") == [
        f"{first} {second}",
        f"{second} {third}",
    ]
    # Two sentences: their window would be the whole text, already scored.
    assert windows(f"{first} {second}") == []
    assert windows(first) == []


def test_a_post_summing_up_several_sentences_of_a_claim_is_scored_against_them_together(
    with_segments: ClaimIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    post = (
        "The health minister visited the Leeds hospital, met only the director and his party "
        "officials in the canteen, and never met a doctor or council member."
    )
    found = with_segments.match(post, min_score=0.0, limit=1, lang="en")[0]
    assert (found.record.review_url, found.strength) == (VISIT_URL, MatchStrength.STRONG)
    # Against one sentence at a time the summary scores well under what it does against the
    # three sentences it draws on. Measured on the embeddings and word overlap alone: with the
    # BM25 share the whole texts already score as high, since in a three-claim index the
    # right claim is always the best BM25 match.
    opened = _index(True, bm25_weight=0.0, dense_weight=0.3, multilingual_weight=0.5)
    by_embeddings = next(opened)
    together = by_embeddings.match(post, min_score=0.0, limit=1, lang="en")[0]
    monkeypatch.setattr(claim_segments, "WINDOW_SIZES", ())
    alone = by_embeddings.match(post, min_score=0.0, limit=1, lang="en")[0]
    opened.close()
    assert together.score - alone.score > 0.05
