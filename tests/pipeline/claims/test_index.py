"""Known-claim matching with the real embedding model and real SQLite files, and the pipeline's
use of it: the no-LLM templated reply through the real guard, suggestions for moderators, and
a strong match as first evidence when an LLM is configured (scripted fake server)."""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.check import Checker
from pipeline.claims.index import (
    ClaimIndex,
    ClaimIndexError,
    ClaimMatch,
    ClaimRecord,
    ClaimSource,
    MatchStrength,
    fact_check_evidence,
    match_confidence,
    strength_of,
)
from pipeline.claims.known import find_known_claims
from pipeline.claims.ratings import Rating
from pipeline.claims.replies import display_publisher, template_replies, templated_reply
from pipeline.config import (
    ClaimsConfig,
    CredibilityConfig,
    GuardConfig,
    PipelineConfig,
    RelevanceConfig,
)
from pipeline.llm.client import CallLedger, LLMClient
from pipeline.records import DecisionStatus, Platform, Post, Stance, Tier, Verdict
from pipeline.relevance.scoring import get_embedder
from pipeline.shared_parts import SharedParts
from pipeline.sources.credibility import PublisherTable
from testing import indexes
from testing.fakes.openai_server import FakeLLM, Reply
from tests.pipeline.claim_texts import (
    GERMAN,
    LEMON,
    LEMON_URL,
    NEGATED,
    NOW,
    PARAPHRASE,
    RELATED,
)

UNRELATED = "The city council approved a new budget for public libraries."


def record(
    text: str = LEMON,
    url: str = LEMON_URL,
    rating: Rating = Rating.FALSE,
    reviewed: datetime | None = NOW - timedelta(days=30),
    **extra: Any,
) -> ClaimRecord:
    return ClaimRecord(
        claim_text=text,
        review_url=url,
        rating=rating,
        rating_text=extra.pop("rating_text", rating.value.title()),
        publisher_name=extra.pop("publisher_name", "Snopes"),
        review_date=reviewed,
        **extra,
    )


def open_index(path: Path, **cfg: Any) -> ClaimIndex:
    publishers = PublisherTable.from_config(
        CredibilityConfig(overrides={"junk.example": "excluded", "blog.example": "low"})
    )
    return indexes.claim_index(
        path, get_embedder(RelevanceConfig()), cfg=ClaimsConfig(**cfg), publishers=publishers
    )


@pytest.fixture
def index(tmp_path: Path) -> ClaimIndex:
    ix = open_index(tmp_path / "claims.sqlite")
    ix.add([record()])
    return ix


def test_strength_follows_the_two_thresholds() -> None:
    cfg = ClaimsConfig(strong_threshold=0.8, weak_threshold=0.6)
    assert strength_of(0.8, cfg) is MatchStrength.STRONG
    assert strength_of(0.79, cfg) is MatchStrength.WEAK
    assert strength_of(0.6, cfg) is MatchStrength.WEAK
    assert strength_of(0.59, cfg) is MatchStrength.NONE


def test_paraphrase_is_strong_related_claim_weak_unrelated_none(index: ClaimIndex) -> None:
    [strong] = index.match(PARAPHRASE, as_of=NOW)
    assert strong.strength is MatchStrength.STRONG
    assert strong.record.review_url == LEMON_URL
    assert 0 < strong.lexical <= 1 and 0 < strong.dense <= 1
    [weak] = index.match(RELATED, as_of=NOW)
    assert weak.strength is MatchStrength.WEAK
    assert weak.score < strong.score
    assert index.match(UNRELATED, as_of=NOW) == []
    [none] = index.match(UNRELATED, as_of=NOW, min_score=0.0)
    assert none.strength is MatchStrength.NONE


def test_ratings_from_an_excluded_publisher_are_ignored(index: ClaimIndex) -> None:
    index.add([record(url="https://junk.example/lemon", publisher_name="Junk")])
    found = index.match(PARAPHRASE, as_of=NOW, min_score=0.0)
    assert [m.record.review_url for m in found] == [LEMON_URL]


def test_a_claim_stored_after_a_match_is_found_by_the_next_one(index: ClaimIndex) -> None:
    assert index.match(UNRELATED, as_of=NOW) == []  # the claim matrix and BM25 are built
    index.add([record(text=UNRELATED, url="https://snopes.com/libraries")])
    [found] = index.match(UNRELATED, as_of=NOW)
    assert found.record.review_url == "https://snopes.com/libraries"


