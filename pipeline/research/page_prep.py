"""One search result made ready for the extractor: fetched, filtered, split, encoded, scored.

Shared by the research rounds and the head start (`pipeline.research.head_start`). Preparing is
split in two because the head start fetches and encodes pages before the claims are known: the
expensive part (`PagePreparer.prepare`: download, extraction, the embedding model) runs then,
the cheap part (`PagePreparer.score`: a matrix product against the post and its claims) once
they are. Each returns a new `PageOutcome` (`pipeline.research.page_outcome`).

The embedding model is a scarce resource (one page at a time on torch, one per core on ONNX
Runtime). `ScoringGate` hands it to the most urgent page first (High tier before Medium before
Low), because the High tier's pages are the ones the extractor reads first and the ones that
may end the round. A page is encoded a few passages at a time and gives the model back between
them, so a long Low-tier page that got there first holds a High-tier page back by one short
pass, not by the whole page. Only the passages the lexical pre-filter picks are encoded
(`pipeline.relevance.prefilter`), against the post's words and the query that found the page.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from pipeline.context import CheckContext
from pipeline.post.describe import query_texts
from pipeline.records import SEARCH_TIERS, SearchResult, Tier
from pipeline.relevance.scoring import FloatMatrix, encode_page, score_encoded
from pipeline.research.page_outcome import PageOutcome, PageReason, unusable_reason
from pipeline.shared_parts import SharedParts
from pipeline.web.fetch import usability
from pipeline.web.urls import canonical_url


class ScoringGate:
    """Lets the waiting page of the best tier use the embedding model next (ties: first come).

    `capacity` pages use it at once: one for torch, one per core for one-thread ONNX sessions
    (`Embedder.parallel`). Two side by side on two cores took the bench's local compute from
    1.80 to 1.21 s a post (bench/pipeline_cost.py, 2 runs each, load average 1-2.6)."""

    def __init__(self, capacity: int = 1) -> None:
        self._cond = threading.Condition()
        self._capacity = max(1, capacity)
        self._running = 0
        self._waiting: list[tuple[int, int]] = []
        self._tickets = itertools.count()

    @property
    def waiting(self) -> int:
        """Pages queued for the model."""
        with self._cond:
            return len(self._waiting)

    @contextmanager
    def turn(self, tier: Tier) -> Iterator[None]:
        rank = SEARCH_TIERS.index(tier) if tier in SEARCH_TIERS else len(SEARCH_TIERS)
        ticket = (rank, next(self._tickets))
        with self._cond:
            heapq.heappush(self._waiting, ticket)
            while self._running >= self._capacity or self._waiting[0] != ticket:
                self._cond.wait()
            heapq.heappop(self._waiting)
            self._running += 1
            # The next in line may fit beside this one.
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()


class SeenUrls:
    """Canonical URLs already taken by a search of this post, so each page is fetched once."""

    def __init__(self, urls: list[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._seen = {canonical_url(u) for u in urls or []}

    def add(self, url: str) -> None:
        with self._lock:
            self._seen.add(canonical_url(url))

    def claim_new(self, results: list[SearchResult]) -> list[SearchResult]:
        fresh: list[SearchResult] = []
        with self._lock:
            for result in results:
                key = canonical_url(result.url)
                if key not in self._seen:
                    self._seen.add(key)
                    fresh.append(result)
        return fresh


class PagePreparer:
    """Prepares the pages of one check: the as-of and replay rules, and one `ScoringGate` for
    the head start and every round, so the model always goes to the most urgent page."""

    def __init__(self, shared: SharedParts, ctx: CheckContext) -> None:
        self.shared = shared
        self.ctx = ctx
        self.gate = ScoringGate(shared.embedder.parallel)

    def prepare(self, result: SearchResult, tier: Tier, stop: threading.Event) -> PageOutcome:
        """Fetch one result, apply the as-of, length and dateless rules, and encode its
        passages. When `stop` is set by the time the page is downloaded (the round has already
        met its stop rule), the model is not run for it."""
        shared = self.shared
        doc = shared.get_document(result.url)
        # Rate where the link led: the fetcher followed DOI/shortener redirects, SSRF-checked.
        rating = shared.publishers.lookup(doc.final_url or result.url)
        if doc.ok and doc.published is None and result.published is not None:
            doc = doc.model_copy(update={"published": result.published, "date_source": "search"})
        unusable = usability(
            doc,
            as_of=self.ctx.as_of,
            replay=self.ctx.replay,
            reference_ok=rating.reference or tier is Tier.HIGH,
            cfg=shared.cfg.fetch,
        )
        if unusable is not None:
            return PageOutcome(result, tier, unusable_reason(unusable), doc, detail=unusable)
        if stop.is_set():
            return PageOutcome(result, tier, PageReason.NOT_NEEDED, doc)
        text = doc.text[: shared.cfg.fetch.max_page_chars * 10]
        url = doc.final_url or doc.url
        gate = self.gate

        @contextmanager
        def turn() -> Iterator[bool]:
            with gate.turn(tier):
                # Asked at every turn: the wait for the model can be long, and the round may
                # be over by now.
                yield not stop.is_set()

        # Before the claims are known the post's words and the query that found the page say
        # which passages the model should see (`pipeline.relevance.prefilter`).
        focus = [*query_texts(self.ctx.post, []), result.query]
        encoded = encode_page(
            shared.embedder,
            url,
            text,
            shared.cfg.relevance,
            turn=turn,
            focus=focus,
            cache=shared.passages,
        )
        if encoded is None:
            return PageOutcome(result, tier, PageReason.NOT_NEEDED, doc)
        return PageOutcome(result, tier, PageReason.READY, doc, encoded=encoded)

    def score(self, page: PageOutcome, queries: FloatMatrix) -> PageOutcome:
        """Score an encoded page against the post and its claims: kept when relevant."""
        if page.encoded is None:
            return page
        cfg = self.shared.cfg.relevance
        scored = score_encoded(page.encoded, queries, cfg)
        relevance = round(scored.score, 4)
        if scored.score < cfg.page_threshold or not scored.passages:
            detail = f"relevance {scored.score:.2f} below {cfg.page_threshold:.2f}"
            return replace(page.but(PageReason.IRRELEVANT, detail), relevance=relevance)
        return replace(
            page,
            reason=PageReason.KEPT,
            detail="",
            relevance=relevance,
            passages=tuple(scored.passages),
        )
