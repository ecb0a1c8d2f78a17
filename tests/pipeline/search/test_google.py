import json
from datetime import UTC, datetime
from functools import partial

import httpx
import pytest

from tests.pipeline.search.test_providers_common import KEY, Script, answered_by, fixture_response

make = partial(answered_by, "google")
fixture = partial(fixture_response, "google")


def test_request_is_a_get_to_customsearch_with_cx_q_num_and_key_header() -> None:
    script = Script([fixture()])
    make(script).search("measles vaccine autism", limit=3)
    (request,) = script.requests
    assert request.method == "GET"
    assert request.url.copy_with(query=None) == "https://www.googleapis.com/customsearch/v1"
    assert dict(request.url.params) == {
        "cx": "0123456789abcdef0",
        "q": "measles vaccine autism",
        "num": "3",
    }
    assert request.headers["X-Goog-Api-Key"] == KEY
    # The key travels in the header only, never in the URL.
    assert KEY not in str(request.url)


def test_num_is_capped_at_ten() -> None:
    script = Script([fixture()])
    make(script).search("q", limit=25)
    assert script.requests[0].url.params["num"] == "10"


def test_fixture_items_are_parsed_in_order() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=10)
    assert [r.url for r in results] == [
        "https://www.acpjournals.org/doi/10.7326/M18-2101",
        "https://www.cdc.gov/vaccine-safety/about/autism.html",
        "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study?utm_source=twitter",
    ]
    first = results[0]
    assert first.title.startswith("Measles, mumps and rubella vaccine and autism")
    assert first.snippet.startswith("Mar 5, 2019 ... MMR vaccination does not increase")
    assert first.provider == "google"
    assert [r.rank for r in results] == [1, 2, 3]


def test_published_comes_from_metatags_or_newsarticle() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=10)
    assert results[0].published == datetime(2019, 3, 5, 22, tzinfo=UTC)
    assert results[1].published is None  # only a site-specific "last updated" tag
    assert results[2].published == datetime(2019, 3, 4, 22, tzinfo=UTC)


def test_site_filter_is_appended_to_q() -> None:
    script = Script([fixture()])
    make(script).search("measles autism", limit=3, sites=["cdc.gov", "who.int"])
    assert script.requests[0].url.params["q"] == "measles autism (site:cdc.gov OR site:who.int)"


def test_site_filter_keeps_within_googles_32_words() -> None:
    query = " ".join(f"word{i}" for i in range(26))
    script = Script([fixture()])
    make(script).search(query, limit=3, sites=["a.org", "b.org", "c.org", "d.org", "e.org"])
    q = script.requests[0].url.params["q"]
    assert len(q.split()) <= 32
    assert q == query + " (site:a.org OR site:b.org OR site:c.org)"


@pytest.mark.parametrize("status", [400, 403])
def test_client_errors_show_the_api_explanation(status: int) -> None:
    body = {"error": {"code": status, "message": "Request contains an invalid argument."}}
    script = Script([httpx.Response(status, content=json.dumps(body).encode())])
    with pytest.raises(Exception, match="invalid argument") as info:
        make(script).search("q", limit=3)
    assert len(script.requests) == 1
    assert f"HTTP {status}" in str(info.value)
