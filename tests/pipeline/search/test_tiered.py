"""TieredSearch over the real HTTP providers, each answering from a MockTransport."""

import json

import httpx
import pytest

from pipeline.records import Tier
from pipeline.search.base import RetryPolicy, SearchError, SearchProvider
from pipeline.search.brave import BraveSearch
from pipeline.search.google import GoogleSearch
from pipeline.search.searxng import SearxngSearch
from pipeline.search.serper import SerperSearch
from pipeline.search.tiered import TieredSearch
from tests.pipeline.search.scripted import CFG, FIXTURES, DictRater, Script


def ok(fixture: str) -> httpx.Response:
    return httpx.Response(200, content=(FIXTURES / fixture).read_bytes())


def client(script: Script) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(script))


NO_WAIT = RetryPolicy(sleep=lambda _: None)


def test_keeps_only_the_wanted_tier_and_fills_tier_and_domain() -> None:
    serper = SerperSearch(CFG, client=client(Script([ok("serper.json")])))
    outcome = TieredSearch([serper], DictRater()).search_tier(
        "measles vaccine autism", Tier.HIGH, limit=3, sites=[]
    )
    assert [(r.url, r.tier, r.domain) for r in outcome.results] == [
        ("https://www.cdc.gov/vaccine-safety/about/autism.html", Tier.HIGH, "cdc.gov"),
        (
            "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study",
            Tier.HIGH,
            "theguardian.com",
        ),
    ]
    assert outcome.dropped == [
        ("https://www.example-news.com/health/vaccines-autism", "tier medium, wanted high")
    ]
    assert outcome.errors == []


def test_medium_tier_keeps_what_high_dropped() -> None:
    serper = SerperSearch(CFG, client=client(Script([ok("serper.json")])))
    outcome = TieredSearch([serper], DictRater().lookup).search_tier(
        "measles vaccine autism", Tier.MEDIUM, limit=3, sites=[]
    )
    assert [r.url for r in outcome.results] == [
        "https://www.example-news.com/health/vaccines-autism"
    ]
    assert [reason for _, reason in outcome.dropped] == ["tier high, wanted medium"] * 2


def test_merges_providers_by_rank_and_dedups_by_canonical_url() -> None:
    google = GoogleSearch(CFG, client=client(Script([ok("google_cse.json")])))
    brave = BraveSearch(CFG, client=client(Script([ok("brave.json")])))
    rater = DictRater()
    outcome = TieredSearch([google, brave], rater).search_tier(
        "measles vaccine autism", Tier.HIGH, limit=3, sites=[]
    )
    # google #1, brave #1, google #2, (brave #2 = google #2), google #3 (= brave #1, tracking
    # parameter aside), brave #3 (medium).
    assert [(r.provider, r.rank, r.url) for r in outcome.results] == [
        ("google", 1, "https://www.acpjournals.org/doi/10.7326/M18-2101"),
        (
            "brave",
            1,
            "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study",
        ),
        ("google", 2, "https://www.cdc.gov/vaccine-safety/about/autism.html"),
    ]
    assert [url for url, _ in outcome.dropped] == [
        "https://www.example-news.com/health/vaccines-autism"
    ]
    assert len(rater.calls) == 4  # each distinct page is rated once


def test_each_provider_gets_limit_and_its_own_number_of_sites() -> None:
    google_script = Script([ok("google_cse.json")])
    searx_script = Script([ok("searxng.json")])
    providers: list[SearchProvider] = [
        GoogleSearch(CFG, client=client(google_script)),
        SearxngSearch(CFG, client=client(searx_script)),
    ]
    sites = ["a.org", "b.org", "c.org", "d.org", "e.org", "f.org"]
    TieredSearch(providers, DictRater()).search_tier("q", Tier.HIGH, limit=7, sites=sites)
    google_params = google_script.requests[0].url.params
    assert google_params["num"] == "7"
    assert google_params["q"] == "q (" + " OR ".join(f"site:{s}" for s in sites[:5]) + ")"
    searx_q = searx_script.requests[0].url.params["q"]
    assert searx_q == "q (site:a.org OR site:b.org OR site:c.org)"


def test_site_filter_is_only_a_hint_results_are_still_rated() -> None:
    # The engine ignored the site: filter and returned pages from elsewhere.
    serper_script = Script([ok("serper.json")])
    serper = SerperSearch(CFG, client=client(serper_script))
    outcome = TieredSearch([serper], DictRater()).search_tier(
        "measles vaccine autism", Tier.MEDIUM, limit=3, sites=["example-news.com"]
    )
    assert json.loads(serper_script.requests[0].content)["q"].endswith("site:example-news.com")
    assert [r.domain for r in outcome.results] == ["example-news.com"]


def test_partial_failure_keeps_other_results_and_reports_the_error() -> None:
    serper = SerperSearch(CFG, client=client(Script([httpx.Response(503)] * 3)), retry=NO_WAIT)
    brave = BraveSearch(CFG, client=client(Script([ok("brave.json")])))
    outcome = TieredSearch([serper, brave], DictRater()).search_tier(
        "measles vaccine autism", Tier.HIGH, limit=3, sites=[]
    )
    assert [r.provider for r in outcome.results] == ["brave", "brave"]
    assert len(outcome.errors) == 1
    assert outcome.errors[0].startswith("serper: HTTP 503")


def test_total_failure_raises_instead_of_returning_no_results() -> None:
    serper = SerperSearch(CFG, client=client(Script([httpx.Response(401)])))
    brave = BraveSearch(CFG, client=client(Script([httpx.Response(200, content=b"<html>")])))
    with pytest.raises(SearchError) as info:
        TieredSearch([serper, brave], DictRater()).search_tier("q", Tier.HIGH, limit=3, sites=[])
    message = str(info.value)
    assert message.startswith("all search providers failed")
    assert "serper: HTTP 401" in message and "brave: response is not valid JSON" in message


def test_no_results_at_all_is_not_an_error() -> None:
    brave = BraveSearch(CFG, client=client(Script([httpx.Response(200, json={"type": "search"})])))
    outcome = TieredSearch([brave], DictRater()).search_tier("q", Tier.HIGH, limit=3, sites=[])
    assert (outcome.results, outcome.dropped, outcome.errors) == ([], [], [])


def test_needs_at_least_one_provider() -> None:
    with pytest.raises(ValueError, match="at least one"):
        TieredSearch([], DictRater())
