"""Reverse image search through SerpApi's Google Lens engine, on a recorded answer.

The fixture `tests/fixtures/images/google_lens.json` is shaped after SerpApi's documentation:
https://serpapi.com/google-lens-api (request: `engine=google_lens`, `url`, `type`; results
`visual_matches`, `search_metadata.status`) and https://serpapi.com/google-lens-exact-matches-api
(`exact_matches[]`: position, title, source, source_icon, link, thumbnail, date such as
"2 years ago", actual_image_width/height). Its pages are fictional.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from pipeline.config import CredibilityConfig, ImagesConfig
from pipeline.images.reverse_search import LensSearch, build_reverse_search, provenance_note, vetted
from pipeline.search.base import RetryPolicy, SearchError
from pipeline.sources.credibility import PublisherTable

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "images" / "google_lens.json"
KEY = "serp-test-0123456789-secret"
CFG = ImagesConfig(serpapi_api_key=SecretStr(KEY))
AS_OF = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
PUBLISHERS = PublisherTable.from_config(
    CredibilityConfig(overrides={"paper.example": "medium", "factdesk.example": "high"})
)


def lens(*replies: httpx.Response, seen: list[httpx.Request] | None = None) -> LensSearch:
    queue = list(replies)

    def answer(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return queue.pop(0)

    client = httpx.Client(transport=httpx.MockTransport(answer))
    return LensSearch(CFG, client=client, retry=RetryPolicy(attempts=1, sleep=lambda _s: None))


def recorded() -> httpx.Response:
    return httpx.Response(200, content=FIXTURE.read_bytes())


def test_the_request_is_a_lens_search_for_the_image_url() -> None:
    seen: list[httpx.Request] = []
    lens(recorded(), seen=seen).find("https://cdn.example/palace.jpg", limit=10)
    [request] = seen
    assert request.method == "GET"
    assert str(request.url).startswith("https://serpapi.com/search.json?")
    assert dict(request.url.params) == {
        "engine": "google_lens",
        "url": "https://cdn.example/palace.jpg",
        "type": "exact_matches",
        "api_key": KEY,
    }


def test_exact_then_visual_matches_are_read_once_each_with_absolute_dates_only() -> None:
    found = lens(recorded()).find("https://cdn.example/palace.jpg", limit=10)
    assert [(m.url, m.kind) for m in found] == [
        ("https://factdesk.example/palace-photo-2019", "exact"),
        ("https://paper.example/2019/02/lantern-festival", "exact"),
        ("https://www.pinterest.com/pin/123456789/", "exact"),
        ("https://viral.example/palace-burns", "exact"),
        ("https://photos.example/old-palace-night", "visual"),
    ]  # the javascript: link is skipped, the repeated visual match too
    assert found[1].published == datetime(2019, 2, 19, tzinfo=UTC)
    assert found[2].published is None  # "2 years ago"
    assert len(lens(recorded()).find("https://cdn.example/palace.jpg", limit=2)) == 2


def test_matches_get_tiers_lose_pages_dated_after_as_of_and_the_earliest_comes_first() -> None:
    found = lens(recorded()).find("https://cdn.example/palace.jpg", limit=10)
    kept = vetted(found, PUBLISHERS, AS_OF)
    assert "https://viral.example/palace-burns" not in [m.url for m in kept]  # Dec 1, 2026
    assert [m.url for m in kept][:2] == [
        "https://paper.example/2019/02/lantern-festival",
        "https://factdesk.example/palace-photo-2019",
    ]
    assert (kept[0].domain, kept[0].tier) == ("paper.example", "medium")
    assert kept[1].tier == "high"
    note = provenance_note("post image 1", kept)
    assert note is not None
    assert note.startswith("post image 1 appeared on 2019-02-19 on paper.example")


def test_an_error_answer_is_a_search_error_without_the_key() -> None:
    refused = httpx.Response(401, json={"error": f"Invalid API key {KEY}"})
    with pytest.raises(SearchError) as caught:
        lens(refused).find("https://cdn.example/palace.jpg", limit=10)
    assert "HTTP 401" in str(caught.value) and KEY not in str(caught.value)


def test_without_a_key_or_when_off_there_is_no_provider() -> None:
    assert build_reverse_search(ImagesConfig()) is None
    assert build_reverse_search(CFG.model_copy(update={"reverse_search": "none"})) is None
    provider = build_reverse_search(CFG)
    assert isinstance(provider, LensSearch)
    provider.close()
