"""What became of one found page, as a frozen value: kept, or why not.

Every stage of research that decides about a page (the filters, the relevance score, the
per-tier extraction cap, the stop rule, the extractor's rejected quotes) returns a new
`PageOutcome` instead of editing a shared trace entry, and the round turns its outcomes into
the trace (`DocumentUse`) once, at its end. The trace text stays what it always was: a fixed
`SkipReason`, or the reason with its details.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from pipeline.records import Document, DocumentUse, Passage, SearchResult, SkipReason, Tier
from pipeline.relevance.scoring import EncodedPage


class PageReason(StrEnum):
    KEPT = "kept"  # relevant: goes (or went) to the extractor
    READY = "ready"  # passed the filters and encoded; not scored against the claims yet
    FETCH_FAILED = "fetch_failed"
    SSRF_REFUSED = "ssrf_refused"
    TOO_LARGE = "too_large"
    AFTER_AS_OF = "after_as_of"  # published after the time sources must predate
    TOO_SHORT = "too_short"
    NO_DATE = "no_date"  # dateless, and the dateless policy refuses it here
    IRRELEVANT = "irrelevant"
    NOT_EXTRACTED = "not_extracted"  # the tier's extraction slots went to more relevant pages
    ALREADY_FACT_CHECK = "already_fact_check"
    NOT_NEEDED = "not_needed"  # the stop rule was met before it was read
    NOT_FETCHED = "not_fetched"  # the stop rule was met before it was downloaded
    # Sent to the extractor speculatively; the stop rule was met above it, the answer unused.
    DISCARDED = "discarded"


# Reasons whose trace text is fixed; the others carry their details in `PageOutcome.detail`.
_FIXED_TEXT = {
    PageReason.NOT_NEEDED: SkipReason.NOT_NEEDED,
    PageReason.NOT_FETCHED: SkipReason.NOT_FETCHED,
    PageReason.ALREADY_FACT_CHECK: SkipReason.ALREADY_FACT_CHECK,
}

# The filters' messages (`pipeline.web.fetch`), by how they begin: the fetcher and `usability`
# report text, and this is the one place that reads it back.
_UNUSABLE_PREFIXES = (
    ("fetch failed: ssrf:", PageReason.SSRF_REFUSED),
    ("fetch failed: too large", PageReason.TOO_LARGE),
    ("fetch failed:", PageReason.FETCH_FAILED),
    ("published after as-of", PageReason.AFTER_AS_OF),
    ("under ", PageReason.TOO_SHORT),
    ("no publication date", PageReason.NO_DATE),
)


def unusable_reason(message: str) -> PageReason:
    """The reason for a filter's message (`pipeline.web.fetch.usability`)."""
    for prefix, reason in _UNUSABLE_PREFIXES:
        if message.startswith(prefix):
            return reason
    return PageReason.FETCH_FAILED


@dataclass(frozen=True, eq=False)
class PageOutcome:
    result: SearchResult
    tier: Tier
    reason: PageReason
    doc: Document | None = None  # None when it was never downloaded
    # The trace text for reasons with details (a date, a score, rejected quotes of a kept page).
    detail: str = ""
    relevance: float = 0.0
    encoded: EncodedPage | None = None  # set when the page passed the filters
    passages: tuple[Passage, ...] = ()  # its relevant passages, while kept

    @property
    def used(self) -> bool:
        return self.reason is PageReason.KEPT

    @property
    def text(self) -> str:
        """Why it was not used, as the trace words it."""
        fixed = _FIXED_TEXT.get(self.reason)
        return fixed if fixed is not None else self.detail

    def but(self, reason: PageReason, detail: str = "") -> PageOutcome:
        """The same page, set aside for `reason` (a page set aside keeps no passages)."""
        return replace(self, reason=reason, detail=detail, passages=())

    def use(self) -> DocumentUse:
        doc = self.doc
        return DocumentUse(
            url=self.result.url,
            tier=self.tier,
            used=self.used,
            reason=self.text,
            relevance=self.relevance,
            published=doc.published if doc is not None else None,
            content_hash=doc.content_hash if doc is not None else "",
        )
