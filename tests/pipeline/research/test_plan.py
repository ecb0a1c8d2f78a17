"""The research rounds' pure decisions: which pages are extracted, the stop rule, when to wait,
what a stop makes of unread pages, and when the research ends."""

from __future__ import annotations

from pipeline.config import ResearchConfig, SearchConfig
from pipeline.records import Passage, SearchResult, SkipReason, Tier, Verdict
from pipeline.reply.verdict import Assessment
from pipeline.research.page_outcome import PageOutcome, PageReason
from pipeline.research.plan import (
    not_needed,
    plan_tier,
    research_done,
    results_per_query,
    set_aside_known,
    worth_waiting,
)
from testing.builders import evidence

CFG = ResearchConfig(stop_after_refuting_pages=2, max_extractions_per_tier=3, max_rounds=3)


def page(url: str, reason: PageReason = PageReason.KEPT, relevance: float = 0.5) -> PageOutcome:
    found = SearchResult(url=url, provider="fake", query="q", rank=1)
    passages = (Passage(url=url, index=0, text="text", score=relevance),)
    return PageOutcome(found, Tier.HIGH, reason, relevance=relevance, passages=passages)


def assessment(decided: bool) -> Assessment:
    return Assessment(Verdict.REFUTED, 0.6, -0.5, 1, decided, "")


def test_plan_extracts_the_most_relevant_kept_pages_best_first() -> None:
    pages = [
        page("https://a.example", relevance=0.4),
        page("https://b.example", PageReason.IRRELEVANT, relevance=0.9),
        page("https://c.example", relevance=0.8),
        page("https://d.example", relevance=0.6),
    ]
    plan = plan_tier(pages, 2, CFG)
    assert plan.extract == (2, 3)
    assert [p.reason for p in plan.pages] == [
        PageReason.NOT_EXTRACTED,
        PageReason.IRRELEVANT,
        PageReason.KEPT,
        PageReason.KEPT,
    ]
    held_back = plan.pages[0]
    assert held_back.text == "not extracted: 3 more relevant page(s) in this tier"
    assert held_back.passages == () and held_back.relevance == 0.4


def test_plan_with_no_slots_left_extracts_nothing_and_keeps_ties_in_order() -> None:
    pages = [page("https://a.example"), page("https://b.example")]
    assert plan_tier(pages, 0, CFG).extract == ()
    assert plan_tier(pages, 5, CFG).extract == (0, 1)


def test_worth_waiting_only_when_the_calls_in_flight_could_meet_the_stop_rule() -> None:
    assert not worth_waiting([], 1, CFG)
    assert worth_waiting([], 2, CFG)
    assert worth_waiting([evidence("https://a.example")], 1, CFG)


def test_a_kept_page_already_matched_as_a_fact_check_is_set_aside() -> None:
    known = {"https://fc.example/check"}
    match = set_aside_known(page("https://fc.example/check?utm_source=feed"), known)
    assert match.reason is PageReason.ALREADY_FACT_CHECK
    assert match.use().reason == SkipReason.ALREADY_FACT_CHECK and not match.use().used
    other = page("https://other.example")
    assert set_aside_known(other, known) is other
    unusable = page("https://fc.example/check", PageReason.AFTER_AS_OF)
    assert set_aside_known(unusable, known) is unusable


def test_a_stop_marks_usable_pages_not_needed_and_keeps_why_others_were_unusable() -> None:
    assert not_needed(page("https://a.example")).reason is PageReason.NOT_NEEDED
    assert not_needed(page("https://b.example", PageReason.READY)).reason is PageReason.NOT_NEEDED
    short = page("https://c.example", PageReason.TOO_SHORT)
    assert not_needed(short) is short


def test_re_searches_ask_for_more_results_than_the_first_round() -> None:
    cfg = SearchConfig(results_per_query=3, results_retry=10)
    assert [results_per_query(n, cfg) for n in (1, 2, 3)] == [3, 10, 10]


def test_research_goes_on_only_while_undecided_unstopped_with_an_llm_and_rounds_left() -> None:
    one = [evidence("https://a.example")]
    assert not research_done(assessment(False), one, number=1, use_llm=True, cfg=CFG)
    assert research_done(assessment(True), one, number=1, use_llm=True, cfg=CFG)
    two = [*one, evidence("https://b.example")]
    assert research_done(assessment(False), two, number=1, use_llm=True, cfg=CFG)
    assert research_done(assessment(False), one, number=1, use_llm=False, cfg=CFG)
    assert research_done(assessment(False), one, number=3, use_llm=True, cfg=CFG)
