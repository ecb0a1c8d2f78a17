from functools import partial

import httpx
import pytest

from pipeline.search.base import SearchError
from pipeline.search.searxng import SearxngSearch
from tests.pipeline.search.scripted import CFG, Script, fixture_response


def make(script: Script, url: str = "http://searx.test:8888") -> SearxngSearch:
    cfg = CFG.model_copy(update={"searxng_url": url})
    return SearxngSearch(cfg, client=httpx.Client(transport=httpx.MockTransport(script)))


fixture = partial(fixture_response, "searxng")


def test_request_is_a_get_to_search_with_json_format() -> None:
    script = Script([fixture()])
    make(script, url="http://searx.test:8888/base/").search("measles vaccine autism", limit=3)
    (request,) = script.requests
    assert request.method == "GET"
    assert request.url.copy_with(query=None) == "http://searx.test:8888/base/search"
    assert dict(request.url.params) == {"q": "measles vaccine autism", "format": "json"}


def test_results_are_parsed_and_sliced_to_limit() -> None:
    results = make(Script([fixture()])).search("measles vaccine autism", limit=2)
    assert [r.url for r in results] == [
        "https://www.cdc.gov/vaccine-safety/about/autism.html",
        "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study",
    ]
    assert results[0].snippet.startswith("Studies have shown")
    assert results[1].title.startswith("MMR vaccine: no link to autism")


def test_403_explains_the_json_format_setting() -> None:
    with pytest.raises(SearchError, match="format=json"):
        make(Script([httpx.Response(403, text="Forbidden")])).search("q", limit=3)


def test_non_http_url_is_refused_at_construction() -> None:
    with pytest.raises(SearchError, match="http"):
        make(Script([]), url="searx.test:8888")


def test_basic_auth_in_url_moves_to_a_header() -> None:
    script = Script([fixture()])
    make(script, url="https://bot:s3cret-pw@searx.test/").search("q", limit=3)
    (request,) = script.requests
    assert str(request.url).startswith("https://searx.test/search?")
    assert "s3cret-pw" not in str(request.url)
    assert request.headers["Authorization"] == httpx.BasicAuth("bot", "s3cret-pw")._auth_header
