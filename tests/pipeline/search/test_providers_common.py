"""Behaviour every web provider shares: retries, error mapping, secrets kept out of messages."""

import json
from collections.abc import Callable

import httpx
import pytest
from pydantic import SecretStr

from pipeline.config import SearchConfig
from pipeline.search.base import HttpSearchProvider, SearchError
from pipeline.search.brave import BraveSearch
from pipeline.search.google import GoogleSearch
from pipeline.search.searxng import SearxngSearch
from pipeline.search.serper import SerperSearch
from tests.pipeline.search.scripted import (
    CFG,
    KEY,
    PROVIDERS,
    Script,
    fixture_response,
    make,
)

all_providers = pytest.mark.parametrize("name", list(PROVIDERS))


def assert_no_secret(text: str) -> None:
    assert KEY not in text
    assert "secret" not in text


@all_providers
def test_429_then_success_is_retried(name: str) -> None:
    provider, script, sleeps = make(name, [httpx.Response(429), fixture_response(name)])
    results = provider.search("measles vaccine autism", limit=3)
    assert len(results) == 3
    assert len(script.requests) == 2
    assert sleeps == [0.25]


@all_providers
def test_retry_after_is_honoured_and_capped(name: str) -> None:
    provider, _, sleeps = make(
        name,
        [
            httpx.Response(429, headers={"Retry-After": "2"}),
            httpx.Response(503, headers={"Retry-After": "120"}),
            fixture_response(name),
        ],
        cap=5.0,
    )
    provider.search("measles vaccine autism", limit=3)
    assert sleeps == [2.0, 5.0]


@all_providers
def test_transient_connection_errors_are_retried(name: str) -> None:
    provider, script, _ = make(
        name,
        [httpx.ConnectTimeout("timed out"), httpx.ConnectError("refused"), fixture_response(name)],
    )
    assert len(provider.search("measles vaccine autism", limit=3)) == 3
    assert len(script.requests) == 3


@all_providers
def test_503_three_times_raises_search_error(name: str) -> None:
    provider, script, sleeps = make(name, [httpx.Response(503)] * 3)
    with pytest.raises(SearchError) as info:
        provider.search("measles vaccine autism", limit=3)
    message = str(info.value)
    assert message.startswith(f"{name}:")
    assert "503" in message and "3 attempts" in message
    assert len(script.requests) == 3
    assert len(sleeps) == 2  # no wait after the last attempt


@all_providers
def test_connection_failure_after_retries_names_cause_without_key(name: str) -> None:
    provider, _, _ = make(name, [httpx.ConnectError(f"refused for key={KEY}")] * 3)
    with pytest.raises(SearchError) as info:
        provider.search("measles vaccine autism", limit=3)
    assert "ConnectError" in str(info.value)
    assert_no_secret(str(info.value))
    # The httpx error (whose request holds the URL and headers) is not chained for display.
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


@all_providers
def test_401_fails_at_once_without_the_key_in_the_message(name: str) -> None:
    body = json.dumps({"error": {"code": 401, "message": f"API key {KEY} not valid"}})
    provider, script, sleeps = make(name, [httpx.Response(401, content=body.encode())])
    with pytest.raises(SearchError) as info:
        provider.search("measles vaccine autism", limit=3)
    assert len(script.requests) == 1
    assert sleeps == []
    assert "401" in str(info.value)
    assert str(info.value).startswith(f"{name}:")
    assert_no_secret(str(info.value))


@all_providers
def test_malformed_json_raises_search_error(name: str) -> None:
    provider, _, _ = make(name, [httpx.Response(200, content=b'{"items": [ {"link": ')])
    with pytest.raises(SearchError, match=f"^{name}: response is not valid JSON"):
        provider.search("measles vaccine autism", limit=3)


@all_providers
def test_json_that_is_not_an_object_raises_search_error(name: str) -> None:
    provider, _, _ = make(name, [httpx.Response(200, json=["not", "an", "object"])])
    with pytest.raises(SearchError, match="unexpected response shape"):
        provider.search("measles vaccine autism", limit=3)


@all_providers
def test_empty_response_object_means_no_results(name: str) -> None:
    provider, _, _ = make(name, [httpx.Response(200, json={})])
    assert provider.search("a query nothing matches", limit=3) == []


@all_providers
def test_limit_caps_results_and_ranks_start_at_one(name: str) -> None:
    provider, _, _ = make(name, [fixture_response(name)])
    results = provider.search("measles vaccine autism", limit=2)
    assert [r.rank for r in results] == [1, 2]
    assert all(r.provider == name and r.query == "measles vaccine autism" for r in results)


@all_providers
def test_zero_limit_sends_no_request(name: str) -> None:
    provider, script, _ = make(name, [])
    assert provider.search("measles vaccine autism", limit=0) == []
    assert script.requests == []


@all_providers
def test_items_without_http_link_are_skipped(name: str) -> None:
    link_key = {"google": "link", "serper": "link", "brave": "url", "searxng": "url"}[name]
    items = [{link_key: "javascript:alert(1)", "title": "x"}, {link_key: "https://a.org/p"}]
    bodies: dict[str, dict[str, object]] = {
        "google": {"items": items},
        "serper": {"organic": items},
        "brave": {"web": {"results": items}},
        "searxng": {"results": items},
    }
    body = bodies[name]
    provider, _, _ = make(name, [httpx.Response(200, json=body)])
    results = provider.search("q", limit=5)
    assert [(r.url, r.rank) for r in results] == [("https://a.org/p", 1)]


Factory = Callable[[SearchConfig], HttpSearchProvider]


@pytest.mark.parametrize(
    ("cls", "cfg", "env"),
    [
        (GoogleSearch, CFG.model_copy(update={"google_api_key": None}), "GOOGLE_API_KEY"),
        (GoogleSearch, CFG.model_copy(update={"google_cx": None}), "GOOGLE_CX"),
        (SerperSearch, CFG.model_copy(update={"serper_api_key": SecretStr("")}), "SERPER_API_KEY"),
        (BraveSearch, CFG.model_copy(update={"brave_api_key": None}), "BRAVE_API_KEY"),
        (SearxngSearch, CFG.model_copy(update={"searxng_url": None}), "SEARXNG_URL"),
    ],
)
def test_missing_key_or_url_fails_at_construction(
    cls: Factory, cfg: SearchConfig, env: str
) -> None:
    with pytest.raises(SearchError, match=f"FACTNOTE_SEARCH__{env} is not set"):
        cls(cfg)


def test_close_leaves_a_passed_in_client_open() -> None:
    client = httpx.Client(transport=httpx.MockTransport(Script([])))
    provider = SerperSearch(CFG, client=client)
    provider.close()
    assert not client.is_closed
    own = SerperSearch(CFG)
    own.close()
    assert own._client.is_closed
