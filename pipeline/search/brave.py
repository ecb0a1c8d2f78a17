"""Brave Search API (web search) as a `SearchProvider`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from pipeline.config import SearchConfig
from pipeline.records import SearchResult
from pipeline.search.base import (
    HttpSearchProvider,
    ResultFields,
    RetryPolicy,
    SearchError,
    as_list,
    build_results,
    parse_published,
    site_query,
)

ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20
# Brave rejects queries over 400 characters or 50 words.
MAX_WORDS = 50
MAX_CHARS = 400


FIELDS = ResultFields(
    url="url",
    title="title",
    snippet="description",
    # `page_age` is an ISO timestamp; `age` is display text, often relative.
    published=lambda i: parse_published(i.get("page_age")) or parse_published(i.get("age")),
)


class BraveSearch(HttpSearchProvider):
    name = "brave"
    max_sites = 5

    def __init__(
        self,
        cfg: SearchConfig,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if cfg.brave_api_key is None or not cfg.brave_api_key.get_secret_value():
            raise SearchError("brave: FACTNOTE_SEARCH__BRAVE_API_KEY is not set")
        super().__init__(timeout_s=cfg.timeout_s, client=client, retry=retry)
        self._key = cfg.brave_api_key

    def _secrets(self) -> Sequence[str]:
        return (self._key.get_secret_value(),)

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        if limit <= 0:
            return []
        q = site_query(query, sites, self.max_sites, max_words=MAX_WORDS)
        if len(q) > MAX_CHARS:
            q = query.strip()[:MAX_CHARS]
        data = self._request_json(
            "GET",
            ENDPOINT,
            params={"q": q, "count": min(limit, MAX_COUNT)},
            headers={
                "Accept": "application/json",
                "X-Subscription-Token": self._key.get_secret_value(),
            },
        )
        return self._parse(data, query, limit)

    def _parse(self, data: Any, query: str, limit: int) -> list[SearchResult]:
        if not isinstance(data, dict):
            raise SearchError("brave: unexpected response shape (not a JSON object)")
        web = data.get("web")
        # No `web` section is how Brave answers a query without web results.
        items = as_list(web.get("results")) if isinstance(web, dict) else []
        return build_results(self.name, items, query, limit, FIELDS)
