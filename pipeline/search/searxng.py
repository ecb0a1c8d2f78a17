"""A SearXNG instance (its JSON API) as a `SearchProvider`."""

from __future__ import annotations

import base64
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

FIELDS = ResultFields(
    url="url",
    title="title",
    snippet="content",
    published=lambda i: parse_published(i.get("publishedDate")),
)


class SearxngSearch(HttpSearchProvider):
    name = "searxng"
    # SearXNG passes the query to its engines; `site:` and `OR` work on the common ones
    # (Google, Bing, Brave), but a long OR group is where engines start to disagree.
    max_sites = 3

    def __init__(
        self,
        cfg: SearchConfig,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        base = (cfg.searxng_url or "").strip().rstrip("/")
        if not base:
            raise SearchError("searxng: FACTNOTE_SEARCH__SEARXNG_URL is not set")
        if not base.startswith(("http://", "https://")):
            raise SearchError("searxng: FACTNOTE_SEARCH__SEARXNG_URL must be an http(s) URL")
        super().__init__(timeout_s=cfg.timeout_s, client=client, retry=retry)
        # A private instance may sit behind basic auth given as user:password@ in the URL. The
        # credentials are moved to a header so the URL (logged by httpx) carries none.
        parts = httpx.URL(base)
        self._endpoint = str(parts.copy_with(username=None, password=None)) + "/search"
        self._password = parts.password
        self._auth: dict[str, str] = {}
        if parts.username or parts.password:
            token = base64.b64encode(f"{parts.username}:{parts.password}".encode()).decode()
            self._auth = {"Authorization": f"Basic {token}"}

    def _secrets(self) -> Sequence[str]:
        return tuple(s for s in (self._password, *self._auth.values()) if s)

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        if limit <= 0:
            return []
        q = site_query(query, sites, self.max_sites)
        # SearXNG has no result-count parameter: one page (about 10-20 results) is sliced.
        data = self._request_json(
            "GET",
            self._endpoint,
            params={"q": q, "format": "json"},
            headers={"Accept": "application/json", **self._auth},
        )
        return self._parse(data, query, limit)

    def _error_detail(self, response: httpx.Response) -> str:
        if response.status_code == 403:
            # The usual cause: the instance does not list `json` in `search.formats`.
            return " (is format=json enabled in the instance's settings.yml search.formats?)"
        return super()._error_detail(response)

    def _parse(self, data: Any, query: str, limit: int) -> list[SearchResult]:
        if not isinstance(data, dict):
            raise SearchError("searxng: unexpected response shape (not a JSON object)")
        return build_results(self.name, as_list(data.get("results")), query, limit, FIELDS)
