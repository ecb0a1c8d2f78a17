"""Brave Search API (web search) as a `SearchProvider`."""

from __future__ import annotations

from typing import Any

from pipeline.search.base import (
    KeyedSearchProvider,
    ResultFields,
    as_list,
    parse_published,
)

ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20


class BraveSearch(KeyedSearchProvider):
    name = "brave"
    key_setting = "brave_api_key"
    max_sites = 5
    # Brave rejects queries over 400 characters or 50 words.
    max_words = 50
    max_chars = 400
    fields = ResultFields(
        url="url",
        title="title",
        snippet="description",
        # `page_age` is an ISO timestamp; `age` is display text, often relative.
        published=lambda i: parse_published(i.get("page_age")) or parse_published(i.get("age")),
    )

    def _call(self, q: str, limit: int) -> Any:
        return self._request_json(
            "GET",
            ENDPOINT,
            params={"q": q, "count": min(limit, MAX_COUNT)},
            headers={
                "Accept": "application/json",
                "X-Subscription-Token": self.key,
            },
        )

    def _items(self, data: dict[str, Any]) -> list[Any]:
        web = data.get("web")
        # No `web` section is how Brave answers a query without web results.
        return as_list(web.get("results")) if isinstance(web, dict) else []
