"""Google Programmable Search (Custom Search JSON API) as a `SearchProvider`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
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

ENDPOINT = "https://www.googleapis.com/customsearch/v1"
# The API returns at most 10 results per request; more would need paging with `start`.
MAX_NUM = 10
# Google ignores words past the 32nd, and rejects queries over ~2048 characters.
MAX_WORDS = 32
MAX_CHARS = 2048
# Meta tags that carry a publication date, most specific first.
_DATE_TAGS = ("article:published_time", "og:article:published_time", "datepublished")


FIELDS = ResultFields(
    url="link", title="title", snippet="snippet", published=lambda i: _published(i.get("pagemap"))
)


class GoogleSearch(HttpSearchProvider):
    name = "google"
    max_sites = 5

    def __init__(
        self,
        cfg: SearchConfig,
        *,
        client: httpx.Client | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if cfg.google_api_key is None or not cfg.google_api_key.get_secret_value():
            raise SearchError("google: FACTNOTE_SEARCH__GOOGLE_API_KEY is not set")
        if not cfg.google_cx:
            raise SearchError("google: FACTNOTE_SEARCH__GOOGLE_CX is not set")
        super().__init__(timeout_s=cfg.timeout_s, client=client, retry=retry)
        self._key = cfg.google_api_key
        self._cx = cfg.google_cx

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
            params={"cx": self._cx, "q": q, "num": min(limit, MAX_NUM)},
            # The key goes in a header, not the `key` parameter that Google also accepts, so
            # that it never appears in a URL (request logs, proxies, exception messages).
            headers={"X-Goog-Api-Key": self._key.get_secret_value()},
        )
        return self._parse(data, query, limit)

    def _parse(self, data: Any, query: str, limit: int) -> list[SearchResult]:
        if not isinstance(data, dict):
            raise SearchError("google: unexpected response shape (not a JSON object)")
        # No `items` key is how the API says "no results".
        return build_results(self.name, as_list(data.get("items")), query, limit, FIELDS)


def _published(pagemap: object) -> datetime | None:
    if not isinstance(pagemap, dict):
        return None
    for tags in as_list(pagemap.get("metatags")):
        if not isinstance(tags, dict):
            continue
        for key in _DATE_TAGS:
            when = parse_published(tags.get(key))
            if when is not None:
                return when
    for article in as_list(pagemap.get("newsarticle")):
        if isinstance(article, dict):
            when = parse_published(article.get("datepublished"))
            if when is not None:
                return when
    return None
