"""Google Programmable Search (Custom Search JSON API) as a `SearchProvider`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pipeline.config import SearchConfig
from pipeline.search.base import (
    KeyedSearchProvider,
    ResultFields,
    SearchError,
    as_list,
    parse_published,
)

ENDPOINT = "https://www.googleapis.com/customsearch/v1"
# The API returns at most 10 results per request; more would need paging with `start`.
MAX_NUM = 10
# Meta tags that carry a publication date, most specific first.
_DATE_TAGS = ("article:published_time", "og:article:published_time", "datepublished")


class GoogleSearch(KeyedSearchProvider):
    name = "google"
    key_setting = "google_api_key"
    max_sites = 5
    # Google ignores words past the 32nd, and rejects queries over ~2048 characters.
    max_words = 32
    max_chars = 2048
    fields = ResultFields(
        url="link",
        title="title",
        snippet="snippet",
        published=lambda i: _published(i.get("pagemap")),
    )

    def _configure(self, cfg: SearchConfig) -> None:
        super()._configure(cfg)  # the key is checked first
        if not cfg.google_cx:
            raise SearchError("google: FACTNOTE_SEARCH__GOOGLE_CX is not set")
        self._cx = cfg.google_cx

    def _call(self, q: str, limit: int) -> Any:
        return self._request_json(
            "GET",
            ENDPOINT,
            params={"cx": self._cx, "q": q, "num": min(limit, MAX_NUM)},
            # The key goes in a header, not the `key` parameter that Google also accepts, so
            # that it never appears in a URL (request logs, proxies, exception messages).
            headers={"X-Goog-Api-Key": self.key},
        )

    def _items(self, data: dict[str, Any]) -> list[Any]:
        # No `items` key is how the API says "no results".
        return as_list(data.get("items"))


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
