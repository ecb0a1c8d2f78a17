"""Brave Search API (web search) as a `SearchProvider`."""

from __future__ import annotations

from typing import Any

import httpx

from pipeline.config import SearchConfig
from pipeline.search.base import (
    HttpSearchProvider,
    ResultFields,
    RetryPolicy,
    as_list,
    parse_published,
    required_secret,
)

ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20


class BraveSearch(HttpSearchProvider):
    name = "brave"
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

    def __init__(
        self,
        cfg: SearchConfig,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._key = required_secret(cfg.brave_api_key, self.name, "FACTNOTE_SEARCH__BRAVE_API_KEY")
        super().__init__(timeout_s=cfg.timeout_s, client=client, retry=retry)

    def _secrets(self) -> tuple[str, ...]:
        return (self._key.get_secret_value(),)

    def _call(self, q: str, limit: int) -> Any:
        return self._request_json(
            "GET",
            ENDPOINT,
            params={"q": q, "count": min(limit, MAX_COUNT)},
            headers={
                "Accept": "application/json",
                "X-Subscription-Token": self._key.get_secret_value(),
            },
        )

    def _items(self, data: dict[str, Any]) -> list[Any]:
        web = data.get("web")
        # No `web` section is how Brave answers a query without web results.
        return as_list(web.get("results")) if isinstance(web, dict) else []
