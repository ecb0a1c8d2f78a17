"""Serper (Google results through serper.dev) as a `SearchProvider`."""

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

ENDPOINT = "https://google.serper.dev/search"
MAX_NUM = 100


class SerperSearch(HttpSearchProvider):
    name = "serper"
    max_sites = 5
    # Serper forwards the query to Google, so Google's 32-word limit applies.
    max_words = 32
    fields = ResultFields(
        url="link",
        title="title",
        snippet="snippet",
        published=lambda i: parse_published(i.get("date")),
    )

    def __init__(
        self,
        cfg: SearchConfig,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._key = required_secret(
            cfg.serper_api_key, self.name, "FACTNOTE_SEARCH__SERPER_API_KEY"
        )
        super().__init__(timeout_s=cfg.timeout_s, client=client, retry=retry)

    def _secrets(self) -> tuple[str, ...]:
        return (self._key.get_secret_value(),)

    def _call(self, q: str, limit: int) -> Any:
        return self._request_json(
            "POST",
            ENDPOINT,
            json_body={"q": q, "num": min(limit, MAX_NUM)},
            headers={"X-API-KEY": self._key.get_secret_value()},
        )

    def _items(self, data: dict[str, Any]) -> list[Any]:
        # Only `organic`: answer boxes, "people also ask" and the knowledge graph are Google's
        # summaries, not pages a reader can check.
        return as_list(data.get("organic"))
