"""Evidence retrieval in rounds: search tier by tier, fetch, score, extract, decide, re-search.

One round (MUSE's order, made concurrent):
1. every query is searched in every tier at once (searches are cheap and independent);
2. every new result page is fetched, filtered (as-of time, length, dateless rule) and scored
   for relevance at once, a bounded number at a time, so one slow site does not stall the post;
3. evidence is extracted (LLM) tier by tier, High first. A lower tier's extraction starts
   without waiting for the tier above when the pages still pending above it could not reach the
   stop rule even if all of them refuted; otherwise it waits, and the round stops as soon as
   enough distinct pages refute the post (MUSE), saving the LLM calls for lower tiers.
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

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel

from pipeline import evidence as evidence_stage
from pipeline.authority import AuthorityStance, judge_stances, relevant_accounts, to_evidence
from pipeline.describe import post_block, query_texts
from pipeline.fetch import usability
from pipeline.llm import CallLedger
from pipeline.prompts import REQUERY_SYSTEM, quote_untrusted, requery_user
from pipeline.records import (
    SEARCH_TIERS,
    ClaimAnalysis,
    Document,
    DocumentUse,
    Evidence,
    Passage,
    Post,
    RoundTrace,
    SearchResult,
    Tier,
)
from pipeline.relevance import score_page
from pipeline.search.base import SearchError
from pipeline.toolkit import Toolkit
from pipeline.urls import canonical_url
from pipeline.verdict import (
    Assessment,
    assess,
    order_evidence,
    refuting_pages,
    should_stop_searching,
)

QUERIES_PER_REQUERY = 3


class RequeryAnswer(BaseModel):
    missing: str
    established: str
    queries: list[str]


@dataclass
class PreparedPage:
    result: SearchResult
    tier: Tier
    doc: Document
    use: DocumentUse
    passages: list[Passage] = field(default_factory=list)


@dataclass
class ResearchOutcome:
    evidence: list[Evidence]
    assessment: Assessment
    rounds: list[RoundTrace]
    documents: list[Document]  # snapshots of the pages evidence came from
    candidates: list[Passage]  # relevant passages (kept for the no-LLM path)
    search_failed: bool = False


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
        self._query_texts = query_texts(post, analysis.claims)
        # A fact-check already in hand is not fetched and extracted again from the web.
        self._seen: set[str] = {canonical_url(e.url) for e in self._prior}
        self._lock = threading.Lock()

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
        search_workers = max(1, self.cfg.research.search_concurrency)
        with (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="research") as pool,
            ThreadPoolExecutor(max_workers=search_workers, thread_name_prefix="search") as io,
        ):
            for number in range(1, self.cfg.research.max_rounds + 1):
                trace = RoundTrace(round=number, queries=queries)
                if number == 1:
                    trace.documents.extend(authority_uses)
                rounds.append(trace)
                tried.extend(queries)
                limit = (
                    self.cfg.search.results_per_query
                    if number == 1
                    else self.cfg.search.results_retry
                )
                try:
                    found = self._round(pool, io, trace, queries, limit, evidence, number)
                except BaseException:
                    pool.shutdown(wait=False, cancel_futures=True)
                    io.shutdown(wait=False, cancel_futures=True)
                    raise
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
        candidates.sort(key=lambda p: -p.score)
        return ResearchOutcome(
            evidence=evidence,
            assessment=assessment,
            rounds=rounds,
            documents=list(documents.values()),
            candidates=candidates[:10],
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
                    reason="authority statement: stance needs an LLM",
                    relevance=round(r.dense, 4),
                    published=r.statement.created_at,
                )
                for r in found
            ]
            return [], passages, uses
        claim = "; ".join(self.analysis.claims) or self.post.text
        judgements = judge_stances(
            claim, found, self.kit.llm, self.ledger, concurrency=self.cfg.research.concurrency
        )
        items: list[Evidence] = []
        uses = []
        for judgement in judgements:
            item = to_evidence(judgement)
            statement = judgement.retrieved.statement
            uses.append(
                DocumentUse(
                    url=statement.url,
                    tier=Tier.AUTHORITY,
                    used=item is not None,
                    reason=(
                        f"authority @{statement.account}: {judgement.stance.value} "
                        f"({judgement.confidence:.2f})"
                    )
                    if judgement.stance is not AuthorityStance.NOT_ENOUGH_INFO
                    else f"authority @{statement.account}: says nothing on the claim",
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
    ) -> list[tuple[PreparedPage, list[Evidence]]]:
        searches: dict[Tier, list[Future[list[SearchResult]]]] = {
            # Searches are cheap remote calls: all of them at once, on their own pool, so they
            # never wait behind page work.
            tier: [io.submit(self._search, q, tier, limit, trace) for q in queries]
            for tier in SEARCH_TIERS
        }
        prepared: dict[Tier, list[Future[PreparedPage]]] = {}
        failed_tiers = 0
        for tier in SEARCH_TIERS:
            results: list[SearchResult] = []
            tier_failed = True
            for search in searches[tier]:
                try:
                    results.extend(search.result())
                    tier_failed = False
                except SearchError as exc:
                    trace.search_errors.append(f"{tier.value}: {exc}")
            failed_tiers += tier_failed
            fresh = self._claim_new(results)[: self.cfg.research.max_pages_per_tier]
            trace.results.extend(fresh)
            prepared[tier] = [pool.submit(self._prepare, r, tier) for r in fresh]
        if failed_tiers == len(SEARCH_TIERS):
            raise SearchError(f"every search failed in round {number}: {trace.search_errors}")

        found: list[tuple[PreparedPage, list[Evidence]]] = []
        pending: list[tuple[PreparedPage, Future[list[Evidence]]]] = []
        have = list(prior)
        needed = self.cfg.research.stop_after_refuting_pages
        stopped = False
        for tier in SEARCH_TIERS:
            pages = [prep.result() for prep in prepared[tier]]
            if stopped:
                for page in pages:
                    page.use.used = False
                    page.use.reason = "not needed: stop rule met by higher tiers"
                    trace.documents.append(page.use)
                continue
            for page in self._best_pages(pages):
                trace.documents.append(page.use)
                if not page.use.used:
                    continue
                if self.use_llm:
                    pending.append((page, pool.submit(self._extract, page, number)))
                else:
                    found.append((page, []))
            # Wait for the extractions only if they could meet the stop rule; otherwise the
            # next tier is needed anyway, so start it now.
            if refuting_pages(have) + len(pending) >= needed:
                for page, fut in pending:
                    items = fut.result()
                    have.extend(items)
                    found.append((page, items))
                pending = []
                if refuting_pages(have) >= needed:
                    stopped = True
        for page, fut in pending:
            found.append((page, fut.result()))
        return found

    def _best_pages(self, pages: list[PreparedPage]) -> list[PreparedPage]:
        """Only the most relevant usable pages of a tier go to the extractor (the others stay
        in the trace with the reason): the LLM reads the best passages, not every page."""
        cap = self.cfg.research.max_extractions_per_tier
        usable = sorted((p for p in pages if p.use.used), key=lambda p: -p.use.relevance)
        for page in usable[cap:]:
            page.use.used = False
            page.use.reason = f"not extracted: {cap} more relevant page(s) in this tier"
            page.passages = []
        return pages

    def _search(self, query: str, tier: Tier, limit: int, trace: RoundTrace) -> list[SearchResult]:
        outcome = self.kit.search.search_tier(
            query, tier, limit=limit, sites=self.kit.publishers.domains_for(tier)
        )
        with self._lock:
            trace.search_errors.extend(f"{tier.value}: {e}" for e in outcome.errors)
        return outcome.results

    def _claim_new(self, results: list[SearchResult]) -> list[SearchResult]:
        fresh: list[SearchResult] = []
        with self._lock:
            for result in results:
                key = canonical_url(result.url)
                if key not in self._seen:
                    self._seen.add(key)
                    fresh.append(result)
        return fresh

    def _prepare(self, result: SearchResult, tier: Tier) -> PreparedPage:
        """Fetch, filter and score one page (no LLM)."""
        rating = self.kit.publishers.lookup(result.url)
        doc = self.kit.get_document(result.url)
        if doc.ok and doc.published is None and result.published is not None:
            doc = doc.model_copy(update={"published": result.published, "date_source": "search"})
        use = DocumentUse(
            url=result.url,
            tier=tier,
            used=False,
            published=doc.published,
            content_hash=doc.content_hash,
        )
        reason = usability(
            doc,
            as_of=self.as_of,
            replay=self.replay,
            reference_ok=rating.reference or tier is Tier.HIGH,
            cfg=self.cfg.fetch,
        )
        if reason is not None:
            use.reason = reason
            return PreparedPage(result, tier, doc, use)
        text = doc.text[: self.cfg.fetch.max_page_chars * 10]
        scored = score_page(
            self.kit.embedder, self._query_texts, doc.final_url or doc.url, text, self.cfg.relevance
        )
        use.relevance = round(scored.score, 4)
        if scored.score < self.cfg.relevance.page_threshold or not scored.passages:
            use.reason = (
                f"relevance {scored.score:.2f} below {self.cfg.relevance.page_threshold:.2f}"
            )
            return PreparedPage(result, tier, doc, use)
        use.used = True
        return PreparedPage(result, tier, doc, use, passages=scored.passages)

    def _extract(self, page: PreparedPage, number: int) -> list[Evidence]:
        rating = self.kit.publishers.lookup(page.doc.final_url or page.doc.url)
        page_input = evidence_stage.PageInput(
            doc=page.doc,
            tier=page.tier,
            domain=rating.domain,
            relevance=page.use.relevance,
            passages=page.passages,
            round=number,
        )
        extraction = evidence_stage.extract(
            page_input, self._post_block, self.analysis.claims, self.kit.llm, self.ledger
        )
        if extraction.rejected:
            page.use.reason = "; ".join(extraction.rejected)[:500]
        return extraction.evidence

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
