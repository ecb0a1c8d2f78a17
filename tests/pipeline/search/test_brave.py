from datetime import UTC, datetime
from functools import partial

import httpx

from tests.pipeline.search.test_providers_common import KEY, Script, answered_by, fixture_response

make = partial(answered_by, "brave")
fixture = partial(fixture_response, "brave")


def test_request_is_a_get_with_q_count_and_subscription_token() -> None:
    script = Script([fixture()])
    make(script).search("measles vaccine autism", limit=3)
    (request,) = script.requests
    assert request.method == "GET"
    assert request.url.copy_with(query=None) == "https://api.search.brave.com/res/v1/web/search"
    assert dict(request.url.params) == {"q": "measles vaccine autism", "count": "3"}
    assert request.headers["X-Subscription-Token"] == KEY
    assert request.headers["Accept"] == "application/json"
    assert KEY not in str(request.url)


def test_count_is_capped_at_twenty() -> None:
    script = Script([fixture()])
    make(script).search("q", limit=50)
    assert script.requests[0].url.params["count"] == "20"


def test_web_results_are_parsed() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=10)
    assert [r.url for r in results] == [
        "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study",
        "https://www.cdc.gov/vaccine-safety/about/autism.html",
        "https://www.example-news.com/health/vaccines-autism",
    ]
    assert results[1].title == "Autism and Vaccines | Vaccine Safety | CDC"
    assert results[0].snippet.startswith("The study followed 657,461 children")
    assert all(r.provider == "brave" for r in results)


def test_published_prefers_page_age_and_ignores_relative_age() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=10)
    assert results[0].published == datetime(2019, 3, 4, 22, tzinfo=UTC)
    assert results[1].published is None
    assert results[2].published is None  # only "2 days ago"


def test_absolute_age_is_used_when_page_age_is_missing() -> None:
    body = {"web": {"results": [{"url": "https://a.org/x", "age": "March 4, 2019"}]}}
    results = make(Script([httpx.Response(200, json=body)])).search("q", limit=3)
    assert results[0].published == datetime(2019, 3, 4, tzinfo=UTC)


def test_site_filter_is_appended_to_q() -> None:
    script = Script([fixture()])
    make(script).search("measles autism", limit=3, sites=["cdc.gov", "who.int", "nhs.uk"])
    assert (
        script.requests[0].url.params["q"]
        == "measles autism (site:cdc.gov OR site:who.int OR site:nhs.uk)"
    )
