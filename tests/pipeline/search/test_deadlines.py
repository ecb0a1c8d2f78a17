"""Every search call ends, and one provider's hostile answer fails that provider only (issue 33).

The providers run against a real HTTP server on loopback (testing/fakes/http_server.py). The
answers are shaped after SearXNG's JSON API (docs.searxng.org, "Search API": `format=json`
returns an object whose `results` are `{url, title, content, publishedDate}` items).
"""

from __future__ import annotations

import json
import time

import pytest

from pipeline.config import SearchConfig
from pipeline.records import Tier
from pipeline.search.base import MAX_RESPONSE_BYTES, RetryPolicy, SearchError
from pipeline.search.searxng import SearxngSearch
from pipeline.search.tiered import TieredSearch
from testing.fakes.http_server import LocalHTTPServer, Route
from tests.pipeline.search.scripted import DictRater

ANSWER = {
    "results": [
        {"url": "https://www.cdc.gov/measles/", "title": "Measles", "content": "Vaccines work."}
    ]
}
# A deadline may be overrun by the helper thread's start and the caller's wake-up; the dripping
# server sends a byte every half second, so one more read (or a retry) would overrun by more.
MARGIN_S = 0.4
NO_WAIT = RetryPolicy(sleep=lambda _: None)


def searxng(server: LocalHTTPServer, base: str, timeout_s: float = 5.0) -> SearxngSearch:
    cfg = SearchConfig(searxng_url=server.url(base), timeout_s=timeout_s)
    return SearxngSearch(cfg, retry=NO_WAIT)


def json_route(body: bytes | str, **kw: object) -> Route:
    return Route(body=body, content_type="application/json", **kw)  # type: ignore[arg-type]


def test_a_dripping_provider_ends_at_its_total_deadline(http_server: LocalHTTPServer) -> None:
    # One byte every 0.5 s never trips a 1.5 s read timeout; the 1.5 s call deadline must end
    # it, and the retries must not start it again.
    http_server.add("/drip/search", json_route(json.dumps(ANSWER), chunk_size=1, chunk_delay_s=0.5))
    provider = searxng(http_server, "/drip", timeout_s=1.5)
    t0 = time.monotonic()
    with pytest.raises(
        SearchError, match=r"searxng: deadline: search call to searxng exceeded 1.5 s"
    ):
        provider.search("measles", limit=3)
    assert time.monotonic() - t0 < 1.5 + MARGIN_S
    assert http_server.hits("/drip/search") == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ('{"results": [], "n": ' + "9" * 5000 + "}", "unreadable JSON"),
    ],
    ids=["deeply-nested", "huge-number"],
)
def test_a_hostile_answer_fails_its_provider_alone(
    http_server: LocalHTTPServer, body: str, reason: str
) -> None:
    http_server.add("/bad/search", json_route(body))
    http_server.add("/good/search", json_route(json.dumps(ANSWER)))
    bad, good = searxng(http_server, "/bad"), searxng(http_server, "/good")
    outcome = TieredSearch([bad, good], DictRater()).search_tier(
        "measles", Tier.HIGH, limit=3, sites=[]
    )
    assert [r.url for r in outcome.results] == ["https://www.cdc.gov/measles/"]
    assert len(outcome.errors) == 1
    assert outcome.errors[0].startswith("searxng: response is not valid JSON")
    assert reason in outcome.errors[0]
    # Not a transient fault: asked once, not three times.
    assert http_server.hits("/bad/search") == 1


def test_an_answer_past_the_cap_is_refused_unread(http_server: LocalHTTPServer) -> None:
    http_server.add("/huge/search", json_route(b'{"results": [' + b" " * 65536, endless=True))
    with pytest.raises(SearchError, match=f"answer over {MAX_RESPONSE_BYTES:,} bytes"):
        searxng(http_server, "/huge").search("measles", limit=3)
