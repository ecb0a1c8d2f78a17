"""Evidence retrieval in rounds: search tier by tier, fetch, score, extract, decide, re-search.

One round (MUSE's order, made concurrent):
1. every query is searched in every tier at once (searches are cheap and independent);
2. every new result page is fetched, filtered (as-of time, length, dateless rule) and scored
   for relevance at once, a bounded number at a time, so one slow site does not stall the post
   (`pipeline.pages`; the embedding model takes High-tier pages first);
3. evidence is extracted (LLM) tier by tier, High first, the tier's most relevant pages read
   together in one call. A lower tier's extraction starts without waiting for the tier above
   when the pages still pending above it could not reach the stop rule even if all of them
   refuted; otherwise it waits, and the round stops as soon as enough distinct pages refute the
   post (MUSE), saving the LLM calls for lower tiers and not waiting for pages still loading.
In the first round, the pages the head start found for the post's own words
(`pipeline.head_start`, searched while the claims were being analysed) come first in each tier:
they are already fetched and encoded, so their extraction starts before the analyst's queries
have returned, and when they meet the stop rule the round ends there.
If the round ends undecided, the LLM writes new queries from what is missing plus a compressed
summary of the evidence so far, for up to `max_rounds` rounds (STEEL).

Before the web tiers, two sources that need no search: evidence the caller already has (strong
matches to published fact-checks, `prior`), and, when the authority index holds statements,
the relevant authorities' own statements published before the post (CLEF 2024 Task 5): the
best few are judged by the LLM and those that support or refute become evidence. When these
already meet the stop rule, the web is not searched at all. Without an LLM the statements are
kept as candidate passages.

Technical failures (every search provider down, an LLM error) raise; they are never turned
into "no evidence".
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel

from pipeline import evidence as evidence_stage
from pipeline.authority import AuthorityStance, judge_stances, relevant_accounts, to_evidence
from pipeline.describe import post_block, query_texts
from pipeline.head_start import HeadStart
from pipeline.llm import CallLedger
from pipeline.pages import (
    PreparedPage,
    ScoringGate,
    SeenUrls,
    TierPages,
    fetch_and_encode,
    score,
)
from pipeline.prompts import REQUERY_SYSTEM, cut_text, quote_untrusted, requery_user
from pipeline.records import (
    SEARCH_TIERS,
    ClaimAnalysis,
    Document,
    DocumentUse,
    EarlyDraft,
    Evidence,
    Passage,
    Post,
    RoundTrace,
    SearchResult,
    SkipReason,
    Tier,
)
from pipeline.relevance import FloatMatrix, encode_queries
from pipeline.search.base import SearchError
from pipeline.search.tiered import TierSearchOutcome
from pipeline.toolkit import Toolkit
from pipeline.urls import canonical_url
from pipeline.verdict import (
    Assessment,
    assess,
    order_evidence,
    refuting_pages,
    should_stop_searching,
)
from pipeline.write import MAX_EVIDENCE_IN_PROMPT, writer_order

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
    drafts: list[EarlyDraft] = field(default_factory=list)  # the extractor's, in call order


@dataclass
class _RoundState:
    """What one round has so far: evidence for the stop rule, extractions in flight, and
    whether the stop rule was met."""

    have: list[Evidence]
    found: list[tuple[PreparedPage, list[Evidence]]] = field(default_factory=list)
    # Extraction calls in flight: the pages of each batch, and one evidence list per page.
    pending: list[tuple[list[PreparedPage], Future[list[list[Evidence]]]]] = field(
        default_factory=list
    )
    stopped: bool = False
    failed_tiers: int = 0


class Research:
    """Runs the rounds for one post. Not shared between requests."""

    def __init__(
        self,
        kit: Toolkit,
        post: Post,
        analysis: ClaimAnalysis,
        *,
        as_of: datetime,
        replay: bool,
        ledger: CallLedger,
        use_llm: bool,
        prior: Sequence[Evidence] = (),
        head_start: HeadStart | None = None,
        reply_rules: str | None = None,
    ) -> None:
        self.kit = kit
        self.cfg = kit.cfg
        self.post = post
        self.analysis = analysis
        self.as_of = as_of
        self.replay = replay
        self.ledger = ledger
        self.use_llm = use_llm
        self._prior = list(prior)
        self._post_block = post_block(post)
        # Given, the extractor may draft the reply too (`pipeline.write.early_draft`).
        self._reply_rules = reply_rules
        self._drafts: list[tuple[int, EarlyDraft]] = []  # (call order, draft); appended by workers
        self._calls = itertools.count()
        self._query_texts = query_texts(post, analysis.claims)
        self._queries: FloatMatrix | None = None
        self._head = head_start if head_start is not None and head_start.tiers else None
        # One set for the head start and every round, so each page is fetched once; a
        # fact-check already in hand is not fetched and extracted again from the web.
        self._seen = head_start.seen if head_start is not None else SeenUrls()
        self._prior_urls = {canonical_url(item.url) for item in self._prior}
        for item in self._prior:
            self._seen.add(item.url)
        self._gate = head_start.gate if head_start is not None else ScoringGate()
        # Set when the round no longer needs pages it has not scored yet (the head start's
        # pages included: they belong to round 1).
        self._skip = head_start.skip if head_start is not None else threading.Event()

    def run(self) -> ResearchOutcome:
        rounds: list[RoundTrace] = []
        documents: dict[str, Document] = {}
        queries = list(self.analysis.queries)
        tried: list[str] = []
        workers = max(1, self.cfg.research.concurrency)
        from_authorities, candidates, authority_uses = self._authority()
        evidence = order_evidence([*self._prior, *from_authorities])
        assessment = assess(evidence, self.cfg.research)
        if evidence and should_stop_searching(evidence, self.cfg.research):
            rounds.append(RoundTrace(round=1, queries=[], documents=authority_uses))
            return ResearchOutcome(evidence, assessment, rounds, [], candidates[:10])
        self._queries = encode_queries(self.kit.embedder, self._query_texts)
        search_workers = max(1, self.cfg.research.search_concurrency)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="research")
        io = ThreadPoolExecutor(max_workers=search_workers, thread_name_prefix="search")
        try:
            for number in range(1, self.cfg.research.max_rounds + 1):
                head = self._head if number == 1 else None
                trace = RoundTrace(round=number, queries=queries)
                if head is not None and head.query is not None:
                    trace.queries = [head.query, *queries]
                if number == 1:
                    trace.documents.extend(authority_uses)
                rounds.append(trace)
                tried.extend(trace.queries)
                limit = (
                    self.cfg.search.results_per_query
                    if number == 1
                    else self.cfg.search.results_retry
                )
                self._skip.clear()
                found = self._round(pool, io, trace, queries, limit, evidence, number, head)
                for page, items in found:
                    evidence.extend(items)
                    if items:
                        documents[page.doc.canonical_url] = page.doc
                    candidates.extend(page.passages)
                evidence = order_evidence(evidence)
                assessment = assess(evidence, self.cfg.research)
                stop = refuting_pages(evidence) >= self.cfg.research.stop_after_refuting_pages
                if assessment.decided or stop or not self.use_llm:
                    break
                if number == self.cfg.research.max_rounds:
                    break
                queries, trace.established = self._requery(tried, evidence)
                if not queries:
                    break
        finally:
            # Pages nobody waits for any more (the stop rule was met) are not waited for here
            # either: a slow site must not hold the post. Their downloads end on their own.
            self._skip.set()
            pool.shutdown(wait=False, cancel_futures=True)
            io.shutdown(wait=False, cancel_futures=True)
        candidates.sort(key=lambda p: -p.score)
        return ResearchOutcome(
            evidence=evidence,
            assessment=assessment,
            rounds=rounds,
            documents=list(documents.values()),
            candidates=candidates[:10],
            drafts=[draft for _, draft in sorted(self._drafts, key=lambda d: d[0])],
        )

    # -- authorities ----------------------------------------------------------------------------

    def _authority(self) -> tuple[list[Evidence], list[Passage], list[DocumentUse]]:
        """Statements of the relevant authorities published before the post: evidence (with an
        LLM), or candidate passages (without); and what was considered, for the trace."""
        index = self.kit.authority_index
        if index is None or len(index) == 0:
            return [], [], []
        cfg = self.cfg.authority
        text = " ".join([self.post.text, *self.analysis.claims])
        accounts = relevant_accounts(text, cfg.accounts, index.accounts())
        found = [
            r
            for r in index.retrieve(text, accounts, before=self.post.created_at, k=cfg.k)
            if r.dense >= cfg.min_similarity
        ]
        if not found:
            return [], [], []
        if not self.use_llm:
            passages = [
                Passage(url=r.statement.url, index=0, text=r.statement.text, score=r.dense)
                for r in found
            ]
            uses = [
                DocumentUse(
                    url=r.statement.url,
                    tier=Tier.AUTHORITY,
                    used=False,
                    reason=SkipReason.AUTHORITY_NEEDS_LLM,
                    relevance=round(r.dense, 4),
                    published=r.statement.created_at,
                )
                for r in found
            ]
            return [], passages, uses
        claim = "; ".join(self.analysis.claims) or self.post.text
        limit = self.cfg.llm.max_post_chars
        judgements = judge_stances(
            claim,
            found,
            self.kit.llm,
            self.ledger,
            concurrency=self.cfg.research.concurrency,
            max_chars=limit,
        )
        items: list[Evidence] = []
        uses = []
        for judgement in judgements:
            item = to_evidence(judgement)
            statement = judgement.retrieved.statement
            cut = len(statement.text) > limit
            if item is not None and cut:  # the writer sees what the stance judge saw
                item = item.model_copy(update={"quote": cut_text(item.quote, limit)})
            reason = (
                f"authority @{statement.account}: {judgement.stance.value} "
                f"({judgement.confidence:.2f})"
                if judgement.stance is not AuthorityStance.NOT_ENOUGH_INFO
                else f"authority @{statement.account}: says nothing on the claim"
            )
            if cut:
                reason += (
                    f" (statement cut to {limit:,} of {len(statement.text):,} characters for "
                    "the LLM prompts)"
                )
            uses.append(
                DocumentUse(
                    url=statement.url,
                    tier=Tier.AUTHORITY,
                    used=item is not None,
                    reason=reason,
                    relevance=round(judgement.retrieved.dense, 4),
                    published=statement.created_at,
                )
            )
            if item is not None:
                items.append(item)
        return items, [], uses

    # -- one round ----------------------------------------------------------------------------

    def _round(
        self,
        pool: ThreadPoolExecutor,
        io: ThreadPoolExecutor,
        trace: RoundTrace,
        queries: list[str],
        limit: int,
        prior: list[Evidence],
        number: int,
        head: HeadStart | None,
    ) -> list[tuple[PreparedPage, list[Evidence]]]:
        searches: dict[Tier, list[Future[TierSearchOutcome]]] = {
            # Searches are cheap remote calls: all of them at once, on their own pool, so they
            # never wait behind page work.
            tier: [io.submit(self._search, q, tier, limit) for q in queries]
            for tier in SEARCH_TIERS
        }
        # Results are gathered tier by tier (High first, so a page two tiers list is the
        # higher tier's) off this thread, so the head start's pages are read meanwhile.
        late: dict[Tier, Future[TierPages]] = {tier: Future() for tier in SEARCH_TIERS}
        pool.submit(self._gather, pool, searches, late, head)

        state = _RoundState(have=list(prior))
        for tier in SEARCH_TIERS:
            started = head.tiers.get(tier) if head is not None else None
            if state.stopped:
                self._record_unneeded(trace, tier, started, late[tier])
                continue
            slots = self.cfg.research.max_extractions_per_tier
            tier_failed = True
            if started is not None:
                early = started.result()
                trace.results.extend(early.results)
                trace.search_errors.extend(early.errors)
                tier_failed = early.failed
                slots = self._extract_early(pool, trace, early.pages, slots, number, state)
                self._settle(state)
            if state.stopped:
                self._record_unneeded(trace, tier, None, late[tier])
                continue
            gathered = late[tier].result()
            trace.results.extend(gathered.results)
            trace.search_errors.extend(gathered.errors)
            state.failed_tiers += tier_failed and gathered.failed
            pages = [prep.result() for prep in gathered.pages]
            chosen = self._best_pages(pages, slots)
            trace.documents.extend(p.use for p in pages)
            self._start_extraction(pool, chosen, number, state)
            self._settle(state)
        if state.failed_tiers == len(SEARCH_TIERS):
            raise SearchError(f"every search failed in round {number}: {trace.search_errors}")
        for batch, fut in state.pending:
            state.found.extend(zip(batch, fut.result(), strict=True))
        return state.found

    def _gather(
        self,
        pool: ThreadPoolExecutor,
        searches: dict[Tier, list[Future[TierSearchOutcome]]],
        late: dict[Tier, Future[TierPages]],
        head: HeadStart | None,
    ) -> None:
        if head is not None:
            # The head start's searches began first and take the pages they found first, so
            # which pages count as early never depends on thread timing.
            for started in head.tiers.values():
                started.exception()
        for tier in SEARCH_TIERS:
            gathered = TierPages(failed=True)  # until one search of the tier answers
            try:
                results: list[SearchResult] = []
                for search in searches[tier]:
                    try:
                        outcome = search.result()
                    except SearchError as exc:
                        gathered.errors.append(f"{tier.value}: {exc}")
                        continue
                    gathered.failed = False
                    results.extend(outcome.results)
                    gathered.errors.extend(f"{tier.value}: {e}" for e in outcome.errors)
                fresh = self._seen.claim_new(results)[: self.cfg.research.max_pages_per_tier]
                gathered.results = fresh
                gathered.pages = [pool.submit(self._prepare, r, tier) for r in fresh]
            except BaseException as exc:
                late[tier].set_exception(exc)
                continue
            late[tier].set_result(gathered)

    def _extract_early(
        self,
        pool: ThreadPoolExecutor,
        trace: RoundTrace,
        pages: list[Future[PreparedPage]],
        slots: int,
        number: int,
        state: _RoundState,
    ) -> int:
        """Send the head start's best pages of a tier to the extractor as soon as they are all
        scored; returns the extraction slots left for the tier."""
        queries = self._query_matrix()
        ready = [score(p.result(), queries, self.kit) for p in pages]
        for page in ready:
            # The head start searched before the known fact-checks were matched, so it may
            # have fetched one of them; it is evidence already.
            if page.use.used and canonical_url(page.result.url) in self._prior_urls:
                page.use.used = False
                page.use.reason = SkipReason.ALREADY_FACT_CHECK
                page.passages = []
        chosen = self._best_pages(ready, slots)
        trace.documents.extend(p.use for p in ready)
        self._start_extraction(pool, chosen, number, state)
        return slots - len(chosen)

    def _start_extraction(
        self,
        pool: ThreadPoolExecutor,
        pages: list[PreparedPage],
        number: int,
        state: _RoundState,
    ) -> None:
        if not self.use_llm:
            state.found.extend((page, []) for page in pages)
            return
        size = max(1, self.cfg.research.pages_per_extraction)
        # What the writer would see of the evidence settled so far (its first items can only
        # come from these), for a draft written along with the quotes.
        known = writer_order(order_evidence(state.have))[:MAX_EVIDENCE_IN_PROMPT]
        for start in range(0, len(pages), size):
            batch = pages[start : start + size]
            order = next(self._calls)  # calls are numbered as started, not as finished
            state.pending.append((batch, pool.submit(self._extract, batch, number, order, known)))

    def _settle(self, state: _RoundState) -> None:
        """Wait for the extractions in flight only if they could meet the stop rule; otherwise
        the next tier is needed anyway, so it starts now."""
        needed = self.cfg.research.stop_after_refuting_pages
        in_flight = sum(len(pages) for pages, _ in state.pending)
        if refuting_pages(state.have) + in_flight < needed:
            return
        for pages, fut in state.pending:
            for page, items in zip(pages, fut.result(), strict=True):
                state.have.extend(items)
                state.found.append((page, items))
        state.pending = []
        if refuting_pages(state.have) >= needed:
            state.stopped = True
            self._skip.set()

    def _record_unneeded(
        self,
        trace: RoundTrace,
        tier: Tier,
        started: Future[TierPages] | None,
        late: Future[TierPages],
    ) -> None:
        """Put a tier the stop rule made unnecessary in the trace, without waiting for it."""
        for source in (started, late):
            if source is None or not source.done() or source.exception() is not None:
                continue
            gathered = source.result()
            trace.results.extend(gathered.results)
            for result, fut in zip(gathered.results, gathered.pages, strict=True):
                if fut.done() and fut.exception() is None:
                    use = fut.result().use
                    if use.used or not use.reason:  # keep why an unusable page was unusable
                        use.used = False
                        use.reason = SkipReason.NOT_NEEDED
                else:
                    use = DocumentUse(
                        url=result.url, tier=tier, used=False, reason=SkipReason.NOT_FETCHED
                    )
                trace.documents.append(use)

    def _query_matrix(self) -> FloatMatrix:
        """The post and its claims, encoded once per post (set before any page is scored)."""
        assert self._queries is not None
        return self._queries

    def _best_pages(self, pages: list[PreparedPage], cap: int) -> list[PreparedPage]:
        """The `cap` most relevant usable pages, best first: only they go to the extractor (the
        others stay in the trace with the reason), so the LLM reads the best passages, not
        every page."""
        limit = self.cfg.research.max_extractions_per_tier
        usable = sorted((p for p in pages if p.use.used), key=lambda p: -p.use.relevance)
        for page in usable[max(0, cap) :]:
            page.use.used = False
            page.use.reason = f"not extracted: {limit} more relevant page(s) in this tier"
            page.passages = []
        return usable[: max(0, cap)]

    def _search(self, query: str, tier: Tier, limit: int) -> TierSearchOutcome:
        return self.kit.search.search_tier(
            query, tier, limit=limit, sites=self.kit.publishers.domains_for(tier)
        )

    def _prepare(self, result: SearchResult, tier: Tier) -> PreparedPage:
        """Fetch, filter and score one page (no LLM)."""
        page = fetch_and_encode(
            self.kit,
            result,
            tier,
            as_of=self.as_of,
            replay=self.replay,
            gate=self._gate,
            skip=self._skip,
        )
        return score(page, self._query_matrix(), self.kit)

    def _extract(
        self, pages: list[PreparedPage], number: int, order: int, known: list[Evidence]
    ) -> list[list[Evidence]]:
        inputs = []
        for page in pages:
            rating = self.kit.publishers.lookup(page.doc.final_url or page.doc.url)
            inputs.append(
                evidence_stage.PageInput(
                    doc=page.doc,
                    tier=page.tier,
                    domain=rating.domain,
                    relevance=page.use.relevance,
                    passages=page.passages,
                    round=number,
                )
            )
        batch = evidence_stage.extract(
            inputs,
            self._post_block,
            self.analysis.claims,
            self.kit.llm,
            self.ledger,
            reply_rules=self._reply_rules,
            known=known,
            max_passage_chars=self.cfg.llm.max_post_chars,
        )
        if batch.draft is not None:
            self._drafts.append((order, batch.draft))
        for page, extraction in zip(pages, batch.pages, strict=True):
            if extraction.rejected:
                page.use.reason = "; ".join(extraction.rejected)[:500]
        return [extraction.evidence for extraction in batch.pages]

    def _requery(self, tried: list[str], evidence: list[Evidence]) -> tuple[list[str], str]:
        block = quote_untrusted(
            "evidence",
            "\n".join(f"[{e.stance.value}] {e.url}: {e.quote}" for e in evidence) or "(none yet)",
        )
        answer = self.kit.llm.structured(
            "requery",
            system=REQUERY_SYSTEM,
            user=requery_user(
                self._post_block, self.analysis.claims, tried, block, QUERIES_PER_REQUERY
            ),
            schema=RequeryAnswer,
            ledger=self.ledger,
        )
        seen = {q.lower() for q in tried}
        queries = [q.strip() for q in answer.queries if q.strip() and q.lower() not in seen]
        return queries[:QUERIES_PER_REQUERY], answer.established.strip()
