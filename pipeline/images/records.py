"""What the trace keeps about each image of a post: where it came from, what was read in it,
how it was described, and which images seen before it matches; and `SeenImage`, an image
remembered for near-duplicate lookups (stored by `storage.images`).

Kept apart from `pipeline.records`, which re-exports these for storage (the only pipeline
module storage may import).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field


class DescriptionSource(StrEnum):
    """What the image's description rests on, so a decision says which it was."""

    VISION = "vision"  # the configured vision endpoint (with the OCR text beside it)
    OCR = "ocr"  # no vision endpoint: the text read offline, nothing about what it shows
    # Neither a vision endpoint nor enough text: only what the recognition service named.
    RECOGNITION = "recognition"
    NONE = "none"  # unreadable: neither a vision answer nor enough text


class OcrLine(BaseModel):
    text: str
    score: float
    # The four corners (x, y) in the decoded image's pixels, clockwise from the top left.
    box: list[tuple[float, float]] = Field(default_factory=list)


class ImageMatch(BaseModel):
    """An image seen before that is the same picture: by pHash, or by the learned embedding
    (crops, caption bars, borders pHash does not see past)."""

    sha256: str  # of the stored image's bytes
    source: str  # where that image came from (URL or post)
    distance: int  # pHash Hamming distance, of 64 bits
    fact_check_url: str | None = None  # the fact-check that carries the image, if any
    rating: str | None = None
    # Found by the embedding (pHash too far): its cosine with the stored image's embedding.
    similarity: float | None = None
    # An embedding match below the precision that would let it stand alone: shown to
    # moderators as a possible match, never the ground of a templated reply.
    possible: bool = False


class ReverseMatch(BaseModel):
    """A page a reverse image search says shows the image."""

    url: str
    title: str = ""
    source: str = ""  # the site's name, as the service gives it
    kind: str = "visual"  # "exact" (the same image) or "visual" (a similar one)
    published: datetime | None = None  # absolute dates only; "2 years ago" gives None
    domain: str = ""
    tier: str = "unknown"  # the publisher's credibility tier, as for text search results


class Recognition(BaseModel):
    """A person, place or thing a configured recognition service named in the picture: data
    from that service with its score, never an instruction and never our own guess."""

    service: str  # the configured service that said so ("google_vision")
    kind: str  # "landmark", "web entity" or "best guess" (the service's own label, unscored)
    name: str
    score: float | None = None  # the service's score; None for an unscored best guess
    # Where a landmark is (latitude, longitude), as the service gives it.
    location: tuple[float, float] | None = None


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
    # Recognition by the configured service: what was done ("google_vision: 3 kept, 1 under
    # the score floor", "skipped: ...", "failed: ...") and what it named, kept above the floor.
    recognition: str = ""
    recognised: list[Recognition] = Field(default_factory=list)
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
    # A `pipeline.claims.index.ClaimRecord` as JSON (claims builds on records, so it cannot be
    # named here); `pipeline.images.reader` reads it back.
    fact_check: dict[str, Any] | None = None
    # The learned embedding as float32 bytes (`pipeline.images.embedding.to_bytes`) and the
    # name of the embedder that made it.
    embedding: bytes | None = Field(default=None, repr=False)
    embedder: str | None = None
    # Our reduced, EXIF-free copy of the picture (JPEG) for the review app; only on add,
    # never loaded by lookups.
    content: bytes | None = Field(default=None, repr=False)
    # The text OCR read in it (None: not read); two pictures alike that say different things
    # are not the same picture (`pipeline.images.reader.text_agreement`).
    ocr_text: str | None = None


def merged_sighting(known: SeenImage, new: SeenImage) -> SeenImage:
    """The stored record of an image seen again: the first source and time stay; a fact-check,
    an embedding or a copy the first sighting lacked is filled in."""
    update: dict[str, object] = {}
    if known.fact_check is None and new.fact_check is not None:
        update["fact_check"] = new.fact_check
    if new.embedding is not None and (known.embedding is None or known.embedder != new.embedder):
        update["embedding"], update["embedder"] = new.embedding, new.embedder
    if known.content is None and new.content is not None:
        update["content"] = new.content
    if known.ocr_text is None and new.ocr_text is not None:
        update["ocr_text"] = new.ocr_text
    return known.model_copy(update=update) if update else known


def ranked_by_cosine(
    vector: npt.NDArray[np.float32],
    stored: Sequence[tuple[SeenImage, bytes]],
    min_cosine: float,
    limit: int,
) -> list[tuple[SeenImage, float]]:
    """`stored` images (with their embeddings' bytes) at cosine >= `min_cosine`, best first.
    One matrix product: a few thousand 1280-d vectors take milliseconds."""
    if not stored:
        return []
    matrix = np.stack([np.frombuffer(data, dtype="<f4") for _, data in stored])
    if matrix.shape[1] != vector.shape[0]:
        return []  # another version of the embedder: not comparable
    scores = matrix @ vector
    order = np.argsort(-scores)
    return [
        (stored[i][0], round(float(scores[i]), 4)) for i in order[:limit] if scores[i] >= min_cosine
    ]