def test_claims_added_to_a_warm_index_extend_its_matrix_as_a_reload_would(
    tmp_path: Path,
) -> None:
    path = tmp_path / "claims.sqlite"
    ix = open_index(path)
    ix.add([record(), record(text=RELATED, url="https://snopes.com/related")])
    assert ix.match(LEMON, as_of=NOW)
    ix.add([record(text=UNRELATED, url="https://snopes.com/libraries")])  # appended
    assert [m.record.review_url for m in ix.match(UNRELATED, as_of=NOW)] == [
        "https://snopes.com/libraries"
    ]
    ix.add([record(url="https://snopes.com/related", text=RELATED, rating=Rating.TRUE)])
    warm = ix._dense_matrix()  # a row replaced: reloaded
    with open_index(path) as fresh:
        cold = fresh._dense_matrix()
        assert warm.ids.tolist() == cold.ids.tolist()
        assert np.array_equal(warm.vectors, cold.vectors)
    ix.close()


def test_a_replaced_record_is_read_anew_even_under_its_old_row_id(index: ClaimIndex) -> None:
    # SQLite gives the replacement of the table's last row that row's id again.
    assert index.match(PARAPHRASE, as_of=NOW)
    index.add([record(publisher_site="junk.example")])
    assert index.match(PARAPHRASE, as_of=NOW, min_score=0.0) == []


def test_an_old_or_undated_review_is_flagged_possibly_outdated(tmp_path: Path) -> None:
    ix = open_index(tmp_path / "claims.sqlite", max_age_days=365)
    ix.add(
        [
            record(url="https://snopes.com/old", reviewed=NOW - timedelta(days=400)),
            record(url="https://snopes.com/recent", reviewed=NOW - timedelta(days=10)),
            record(url="https://snopes.com/undated", reviewed=None),
        ]
    )
    flags = {
        m.record.review_url: (m.possibly_outdated, m.age_days) for m in ix.match(LEMON, as_of=NOW)
    }
    assert flags == {
        "https://snopes.com/old": (True, 400),
        "https://snopes.com/recent": (False, 10),
        "https://snopes.com/undated": (True, None),
    }


def test_a_review_published_after_as_of_is_not_used(index: ClaimIndex) -> None:
    before_review = NOW - timedelta(days=31)
    assert index.match(PARAPHRASE, as_of=before_review) == []
    assert index.match(PARAPHRASE, as_of=NOW)


def test_adding_the_same_review_again_changes_nothing_and_survives_reopening(
    tmp_path: Path,
) -> None:
    path = tmp_path / "claims.sqlite"
    ix = open_index(path)
    assert ix.add([record()]) == 1
    assert ix.add([record()]) == 0
    assert ix.add([record(rating=Rating.MISLEADING)]) == 1  # the publisher changed its rating
    assert len(ix) == 1
    ix.close()
    with open_index(path) as again:
        [found] = again.match(PARAPHRASE, as_of=NOW)
        assert found.record.rating is Rating.MISLEADING


def test_an_index_built_with_another_embedding_size_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "claims.sqlite"
    with open_index(path) as ix:
        ix.add([record()])  # the first write notes the embedding size
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE index_meta SET value = '3' WHERE key = 'claims.embedding_dim'")
    with pytest.raises(ClaimIndexError, match="3-dimensional"):
        open_index(path)


def test_an_approved_answer_is_a_known_claim_citing_its_evidence(tmp_path: Path) -> None:
    ix = open_index(tmp_path / "claims.sqlite")
    ix.add_approved_answer(
        "Bananas are radioactive enough to make you ill.",
        Verdict.REFUTED,
        "https://x.com/factnote/status/1",
        evidence_url="https://www.who.int/bananas",
        date=NOW - timedelta(days=3),
    )
    [found] = ix.match(
        "Eating bananas is dangerous because they are radioactive and make you ill.",
        as_of=NOW,
        min_score=0.0,
    )
    assert found.record.source is ClaimSource.APPROVED_ANSWER
    assert found.record.rating is Rating.FALSE
    assert found.record.evidence_url == "https://www.who.int/bananas"


