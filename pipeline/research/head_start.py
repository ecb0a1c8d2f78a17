"""The head start: search the post's own words while the analyst is still reading the post.

The claim analysis is one LLM call (seconds) that every web search waits for. Fact-checks and
official corrections quote the claim they address, so the post's own words are a good query in
their own right, and searching them in every tier, fetching what comes back and encoding its
passages costs no LLM tokens. The head start does exactly that beside the analysis; the first
research round then treats those pages as its own (`Research`), scores them against the
claims once they are known (no second pass of the model) and can send the relevant ones to the
extractor before the analyst's queries have even been searched. The threads are the research
scheduler's (`pipeline.research.scheduler`), so the head start and the rounds share one set of
claimed URLs and one cancellation.

If the analysis finds nothing checkable, the head start is dropped unread. With one research
worker (`concurrency=1`, MUSE's sequential order) it runs to the end before the analysis, one
step at a time, instead of beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass

from pipeline.config import SearchConfig
from pipeline.post.describe import post_query
from pipeline.records import Post, Tier
from pipeline.research.scheduler import ResearchScheduler, TierPages


@dataclass(frozen=True)
class HeadStart:
    query: str  # the post's own words, as searched
    tiers: Mapping[Tier, Future[TierPages]]


def start_head_start(
    scheduler: ResearchScheduler, post: Post, cfg: SearchConfig
) -> HeadStart | None:
    """Search the post's own words in every tier; None when the post has too few words."""
    query = post_query(post)
    if query is None:
        return None
    return HeadStart(query, scheduler.start_head(query, cfg.results_per_query))
