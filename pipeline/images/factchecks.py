"""The images fact-checks carry, taken in at import time (`factnote claims import --images`):
each fetched through the SSRF-guarded intake, hashed, embedded and remembered with its
fact-check, so that a later post of the same picture is a known claim
(`pipeline.images.reader.ImageReader`).

Off by default: an import then reads only the files or pages named, and the offline demo
fetches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.claims.index import ClaimRecord
from pipeline.config import ImagesConfig
from pipeline.images.embedding import ImageEmbedder
from pipeline.images.intake import ImageUnreadable, take_in
from pipeline.images.ocr import OcrEngine
from pipeline.images.phash import ImageStore
from pipeline.images.reader import configured_fact_check_image
from pipeline.records import utcnow
from pipeline.web.fetch import Fetcher


@dataclass
class FactCheckImages:
    stored: int = 0  # images taken in and remembered with their fact-check
    failures: list[str] = field(default_factory=list)  # one line per image not taken in


def store_fact_check_images(
    records: Sequence[ClaimRecord],
    urls: Mapping[str, Sequence[str]],
    fetcher: Fetcher,
    cfg: ImagesConfig,
    store: ImageStore,
    *,
    embedder: ImageEmbedder | None = None,
    ocr: OcrEngine | None = None,
    now: datetime | None = None,
) -> FactCheckImages:
    """Take in the images of `records` (`urls` by `ClaimRecord.key`, as
    `pipeline.claims.claimreview.ImportResult.images` gives them) and remember each with its record.
    An image that cannot be read is a failure line; the others are still stored."""
    result = FactCheckImages()
    seen_at = now or utcnow()
    done: set[tuple[str, str]] = set()  # a review with several ratings carries its image once
    for record in records:
        for url in urls.get(record.key, ()):
            if (record.key, url) in done:
                continue
            done.add((record.key, url))
            try:
                taken = take_in(url, fetcher, cfg)
            except ImageUnreadable as exc:
                result.failures.append(f"image of {record.review_url}: {exc}")
                continue
            store.add(
                configured_fact_check_image(taken, record, seen_at, cfg, embedder=embedder, ocr=ocr)
            )
            result.stored += 1
    return result