def test_match_confidence_reaches_min_confidence_exactly_at_the_strong_threshold() -> None:
    assert match_confidence(0.775, 0.775, 0.5) == 0.5
    assert match_confidence(1.0, 0.775, 0.5) == 1.0
    assert match_confidence(0.774, 0.775, 0.5) < 0.5
    assert match_confidence(0.0, 0.775, 0.5) == 0.0
    assert match_confidence(0.9, 0.775, 0.5) > match_confidence(0.8, 0.775, 0.5)


def _match(rating: Rating, **fields: Any) -> ClaimMatch:
    values: dict[str, Any] = {
        "score": 0.9,
        "dense": 0.9,
        "lexical": 0.5,
        "strength": MatchStrength.STRONG,
        "possibly_outdated": False,
    }
    values.update(fields)
    return ClaimMatch(record=record(rating=rating), **values)


@pytest.mark.parametrize(
    ("rating", "fields", "stance"),
    [
        (Rating.FALSE, {}, Stance.REFUTES),
        (Rating.MISLEADING, {}, Stance.CONTEXT),
        (Rating.TRUE, {}, None),
        (Rating.UNRATED, {}, None),
        (Rating.FALSE, {"possibly_outdated": True}, None),
        (Rating.FALSE, {"strength": MatchStrength.WEAK, "score": 0.6}, None),
    ],
)
def test_only_strong_recent_false_or_misleading_matches_become_evidence(
    rating: Rating, fields: dict[str, Any], stance: Stance | None
) -> None:
    item = fact_check_evidence(
        _match(rating, **fields), PublisherTable.default(), min_confidence=0.5, strong=0.775
    )
    if stance is None:
        assert item is None
        return
    assert item is not None
    assert item.stance is stance
    assert item.source == "fact_check"
    assert item.tier is Tier.HIGH  # snopes.com in the bundled table
    assert item.url == LEMON_URL


def test_a_domain_like_publisher_name_is_not_printed_as_a_link() -> None:
    assert display_publisher(record(publisher_name="snopes.com")) == "Snopes"
    assert display_publisher(record(publisher_name="@FullFact")) == "FullFact"


def test_templated_reply_falls_back_to_a_shorter_text_when_the_long_one_does_not_fit() -> None:
    long_url = "https://www.snopes.com/fact-check/" + "a" * 200
    match = _match(Rating.FALSE).model_copy(
        update={"record": record(url=long_url, publisher_name="A Very Long Publisher Name Indeed")}
    )
    text = templated_reply(match, Platform.BLUESKY, GuardConfig(bluesky_graphemes=265))
    assert text.startswith("Fact-checkers rated a matching claim false")
    assert text.endswith(long_url)
    roomy = templated_reply(match, Platform.X, GuardConfig())
    assert "A Very Long Publisher Name Indeed" in roomy


def test_templated_reply_keeps_within_every_limit_of_the_platforms_format() -> None:
    # Bluesky's format has two budgets (graphemes and bytes): a candidate within the grapheme
    # limit but over the byte limit is passed over; X's format does not count bytes.
    match = _match(Rating.FALSE).model_copy(
        update={"record": record(publisher_name="Ämter für Faktenprüfung")}
    )
    longer, shorter = template_replies(match)
    assert len(longer) < 300
    cfg = GuardConfig(bluesky_bytes=len(shorter.encode("utf-8")))
    assert templated_reply(match, Platform.BLUESKY, cfg) == shorter
    assert templated_reply(match, Platform.X, cfg) == longer


# --- in the pipeline ---------------------------------------------------------------------------


def shared_parts_with(tmp_path: Path, ix: ClaimIndex, fake: FakeLLM | None = None) -> SharedParts:
    cfg = PipelineConfig(credibility=CredibilityConfig(overrides={"blog.example": "low"}))
    if fake is not None:
        cfg.llm = fake.config()
    return indexes.build_parts(cfg, index_path=tmp_path / "index.sqlite", claim_index=ix)


def post(text: str) -> Post:
    return Post(id="p1", author="someone_demo", text=text, created_at=NOW - timedelta(hours=1))


def test_no_llm_strong_match_to_a_false_rating_gets_a_templated_reply_through_the_guard(
    index: ClaimIndex, tmp_path: Path
) -> None:
    shared = shared_parts_with(tmp_path, index)
    decision = Checker(shared).check(post(PARAPHRASE), Platform.X, as_of=NOW)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.verdict is Verdict.REFUTED
    assert decision.reply is not None and LEMON_URL in decision.reply
    assert decision.urls == [LEMON_URL]
    [evidence] = decision.evidence
    assert evidence.source == "fact_check" and evidence.tier is Tier.HIGH
    assert decision.confidence >= shared.cfg.guard.min_confidence
    assert decision.trace.guard and decision.trace.guard[-1].valid
    assert decision.trace.rounds == []  # no web research was needed
    shared.close()


