"""Build the configured search providers, in the configured order, failing early on gaps."""

from __future__ import annotations

import httpx

from pipeline.config import SearchConfig
from pipeline.search.base import RetryPolicy, SearchError, SearchProvider
from pipeline.search.brave import BraveSearch
from pipeline.search.google import GoogleSearch
from pipeline.search.searxng import SearxngSearch
from pipeline.search.serper import SerperSearch

_WEB = {
    "google": GoogleSearch,
    "serper": SerperSearch,
    "brave": BraveSearch,
    "searxng": SearxngSearch,
}
KNOWN_PROVIDERS = ("local", *_WEB)


def build_providers(
    cfg: SearchConfig,
    *,
    local: SearchProvider | None = None,
    client: httpx.Client | None = None,
    retry: RetryPolicy | None = None,
) -> list[SearchProvider]:
    """One provider per name in `cfg.providers`. Raises `SearchError` for an unknown name, a
    missing key or URL, or "local" without a local index, so misconfiguration shows at start-up
    rather than as a search that quietly finds nothing."""
    if not cfg.providers:
        raise SearchError("no search providers configured (FACTNOTE_SEARCH__PROVIDERS is empty)")
    providers: list[SearchProvider] = []
    for raw in cfg.providers:
        name = raw.strip().lower()
        if name == "local":
            if local is None:
                raise SearchError("local: the local index provider was not given")
            providers.append(local)
        elif name in _WEB:
            providers.append(_WEB[name](cfg, client=client, retry=retry))
        else:
            known = ", ".join(KNOWN_PROVIDERS)
            raise SearchError(f"unknown search provider {raw!r} (known: {known})")
    return providers
