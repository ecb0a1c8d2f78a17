"""Search one credibility tier at a time across several providers.

A `site:` filter is only a hint to the engine (and some providers take none), so every result
is rated by the publisher table and kept only if its tier is the one asked for. Results from
all providers are merged, deduplicated by canonical URL, and what was dropped, and why, is
reported so the research trace can show it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pipeline.records import SearchResult, Tier
from pipeline.search.base import SearchError, SearchProvider
from pipeline.web.urls import canonical_url


class HasTierDomain(Protocol):
    """What a publisher rating must offer; `pipeline.sources.credibility`'s rating has both."""

    @property
    def tier(self) -> Tier: ...

    @property
    def domain(self) -> str: ...


@runtime_checkable
class RatesPublishers(Protocol):
    def lookup(self, url: str) -> HasTierDomain: ...


Rater = Callable[[str], HasTierDomain]


@dataclass
class TierSearchOutcome:
    results: list[SearchResult] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    errors: list[str] = field(default_factory=list)  # one per provider that failed


class TieredSearch:
    def __init__(self, providers: Sequence[SearchProvider], rate: Rater | RatesPublishers) -> None:
        if not providers:
            raise ValueError("TieredSearch needs at least one search provider")
        self._providers = list(providers)
        self._rate: Rater = rate.lookup if isinstance(rate, RatesPublishers) else rate

    @property
    def providers(self) -> list[SearchProvider]:
        return list(self._providers)

    def search_tier(
        self, query: str, tier: Tier, *, limit: int, sites: Sequence[str] = ()
    ) -> TierSearchOutcome:
        """Results of `tier` for `query`: each provider is asked for `limit` results.

        Raises `SearchError` only when every provider failed; a partial failure is reported in
        `errors` next to the others' results.
        """
        outcome = TierSearchOutcome()
        batches: list[list[SearchResult]] = []
        for provider in self._providers:
            try:
                batches.append(
                    provider.search(query, limit=limit, sites=list(sites[: provider.max_sites]))
                )
            except SearchError as exc:
                outcome.errors.append(str(exc))
        if len(outcome.errors) == len(self._providers):
            raise SearchError("all search providers failed: " + "; ".join(outcome.errors))

        seen: set[str] = set()
        for result in _interleave(batches):
            key = canonical_url(result.url)
            if key in seen:
                continue
            seen.add(key)
            rating = self._rate(result.url)
            if rating.tier != tier:
                outcome.dropped.append(
                    (result.url, f"tier {rating.tier.value}, wanted {tier.value}")
                )
                continue
            outcome.results.append(
                result.model_copy(update={"tier": rating.tier, "domain": rating.domain})
            )
        return outcome


def _interleave(batches: Sequence[Sequence[SearchResult]]) -> list[SearchResult]:
    """All providers' first results, then their second, ...: no provider's tail outranks
    another's head, and each provider's own order is kept. First occurrence wins the dedup."""
    merged: list[SearchResult] = []
    longest = max((len(b) for b in batches), default=0)
    for i in range(longest):
        merged.extend(batch[i] for batch in batches if i < len(batch))
    return merged
