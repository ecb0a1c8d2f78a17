"""The research rounds' decisions, as pure functions: no threads, no I/O, no model.

`pipeline.research.rounds` asks these and `pipeline.research.scheduler` carries the answers out:
which pages of a tier go to the extractor, when the stop rule is met, whether the round should wait
for the extraction calls in flight, what becomes of pages the stop rule made unnecessary, and
whether another round is worth it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pipeline.config import ResearchConfig, SearchConfig
from pipeline.records import Evidence
from pipeline.reply.verdict import Assessment, refuting_pages
from pipeline.research.page_outcome import PageOutcome, PageReason
from pipeline.web.urls import canonical_url

SPECULATION_DISCARDED = (
    "not needed: extracted speculatively, answer discarded (stop rule met by higher tiers)"
)


@dataclass(frozen=True)
class TierPlan:
    """The tier's pages as decided (in the order given) and which of them to extract, best
    first (indices into `pages`)."""

    pages: tuple[PageOutcome, ...]
    extract: tuple[int, ...]


def stop_rule(have: Sequence[Evidence], cfg: ResearchConfig) -> bool:
    """MUSE's stop rule: enough distinct pages refute the post outright."""
    return refuting_pages(have) >= cfg.stop_after_refuting_pages


def worth_waiting(have: Sequence[Evidence], in_flight_pages: int, cfg: ResearchConfig) -> bool:
    """Whether the extraction calls in flight could meet the stop rule (if every page they read
    refuted); if not, the next tier is needed anyway and starts without waiting for them."""
    return refuting_pages(have) + in_flight_pages >= cfg.stop_after_refuting_pages


def worth_speculating(have: Sequence[Evidence], in_flight_pages: int, cfg: ResearchConfig) -> bool:
    """Whether to extract lower tiers while waiting: only when the stop rule needs every page in
    flight to refute (the likelier it is met, the likelier a speculative call is wasted);
    `speculate_when_pages_spare` pages more than that still allow it."""
    spare = refuting_pages(have) + in_flight_pages - cfg.stop_after_refuting_pages
    return cfg.speculate_tiers > 0 and spare <= cfg.speculate_when_pages_spare


def plan_tier(pages: Sequence[PageOutcome], slots: int, cfg: ResearchConfig) -> TierPlan:
    """The `slots` most relevant kept pages go to the extractor, best first, so the LLM reads
    the best passages, not every page; the other kept pages stay in the trace with why."""
    kept = sorted(
        (i for i, page in enumerate(pages) if page.used), key=lambda i: -pages[i].relevance
    )
    chosen, rest = kept[: max(0, slots)], set(kept[max(0, slots) :])
    detail = f"not extracted: {cfg.max_extractions_per_tier} more relevant page(s) in this tier"
    planned = tuple(
        page.but(PageReason.NOT_EXTRACTED, detail) if i in rest else page
        for i, page in enumerate(pages)
    )
    return TierPlan(planned, tuple(chosen))


def set_aside_known(page: PageOutcome, known_urls: Collection[str]) -> PageOutcome:
    """A kept page that is already a matched fact-check is evidence already: the head start
    searched before the fact-checks were matched, so it may have fetched one."""
    if page.used and canonical_url(page.result.url) in known_urls:
        return page.but(PageReason.ALREADY_FACT_CHECK)
    return page


def not_needed(page: PageOutcome) -> PageOutcome:
    """A prepared page of a tier the stop rule made unnecessary; a page that was unusable
    anyway keeps why."""
    if page.reason in (PageReason.KEPT, PageReason.READY):
        return page.but(PageReason.NOT_NEEDED)
    return page


def discarded(page: PageOutcome, *, extracted: bool) -> PageOutcome:
    """A page of a source taken speculatively, once the stop rule was met above it: one sent
    to the extractor is recorded as discarded (its answer is not used), the other prepared
    ones as not needed."""
    if extracted:
        return page.but(PageReason.DISCARDED, SPECULATION_DISCARDED)
    if page.reason is PageReason.NOT_EXTRACTED:
        return page.but(PageReason.NOT_NEEDED)
    return not_needed(page)


def results_per_query(number: int, cfg: SearchConfig) -> int:
    """Results asked per query and tier: fewer when re-searching."""
    return cfg.results_per_query if number == 1 else cfg.results_retry


def research_done(
    assessment: Assessment,
    have: Sequence[Evidence],
    *,
    number: int,
    use_llm: bool,
    cfg: ResearchConfig,
) -> bool:
    """After round `number`: decided, stopped, out of rounds, or unable to re-query (no LLM)."""
    return assessment.decided or stop_rule(have, cfg) or not use_llm or number >= cfg.max_rounds
