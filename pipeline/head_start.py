"""The head start: search the post's own words while the analyst is still reading the post.

The claim analysis is one LLM call (seconds) that every web search waits for. Fact-checks and
official corrections quote the claim they address, so the post's own words are a good query in
their own right, and searching them in every tier, fetching what comes back and encoding its
passages costs no LLM tokens. The head start does exactly that beside the analysis; the first
research round then treats those pages as its own (`Research`), scores them against the
claims once they are known (no second pass of the model) and can send the relevant ones to the
extractor before the analyst's queries have even been searched.

If the analysis finds nothing checkable, the head start is dropped unread. With one research
worker (`concurrency=1`, MUSE's sequential order) it runs to the end before the analysis, one
step at a time, instead of beside it.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime

from pipeline.describe import post_query
from pipeline.pages import PreparedPage, ScoringGate, SeenUrls, TierPages, fetch_and_encode
from pipeline.records import SEARCH_TIERS, Post, SearchResult, Tier
from pipeline.search.base import SearchError
from pipeline.toolkit import Toolkit


class HeadStart:
    def __init__(self, kit: Toolkit, post: Post, *, as_of: datetime, replay: bool) -> None:
        self.kit = kit
        self.query = post_query(post)
        self.as_of = as_of
        self.replay = replay
        self.seen = SeenUrls()  # shared with the research rounds that follow
        self.gate = ScoringGate()
        self.skip = threading.Event()  # set once the pages are no longer wanted
        self.tiers: dict[Tier, Future[TierPages]] = {}
        research = kit.cfg.research
        self._sequential = research.concurrency <= 1
        self._io = ThreadPoolExecutor(
            max_workers=max(1, research.search_concurrency), thread_name_prefix="head-search"
        )
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, research.concurrency), thread_name_prefix="head-page"
        )

    def start(self) -> None:
        """Search every tier and prepare what is found; returns at once unless sequential."""
        if self.query is None:
            return
        for tier in SEARCH_TIERS:
            self.tiers[tier] = self._io.submit(self._tier, self.query, tier)
        if self._sequential:
            for started in self.tiers.values():
                for page in started.result().pages:
                    page.result()

    def close(self) -> None:
        """Stop what has not started; downloads in flight finish on their own and are dropped."""
        self.skip.set()
        self._io.shutdown(wait=False, cancel_futures=True)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _tier(self, query: str, tier: Tier) -> TierPages:
        limit = self.kit.cfg.search.results_per_query
        started = TierPages()
        try:
            outcome = self.kit.search.search_tier(
                query, tier, limit=limit, sites=self.kit.publishers.domains_for(tier)
            )
        except SearchError as exc:
            started.errors.append(f"{tier.value}: {exc}")
            started.failed = True
            return started
        started.errors.extend(f"{tier.value}: {e}" for e in outcome.errors)
        fresh = self.seen.claim_new(outcome.results)
        started.results = fresh[: self.kit.cfg.research.max_pages_per_tier]
        if self._sequential:
            # One thing at a time: each page is fetched and encoded before the next.
            for result in started.results:
                done: Future[PreparedPage] = Future()
                done.set_result(self._prepare(result, tier))
                started.pages.append(done)
        else:
            started.pages = [self._pool.submit(self._prepare, r, tier) for r in started.results]
        return started

    def _prepare(self, result: SearchResult, tier: Tier) -> PreparedPage:
        return fetch_and_encode(
            self.kit,
            result,
            tier,
            as_of=self.as_of,
            replay=self.replay,
            gate=self.gate,
            skip=self.skip,
        )
