"""Authority statements: storage, retrieval (real BM25 + real embedding model), stance via a
scripted OpenAI-compatible server, CLEF's signed vote, and their use in a whole check."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.authority.retrieval import (
    AuthorityIndex,
    AuthorityStance,
    RetrievedStatement,
    StanceJudgement,
    Statement,
    aggregate,
    fuse,
    judge_stances,
    permalink,
    rank_order,
    relevant_accounts,
    to_evidence,
)
from pipeline.check import Checker
from pipeline.config import AuthorityAccount, AuthorityConfig, PipelineConfig, RelevanceConfig
from pipeline.llm.client import CallLedger, LLMClient, LLMInvalidOutput
from pipeline.records import Decision, DecisionStatus, Platform, Post, Stance, Tier, Verdict
from pipeline.relevance.scoring import get_embedder
from testing import indexes
from testing.fakes.openai_server import FakeLLM, Reply

POSTED = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
CLAIM = "The health ministry has stopped the measles vaccination campaign after children fell ill."


def statement(account: str, post_id: str, text: str, hours_before: float) -> Statement:
    return Statement(
        platform="x",
        account=account,
        post_id=post_id,
        text=text,
        created_at=POSTED - timedelta(hours=hours_before),
        url=permalink("x", account, post_id),
    )


STATEMENTS = [
    statement(
        "HealthMinistryDemo",
        "101",
        "The ministry denies rumours that the measles vaccination campaign was stopped. "
        "Vaccination continues in all clinics https://t.co/abc123",
        hours_before=5,
    ),
    statement(
        "HealthMinistryDemo",
        "102",
        "The minister opened a new hospital wing for heart surgery today.",
        hours_before=30,
    ),
    statement(
        "HealthMinistryDemo",
        "103",
        "Reminder: the measles vaccination campaign remains suspended, we regret the confusion.",
        hours_before=-2,  # two hours AFTER the post: not eligible
    ),
    statement(
        "CityTransportDemo",
        "201",
        "Bus line 4 is diverted this weekend because of road works.",
        hours_before=3,
    ),
    statement(
        "PaediatricsSocietyDemo",
        "301",
        "No child has fallen ill from the measles vaccine; reports circulating online are false.",
        hours_before=8,
    ),
]


@pytest.fixture
def index(tmp_path: Path) -> AuthorityIndex:
    ix = indexes.authority_index(tmp_path / "authority.sqlite", get_embedder(RelevanceConfig()))
    ix.add_statements(STATEMENTS)
    return ix


def test_only_statements_published_before_the_post_are_retrieved(index: AuthorityIndex) -> None:
    found = index.retrieve(CLAIM, before=POSTED, k=10)
    ids = [r.statement.post_id for r in found]
    assert "103" not in ids
    assert set(ids) == {"101", "102", "201", "301"}
    everything = index.retrieve(CLAIM, k=10)
    assert "103" in [r.statement.post_id for r in everything]


def test_the_statement_that_answers_the_claim_ranks_first(index: AuthorityIndex) -> None:
    found = index.retrieve(CLAIM, ["@HealthMinistryDemo"], before=POSTED, k=2)
    assert [r.statement.post_id for r in found] == ["101", "102"]
    assert [r.rank for r in found] == [1, 2]
    assert found[0].lexical > found[1].lexical and found[0].dense > found[1].dense
    assert found[0].statement.url == "https://x.com/healthministrydemo/status/101"


def test_retrieval_is_limited_to_the_given_accounts(index: AuthorityIndex) -> None:
    found = index.retrieve(CLAIM, ["citytransportdemo"], before=POSTED)
    assert [r.statement.post_id for r in found] == ["201"]
    assert index.retrieve(CLAIM, [], before=POSTED) == []


def test_statements_are_stored_once_and_give_the_pull_its_cursor(
    index: AuthorityIndex, tmp_path: Path
) -> None:
    assert index.add_statements(STATEMENTS) == 0
    assert len(index) == len(STATEMENTS)
    latest = index.latest("x", "@HealthMinistryDemo")
    assert latest is not None and latest.post_id == "103"
    assert index.latest("bluesky", "healthministrydemo") is None
    index.close()
    with indexes.authority_index(
        tmp_path / "authority.sqlite", get_embedder(RelevanceConfig())
    ) as again:
        assert again.accounts() == {
            "healthministrydemo",
            "citytransportdemo",
            "paediatricssocietydemo",
        }


def test_weighted_fusion_normalises_and_rrf_ranks() -> None:
    lexical = np.array([8.0, 0.0, 4.0])
    dense = np.array([0.2, 0.9, 0.5])
    weighted = fuse(lexical, dense, AuthorityConfig(dense_weight=0.5))
    # min-max: lexical (1, 0, 0.5), dense (0, 1, 3/7)
    assert weighted == pytest.approx([0.5, 0.5, 0.25 + 0.5 * 3 / 7])
    rrf = fuse(lexical, dense, AuthorityConfig(fusion="rrf", rrf_k=10))
    # ranks: lexical (1, -, 2), dense (3, 1, 2); a statement without shared words has no
    # lexical rank at all
    assert rrf == pytest.approx([1 / 11 + 1 / 13, 1 / 11, 1 / 12 + 1 / 12])
    assert fuse(np.zeros(2), np.ones(2), AuthorityConfig()) == pytest.approx([0.0, 0.0])


def _judgement(stance: AuthorityStance, confidence: float) -> StanceJudgement:
    retrieved = RetrievedStatement(STATEMENTS[0], score=1.0, lexical=1.0, dense=0.8, rank=1)
    return StanceJudgement(retrieved, stance, confidence)


def test_bm25_ties_keep_the_newest_first_unless_cosine_is_asked_for() -> None:
    # Three statements share no word with the claim (BM25 0). Plain BM25 (the default, by the
    # gain-over-spread rule) keeps the index's newest-first order among them; the "cosine"
    # tie-break puts the closest in meaning first, equal cosines newest first.
    fused = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    dense = np.array([0.1, 0.2, 0.9, 0.1, 0.5])
    assert rank_order(fused, dense).tolist() == [1, 0, 2, 3, 4]
    assert rank_order(fused, dense, "cosine").tolist() == [1, 2, 4, 0, 3]


def test_plain_bm25_is_the_default_retriever() -> None:
    # bench/authority_cv.py: no setting's held-out gain over plain BM25 beat the fold spread.
    cfg = AuthorityConfig()
    assert (cfg.dense_weight, cfg.tie_break) == (0.0, "date")
    lexical = np.array([0.0, 3.0, 1.0, 0.0])
    dense = np.array([0.2, 0.0, 0.9, 1.0])
    assert rank_order(fuse(lexical, dense, cfg), dense, cfg.tie_break).tolist() == [1, 2, 0, 3]


def test_not_enough_info_does_not_cancel_real_evidence() -> None:
    verdict = aggregate(
        [
            _judgement(AuthorityStance.REFUTES, 0.9),
            _judgement(AuthorityStance.NOT_ENOUGH_INFO, 0.95),
            _judgement(AuthorityStance.NOT_ENOUGH_INFO, 0.9),
            _judgement(AuthorityStance.NOT_ENOUGH_INFO, 0.8),
        ],
        threshold=0.15,
    )
    assert verdict.stance is AuthorityStance.REFUTES
    assert verdict.score == pytest.approx(-0.9)
    assert verdict.voters == 1


def test_opposite_votes_under_the_threshold_are_not_enough_info() -> None:
    votes = [_judgement(AuthorityStance.SUPPORTS, 0.7), _judgement(AuthorityStance.REFUTES, 0.5)]
    close = aggregate(votes, threshold=0.15)
    assert close.stance is AuthorityStance.NOT_ENOUGH_INFO
    assert close.score == pytest.approx(0.1)
    assert aggregate(votes, threshold=0.1).stance is AuthorityStance.SUPPORTS
    nothing = aggregate([_judgement(AuthorityStance.NOT_ENOUGH_INFO, 1.0)], threshold=0.15)
    assert (nothing.stance, nothing.voters) == (AuthorityStance.NOT_ENOUGH_INFO, 0)


REGISTRY = [
    AuthorityAccount(
        handle="HealthMinistryDemo",
        name="Ministry of Health",
        topics=["vaccine", "vaccination", "measles"],
        regions=["Freedonia"],
    ),
    AuthorityAccount(handle="CityTransportDemo", name="City Transport", topics=["bus", "metro"]),
    AuthorityAccount(handle="WHO", name="WHO", topics=["pandemic"]),
]


def test_relevant_accounts_by_mention_name_and_tags() -> None:
    assert relevant_accounts("Is the measles campaign over?", REGISTRY) == ["healthministrydemo"]
    assert relevant_accounts("@CityTransportDemo says trains run late", REGISTRY) == [
        "citytransportdemo"
    ]
    assert relevant_accounts("City transport cancelled all night trains", REGISTRY) == [
        "citytransportdemo"
    ]
    # A short name is matched with its case: "who" is a word, "WHO" an organisation.
    assert relevant_accounts("who said so about the trains?", REGISTRY) == [
        "healthministrydemo",
        "citytransportdemo",
        "who",
    ]
    assert relevant_accounts("WHO declared it over", REGISTRY) == ["who"]
    # The person a claim is about counts even outside the registry, if we hold their posts.
    assert relevant_accounts(
        "@PaediatricsSocietyDemo admitted it", REGISTRY, ["paediatricssocietydemo"]
    ) == ["paediatricssocietydemo"]
    assert relevant_accounts("anything at all", []) is None


def test_permalinks_for_x_and_bluesky() -> None:
    assert permalink("x", "@Some_One", "123") == "https://x.com/some_one/status/123"
    assert (
        permalink("bluesky", "who.int", "at://did:plc:abc/app.bsky.feed.post/3kxyz")
        == "https://bsky.app/profile/who.int/post/3kxyz"
    )


def test_a_judged_statement_is_authority_evidence_with_its_permalink() -> None:
    item = to_evidence(_judgement(AuthorityStance.REFUTES, 0.8))
    assert item is not None
    assert (item.tier, item.source, item.stance) == (Tier.AUTHORITY, "authority", Stance.REFUTES)
    assert item.url == "https://x.com/healthministrydemo/status/101"
    assert item.quote == STATEMENTS[0].text
    assert item.domain == "@healthministrydemo"
    assert to_evidence(_judgement(AuthorityStance.NOT_ENOUGH_INFO, 0.8)) is None


def test_stance_is_asked_per_statement_with_both_texts_as_data(
    index: AuthorityIndex, fake_llm: FakeLLM
) -> None:
    found = index.retrieve(CLAIM, ["healthministrydemo"], before=POSTED, k=2)
    first_statement = found[0].statement.text
    # The calls run side by side, so the answer depends on the statement asked about, not on
    # the order the requests arrive in.
    fake_llm.script(
        "authority_stance",
        lambda body: Reply.json(
            {"stance": "refutes", "confidence": 0.9}
            if first_statement in body["messages"][-1]["content"]
            else {"stance": "not_enough_info", "confidence": 0.7}
        ),
    )
    judgements = judge_stances(CLAIM, found, LLMClient(fake_llm.config()), CallLedger())
    assert [j.stance for j in judgements] == [
        AuthorityStance.REFUTES,
        AuthorityStance.NOT_ENOUGH_INFO,
    ]
    asked = [r.body["messages"][-1]["content"] for r in fake_llm.requests_for("authority_stance")]
    first = next(text for text in asked if first_statement in text)
    assert re.search(r"<post>\n" + re.escape(CLAIM) + r"\n</post>", first)
    assert '<evidence account="@healthministrydemo"' in first
    assert "The ministry denies rumours" in first


def test_a_long_claim_and_statement_are_cut_in_the_stance_prompt(fake_llm: FakeLLM) -> None:
    fake_llm.script("authority_stance", Reply.json({"stance": "refutes", "confidence": 0.9}))
    long_statement = statement(
        "HealthMinistryDemo", "999", "The campaign continues. " + "x" * 50_000, hours_before=1
    )
    found = [RetrievedStatement(long_statement, score=1.0, lexical=1.0, dense=0.9, rank=1)]
    llm = LLMClient(fake_llm.config())
    judge_stances(CLAIM + " y" * 50_000, found, llm, CallLedger(), max_chars=500)
    [asked] = fake_llm.requests_for("authority_stance")
    prompt = asked.messages[-1]["content"]
    assert len(prompt) < 1500
    assert CLAIM in prompt and "The campaign continues." in prompt
    assert prompt.count(" […]") == 2


def test_a_garbled_stance_answer_fails_instead_of_counting_as_no_information(
    index: AuthorityIndex, fake_llm: FakeLLM
) -> None:
    fake_llm.script("authority_stance", Reply.json({"stance": "maybe", "confidence": 2}))
    found = index.retrieve(CLAIM, before=POSTED, k=1)
    with pytest.raises(LLMInvalidOutput):
        judge_stances(CLAIM, found, LLMClient(fake_llm.config(invalid_retries=0)), CallLedger())


def check_against_two_authorities(
    index: AuthorityIndex, tmp_path: Path, fake_llm: FakeLLM, **llm: Any
) -> Decision:
    """The measles claim checked against the authority index with a scripted model: two
    authorities refute it."""
    fake_llm.script(
        "analyze",
        Reply.json(
            {
                "checkable": True,
                "reason": "",
                "claims": [CLAIM],
                "questions": ["Was the measles vaccination campaign stopped?"],
                "queries": ["measles vaccination campaign stopped"],
            }
        ),
    )

    def stance(body: dict[str, Any]) -> Reply:
        text = body["messages"][-1]["content"]
        refutes = "denies rumours" in text or "No child has fallen ill" in text
        return Reply.json(
            {"stance": "refutes" if refutes else "not_enough_info", "confidence": 0.9}
        )

    def cite_two(body: dict[str, Any]) -> Reply:
        urls = re.findall(r'url="([^"]+)"', body["messages"][-1]["content"])
        return Reply.json(
            {"text": f"Authorities deny the campaign was stopped. {urls[0]} {urls[1]}"}
        )

    fake_llm.script("authority_stance", stance)
    fake_llm.script("write", cite_two)
    paediatrics = AuthorityAccount(handle="PaediatricsSocietyDemo", topics=["measles", "vaccine"])
    cfg = PipelineConfig(authority=AuthorityConfig(accounts=[*REGISTRY, paediatrics]))
    cfg.llm = fake_llm.config(**llm)
    shared = indexes.build_parts(cfg, index_path=tmp_path / "index.sqlite", authority_index=index)
    post = Post(id="p9", author="someone_demo", text=CLAIM, created_at=POSTED)
    decision = Checker(shared).check(post, Platform.X, as_of=POSTED + timedelta(days=1))
    shared.close()
    return decision


def test_two_refuting_authorities_meet_the_stop_rule_so_the_web_is_not_searched(
    index: AuthorityIndex, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    decision = check_against_two_authorities(index, tmp_path, fake_llm)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.verdict is Verdict.REFUTED
    assert {e.url for e in decision.evidence} == {
        "https://x.com/healthministrydemo/status/101",
        "https://x.com/paediatricssocietydemo/status/301",
    }
    assert all(e.tier is Tier.AUTHORITY and e.source == "authority" for e in decision.evidence)
    [only_round] = decision.trace.rounds
    assert only_round.queries == [] and only_round.results == []
    considered = {u.url for u in only_round.documents}
    assert "https://x.com/healthministrydemo/status/103" not in considered  # after the post


def test_a_statement_over_the_prompt_limit_is_cut_as_evidence_and_the_cut_traced(
    index: AuthorityIndex, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    decision = check_against_two_authorities(index, tmp_path, fake_llm, max_post_chars=100)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    long_one = STATEMENTS[0]  # 133 characters; the other refuting statement has 87
    quotes = {e.url: e.quote for e in decision.evidence}
    assert quotes[long_one.url].endswith(" […]") and len(quotes[long_one.url]) <= 104
    assert long_one.text.startswith(quotes[long_one.url].removesuffix(" […]"))
    uses = {u.url: u.reason for r in decision.trace.rounds for u in r.documents}
    assert uses[long_one.url].endswith(
        f"(statement cut to 100 of {len(long_one.text)} characters for the LLM prompts)"
    )
    assert "cut" not in uses["https://x.com/paediatricssocietydemo/status/301"]
