"""Known claims across languages without an LLM: the multilingual model finds an English
fact-check for a German post (real models, real SQLite index), never as a strong match, and
the decision's note says what was done; the fused score follows its weights."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.claims import index as claims_module
from pipeline.claims import known as known_module
from pipeline.claims.index import ClaimIndex, ClaimRecord, MatchStrength, fused_score
from pipeline.claims.known import find_known_claims
from pipeline.claims.ratings import Rating
from pipeline.config import ClaimsConfig, RelevanceConfig
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.relevance.scoring import get_embedder
from testing import indexes
from testing.fakes.openai_server import FakeLLM, Reply
from tests.pipeline.claim_texts import GERMAN, LEMON, LEMON_URL, NOW, PARAPHRASE

BUDGET = "The city council approved a new budget for public libraries."
BUDGET_URL = "https://www.example-factcheck.org/library-budget/"


def record(text: str, url: str, **extra: Any) -> ClaimRecord:
    return ClaimRecord(
        claim_text=text,
        review_url=url,
        rating=Rating.FALSE,
        rating_text="False",
        publisher_name="Snopes",
        review_date=NOW - timedelta(days=30),
        language="en",
        **extra,
    )


@pytest.fixture
def index(tmp_path: Path) -> ClaimIndex:
    ix = indexes.claim_index(tmp_path / "claims.sqlite", get_embedder(RelevanceConfig()))
    ix.add([record(LEMON, LEMON_URL), record(BUDGET, BUDGET_URL)])
    return ix


def known(ix: ClaimIndex, text: str, fake: FakeLLM | None = None, lang: str = "de") -> Any:
    llm = LLMClient(fake.config(invalid_retries=0)) if fake is not None else None
    return find_known_claims(ix, [text], lang=lang, as_of=NOW, llm=llm, ledger=CallLedger())


def test_without_an_llm_a_german_post_finds_its_english_fact_check_as_a_suggestion(
    index: ClaimIndex,
) -> None:
    found = known(index, GERMAN)
    top = found.matches[0]
    assert top.record.review_url == LEMON_URL
    assert top.strength is MatchStrength.WEAK  # scored strong, capped: no rule backs it
    assert top.demoted and top.demoted[-1].startswith("cross-language: the post is in 'de'")
    [note] = found.notes
    assert note.startswith("cross-language matching used the multilingual model")
    assert "not possible" not in note


def test_a_cross_language_match_is_scored_by_the_multilingual_model_alone(
    tmp_path: Path,
) -> None:
    # A fused score that weighs MiniLM and the word overlap, unlike the defaults.
    cfg = ClaimsConfig(dense_weight=0.95, multilingual_weight=0.0)
    index = indexes.claim_index(tmp_path / "fused.sqlite", get_embedder(RelevanceConfig()), cfg=cfg)
    index.add([record(LEMON, LEMON_URL), record(BUDGET, BUDGET_URL)])
    [as_german] = index.match(GERMAN, as_of=NOW, lang="de", limit=1, min_score=0.0)
    [as_english] = index.match(GERMAN, as_of=NOW, lang="en", limit=1, min_score=0.0)
    assert as_german.record.review_url == LEMON_URL
    # MiniLM and word overlap hardly see a German sentence; the multilingual cosine does.
    assert as_german.score > as_english.score + 0.2


def test_a_german_post_finds_an_english_fact_check_the_english_candidates_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    others = [
        "Wind turbines kill more birds than cats do.",
        "The moon landing in 1969 was staged in a film studio.",
        "Eating carrots lets people see in the dark.",
        "5G masts spread the coronavirus.",
    ]
    ix = indexes.claim_index(tmp_path / "many.sqlite", get_embedder(RelevanceConfig()))
    ix.add([record(t, f"https://factcheck.example/{n}") for n, t in enumerate(others)])
    ix.add([record(LEMON, LEMON_URL)])
    # One candidate from each English source (MiniLM, word index): the multilingual
    # neighbours must bring the right record in.
    monkeypatch.setattr(claims_module, "CANDIDATE_POOL", 1)
    [top] = ix.match(GERMAN, as_of=NOW, lang="de", limit=1, min_score=0.0)
    assert top.record.review_url == LEMON_URL


def test_without_the_multilingual_model_the_note_says_matching_was_not_possible(
    index: ClaimIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(known_module, "multilingual_available", lambda: False)
    monkeypatch.setattr(claims_module, "get_multilingual", lambda: None)
    found = known(index, GERMAN)
    assert all(m.strength is not MatchStrength.STRONG for m in found.matches)
    [note] = found.notes
    assert note.startswith("cross-language matching was not possible: the post is in 'de'")


def test_with_an_llm_the_english_translations_strong_match_wins_over_the_capped_one(
    index: ClaimIndex, fake_llm: FakeLLM
) -> None:
    fake_llm.script("translate_claims", Reply.json({"english": [PARAPHRASE]}))
    fake_llm.script("match_check", Reply.json({"relation": "same", "reason": "Same."}))
    found = known(index, GERMAN, fake_llm)
    assert found.notes == []
    top = found.matches[0]
    assert top.strength is MatchStrength.STRONG and top.query == PARAPHRASE
    [request] = fake_llm.requests_for("translate_claims")  # one call for all the post's claims
    assert GERMAN in request.body["messages"][-1]["content"]


def test_an_english_post_is_matched_as_before_without_a_cross_language_cap(
    index: ClaimIndex,
) -> None:
    found = known(index, PARAPHRASE, lang="en")
    assert found.notes == []
    assert found.matches[0].strength is MatchStrength.STRONG
    assert found.matches[0].demoted == []


def test_the_fused_score_weighs_both_cosines_and_gives_the_rest_to_the_overlap() -> None:
    cfg = ClaimsConfig(dense_weight=0.5, multilingual_weight=0.3, bm25_weight=0.0)
    assert fused_score(1.0, 0.0, 0.0, cfg) == pytest.approx(0.5)
    assert fused_score(0.0, 1.0, 0.0, cfg) == pytest.approx(0.3)
    assert fused_score(0.0, 0.0, 1.0, cfg) == pytest.approx(0.2)
    assert fused_score(0.8, 0.8, 0.8, cfg) == pytest.approx(0.8)


def test_the_bm25_share_takes_its_weight_from_the_overlap() -> None:
    cfg = ClaimsConfig(dense_weight=0.5, multilingual_weight=0.3, bm25_weight=0.15)
    assert fused_score(0.0, 0.0, 0.0, cfg, bm25=1.0) == pytest.approx(0.15)
    assert fused_score(0.0, 0.0, 1.0, cfg) == pytest.approx(0.05)
    assert fused_score(0.8, 0.8, 0.8, cfg, bm25=0.8) == pytest.approx(0.8)