@pytest.mark.parametrize(
    ("text", "shown"),
    [(RELATED, "weak match"), (NEGATED, "polarity negation: post negates")],
    ids=["weak", "negated"],
)
def test_no_llm_a_weak_or_demoted_match_gets_no_reply_and_is_suggested_with_the_reason(
    index: ClaimIndex, tmp_path: Path, text: str, shown: str
) -> None:
    shared = shared_parts_with(tmp_path, index)
    decision = Checker(shared).check(post(text), Platform.X, as_of=NOW)
    assert decision.status is DecisionStatus.NEEDS_LLM
    assert decision.reply is None
    [suggestion] = [r for r in decision.reasons if r.startswith("suggested fact-check:")]
    assert re.match(
        rf"suggested fact-check: {re.escape(LEMON_URL)} \(score 0\.\d\d; weak", suggestion
    )
    assert shown in suggestion
    shared.close()


def test_no_llm_strong_match_from_a_low_tier_publisher_is_refused_by_the_guard(
    tmp_path: Path,
) -> None:
    ix = open_index(tmp_path / "claims.sqlite")
    ix.add([record(url="https://blog.example/lemon", publisher_name="Some Blog")])
    shared = shared_parts_with(tmp_path, ix)
    decision = Checker(shared).check(post(PARAPHRASE), Platform.X, as_of=NOW)
    assert decision.status is DecisionStatus.NEEDS_LLM
    assert any(
        r.startswith("templated reply refused: ") and "thin_evidence" in r for r in decision.reasons
    )
    assert any(
        r.startswith("suggested fact-check: https://blog.example/lemon") for r in decision.reasons
    )
    shared.close()


def test_with_an_llm_a_strong_match_is_the_first_evidence(
    index: ClaimIndex, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        "analyze",
        Reply.json(
            {
                "checkable": True,
                "reason": "",
                "claims": [PARAPHRASE],
                "questions": ["Does lemon water kill flu viruses?"],
                "queries": ["lemon water flu virus"],
            }
        ),
    )

    def cite_first(body: dict[str, Any]) -> Reply:
        urls = re.findall(r'url="([^"]+)"', body["messages"][-1]["content"])
        return Reply.json({"text": f"Fact-checkers found this claim false. {urls[0]}"})

    fake_llm.script("write", cite_first)
    fake_llm.script("match_check", Reply.json({"relation": "same", "reason": "Same claim."}))
    shared = shared_parts_with(tmp_path, index, fake_llm)
    decision = Checker(shared).check(post(PARAPHRASE), Platform.X, as_of=NOW)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.evidence[0].source == "fact_check"
    assert decision.urls == [LEMON_URL]
    # The writer saw the fact-check first.
    prompt = fake_llm.requests_for("write")[0].body["messages"][-1]["content"]
    assert prompt.index(LEMON_URL) < len(prompt)
    assert 'n="1"' in prompt.split(LEMON_URL)[0]
    shared.close()


# --- reversals, LLM confirmation, other languages ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [(NEGATED, "polarity negation"), (RELATED, "polarity predicate")],
    ids=["negated", "same-topic-other-claim"],
)
def test_a_reversed_or_other_claim_scoring_strong_is_demoted_with_the_reason(
    tmp_path: Path, text: str, reason: str
) -> None:
    # A threshold the related claim reaches too: the rule, not the score, must stop it.
    unchecked = open_index(tmp_path / "off.sqlite", polarity_check=False, strong_threshold=0.6)
    unchecked.add([record()])
    [before] = unchecked.match(text, as_of=NOW)
    assert before.strength is MatchStrength.STRONG  # what the polarity check is for
    checked = open_index(tmp_path / "on.sqlite", strong_threshold=0.6)
    checked.add([record()])
    [after] = checked.match(text, as_of=NOW)
    assert after.score == before.score
    assert after.strength is MatchStrength.WEAK
    assert after.query == text
    assert [d.split(":")[0] for d in after.demoted] == [reason]


