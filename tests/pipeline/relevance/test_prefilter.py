"""The lexical pre-filter: which passages of a page the embedding model is run on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.config import RelevanceConfig
from pipeline.relevance.prefilter import bm25_scores, candidate_passages, lexical_order
from pipeline.relevance.scoring import FloatMatrix, encode_page, score_encoded

PAGE = [
    "The city council met on Tuesday to discuss the new parking rules downtown.",
    "Health officials said the measles vaccine does not cause autism in children.",
    "Weather: rain is expected over the weekend with mild temperatures.",
    "A large study of vaccinated children found no link between vaccines and autism.",
    "The football club announced a new coach for the coming season.",
]
POST = "Vaccines cause autism, my cousin's children got autism after the vaccine!"


class FakeEmbedder:
    """Stands in for the model: records what it is asked to encode, one vector per text that
    says which page passage it was (so scores can be checked against positions)."""

    turn_size = 8

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        self.texts.extend(texts)
        rows = np.zeros((len(texts), len(PAGE)), dtype=np.float32)
        for row, text in enumerate(texts):
            rows[row, PAGE.index(text)] = 1.0
        return rows


def test_the_passages_sharing_the_posts_words_are_kept_in_page_order() -> None:
    assert candidate_passages(PAGE, [POST], keep=2) == [1, 3]
    assert sorted(lexical_order(PAGE, [POST])[:2]) == [1, 3]


def test_a_search_query_in_the_focus_brings_in_its_own_words() -> None:
    assert candidate_passages(PAGE, [POST, "football coach"], keep=3) == [1, 3, 4]


def test_a_short_page_or_a_zero_size_keeps_every_passage() -> None:
    assert candidate_passages(PAGE, [POST], keep=len(PAGE)) == list(range(len(PAGE)))
    assert candidate_passages(PAGE, [POST], keep=0) == list(range(len(PAGE)))


def test_a_page_sharing_no_word_with_the_post_keeps_its_first_passages() -> None:
    assert candidate_passages(PAGE, ["Zebras migrate across the Serengeti"], keep=2) == [0, 1]
    assert bm25_scores([["a"], ["b"]], []) == [0.0, 0.0]


def test_only_the_candidates_are_encoded_and_passages_keep_their_page_position() -> None:
    cfg = RelevanceConfig(passage_words=20, prefilter_passages=2, passage_threshold=0.5)
    model = FakeEmbedder()
    page = encode_page(model, "u", "\n\n".join(PAGE), cfg, focus=[POST])  # type: ignore[arg-type]
    assert page is not None
    assert model.texts == [PAGE[1], PAGE[3]]
    assert page.positions == [1, 3]
    # A query matching the fourth passage of the page: the passage says where it is.
    query = np.zeros((1, len(PAGE)), dtype=np.float32)
    query[0, 3] = 1.0
    scored = score_encoded(page, query, cfg)
    assert [(p.index, p.text) for p in scored.passages] == [(3, PAGE[3])]


def test_without_a_focus_every_passage_is_encoded() -> None:
    cfg = RelevanceConfig(passage_words=20, prefilter_passages=2)
    model = FakeEmbedder()
    page = encode_page(model, "u", "\n\n".join(PAGE), cfg)  # type: ignore[arg-type]
    assert page is not None and page.positions is None
    assert model.texts == PAGE
