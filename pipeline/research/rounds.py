"""Evidence retrieval in rounds: search tier by tier, fetch, score, extract, decide, re-search.

One round (MUSE's order, made concurrent):
1. every query is searched in every tier at once (searches are cheap and independent);
2. every new result page is fetched, filtered (as-of time, length, dateless rule) and scored
   for relevance at once, a bounded number at a time, so one slow site does not stall the post
   (`pipeline.research.page_prep`; the embedding model takes High-tier pages first);
3. evidence is extracted (LLM) tier by tier, High first, the tier's most relevant pages read
   together in one call. A lower tier's extraction starts without waiting for the tier above
   when the pages still pending above it could not reach the stop rule even if all of them
   refuted; otherwise it waits, and the round stops as soon as enough distinct pages refute the
   post (MUSE), saving the LLM calls for lower tiers and not waiting for pages still loading.
   While it waits, the lower tiers' ready pages are extracted speculatively
   (`research.speculate_tiers`; `pipeline.research.round`): their answers count only if the
   stop rule is not met above them, and are discarded, and recorded as such, if it is.
In the first round, the pages the head start found for the post's own words
(`pipeline.research.head_start`, searched while the claims were being analysed) come first in each
tier: they are already fetched and encoded, so their extraction starts before the analyst's queries
have returned, and when they meet the stop rule the round ends there.
If the round ends undecided, the LLM writes new queries from what is missing plus a compressed
summary of the evidence so far, for up to `max_rounds` rounds (STEEL). A re-search round (not
the last) asks for the next round's queries while it searches (`research.requery_ahead`): if it
finds no evidence, that answer is the one asking after it would have got (the same prompt), and
it is used; otherwise it is discarded, recorded in the trace, and the queries are asked again.

Before the web tiers, two sources that need no search: evidence the caller already has (strong
matches to published fact-checks, `prior`), and, when the authority index holds statements,
the relevant authorities' own statements published before the post (CLEF 2024 Task 5): the
best few are judged by the LLM and those that support or refute become evidence. When these
already meet the stop rule, the web is not searched at all. Without an LLM the statements are
kept as candidate passages.

The decisions (which pages to extract, the stop rule, when to wait, when to re-query) are pure
functions in `pipeline.research.plan`; the threads belong to `pipeline.research.scheduler`; each
page's fate is a frozen `PageOutcome`, written into the round's trace once, when the round ends.

Technical failures (every search provider down, an LLM error) raise; they are never turned
into "no evidence".
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from pydantic import BaseModel

from pipeline.authority.evidence import authority_evidence
from pipeline.context import CheckContext
from pipeline.llm.prompts import REQUERY_SYSTEM, quote_untrusted, requery_user
from pipeline.post.describe import post_block, query_texts
from pipeline.records import (
    SEARCH_TIERS,
    ClaimAnalysis,
    Document,
    EarlyDraft,
    Evidence,
    Passage,
    RoundTrace,
)
from pipeline.relevance.scoring import FloatMatrix, encode_queries, relevance_texts
from pipeline.reply.verdict import Assessment, assess, order_evidence
from pipeline.reply.writer import writing_rules
from pipeline.research import evidence_extraction as evidence_stage
from pipeline.research.head_start import HeadStart
from pipeline.research.page_outcome import PageOutcome
from pipeline.research.page_prep import PagePreparer
from pipeline.research.passage_focus import Focus
from pipeline.research.plan import (
    research_done,
    results_per_query,
    stop_rule,
)
from pipeline.research.round import Extracted, LateDraft, RoundRunner, RoundState, Source
from pipeline.research.scheduler import ResearchScheduler
from pipeline.shared_parts import SharedParts
from pipeline.web.urls import canonical_url

QUERIES_PER_REQUERY = 3


class RequeryAnswer(BaseModel):
    missing: str
    established: str
    queries: list[str]


@dataclass
class ResearchOutcome:
    evidence: list[Evidence]
    assessment: Assessment
    rounds: list[RoundTrace]
    documents: list[Document]  # snapshots of the pages evidence came from
    candidates: list[Passage]  # relevant passages (kept for the no-LLM path)
    search_failed: bool = False
    # The extractor's drafts by call order, and the calls sent again for a stale draft's
    # place that were still out when the research ended (`pipeline.research.hedged_writer`).
    drafts: list[tuple[int, EarlyDraft]] = field(default_factory=list)
    late_drafts: list[LateDraft] = field(default_factory=list)


@dataclass(frozen=True)
class _Ahead:
    """The next round's queries, asked before this round ended, and from what."""

    asked_from: tuple[tuple[str, ...], tuple[str, ...]]
    answer: Future[tuple[list[str], str]]


