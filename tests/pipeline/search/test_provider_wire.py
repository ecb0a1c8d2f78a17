"""What each web provider sends to its API and reads from its recorded answer
(tests/fixtures/search): the request, the cap on the limit, the site filter, the results and
their dates. A table per behaviour, a row per provider; what every provider does alike (retries,
errors, ranks) is in test_providers_common.py, the rest in the provider's own test module."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NamedTuple

import httpx
import pytest

from tests.pipeline.search.scripted import KEY, Script, answered_by, fixture_response

QUERY = "measles vaccine autism"
CDC = "https://www.cdc.gov/vaccine-safety/about/autism.html"
GUARDIAN = "https://www.theguardian.com/society/2019/mar/04/mmr-vaccine-autism-danish-study"
CDC_TITLE = "Autism and Vaccines | Vaccine Safety | CDC"
ACP = "https://www.acpjournals.org/doi/10.7326/M18-2101"
NEWS = "https://www.example-news.com/health/vaccines-autism"


def sent_to(name: str, query: str, limit: int, sites: Sequence[str] = ()) -> httpx.Request:
    """The one request provider `name` sends for a search, answered with its recorded answer."""
    script = Script([fixture_response(name)])
    answered_by(name, script).search(query, limit=limit, sites=sites)
    (request,) = script.requests
    return request


def body_of(request: httpx.Request) -> object:
    return json.loads(request.content) if request.content else None


@pytest.mark.parametrize(
    ("name", "method", "endpoint", "params", "body", "headers"),
    [
        pytest.param(
            "google",
            "GET",
            "https://www.googleapis.com/customsearch/v1",
            {"cx": "0123456789abcdef0", "q": QUERY, "num": "3"},
            None,
            {"X-Goog-Api-Key": KEY},
            id="google-get-to-customsearch-with-cx-q-num-and-key-header",
        ),
        pytest.param(
            "serper",
            "POST",
            "https://google.serper.dev/search",
            {},
            {"q": QUERY, "num": 3},
            {"X-API-KEY": KEY, "Content-Type": "application/json"},
            id="serper-json-post-with-api-key-header",
        ),
        pytest.param(
            "brave",
            "GET",
            "https://api.search.brave.com/res/v1/web/search",
            {"q": QUERY, "count": "3"},
            None,
            {"X-Subscription-Token": KEY, "Accept": "application/json"},
            id="brave-get-with-q-count-and-subscription-token",
        ),
    ],
)
def test_the_request_carries_query_and_limit_and_the_key_in_a_header_only(
    name: str,
    method: str,
    endpoint: str,
    params: dict[str, str],
    body: object,
    headers: dict[str, str],
) -> None:
    request = sent_to(name, QUERY, 3)
    assert request.method == method
    assert request.url.copy_with(query=None) == endpoint
    assert (dict(request.url.params), body_of(request)) == (params, body)
    assert {header: request.headers[header] for header in headers} == headers
    assert KEY not in str(request.url)


@pytest.mark.parametrize(
    ("name", "field", "limit", "cap"),
    [
        pytest.param("google", "num", 25, "10", id="google-num-at-ten"),
        pytest.param("brave", "count", 50, "20", id="brave-count-at-twenty"),
    ],
)
def test_the_limit_sent_is_capped_at_the_apis_maximum(
    name: str, field: str, limit: int, cap: str
) -> None:
    assert sent_to(name, "q", limit).url.params[field] == cap


@pytest.mark.parametrize(
    ("name", "sites", "query"),
    [
        pytest.param(
            "google",
            ["cdc.gov", "who.int"],
            "measles autism (site:cdc.gov OR site:who.int)",
            id="google",
        ),
        pytest.param("serper", ["cdc.gov"], "measles autism site:cdc.gov", id="serper"),
        pytest.param(
            "brave",
            ["cdc.gov", "who.int", "nhs.uk"],
            "measles autism (site:cdc.gov OR site:who.int OR site:nhs.uk)",
            id="brave",
        ),
        pytest.param(
            "searxng",
            ["cdc.gov", "who.int", "nhs.uk", "nih.gov"],
            "measles autism (site:cdc.gov OR site:who.int OR site:nhs.uk)",
            id="searxng-up-to-three-sites",
        ),
    ],
)
def test_the_site_filter_is_appended_to_the_query(name: str, sites: list[str], query: str) -> None:
    request = sent_to(name, "measles autism", 3, sites)
    body = body_of(request)
    sent = body["q"] if isinstance(body, dict) else request.url.params["q"]
    assert sent == query


class Read(NamedTuple):
    """What a provider reads from its recorded answer: the result URLs in order, one result's
    title (by position) and the start of the first result's snippet."""

    urls: list[str]
    titled: tuple[int, str]
    snippet: str


READ = {
    # Google's items in order, its tracking parameters left for canonicalisation.
    "google": Read(
        [ACP, CDC, f"{GUARDIAN}?utm_source=twitter"],
        (0, "Measles, mumps and rubella vaccine and autism: a nationwide cohort study"),
        "Mar 5, 2019 ... MMR vaccination does not increase",
    ),
    # Serper's organic results only, not its knowledge graph or "people also ask" entries.
    "serper": Read(
        [CDC, GUARDIAN, NEWS], (0, CDC_TITLE), "Studies have shown that there is no link"
    ),
    "brave": Read([GUARDIAN, CDC, NEWS], (1, CDC_TITLE), "The study followed 657,461 children"),
}


@pytest.mark.parametrize("name", list(READ))
def test_the_recorded_answer_is_read_in_order(name: str) -> None:
    urls, (position, title), snippet = READ[name]
    results = answered_by(name, Script([fixture_response(name)])).search(QUERY, limit=10)
    assert [r.url for r in results] == urls
    assert results[position].title == title
    assert results[0].snippet.startswith(snippet)
    assert [(r.provider, r.rank) for r in results] == [(name, i + 1) for i in range(len(urls))]


@pytest.mark.parametrize(
    ("name", "published"),
    [
        # The second result has only a site-specific "last updated" tag.
        pytest.param(
            "google",
            [datetime(2019, 3, 5, 22, tzinfo=UTC), None, datetime(2019, 3, 4, 22, tzinfo=UTC)],
            id="google-from-metatags-or-newsarticle",
        ),
        # The first has no date, the third "3 days ago".
        pytest.param(
            "serper",
            [None, datetime(2019, 3, 4, tzinfo=UTC), None],
            id="serper-absolute-dates-not-relative-ones",
        ),
        # The third has only "2 days ago".
        pytest.param(
            "brave",
            [datetime(2019, 3, 4, 22, tzinfo=UTC), None, None],
            id="brave-page-age-first-relative-age-ignored",
        ),
        # The first has publishedDate: null.
        pytest.param(
            "searxng",
            [None, datetime(2019, 3, 4, 22, tzinfo=UTC), datetime(2025, 11, 20, 7, 15, tzinfo=UTC)],
            id="searxng-to-utc",
        ),
    ],
)
def test_the_published_date_is_read_where_the_api_gives_one(
    name: str, published: list[datetime | None]
) -> None:
    results = answered_by(name, Script([fixture_response(name)])).search(QUERY, limit=10)
    assert [r.published for r in results[:3]] == published
