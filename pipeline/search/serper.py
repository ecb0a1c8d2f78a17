"""Serper (Google results through serper.dev) as a `SearchProvider`."""

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

ENDPOINT = "https://google.serper.dev/search"
MAX_NUM = 100
# Serper forwards the query to Google, so Google's 32-word limit applies.
MAX_WORDS = 32


FIELDS = ResultFields(
    url="link", title="title", snippet="snippet", published=lambda i: parse_published(i.get("date"))
)


class SerperSearch(HttpSearchProvider):
    name = "serper"
    max_sites = 5

    def __init__(
        self,
        cfg: SearchConfig,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if cfg.serper_api_key is None or not cfg.serper_api_key.get_secret_value():
            raise SearchError("serper: FACTNOTE_SEARCH__SERPER_API_KEY is not set")
        super().__init__(timeout_s=cfg.timeout_s, client=client, retry=retry)
        self._key = cfg.serper_api_key

    def _secrets(self) -> Sequence[str]:
        return (self._key.get_secret_value(),)

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        if limit <= 0:
            return []
        q = site_query(query, sites, self.max_sites, max_words=MAX_WORDS)
        data = self._request_json(
            "POST",
            ENDPOINT,
            json_body={"q": q, "num": min(limit, MAX_NUM)},
            headers={"X-API-KEY": self._key.get_secret_value()},
        )
        return self._parse(data, query, limit)

    def _parse(self, data: Any, query: str, limit: int) -> list[SearchResult]:
        if not isinstance(data, dict):
            raise SearchError("serper: unexpected response shape (not a JSON object)")
        # Only `organic`: answer boxes, "people also ask" and the knowledge graph are Google's
        # summaries, not pages a reader can check.
        return build_results(self.name, as_list(data.get("organic")), query, limit, FIELDS)
