"""Reverse image search: where else a picture appears, and since when, behind one interface.

`ReverseImageSearch` is the seam; `LensSearch` implements it with SerpApi's Google Lens engine
(`GET https://serpapi.com/search.json?engine=google_lens&url=…&type=…`, documented at
https://serpapi.com/google-lens-api and https://serpapi.com/google-lens-exact-matches-api),
reading `exact_matches` and `visual_matches` (position, title, link, source, date). Lens needs
a public image URL: local inbox images are never sent anywhere.

Matches pass through the same rules as text search results: each gets its publisher's
credibility tier, and a page dated after the check's as-of time is dropped (relative dates
such as "2 years ago" give no date, as in `pipeline.search.base.parse_published`). The earliest
dated match is what provenance rests on ("this photo appeared in 2019 in …").

Without a key the stage is skipped, and the image's report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import SecretStr

from pipeline.config import ImagesConfig
from pipeline.images.records import ReverseMatch
from pipeline.search.base import (
    ConfiguredProvider,
    as_list,
    as_str,
    parse_published,
    required_secret,
)
from pipeline.sources.credibility import PublisherTable

ENDPOINT = "https://serpapi.com/search.json"


class ReverseImageSearch(Protocol):
    name: str

    def find(self, image_url: str, *, limit: int) -> list[ReverseMatch]:
        """Pages showing the image at `image_url`, in the service's order. Raises SearchError."""
        ...

    def close(self) -> None: ...


class KeyedImageService(ConfiguredProvider[ImagesConfig]):
    """An image service's JSON API client: its key (`key_setting`) and timeout
    (`timeout_setting`) are fields of the images config; a missing key raises `SearchError`
    naming `variable`, and the key is kept out of every error message."""

    variable: str = ""  # the environment variable that holds the key
    key_setting: str = ""
    timeout_setting: str = ""

    def _configure(self, cfg: ImagesConfig) -> None:
        key: SecretStr | None = getattr(cfg, self.key_setting)
        self._key = required_secret(key, self.name, self.variable).get_secret_value()

    def _timeout(self, cfg: ImagesConfig) -> float:
        return float(getattr(cfg, self.timeout_setting))

    def _secrets(self) -> Sequence[str]:
        return (self._key,)


class LensSearch(KeyedImageService):
    """SerpApi's `google_lens` engine (exact and visual matches)."""

    name = "google_lens"
    variable = "FACTNOTE_IMAGES__SERPAPI_API_KEY"
    key_setting = "serpapi_api_key"
    timeout_setting = "reverse_timeout_s"

    def _configure(self, cfg: ImagesConfig) -> None:
        super()._configure(cfg)
        self._type = cfg.lens_type

    def find(self, image_url: str, *, limit: int) -> list[ReverseMatch]:
        data = self._request_json(
            "GET",
            ENDPOINT,
            params={
                "engine": "google_lens",
                "url": image_url,
                "type": self._type,
                "api_key": self._key,
            },
        )
        if not isinstance(data, dict):
            return []
        found: list[ReverseMatch] = []
        for kind in ("exact_matches", "visual_matches"):
            for item in as_list(data.get(kind)):
                match = _match(item, kind.removesuffix("_matches"))
                if match is not None and all(m.url != match.url for m in found):
                    found.append(match)
        return found[:limit]


def _match(item: Any, kind: str) -> ReverseMatch | None:
    if not isinstance(item, dict):
        return None
    url = as_str(item.get("link"))
    if not url.startswith(("http://", "https://")):
        return None
    return ReverseMatch(
        url=url,
        title=as_str(item.get("title")),
        source=as_str(item.get("source")),
        kind=kind,
        published=parse_published(item.get("date")),
    )


def build_reverse_search(cfg: ImagesConfig) -> ReverseImageSearch | None:
    """The configured provider, or None when reverse search is off or has no key."""
    if cfg.reverse_search == "google_lens" and cfg.serpapi_api_key is not None:
        return LensSearch(cfg)
    return None


def vetted(
    matches: list[ReverseMatch], publishers: PublisherTable, as_of: datetime
) -> list[ReverseMatch]:
    """Matches with their publisher's tier, minus pages dated after `as_of` (the time rule of
    text search), earliest dated first and undated ones after them in the service's order."""
    if as_of.tzinfo is None:  # a naive as-of is UTC, as in `pipeline.web.fetch.usability`
        as_of = as_of.replace(tzinfo=UTC)
    kept: list[ReverseMatch] = []
    for match in matches:
        if match.published is not None and match.published > as_of:
            continue
        rating = publishers.lookup(match.url)
        kept.append(match.model_copy(update={"tier": rating.tier.value, "domain": rating.domain}))
    dated = [m for m in kept if m.published is not None]
    dated.sort(key=lambda m: m.published or as_of)
    return dated + [m for m in kept if m.published is None]


def provenance_note(label: str, matches: list[ReverseMatch]) -> str | None:
    """The provenance line from the earliest dated match: "image 1 appeared on 2019-03-04 on
    example.org (…)"."""
    earliest = next((m for m in matches if m.published is not None), None)
    if earliest is None:
        return None
    when = earliest.published.date().isoformat() if earliest.published else ""
    return (
        f"{label} appeared on {when} on {earliest.domain or earliest.source} ({earliest.url}); "
        f"earliest dated of {len(matches)} reverse image match(es)"
    )
