"""The review's title as a second wording of the claim (`pipeline.claims.review_titles`): the
score mix, the title vectors kept between queries, and through `ClaimIndex.match` with the
real embedding model: a post worded like the title is confirmed, a title alone never makes a
match, and the polarity rules still read the claim."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from pipeline.claims.index import ClaimIndex, ClaimRecord, MatchStrength
from pipeline.claims.review_titles import TitleCache, with_title
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.relevance.scoring import get_embedder
from testing import indexes

# Our own example in the style of a Snopes review: the claim as the fact-checker states it,
# and the title it put above the review.
CHANEL = "The fashion house Chanel is discontinuing its No. 5 perfume."
CHANEL_TITLE = "Chanel No. 5 to be Discontinued?"
CHANEL_URL = "https://www.snopes.com/fact-check/chanel-no-5-discontinued/"
POST = "Is Chanel No.5 being discontinued?!"


def test_the_title_mix_only_ever_raises_the_claims_score() -> None:
    assert with_title(0.72, 0.96, 0.7) == pytest.approx(0.3 * 0.72 + 0.7 * 0.96)
    assert with_title(0.72, 0.50, 0.7) == 0.72
    assert with_title(0.72, 0.96, 0.0) == 0.72
    assert with_title(0.72, 1.5, 1.0) == 1.0  # a cosine is clamped to [0, 1]


class CountingEncoder:
    """Deterministic unit vectors, one per distinct text, and the batches asked for."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.batches.append(list(texts))
        rows = []
        for text in texts:
            seed = sum(map(ord, text))
            vector = np.random.default_rng(seed).normal(size=8).astype(np.float32)
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows)


def test_titles_are_encoded_once_with_the_post_and_kept_for_the_next_query() -> None:
    encode = CountingEncoder()
    cache = TitleCache()
    first = cache.cosines("post one", {1: "Title A", 2: "Title B", 3: "  "}, encode)
    assert set(first) == {1, 2}  # an empty title is not scored
    assert encode.batches == [["post one", "Title A", "Title B"]]
    second = cache.cosines("post two", {1: "Title A", 4: "Title C"}, encode)
    assert encode.batches[-1] == ["post two", "Title C"]
    assert -1.0 <= second[1] <= 1.0 and second[1] != first[1]


def test_the_cache_keeps_at_most_its_size_of_titles() -> None:
    encode = CountingEncoder()
    cache = TitleCache(size=2)
    cache.cosines("post", {1: "A", 2: "B", 3: "C"}, encode)
    cache.cosines("post", {1: "A"}, encode)
    assert encode.batches[-1] == ["post", "A"]  # the oldest title was let go


def open_index(path: Path, weight: float) -> ClaimIndex:
    return indexes.claim_index(
        path, get_embedder(RelevanceConfig()), cfg=ClaimsConfig(title_weight=weight)
    )


def chanel(**extra: str) -> ClaimRecord:
    return ClaimRecord(
        claim_text=extra.get("claim", CHANEL),
        review_url=CHANEL_URL,
        rating_text="False",
        review_title=extra.get("title", CHANEL_TITLE),
    )


def test_a_post_worded_like_the_reviews_title_is_a_strong_match(tmp_path: Path) -> None:
    without = open_index(tmp_path / "off.sqlite", 0.0)
    without.add([chanel()])
    [weak] = without.match(POST)
    assert weak.strength is MatchStrength.WEAK and weak.title_cosine is None

    shipped = ClaimsConfig().title_weight
    index = open_index(tmp_path / "on.sqlite", shipped)
    index.add([chanel()])
    [strong] = index.match(POST)
    assert strong.strength is MatchStrength.STRONG
    assert strong.title_cosine is not None and strong.title_cosine > weak.score
    assert strong.score == pytest.approx(
        with_title(weak.score, strong.title_cosine, shipped), abs=1e-3
    )


def test_a_title_alone_makes_a_suggestion_never_a_strong_match(tmp_path: Path) -> None:
    index = open_index(tmp_path / "claims.sqlite", 1.0)
    lemon = "Drinking hot lemon water every hour kills the flu virus in your throat."
    index.add([chanel(claim=lemon)])
    [match] = index.match(POST)
    assert match.title_cosine is not None and match.score == match.title_cosine > 0.78
    assert match.strength is MatchStrength.WEAK
    assert len(match.demoted) == 1 and match.demoted[0].startswith("title only")


def test_a_negated_post_confirmed_by_the_title_is_still_demoted(tmp_path: Path) -> None:
    index = open_index(tmp_path / "claims.sqlite", ClaimsConfig().title_weight)
    index.add([chanel()])
    [match] = index.match("Chanel No. 5 is not being discontinued.")
    assert match.strength is MatchStrength.WEAK
    assert any("negation" in reason for reason in match.demoted)


def test_a_record_without_a_title_scores_as_before(tmp_path: Path) -> None:
    on = open_index(tmp_path / "on.sqlite", 1.0)
    off = open_index(tmp_path / "off.sqlite", 0.0)
    for index in (on, off):
        index.add([chanel(title="")])
    [a], [b] = on.match(POST, min_score=0.0), off.match(POST, min_score=0.0)
    assert (a.score, a.strength, a.title_cosine) == (b.score, b.strength, None)
