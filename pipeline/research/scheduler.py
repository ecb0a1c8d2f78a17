"""The one owner of a check's research threads: the pools, the futures and the cancellation.

Research decides (`pipeline.research.plan`); this module only runs things. Two lanes of
workers, each with a pool for searches (cheap remote calls, all at once, so they never wait
behind page work) and a pool for pages and extraction calls:

* the head start's lane (`start_head`) searches the post's own words in every tier while the
  claims are analysed and prepares what it finds;
* the rounds' lane (`search_round`, `submit`) runs each round's searches, pages and extraction
  calls, and is shut down when the research ends (`end_research`), so pages nobody waits for
  any more do not hold the post; the head start's lane lasts until `close`;
* calls sent again for a stale draft (`submit_late`) have workers of their own, lasting until
  `close`: their answers may be read after the research ends (`pipeline.research.hedged_writer`), so
  they must neither queue behind page work nor be cancelled with the rounds' lane.

Each page URL is claimed once per check (`SeenUrls`): by the head start first, then by the
rounds' tiers in search order, so a page two tiers list is the higher tier's and which pages
count as early never depends on thread timing. `stop_pending` tells pages still being prepared
that the round no longer needs them (the page preparer asks before running the model).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from pipeline.config import ResearchConfig
from pipeline.records import SEARCH_TIERS, SearchResult, Tier
from pipeline.research.page_outcome import PageOutcome
from pipeline.research.page_prep import SeenUrls
from pipeline.search.base import SearchError
from pipeline.search.tiered import TierSearchOutcome
from pipeline.shared_parts import SharedParts

SearchFn = Callable[[str, Tier, int], TierSearchOutcome]
PrepareFn = Callable[[SearchResult, Tier, threading.Event], PageOutcome]
FinishFn = Callable[[PageOutcome], PageOutcome]

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class TierPages:
    """What a tier's searches found, and its pages being prepared (one future per result, in
    the same order)."""

    results: tuple[SearchResult, ...] = ()
    errors: tuple[str, ...] = ()
    failed: bool = False  # every search of the tier failed
    pages: tuple[Future[PageOutcome], ...] = ()


def finished(future: Future[T] | None) -> T | None:
    """The future's value if it is already there, without waiting (None if it failed or was
    cancelled)."""
    if future is None or not future.done() or future.cancelled() or future.exception():
        return None
    return future.result()


class _Lane:
    def __init__(self, name: str, cfg: ResearchConfig) -> None:
        self.searches = ThreadPoolExecutor(
            max_workers=max(1, cfg.search_concurrency), thread_name_prefix=f"{name}-search"
        )
        self.pages = ThreadPoolExecutor(
            max_workers=max(1, cfg.concurrency), thread_name_prefix=f"{name}-page"
        )

    def close(self) -> None:
        # Not waited for: downloads in flight end on their own and are dropped.
        self.searches.shutdown(wait=False, cancel_futures=True)
        self.pages.shutdown(wait=False, cancel_futures=True)


class ResearchScheduler:
    """Runs one check's searches, page preparation and extraction calls. Not shared between
    checks. `search(query, tier, limit)` and `prepare(result, tier, stop)` are the far side."""

    def __init__(self, search: SearchFn, prepare: PrepareFn, cfg: ResearchConfig) -> None:
        self._search = search
        self._prepare = prepare
        self.cfg = cfg
        self._seen = SeenUrls()
        self._stop = threading.Event()
        self._head_lane = _Lane("head", cfg)
        self._round_lane = _Lane("research", cfg)
        self._late = ThreadPoolExecutor(
            max_workers=max(1, cfg.max_extractions_per_tier), thread_name_prefix="late-draft"
        )
        self._head: dict[Tier, Future[TierPages]] = {}

    @property
    def sequential(self) -> bool:
        """One worker: MUSE's order, one thing at a time."""
        return self.cfg.concurrency <= 1

    def mark_seen(self, urls: Sequence[str]) -> None:
        """Pages already in hand (matched fact-checks): never fetched from the web again."""
        for url in urls:
            self._seen.add(url)

    # -- the head start -------------------------------------------------------------------------

    def start_head(self, query: str, limit: int) -> dict[Tier, Future[TierPages]]:
        """Search `query` in every tier and prepare what is found (not scored: the claims are
        not known yet). Returns at once, unless sequential: then it returns when all is done."""
        self._head = {
            tier: self._head_lane.searches.submit(self._head_tier, query, tier, limit)
            for tier in SEARCH_TIERS
        }
        if self.sequential:
            for started in self._head.values():
                for page in started.result().pages:
                    page.result()
        return dict(self._head)

    def _head_tier(self, query: str, tier: Tier, limit: int) -> TierPages:
        try:
            outcome = self._search(query, tier, limit)
        except SearchError as exc:
            return TierPages(errors=(f"{tier.value}: {exc}",), failed=True)
        fresh = self._claim(outcome.results)
        pages: list[Future[PageOutcome]] = []
        for result in fresh:
            page = self._head_lane.pages.submit(self._prepare, result, tier, self._stop)
            if self.sequential:
                page.result()  # each page fetched and encoded before the next
            pages.append(page)
        errors = tuple(f"{tier.value}: {e}" for e in outcome.errors)
        return TierPages(results=tuple(fresh), errors=errors, pages=tuple(pages))

    # -- the rounds -----------------------------------------------------------------------------

    def search_round(
        self, queries: Sequence[str], limit: int, finish: FinishFn
    ) -> dict[Tier, Future[TierPages]]:
        """Search every query in every tier at once; each tier's new pages are prepared and
        then `finish`ed (scored) on the page workers. One future per tier, High first."""
        searches = {
            tier: [self._round_lane.searches.submit(self._search, q, tier, limit) for q in queries]
            for tier in SEARCH_TIERS
        }
        # One gatherer claims the tiers' results in search order and publishes each tier as
        # soon as it is claimed, so the caller reads the head start's pages meanwhile. It
        # takes a page worker, as the pages it submits queue behind it.
        tiers: dict[Tier, Future[TierPages]] = {tier: Future() for tier in SEARCH_TIERS}
        self._round_lane.pages.submit(self._gather, searches, tiers, finish)
        return tiers

    def _gather(
        self,
        searches: dict[Tier, list[Future[TierSearchOutcome]]],
        tiers: dict[Tier, Future[TierPages]],
        finish: FinishFn,
    ) -> None:
        for started in self._head.values():
            started.exception()  # the head start claims first
        for tier in SEARCH_TIERS:
            try:
                gathered = self._gather_tier(tier, searches[tier], finish)
            except BaseException as exc:
                tiers[tier].set_exception(exc)
                continue
            tiers[tier].set_result(gathered)

    def _gather_tier(
        self, tier: Tier, searches: list[Future[TierSearchOutcome]], finish: FinishFn
    ) -> TierPages:
        results: list[SearchResult] = []
        errors: list[str] = []
        failed = True  # until one search of the tier answers
        for search in searches:
            try:
                outcome = search.result()
            except SearchError as exc:
                errors.append(f"{tier.value}: {exc}")
                continue
            failed = False
            results.extend(outcome.results)
            errors.extend(f"{tier.value}: {e}" for e in outcome.errors)
        fresh = self._claim(results)
        pages = tuple(self._round_lane.pages.submit(self._page, r, tier, finish) for r in fresh)
        return TierPages(tuple(fresh), tuple(errors), failed, pages)

    def _page(self, result: SearchResult, tier: Tier, finish: FinishFn) -> PageOutcome:
        return finish(self._prepare(result, tier, self._stop))

    def submit(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Round work (an extraction call) on the rounds' page workers."""
        return self._round_lane.pages.submit(fn, *args, **kwargs)

    def submit_late(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """An extraction call sent again for a stale draft's place (see the module doc)."""
        return self._late.submit(fn, *args, **kwargs)

    def _claim(self, results: Sequence[SearchResult]) -> list[SearchResult]:
        return self._seen.claim_new(list(results))[: self.cfg.max_pages_per_tier]

    # -- cancellation ---------------------------------------------------------------------------

    def stop_pending(self) -> None:
        """The round has met its stop rule: pages not encoded yet are not wanted."""
        self._stop.set()

    def resume(self) -> None:
        """A new round wants its pages again."""
        self._stop.clear()

    def end_research(self) -> None:
        """Stop what the rounds have not started; the head start's lane stays until `close`."""
        self._stop.set()
        self._round_lane.close()

    def close(self) -> None:
        self._stop.set()
        self._round_lane.close()
        self._head_lane.close()
        self._late.shutdown(wait=False, cancel_futures=True)


def tiered_search(shared: SharedParts) -> SearchFn:
    """The shared search, one tier at a time, restricted to the tier's publishers."""

    def search(query: str, tier: Tier, limit: int) -> TierSearchOutcome:
        return shared.search.search_tier(
            query, tier, limit=limit, sites=shared.publishers.domains_for(tier)
        )

    return search
