"""The head start: the post's own words are searched while the analyst reads the post, and the
first round uses what they found."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.check import Checker
from pipeline.claims.index import ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import (
    ClaimsConfig,
    CredibilityConfig,
    FetchConfig,
    PipelineConfig,
    RelevanceConfig,
    ResearchConfig,
)
from pipeline.post.describe import post_query
from pipeline.records import DecisionStatus, Post, SearchResult, SkipReason, Tier, Verdict
from pipeline.relevance.scoring import get_embedder
from pipeline.research.page_prep import ScoringGate
from pipeline.search.base import SearchError
from pipeline.search.local_index import LocalIndex
from pipeline.search.tiered import TieredSearch
from pipeline.shared_parts import SharedParts
from pipeline.sources.credibility import PublisherTable
from pipeline.web.fetch import Fetcher
from testing import indexes
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import (
    ANALYSIS,
    POST,
    TIERS,
    build_index,
    cite_first_two,
    make_shared_parts,
    page,
    quotes_from_page,
    script_happy_path,
)
from testing.waits import wait_until

NOWHERE = {**ANALYSIS, "queries": ["completely unrelated words about trains"]}


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    idx = indexes.local_index(build_index(tmp_path / "index.sqlite"))
    yield idx
    idx.close()


def test_post_query_drops_links_handles_and_hashtag_signs() -> None:
    post = POST.model_copy(
        update={"text": "@someone #Lemon water kills $FLU https://t.co/x1 www.a.example/b 🍋 now"}
    )
    assert post_query(post) == "Lemon water kills FLU now"


def test_post_query_is_cut_to_a_search_engine_length_and_none_when_too_short() -> None:
    long_post = POST.model_copy(update={"text": " ".join(f"w{i}" for i in range(60))})
    query = post_query(long_post)
    assert query is not None and len(query.split()) == 24
    assert post_query(POST.model_copy(update={"text": "so true https://t.co/x"})) is None


def test_post_words_find_evidence_the_analysts_queries_missed(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    fake_llm.script("analyze", Reply.json(NOWHERE))
    fake_llm.script("evidence", quotes_from_page)
    fake_llm.script("write", cite_first_two)
    shared = make_shared_parts(fake_llm, tmp_path / "index.sqlite")
    decision = Checker(shared).check(POST)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.verdict is Verdict.REFUTED
    # Settled in the first round: no re-query was needed.
    assert len(decision.trace.rounds) == 1
    assert fake_llm.calls("requery") == 0
    first = decision.trace.rounds[0]
    assert first.queries == [post_query(POST), *NOWHERE["queries"]]
    assert {r.query for r in first.results} == {post_query(POST)}
    assert [e.tier for e in decision.evidence] == [Tier.HIGH, Tier.HIGH]
    shared.close()


def test_head_start_and_sequential_order_reach_the_same_decision(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    script_happy_path(fake_llm)
    decisions = []
    for concurrency in (8, 1):
        shared = make_shared_parts(
            fake_llm, tmp_path / "index.sqlite", concurrency=concurrency, search_concurrency=1
        )
        decisions.append(Checker(shared).check(POST))
        shared.close()
    concurrent, sequential = decisions
    assert concurrent.status is sequential.status is DecisionStatus.REPLY
    assert [e.url for e in concurrent.evidence] == [e.url for e in sequential.evidence]
    fast, slow = concurrent.trace.rounds[0].documents, sequential.trace.rounds[0].documents
    assert [d.url for d in fast if d.used] == [d.url for d in slow if d.used]
    # Which unused lower-tier page the concurrent run had reached when its stop rule fired
    # depends on timing (one was missing under a loaded CI run); it reads nothing the
    # sequential order did not.
    assert {d.url for d in fast} <= {d.url for d in slow}


def test_not_checkable_post_sends_nothing_the_head_start_found_to_the_extractor(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    fake_llm.script(
        "analyze",
        Reply.json({**ANALYSIS, "checkable": False, "reason": "an opinion", "queries": []}),
    )
    shared = make_shared_parts(fake_llm, tmp_path / "index.sqlite")
    decision = Checker(shared).check(POST)
    assert decision.status is DecisionStatus.ABSTAIN
    assert decision.verdict is Verdict.NOT_CHECKABLE
    assert fake_llm.calls("evidence") == 0
    assert decision.trace.rounds == []
    shared.close()


def test_head_start_can_be_switched_off(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    script_happy_path(fake_llm)
    shared = make_shared_parts(fake_llm, tmp_path / "index.sqlite", head_start=False)
    decision = Checker(shared).check(POST)
    assert decision.trace.rounds[0].queries == ANALYSIS["queries"]
    assert "head_start" not in decision.timings
    shared.close()


class _SlowForAnalystQueries:
    """A search engine that finds the local index's High-tier pages for the post's own words,
    and only a page on a very slow site for anything else."""

    name = "scripted"
    max_sites = 10_000

    def __init__(self, slow_url: str) -> None:
        self.slow_url = slow_url

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        urls = (
            ["https://ministry.example/flu/lemon", "https://institute.example/drinks"]
            if query == post_query(POST)
            else [self.slow_url]
        )
        hosts = {s.lower() for s in sites}
        return [
            SearchResult(url=u, provider=self.name, query=query, rank=i)
            for i, u in enumerate(urls, 1)
            if not hosts or httpx.URL(u).host in hosts
        ][:limit]


def test_stop_rule_met_by_head_start_pages_does_not_wait_for_a_slow_site(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    slow_url = "http://slow.example/lemon"
    server = LocalHTTPServer().start()
    body = page("Lemon water and flu", "Lemon water does not kill the flu virus.", None)
    server.add(slow_url, Route(body=body, delay_s=30.0))
    try:
        script_happy_path(fake_llm)
        cfg = PipelineConfig(
            credibility=CredibilityConfig(overrides={**TIERS, "slow.example": "high"}),
            fetch=FetchConfig(allow_hosts=["slow.example"], timeout_s=60.0),
            research=ResearchConfig(),
            llm=fake_llm.config(),
        )
        publishers = PublisherTable.from_config(cfg.credibility)
        client = httpx.Client(proxy=server.base_url, trust_env=False)
        shared = indexes.build_parts(
            cfg,
            index_path=tmp_path / "index.sqlite",
            search=TieredSearch([_SlowForAnalystQueries(slow_url)], publishers),
            fetcher=Fetcher(cfg.fetch, client=client),
        )
        decision = Checker(shared).check(POST)
        assert decision.status is DecisionStatus.REPLY, decision.reasons
        slow = [d for d in decision.trace.rounds[0].documents if d.url == slow_url]
        assert [d.reason for d in slow] == [SkipReason.NOT_FETCHED]
        shared.close()
    finally:
        server.stop()


def test_scoring_gate_serves_the_best_tier_first() -> None:
    gate = ScoringGate()
    order: list[Tier] = []
    started = threading.Barrier(4)

    def wait_for(tier: Tier) -> None:
        started.wait()
        with gate.turn(tier):
            order.append(tier)

    with gate.turn(Tier.HIGH):  # the model is busy; three pages queue up meanwhile
        threads = [
            threading.Thread(target=wait_for, args=(tier,))
            for tier in (Tier.LOW, Tier.MEDIUM, Tier.HIGH)
        ]
        for thread in threads:
            thread.start()
        started.wait()
        wait_until(lambda: gate.waiting == 3, what="three pages waiting")
    for thread in threads:
        thread.join(timeout=5)
    assert order == [Tier.HIGH, Tier.MEDIUM, Tier.LOW]


def test_post_query_is_taken_from_the_post_text_only() -> None:
    post = Post(
        id="x",
        author="a",
        text="Short",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        quoted=POST,
    )
    assert post_query(post) is None


def test_pages_scored_for_one_post_are_not_encoded_again_for_the_next(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_happy_path(fake_llm)
    shared = make_shared_parts(fake_llm, tmp_path / "index.sqlite")
    runs: list[list[str]] = [[]]
    real_encode = shared.embedder.encode

    def counting(texts: Sequence[str]) -> Any:
        runs[-1].extend(texts)  # the current check's list
        return real_encode(texts)

    monkeypatch.setattr(shared.embedder, "encode", counting)
    first = Checker(shared).check(POST)
    runs.append([])
    second = Checker(shared).check(POST)
    first_run, second_run = runs
    assert [e.url for e in second.evidence] == [e.url for e in first.evidence]
    # The post, its claims and the search queries are encoded for each check; no passage the
    # first check encoded is encoded again (the passage cache). Which lower-tier pages the
    # first check reached before its stop rule was met depends on timing, so the second may
    # encode pages the first never did: only a repeat is a failure.
    per_check = {POST.text, post_query(POST), *ANALYSIS["claims"], *ANALYSIS["queries"]}
    passages_first = set(first_run) - per_check
    assert passages_first, "the first check encoded no passage: nothing was cached"
    assert not (set(second_run) - per_check) & passages_first
    shared.close()


class _Flaky:
    """The local index as a search provider that is down for some queries."""

    name = "flaky"
    max_sites = 10_000

    def __init__(self, inner: LocalIndex, down: Callable[[str], bool]) -> None:
        self.inner = inner
        self.down = down

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        if self.down(query):
            raise SearchError(f"flaky: HTTP 503 for {query!r}")
        return self.inner.search(query, limit=limit, sites=sites)


def _with_search(shared: SharedParts, down: Callable[[str], bool]) -> SharedParts:
    assert shared.local_index is not None
    shared.search = TieredSearch([_Flaky(shared.local_index, down)], shared.publishers)
    return shared


def test_head_start_search_failure_is_recorded_and_the_analysts_queries_still_run(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    script_happy_path(fake_llm)
    shared = _with_search(
        make_shared_parts(fake_llm, tmp_path / "index.sqlite"), lambda q: q == post_query(POST)
    )
    decision = Checker(shared).check(POST)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    errors = decision.trace.rounds[0].search_errors
    assert errors and all("503" in e for e in errors)
    assert {r.query for r in decision.trace.rounds[0].results} <= set(ANALYSIS["queries"])
    shared.close()


def test_every_search_failing_head_start_included_fails_the_check(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    script_happy_path(fake_llm)
    shared = _with_search(make_shared_parts(fake_llm, tmp_path / "index.sqlite"), lambda q: True)
    decision = Checker(shared).check(POST)
    assert decision.status is DecisionStatus.FAILED
    assert decision.error is not None and decision.error.startswith("SearchError")
    assert decision.verdict is None
    shared.close()


def test_a_page_that_is_already_a_matched_fact_check_is_not_extracted_again(
    fake_llm: FakeLLM, index: LocalIndex, tmp_path: Path
) -> None:
    ministry = "https://ministry.example/flu/lemon"
    claims = indexes.claim_index(
        tmp_path / "claims.sqlite",
        get_embedder(RelevanceConfig()),
        cfg=ClaimsConfig(),
        publishers=PublisherTable.from_config(CredibilityConfig(overrides=TIERS)),
    )
    claims.add(
        [
            ClaimRecord(
                claim_text=POST.text,
                review_url=ministry,
                rating=Rating.FALSE,
                rating_text="False",
                publisher_name="Ministry of Health",
                review_date=datetime(2026, 10, 1, tzinfo=UTC),
            )
        ]
    )
    script_happy_path(fake_llm)
    cfg = PipelineConfig(credibility=CredibilityConfig(overrides=TIERS), llm=fake_llm.config())
    shared = indexes.build_parts(cfg, index_path=tmp_path / "index.sqlite", claim_index=claims)
    decision = Checker(shared).check(POST)
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    from_ministry = [e for e in decision.evidence if e.url == ministry]
    assert [e.source for e in from_ministry] == ["fact_check"]
    uses = [d for d in decision.trace.rounds[0].documents if d.url == ministry]
    assert [d.reason for d in uses] == [SkipReason.ALREADY_FACT_CHECK]
    shared.close()
