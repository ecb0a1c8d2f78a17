"""One search result made ready for the extractor: fetched, filtered, split, encoded, scored.

Shared by the research rounds and the head start (`pipeline.head_start`). Preparing is split
in two because the head start fetches and encodes pages before the claims are known: the
expensive part (`fetch_and_encode`: download, extraction, the embedding model) runs then, the
cheap part (`score`: a matrix product against the post and its claims) once they are.

The embedding model is one serial resource per process. `ScoringGate` hands it to the most
urgent page first (High tier before Medium before Low), because the High tier's pages are the
ones the extractor reads first and the ones that may end the round. A page is encoded a few
passages at a time and gives the model back between them, so a long Low-tier page that got
there first holds a High-tier page back by one short pass, not by the whole page.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.fetch import usability
from pipeline.records import (
    SEARCH_TIERS,
    Document,
    DocumentUse,
    Passage,
    SearchResult,
    SkipReason,
    Tier,
)
from pipeline.relevance import EncodedPage, FloatMatrix, encode_page, score_encoded
from pipeline.toolkit import Toolkit
from pipeline.urls import canonical_url


@dataclass
class PreparedPage:
    result: SearchResult
    tier: Tier
    doc: Document
    use: DocumentUse
    encoded: EncodedPage | None = None  # set when the page passed the filters
    passages: list[Passage] = field(default_factory=list)  # set by `score` when relevant


@dataclass
class TierPages:
    """What a tier's searches found and its pages being prepared (one future per result, in
    the same order)."""

    results: list[SearchResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed: bool = False  # every search of the tier failed
    pages: list[Future[PreparedPage]] = field(default_factory=list)


class ScoringGate:
    """Lets the waiting page of the best tier use the embedding model next (ties: first come)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
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
            while self._busy or self._waiting[0] != ticket:
                self._cond.wait()
            heapq.heappop(self._waiting)
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
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


def fetch_and_encode(
    kit: Toolkit,
    result: SearchResult,
    tier: Tier,
    *,
    as_of: datetime,
    replay: bool,
    gate: ScoringGate,
    skip: threading.Event | None = None,
) -> PreparedPage:
    """Fetch one result, apply the as-of, length and dateless rules, and encode its passages.

    When `skip` is set by the time the page is downloaded (the round has already met its stop
    rule), the model is not run for it."""
    rating = kit.publishers.lookup(result.url)
    doc = kit.get_document(result.url)
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
        as_of=as_of,
        replay=replay,
        reference_ok=rating.reference or tier is Tier.HIGH,
        cfg=kit.cfg.fetch,
    )
    if reason is not None:
        use.reason = reason
        return PreparedPage(result, tier, doc, use)
    if skip is not None and skip.is_set():
        use.reason = SkipReason.NOT_NEEDED
        return PreparedPage(result, tier, doc, use)
    text = doc.text[: kit.cfg.fetch.max_page_chars * 10]
    url = doc.final_url or doc.url
    encoded = kit.passages.get(doc.content_hash, text, url, kit.cfg.relevance)
    if encoded is None:

        @contextmanager
        def turn() -> Iterator[bool]:
            with gate.turn(tier):
                # Asked at every turn: the wait for the model can be long, and the round may
                # be over by now.
                yield skip is None or not skip.is_set()

        encoded = encode_page(kit.embedder, url, text, kit.cfg.relevance, turn=turn)
        if encoded is None:
            use.reason = SkipReason.NOT_NEEDED
            return PreparedPage(result, tier, doc, use)
        kit.passages.put(doc.content_hash, text, kit.cfg.relevance, encoded)
    return PreparedPage(result, tier, doc, use, encoded=encoded)


def score(page: PreparedPage, queries: FloatMatrix, kit: Toolkit) -> PreparedPage:
    """Score an encoded page against the post and its claims; mark it used when relevant."""
    if page.encoded is None:
        return page
    cfg = kit.cfg.relevance
    scored = score_encoded(page.encoded, queries, cfg)
    page.use.relevance = round(scored.score, 4)
    if scored.score < cfg.page_threshold or not scored.passages:
        page.use.used = False
        page.use.reason = f"relevance {scored.score:.2f} below {cfg.page_threshold:.2f}"
        page.passages = []
        return page
    page.use.used = True
    page.use.reason = ""
    page.passages = scored.passages
    return page
