"""The research scheduler: who claims a page, which pages are prepared, and what cancellation
reaches. The far side is two plain callables (a tier search and a page preparer) standing in
for `TieredSearch.search_tier` and `PagePreparer.prepare`, so no web and no embedding model."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import CancelledError, Future

import pytest

from pipeline.config import ResearchConfig
from pipeline.records import SearchResult, Tier
from pipeline.research.page_outcome import PageOutcome, PageReason
from pipeline.research.scheduler import ResearchScheduler, TierPages, finished
from pipeline.search.base import SearchError
from pipeline.search.tiered import TierSearchOutcome

H, M, L = Tier.HIGH, Tier.MEDIUM, Tier.LOW


def result(url: str, query: str = "q") -> SearchResult:
    return SearchResult(url=url, provider="fake", query=query, rank=1)


class FakeSearch:
    """Answers each (query, tier) from a table; raises `SearchError` for what is marked down.
    Shaped after `TieredSearch.search_tier`: results plus one error per failed provider."""

    def __init__(
        self,
        table: dict[tuple[str, Tier], list[str]],
        *,
        down: frozenset[Tier] = frozenset(),
        provider_errors: dict[Tier, list[str]] | None = None,
        hold: dict[str, threading.Event] | None = None,
    ) -> None:
        self.table = table
        self.down = down
        self.provider_errors = provider_errors or {}
        self.hold = hold or {}
        self.calls: list[tuple[str, Tier, int]] = []

    def __call__(self, query: str, tier: Tier, limit: int) -> TierSearchOutcome:
        self.calls.append((query, tier, limit))
        if query in self.hold:
            assert self.hold[query].wait(5)
        if tier in self.down:
            raise SearchError(f"HTTP 503 for {query!r}")
        urls = self.table.get((query, tier), [])[:limit]
        return TierSearchOutcome(
            results=[result(u, query) for u in urls], errors=self.provider_errors.get(tier, [])
        )


class FakePages:
    """Prepares a page by reporting it ready, or not needed once the stop event is set; pages
    listed in `hold` wait until released (a slow download)."""

    def __init__(self, hold: dict[str, threading.Event] | None = None) -> None:
        self.hold = hold or {}
        self.prepared: list[str] = []
        self.started: dict[str, threading.Event] = {u: threading.Event() for u in self.hold}

    def __call__(self, found: SearchResult, tier: Tier, stop: threading.Event) -> PageOutcome:
        if found.url in self.hold:
            self.started[found.url].set()
            assert self.hold[found.url].wait(5)
        self.prepared.append(found.url)
        reason = PageReason.NOT_NEEDED if stop.is_set() else PageReason.READY
        return PageOutcome(found, tier, reason)


def keep(page: PageOutcome) -> PageOutcome:
    return page if page.reason is not PageReason.READY else page.but(PageReason.KEPT)


@pytest.fixture
def close_after() -> Iterator[list[ResearchScheduler]]:
    made: list[ResearchScheduler] = []
    yield made
    for scheduler in made:
        scheduler.close()


def make(
    search: FakeSearch,
    pages: FakePages,
    made: list[ResearchScheduler],
    **cfg: int,
) -> ResearchScheduler:
    scheduler = ResearchScheduler(search, pages, ResearchConfig(**cfg))
    made.append(scheduler)
    return scheduler


def urls(tier_pages: TierPages) -> list[str]:
    return [r.url for r in tier_pages.results]


def test_a_page_two_tiers_list_is_claimed_by_the_higher_tier(
    close_after: list[ResearchScheduler],
) -> None:
    search = FakeSearch(
        {("q", H): ["https://a.example/1"], ("q", M): ["https://a.example/1", "https://b.example"]}
    )
    tiers = make(search, FakePages(), close_after).search_round(["q"], 3, keep)
    assert urls(tiers[H].result()) == ["https://a.example/1"]
    assert urls(tiers[M].result()) == ["https://b.example"]
    assert urls(tiers[L].result()) == []


def test_round_pages_are_prepared_then_finished_in_result_order(
    close_after: list[ResearchScheduler],
) -> None:
    search = FakeSearch({("q", H): ["https://a.example/1", "https://a.example/2"]})
    high = make(search, FakePages(), close_after).search_round(["q"], 3, keep)[H].result()
    outcomes = [page.result() for page in high.pages]
    assert [p.result.url for p in outcomes] == urls(high)
    assert [p.reason for p in outcomes] == [PageReason.KEPT, PageReason.KEPT]
    assert {tier for _q, tier, _limit in search.calls} == {H, M, L}
    assert {limit for *_, limit in search.calls} == {3}


def test_head_start_claims_its_pages_before_the_round_even_when_its_search_is_slower(
    close_after: list[ResearchScheduler],
) -> None:
    shared = "https://a.example/shared"
    release = threading.Event()
    search = FakeSearch(
        {("post words", H): [shared], ("analyst", H): [shared, "https://a.example/other"]},
        hold={"post words": release},
    )
    scheduler = make(search, FakePages(), close_after)
    head = scheduler.start_head("post words", 3)
    late = scheduler.search_round(["analyst"], 3, keep)
    release.set()  # the round's searches answered first; the head start still claims first
    assert urls(head[H].result()) == [shared]
    assert urls(late[H].result()) == ["https://a.example/other"]


def test_head_start_pages_are_prepared_but_not_finished(
    close_after: list[ResearchScheduler],
) -> None:
    search = FakeSearch({("post words", M): ["https://m.example/1"]})
    head = make(search, FakePages(), close_after).start_head("post words", 3)
    pages = [page.result() for page in head[M].result().pages]
    assert [p.reason for p in pages] == [PageReason.READY]  # scored later, against the claims


def test_pages_in_hand_are_never_claimed_again(close_after: list[ResearchScheduler]) -> None:
    search = FakeSearch({("q", H): ["https://fc.example/check?utm_source=x", "https://a.example"]})
    pages = FakePages()
    scheduler = make(search, pages, close_after)
    scheduler.mark_seen(["https://fc.example/check"])
    high = scheduler.search_round(["q"], 3, keep)[H].result()
    assert urls(high) == ["https://a.example"]
    for page in high.pages:
        page.result()
    assert pages.prepared == ["https://a.example"]


def test_each_tier_keeps_at_most_max_pages_per_tier_and_claims_the_rest(
    close_after: list[ResearchScheduler],
) -> None:
    found = [f"https://a.example/{i}" for i in range(5)]
    search = FakeSearch({("q1", H): found[:3], ("q2", H): found, ("q2", M): found[4:]})
    tiers = make(search, FakePages(), close_after, max_pages_per_tier=2).search_round(
        ["q1", "q2"], 10, keep
    )
    assert urls(tiers[H].result()) == found[:2]
    # Found by High's searches beyond its cap: still High's, so Medium does not fetch it.
    assert urls(tiers[M].result()) == []


def test_a_tier_whose_every_search_fails_is_failed_with_every_error(
    close_after: list[ResearchScheduler],
) -> None:
    search = FakeSearch(
        {("q", H): ["https://a.example"]},
        down=frozenset({L}),
        provider_errors={H: ["brave: timeout"]},
    )
    tiers = make(search, FakePages(), close_after).search_round(["q", "r"], 3, keep)
    low, high = tiers[L].result(), tiers[H].result()
    assert low.failed and len(low.errors) == 2
    assert all(e.startswith("low: ") and "503" in e for e in low.errors)
    assert not high.failed and high.errors == ("high: brave: timeout", "high: brave: timeout")


def test_a_failed_head_start_tier_is_reported_not_raised(
    close_after: list[ResearchScheduler],
) -> None:
    search = FakeSearch({}, down=frozenset({H}))
    head = make(search, FakePages(), close_after).start_head("post words", 3)
    assert head[H].result().failed
    assert head[H].result().errors == ("high: HTTP 503 for 'post words'",)
    assert not head[M].result().failed


def test_stop_pending_reaches_pages_still_being_prepared_and_resume_undoes_it(
    close_after: list[ResearchScheduler],
) -> None:
    slow = "https://slow.example"
    release = threading.Event()
    search = FakeSearch({("q", H): [slow], ("r", H): ["https://next.example"]})
    pages = FakePages(hold={slow: release})
    scheduler = make(search, pages, close_after)
    first = scheduler.search_round(["q"], 3, keep)[H].result()
    assert pages.started[slow].wait(5)
    scheduler.stop_pending()
    release.set()
    assert first.pages[0].result().reason is PageReason.NOT_NEEDED
    scheduler.resume()
    second = scheduler.search_round(["r"], 3, keep)[H].result()
    assert second.pages[0].result().reason is PageReason.KEPT


def test_sequential_head_start_has_prepared_everything_when_it_returns(
    close_after: list[ResearchScheduler],
) -> None:
    search = FakeSearch(
        {("w", H): ["https://h.example/1", "https://h.example/2"], ("w", L): ["https://l.example"]}
    )
    pages = FakePages()
    head = make(search, pages, close_after, concurrency=1, search_concurrency=1).start_head("w", 3)
    assert all(tier.done() for tier in head.values())
    assert all(page.done() for tier in head.values() for page in tier.result().pages)
    assert sorted(pages.prepared) == [
        "https://h.example/1",
        "https://h.example/2",
        "https://l.example",
    ]


def test_ending_the_research_cancels_round_work_not_started(
    close_after: list[ResearchScheduler],
) -> None:
    blocker = "https://a.example/slow"
    release = threading.Event()
    search = FakeSearch({("q", H): [blocker, "https://a.example/2", "https://a.example/3"]})
    pages = FakePages(hold={blocker: release})
    scheduler = make(search, pages, close_after, concurrency=1)
    high = scheduler.search_round(["q"], 3, keep)[H].result()
    assert pages.started[blocker].wait(5)
    queued = scheduler.submit(lambda: "extraction")
    scheduler.end_research()
    release.set()
    # The page in progress finishes (and is told it is not needed); queued work never starts.
    assert high.pages[0].result().reason is PageReason.NOT_NEEDED
    assert all(later.cancelled() for later in high.pages[1:]) and queued.cancelled()
    with pytest.raises(CancelledError):
        queued.result()
    assert pages.prepared == [blocker]


def test_finished_gives_a_value_only_when_it_is_already_there() -> None:
    waiting: Future[int] = Future()
    assert finished(waiting) is None and finished(None) is None
    waiting.set_result(3)
    assert finished(waiting) == 3
    failed: Future[int] = Future()
    failed.set_exception(SearchError("down"))
    cancelled: Future[int] = Future()
    cancelled.cancel()
    assert finished(failed) is None and finished(cancelled) is None
