"""What the trace keeps about each image of a post: where it came from, what was read in it,
how it was described, and which images seen before it matches; and `SeenImage`, an image
remembered for near-duplicate lookups (stored by `storage.images`).

Kept apart from `pipeline.records`, which re-exports these for storage (the only pipeline
module storage may import).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class DescriptionSource(StrEnum):
    """What the image's description rests on, so a decision says which it was."""

    VISION = "vision"  # the configured vision endpoint (with the OCR text beside it)
    OCR = "ocr"  # no vision endpoint: the text read offline, nothing about what it shows
    NONE = "none"  # unreadable: neither a vision answer nor enough text


class OcrLine(BaseModel):
    text: str
    score: float
    # The four corners (x, y) in the decoded image's pixels, clockwise from the top left.
    box: list[tuple[float, float]] = Field(default_factory=list)


class ImageMatch(BaseModel):
    """An image seen before that is perceptually the same picture."""

    sha256: str  # of the stored image's bytes
    source: str  # where that image came from (URL or post)
    distance: int  # pHash Hamming distance, of 64 bits
    fact_check_url: str | None = None  # the fact-check that carries the image, if any
    rating: str | None = None


class ReverseMatch(BaseModel):
    """A page a reverse image search says shows the image."""

    url: str
    title: str = ""
    source: str = ""  # the site's name, as the service gives it
    kind: str = "visual"  # "exact" (the same image) or "visual" (a similar one)
    published: datetime | None = None  # absolute dates only; "2 years ago" gives None
    domain: str = ""
    tier: str = "unknown"  # the publisher's credibility tier, as for text search results


class ImageReport(BaseModel):
    owner: str  # "post" or "quoted post"
    number: int  # 1-based place among the owner's images
    source: str
    sha256: str | None = None  # of the bytes as received
    format: str | None = None  # JPEG, PNG, GIF or WEBP
    width: int | None = None  # as received, before any reduction
    height: int | None = None
    phash: str | None = None  # 16 hex digits
    ocr: list[OcrLine] = Field(default_factory=list)
    ocr_seconds: float | None = None
    ocr_error: str | None = None  # the OCR engine failed on this image
    described_by: DescriptionSource = DescriptionSource.NONE
    matches: list[ImageMatch] = Field(default_factory=list)
    # Reverse image search: what was done ("google_lens: 12 match(es)", "skipped: ...") and the
    # matches kept (tiered, none dated after as-of), earliest dated first.
    reverse_search: str = ""
    reverse_matches: list[ReverseMatch] = Field(default_factory=list)
    error: str | None = None  # why the image could not be read (refused, undecodable, ...)

    @property
    def ocr_text(self) -> str:
        return "\n".join(line.text for line in self.ocr)


class SeenImage(BaseModel):
    """An image seen before: stored once by the sha256 of its bytes, with where it came from
    and, for an image a fact-check carries, that fact-check."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    phash: str  # 16 hex digits
    source: str  # the URL (or inbox path) it was first taken from
    seen_at: datetime
    # A `pipeline.claims.ClaimRecord` as JSON (claims builds on records, so it cannot be
    # named here); `pipeline.images` reads it back.
    fact_check: dict[str, Any] | None = None
