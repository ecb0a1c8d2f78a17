"""Page outcomes: the filters' messages read back as reasons, and the trace entry each outcome
becomes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.records import Document, Passage, SearchResult, SkipReason, Tier
from pipeline.research.page_outcome import PageOutcome, PageReason, unusable_reason

FOUND = SearchResult(url="https://a.example/x", provider="fake", query="q", rank=1)
DOC = Document(
    url=FOUND.url,
    canonical_url=FOUND.url,
    ok=True,
    published=datetime(2026, 1, 1, tzinfo=UTC),
    content_hash="abc",
)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("fetch failed: ssrf: 10.0.0.1 is a private address", PageReason.SSRF_REFUSED),
        ("fetch failed: too large: over 5000000 bytes", PageReason.TOO_LARGE),
        ("fetch failed: http 404", PageReason.FETCH_FAILED),
        ("published after as-of (2026-12-01T00:00:00+00:00 > ...)", PageReason.AFTER_AS_OF),
        ("under 100 words (42)", PageReason.TOO_SHORT),
        ("no publication date (replay: cannot show it predates as-of)", PageReason.NO_DATE),
    ],
)
def test_filter_messages_read_back_as_their_reason(message: str, reason: PageReason) -> None:
    assert unusable_reason(message) is reason


def test_a_kept_page_is_used_with_its_relevance_date_and_hash() -> None:
    use = PageOutcome(FOUND, Tier.HIGH, PageReason.KEPT, DOC, relevance=0.71).use()
    assert use.used and use.reason == "" and use.relevance == 0.71
    assert use.published == DOC.published and use.content_hash == "abc"


def test_a_kept_page_with_rejected_quotes_is_still_used_and_says_which() -> None:
    page = PageOutcome(FOUND, Tier.HIGH, PageReason.KEPT, DOC, detail="not on page: 'x'")
    use = page.use()
    assert use.used and use.reason == "not on page: 'x'"


def test_fixed_reasons_read_as_the_skip_reason_and_detailed_ones_as_their_detail() -> None:
    unneeded = PageOutcome(FOUND, Tier.LOW, PageReason.NOT_NEEDED, DOC).use()
    assert unneeded.reason == SkipReason.NOT_NEEDED and not unneeded.used
    never = PageOutcome(FOUND, Tier.LOW, PageReason.NOT_FETCHED).use()
    assert never.reason == SkipReason.NOT_FETCHED
    assert never.published is None and never.content_hash == ""
    late = PageOutcome(FOUND, Tier.HIGH, PageReason.AFTER_AS_OF, DOC, detail="published after")
    assert late.use().reason == "published after"


def test_setting_a_page_aside_drops_its_passages_but_keeps_its_score() -> None:
    kept = PageOutcome(
        FOUND,
        Tier.HIGH,
        PageReason.KEPT,
        DOC,
        relevance=0.8,
        passages=(Passage(url=FOUND.url, index=0, text="t", score=0.8),),
    )
    aside = kept.but(PageReason.NOT_NEEDED)
    assert aside.passages == () and aside.relevance == 0.8 and not aside.used
    assert kept.used and kept.passages  # frozen: the original is unchanged