def _requery_input(
    tried: Sequence[str], evidence: Sequence[Evidence]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the re-query prompt is written from."""
    return tuple(tried), _evidence_lines(evidence)


def _evidence_lines(evidence: Sequence[Evidence]) -> tuple[str, ...]:
    return tuple(f"[{e.stance.value}] {e.url}: {e.quote}" for e in evidence)


def _drop(ahead: _Ahead | None, trace: RoundTrace, why: str) -> None:
    """Queries asked ahead that are not used: not sent if still queued, and recorded."""
    if ahead is not None:
        ahead.answer.cancel()
        trace.requery_ahead = f"discarded: {why}"


class Research:
    """Runs the rounds for one post. Not shared between requests."""

    def __init__(
        self,
        shared: SharedParts,
        ctx: CheckContext,
        analysis: ClaimAnalysis,
        scheduler: ResearchScheduler,
        preparer: PagePreparer,
        *,
        prior: Sequence[Evidence] = (),
        head_start: HeadStart | None = None,
    ) -> None:
        self.shared = shared
        self.cfg = shared.cfg
        self.ctx = ctx
        self.analysis = analysis
        self.scheduler = scheduler
        self.preparer = preparer
        self._prior = list(prior)
        self._post_block = post_block(ctx.post)
        # Given, the extractor may draft the reply too (`pipeline.reply.writer.early_draft`).
        self._writing_rules = (
            writing_rules(ctx.platform, ctx.lang)
            if ctx.use_llm and self.cfg.research.draft_with_evidence
            else None
        )
        self._calls = itertools.count()
        self._query_texts = relevance_texts(
            query_texts(ctx.post, []), analysis.claims, analysis.questions, self.cfg.relevance
        )
        self._queries: FloatMatrix | None = None
        # What the extractor is shown of each passage (`pipeline.research.passage_focus`): the
        # claims' and the research questions' words ("where did the report come from?" keeps a
        # sentence on the report's origin that names no word of the claim).
        self._focus = (
            Focus.of([*analysis.claims, *analysis.questions])
            if self.cfg.relevance.focus_sentences
            else Focus()
        )
        self._head = head_start
        # A fact-check already in hand is not fetched and extracted again from the web.
        self._prior_urls = {canonical_url(item.url) for item in self._prior}
        scheduler.mark_seen([item.url for item in self._prior])

    def run(self) -> ResearchOutcome:
        rounds: list[RoundTrace] = []
        documents: dict[str, Document] = {}
        drafts: list[tuple[int, EarlyDraft]] = []
        late: list[LateDraft] = []
        queries = list(self.analysis.queries)
        tried: list[str] = []
        research = self.cfg.research
        authority = authority_evidence(self.shared, self.ctx, self.analysis)
        candidates = authority.candidates
        evidence = order_evidence([*self._prior, *authority.evidence])
        assessment = assess(evidence, research)
        if evidence and stop_rule(evidence, research):
            rounds.append(RoundTrace(round=1, queries=[], documents=authority.uses))
            return ResearchOutcome(evidence, assessment, rounds, [], candidates[:10])
        self._queries = encode_queries(self.shared.embedder, self._query_texts)
        try:
            for number in range(1, research.max_rounds + 1):
                head = self._head if number == 1 else None
                trace = RoundTrace(round=number, queries=queries)
                if head is not None:
                    trace.queries = [head.query, *queries]
                rounds.append(trace)
                tried.extend(trace.queries)
                self.scheduler.resume()
                ahead = self._ask_ahead(tried, evidence, number)
                state = self._round(queries, evidence, number, head)
                trace.results = state.results
                trace.search_errors = state.errors
                trace.documents = [
                    *(authority.uses if number == 1 else []),
                    *(page.use() for page in state.outcomes),
                ]
                drafts.extend(state.drafts)
                late.extend(state.redrafts)
                trace.speculative_calls = state.speculative_calls
                trace.discarded_calls = state.discarded_calls
                trace.discarded_drafts = state.stale_drafts
                trace.redraft_calls = state.redraft_calls
                for page, items in state.found:
                    evidence.extend(items)
                    if items and page.doc is not None:
                        documents[page.doc.canonical_url] = page.doc
                    candidates.extend(page.passages)
                evidence = order_evidence(evidence)
                assessment = assess(evidence, research)
                if research_done(
                    assessment, evidence, number=number, use_llm=self.ctx.use_llm, cfg=research
                ):
                    _drop(ahead, trace, "the round settled the post")
                    break
                queries, trace.established = self._next_queries(tried, evidence, ahead, trace)
                if not queries:
                    break
        finally:
            # Pages nobody waits for any more (the stop rule was met) are not waited for here
            # either: a slow site must not hold the post.
            self.scheduler.end_research()
        candidates.sort(key=lambda p: -p.score)
        return ResearchOutcome(
            evidence=evidence,
            assessment=assessment,
            rounds=rounds,
            documents=list(documents.values()),
            candidates=candidates[:10],
            drafts=sorted(drafts, key=lambda d: d[0]),
            late_drafts=late,
        )

    # -- one round ----------------------------------------------------------------------------

    def _round(
        self, queries: list[str], prior: list[Evidence], number: int, head: HeadStart | None
    ) -> RoundState:
        limit = results_per_query(number, self.cfg.search)
        late = self.scheduler.search_round(queries, limit, self._score)
        sources = [
            Source(tier, source, early)
            for tier in SEARCH_TIERS
            for source, early in (
                (head.tiers.get(tier) if head is not None else None, True),
                (late[tier], False),
            )
            if source is not None
        ]

        def send(pages: list[PageOutcome], known: list[Evidence]) -> Future[Extracted]:
            return self.scheduler.submit(self._extract, pages, number, next(self._calls), known)

        def send_again(pages: list[PageOutcome], known: list[Evidence]) -> Future[Extracted]:
            call = next(self._calls)
            return self.scheduler.submit_late(self._extract, pages, number, call, known)

        runner = RoundRunner(
            self.cfg.research,
            score=self._score,
            send=send if self.ctx.use_llm else None,
            on_stop=self.scheduler.stop_pending,
            known_urls=frozenset(self._prior_urls),
            # One worker: MUSE's order, one thing at a time, nothing ahead of it.
            speculate_tiers=0 if self.scheduler.sequential else None,
            leave_redrafts=self.cfg.research.hedge_writer,
            send_again=send_again if self.ctx.use_llm else None,
        )
        return runner.run(sources, prior, number)

    def _score(self, page: PageOutcome) -> PageOutcome:
        """Against the post and its claims, encoded once per post (before any page is scored)."""
        assert self._queries is not None
        return self.preparer.score(page, self._queries)

    def _extract(
        self, pages: list[PageOutcome], number: int, order: int, known: list[Evidence]
    ) -> Extracted:
        inputs = []
        for page in pages:
            assert page.doc is not None  # a kept page was fetched
            rating = self.shared.publishers.lookup(page.doc.final_url or page.doc.url)
            inputs.append(
                evidence_stage.PageInput(
                    doc=page.doc,
                    tier=page.tier,
                    domain=rating.domain,
                    relevance=page.relevance,
                    passages=list(page.passages),
                    round=number,
                )
            )
        batch = evidence_stage.extract_evidence(
            inputs,
            self._post_block,
            self.analysis.claims,
            self.shared.llm,
            self.ctx.ledger,
            writing_rules=self._writing_rules,
            known=known,
            max_passage_chars=self.cfg.llm.max_post_chars,
            focus=self._focus,
        )
        return Extracted(
            pages=[
                (extraction.evidence, "; ".join(extraction.rejected)[:500])
                for extraction in batch.pages
            ],
            draft=batch.draft,
            order=order,
        )

    def _ask_ahead(self, tried: list[str], evidence: list[Evidence], number: int) -> _Ahead | None:
        """A re-search round often finds nothing new, and then the next queries are asked from
        exactly what is known now: ask for them while the round searches and fetches
        (`research.requery_ahead`), not after it."""
        cfg = self.cfg.research
        if not (self.ctx.use_llm and cfg.requery_ahead) or self.scheduler.sequential:
            return None
        if number < 2 or number >= cfg.max_rounds:
            return None  # the first round usually finds evidence; the last one asks nothing
        asked = self.scheduler.submit(self._requery, list(tried), list(evidence))
        return _Ahead(_requery_input(tried, evidence), asked)

    def _next_queries(
        self, tried: list[str], evidence: list[Evidence], ahead: _Ahead | None, trace: RoundTrace
    ) -> tuple[list[str], str]:
        """The answer asked ahead if it was asked from what is known now; else ask now."""
        if ahead is not None:
            if ahead.asked_from == _requery_input(tried, evidence):
                trace.requery_ahead = "used"
                return ahead.answer.result()
            _drop(ahead, trace, "the round found evidence")
        return self._requery(tried, evidence)

    def _requery(self, tried: list[str], evidence: list[Evidence]) -> tuple[list[str], str]:
        block = quote_untrusted("evidence", "\n".join(_evidence_lines(evidence)) or "(none yet)")
        answer = self.shared.llm.structured(
            "requery",
            system=REQUERY_SYSTEM,
            user=requery_user(
                self._post_block, self.analysis.claims, tried, block, QUERIES_PER_REQUERY
            ),
            schema=RequeryAnswer,
            ledger=self.ctx.ledger,
        )
        seen = {q.lower() for q in tried}
        queries = [q.strip() for q in answer.queries if q.strip() and q.lower() not in seen]
        return queries[:QUERIES_PER_REQUERY], answer.established.strip()
