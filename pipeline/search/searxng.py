"""A SearXNG instance (its JSON API) as a `SearchProvider`."""

from __future__ import annotations

import base64
from typing import Any

import httpx

from pipeline.config import SearchConfig
from pipeline.search.base import (
    ConfiguredSearchProvider,
    ResultFields,
    SearchError,
    as_list,
    parse_published,
)


class SearxngSearch(ConfiguredSearchProvider):
    name = "searxng"
    # SearXNG passes the query to its engines; `site:` and `OR` work on the common ones
    # (Google, Bing, Brave), but a long OR group is where engines start to disagree.
    max_sites = 3
    fields = ResultFields(
        url="url",
        title="title",
        snippet="content",
        published=lambda i: parse_published(i.get("publishedDate")),
    )

    def _configure(self, cfg: SearchConfig) -> None:
        base = (cfg.searxng_url or "").strip().rstrip("/")
        if not base:
            raise SearchError("searxng: FACTNOTE_SEARCH__SEARXNG_URL is not set")
        if not base.startswith(("http://", "https://")):
            raise SearchError("searxng: FACTNOTE_SEARCH__SEARXNG_URL must be an http(s) URL")
        # A private instance may sit behind basic auth given as user:password@ in the URL. The
        # credentials are moved to a header so the URL (logged by httpx) carries none.
        parts = httpx.URL(base)
        self._endpoint = str(parts.copy_with(username=None, password=None)) + "/search"
        self._password = parts.password
        self._auth: dict[str, str] = {}
        if parts.username or parts.password:
            token = base64.b64encode(f"{parts.username}:{parts.password}".encode()).decode()
            self._auth = {"Authorization": f"Basic {token}"}

    def _secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self._password, *self._auth.values()) if s)

    def _call(self, q: str, limit: int) -> Any:
        # SearXNG has no result-count parameter: one page (about 10-20 results) is sliced.
        return self._request_json(
            "GET",
            self._endpoint,
            params={"q": q, "format": "json"},
            headers={"Accept": "application/json", **self._auth},
        )

    def _error_detail(self, response: httpx.Response) -> str:
        if response.status_code == 403:
            # The usual cause: the instance does not list `json` in `search.formats`.
            return " (is format=json enabled in the instance's settings.yml search.formats?)"
        return super()._error_detail(response)

    def _items(self, data: dict[str, Any]) -> list[Any]:
        return as_list(data.get("results"))
