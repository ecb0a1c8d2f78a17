"""Serper (Google results through serper.dev) as a `SearchProvider`."""

from __future__ import annotations

from typing import Any

from pipeline.search.base import (
    KeyedSearchProvider,
    ResultFields,
    as_list,
    parse_published,
)

ENDPOINT = "https://google.serper.dev/search"
MAX_NUM = 100


class SerperSearch(KeyedSearchProvider):
    name = "serper"
    key_setting = "serper_api_key"
    max_sites = 5
    # Serper forwards the query to Google, so Google's 32-word limit applies.
    max_words = 32
    fields = ResultFields(
        url="link",
        title="title",
        snippet="snippet",
        published=lambda i: parse_published(i.get("date")),
    )

    def _call(self, q: str, limit: int) -> Any:
        return self._request_json(
            "POST",
            ENDPOINT,
            json_body={"q": q, "num": min(limit, MAX_NUM)},
            headers={"X-API-KEY": self.key},
        )

    def _items(self, data: dict[str, Any]) -> list[Any]:
        # Only `organic`: answer boxes, "people also ask" and the knowledge graph are Google's
        # summaries, not pages a reader can check.
        return as_list(data.get("organic"))
