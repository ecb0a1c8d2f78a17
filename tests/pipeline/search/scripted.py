"""Search providers answered by scripted HTTP replies (httpx's MockTransport), on one config
whose keys are known secrets, shared by the provider tests in this folder; and a publisher
rater over a fixed table for TieredSearch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from pydantic import SecretStr

from pipeline.config import SearchConfig
from pipeline.records import Tier
from pipeline.search.base import HttpSearchProvider, RetryPolicy
from pipeline.search.brave import BraveSearch
from pipeline.search.google import GoogleSearch
from pipeline.search.searxng import SearxngSearch
from pipeline.search.serper import SerperSearch

FIXTURES = Path(__file__).parents[2] / "fixtures" / "search"
KEY = "sk-test-0123456789-secret"

CFG = SearchConfig(
    google_api_key=SecretStr(KEY),
    google_cx="0123456789abcdef0",
    serper_api_key=SecretStr(KEY),
    brave_api_key=SecretStr(KEY),
    # A private instance behind basic auth: the password is a secret like the API keys.
    searxng_url=f"http://factnote:{KEY}@searx.test:8888",
)
PROVIDERS: dict[str, tuple[Callable[..., HttpSearchProvider], str]] = {
    "google": (GoogleSearch, "google_cse.json"),
    "serper": (SerperSearch, "serper.json"),
    "brave": (BraveSearch, "brave.json"),
    "searxng": (SearxngSearch, "searxng.json"),
}

Reply = httpx.Response | Exception


class Script:
    """A MockTransport handler that answers with the scripted replies, in order."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def fixture_response(name: str) -> httpx.Response:
    """Provider `name`'s recorded answer (tests/fixtures/search), as a 200."""
    return httpx.Response(200, content=(FIXTURES / PROVIDERS[name][1]).read_bytes())


def answered_by(name: str, script: Script) -> HttpSearchProvider:
    """Provider `name` on the shared config, its HTTP answered by `script`."""
    return PROVIDERS[name][0](CFG, client=httpx.Client(transport=httpx.MockTransport(script)))


def make(
    name: str, replies: list[Reply], *, cap: float = 10.0
) -> tuple[HttpSearchProvider, Script, list[float]]:
    script = Script(replies)
    sleeps: list[float] = []
    cls = PROVIDERS[name][0]
    provider = cls(
        CFG,
        client=httpx.Client(transport=httpx.MockTransport(script)),
        retry=RetryPolicy(wait_initial_s=0.25, retry_after_cap_s=cap, sleep=sleeps.append),
    )
    return provider, script, sleeps


TABLE = {
    "acpjournals.org": Tier.HIGH,
    "cdc.gov": Tier.HIGH,
    "theguardian.com": Tier.HIGH,
    "example-news.com": Tier.MEDIUM,
}


@dataclass(frozen=True)
class Rating:
    tier: Tier
    domain: str


class DictRater:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def lookup(self, url: str) -> Rating:
        self.calls.append(url)
        host = (urlsplit(url).hostname or "").removeprefix("www.")
        return Rating(TABLE.get(host, Tier.UNKNOWN), host)
