"""Serper (Google results through serper.dev) as a `SearchProvider`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from pipeline.config import SearchConfig
from pipeline.records import SearchResult
from pipeline.search.base import (
    HttpSearchProvider,
    RetryPolicy,
    SearchError,
    as_list,
    as_str,
    parse_published,
    site_query,
)

ENDPOINT = "https://google.serper.dev/search"
MAX_NUM = 100
# Serper forwards the query to Google, so Google's 32-word limit applies.
MAX_WORDS = 32


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
        results: list[SearchResult] = []
        # Only `organic`: answer boxes, "people also ask" and the knowledge graph are Google's
        # summaries, not pages a reader can check.
        for item in as_list(data.get("organic")):
            if not isinstance(item, dict):
                continue
            url = as_str(item.get("link"))
            if not url.startswith(("http://", "https://")):
                continue
            results.append(
                SearchResult(
                    url=url,
                    title=as_str(item.get("title")),
                    snippet=as_str(item.get("snippet")),
                    provider=self.name,
                    query=query,
                    rank=len(results) + 1,
                    published=parse_published(item.get("date")),
                )
            )
            if len(results) >= limit:
                break
        return results