def known(ix: ClaimIndex, text: str, fake: FakeLLM | None, lang: str = "en") -> Any:
    llm = LLMClient(fake.config(invalid_retries=0)) if fake is not None else None
    return find_known_claims(ix, [text], lang=lang, as_of=NOW, llm=llm, ledger=CallLedger())


def test_with_an_llm_a_strong_match_judged_the_same_claim_is_kept(
    index: ClaimIndex, fake_llm: FakeLLM
) -> None:
    fake_llm.script("match_check", Reply.json({"relation": "same", "reason": "Same."}))
    [match] = known(index, PARAPHRASE, fake_llm).matches
    assert match.strength is MatchStrength.STRONG and match.demoted == []
    [request] = fake_llm.requests_for("match_check")
    prompt = request.body["messages"][-1]["content"]
    assert f"<post>\n{PARAPHRASE}\n</post>" in prompt
    assert f"<evidence>\n{LEMON}\n</evidence>" in prompt


@pytest.mark.parametrize("relation", ["opposite", "different"])
def test_with_an_llm_a_strong_match_judged_opposite_or_different_is_demoted(
    index: ClaimIndex, fake_llm: FakeLLM, relation: str
) -> None:
    fake_llm.script(
        "match_check", Reply.json({"relation": relation, "reason": "It says otherwise."})
    )
    [match] = known(index, PARAPHRASE, fake_llm).matches
    assert match.strength is MatchStrength.WEAK
    assert match.demoted == [f"LLM judged the claims {relation}: It says otherwise."]


def test_with_an_llm_a_failed_confirmation_demotes_the_match(
    index: ClaimIndex, fake_llm: FakeLLM
) -> None:
    fake_llm.script("match_check", Reply.text("not json"))
    [match] = known(index, PARAPHRASE, fake_llm).matches
    assert match.strength is MatchStrength.WEAK
    assert match.demoted[0].startswith("not confirmed: the LLM check failed")


def test_a_post_repeating_the_claim_word_for_word_needs_no_confirmation_call(
    index: ClaimIndex, fake_llm: FakeLLM
) -> None:
    [match] = known(index, LEMON, fake_llm).matches
    assert match.strength is MatchStrength.STRONG
    assert fake_llm.requests_for("match_check") == []


# A German post without an LLM, and translated by one: tests/pipeline/claims/test_known.py.
GERMAN_URL = "https://correctiv.org/faktencheck/zitronenwasser-grippe/"


def test_templated_replies_are_in_the_posts_language_when_there_is_a_template() -> None:
    match = _match(Rating.FALSE)
    german = template_replies(match, "de")
    assert german[0].startswith("Faktenchecker von Snopes haben") and "falsch" in german[0]
    assert template_replies(match, "fr")[0].startswith("Les fact-checkeurs de Snopes")
    assert template_replies(match, "es")[0].startswith("Los verificadores de Snopes")
    assert template_replies(match, "sw") == template_replies(match, None)  # English
    assert all(LEMON_URL in text for text in german)


def test_no_llm_german_post_matching_a_german_fact_check_gets_a_german_reply(
    tmp_path: Path,
) -> None:
    ix = open_index(tmp_path / "claims.sqlite")
    ix.add(
        [
            record(
                text=GERMAN,
                url=GERMAN_URL,
                publisher_name="Correctiv",
                rating_text="Falsch",
                language="de",
            )
        ]
    )
    shared = shared_parts_with(tmp_path, ix)
    decision = Checker(shared).check(post(GERMAN), Platform.X, as_of=NOW)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.reply is not None and decision.reply.startswith("Faktenchecker von Correctiv")
    assert decision.lang == "de"
    shared.close()


def test_a_time_bound_claim_expires_sooner_than_an_evergreen_hoax(tmp_path: Path) -> None:
    ix = open_index(tmp_path / "claims.sqlite", max_age_days=3650, time_bound_max_age_days=90)
    tally = "Lemon water kills the flu, so far 300 cases were cured this week."
    ix.add(
        [
            record(url="https://snopes.com/evergreen", reviewed=NOW - timedelta(days=2000)),
            record(url="https://snopes.com/tally", text=tally, reviewed=NOW - timedelta(days=200)),
        ]
    )
    found = ix.match(LEMON, as_of=NOW, min_score=0.0)
    flags = {m.record.review_url: m.possibly_outdated for m in found}
    assert flags["https://snopes.com/evergreen"] is False  # a recurring hoax is still answered
    assert flags["https://snopes.com/tally"] is True
