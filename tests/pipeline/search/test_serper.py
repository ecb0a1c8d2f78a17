import json
from datetime import UTC, datetime
from functools import partial

from tests.pipeline.search.test_providers_common import KEY, Script, answered_by, fixture_response

make = partial(answered_by, "serper")
fixture = partial(fixture_response, "serper")


def test_request_is_a_json_post_with_api_key_header() -> None:
    script = Script([fixture()])
    make(script).search("measles vaccine autism", limit=3)
    (request,) = script.requests
    assert request.method == "POST"
    assert str(request.url) == "https://google.serper.dev/search"
    assert json.loads(request.content) == {"q": "measles vaccine autism", "num": 3}
    assert request.headers["X-API-KEY"] == KEY
    assert request.headers["Content-Type"] == "application/json"


def test_only_organic_results_are_parsed() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=10)
    assert [r.url for r in results] == [
        "https://www.cdc.gov/vaccine-safety/about/autism.html",
        "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study",
        "https://www.example-news.com/health/vaccines-autism",
    ]
    assert results[0].title == "Autism and Vaccines | Vaccine Safety | CDC"
    assert results[0].snippet.startswith("Studies have shown that there is no link")
    assert all(r.provider == "serper" for r in results)


def test_published_parses_absolute_dates_and_ignores_relative_ones() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=10)
    assert results[0].published is None  # no date given
    assert results[1].published == datetime(2019, 3, 4, tzinfo=UTC)
    assert results[2].published is None  # "3 days ago"


def test_site_filter_is_appended_to_q() -> None:
    script = Script([fixture()])
    make(script).search("measles autism", limit=3, sites=["cdc.gov"])
    assert json.loads(script.requests[0].content)["q"] == "measles autism site:cdc.gov"
