"""The videos fact-checks carry, taken in at import time (`factnote claims import --videos`):
each video is decoded into keyframes by the same budgeted child as a post's video, and every
keyframe is remembered like a fact-checked image (pHash, learned embedding, OCR text), its
source the video's URL with the keyframe's time as a W3C media fragment (`...mp4#t=12.5`).
A post's video whose keyframe is near one of these is then a re-upload of a debunked clip: a
known claim whose query names both times (`pipeline.video.reader`).

No table of its own: the keyframes are pictures, and the image store's lookups (pHash bands,
embedding cosine) are what a video match needs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.claims.index import ClaimRecord
from pipeline.config import ImagesConfig, VideoConfig
from pipeline.images.embedding import ImageEmbedder
from pipeline.images.intake import ImageUnreadable, decode
from pipeline.images.ocr import OcrEngine
from pipeline.images.phash import ImageStore, SeenImage
from pipeline.images.reader import configured_fact_check_image
from pipeline.records import utcnow
from pipeline.video.intake import DecodedVideo, VideoUnreadable, take_in_video
from pipeline.web.fetch import Fetcher

__all__ = [
    "FactCheckVideos",
    "fact_check_keyframes",
    "keyframe_source",
    "source_time",
    "store_fact_check_videos",
]

# W3C Media Fragments URI 1.0, temporal dimension in normal play time seconds ("#t=12.5").
_TIME = re.compile(r"#t=(?:npt:)?(\d+(?:\.\d+)?)$")


def keyframe_source(source: str, t: float) -> str:
    """The keyframe at `t` seconds of the video at `source`, as a media-fragment URI."""
    return f"{source}#t={t:g}"


def source_time(source: str) -> float | None:
    """The time a `keyframe_source` names; None for a picture that is no video keyframe."""
    found = _TIME.search(source)
    return float(found.group(1)) if found else None


@dataclass
class FactCheckVideos:
    videos: int = 0  # videos decoded and remembered with their fact-check
    keyframes: int = 0  # their keyframes stored
    failures: list[str] = field(default_factory=list)  # one line per video not taken in


def fact_check_keyframes(
    decoded: DecodedVideo,
    source: str,
    record: ClaimRecord,
    seen_at: datetime,
    cfg: ImagesConfig,
    *,
    embedder: ImageEmbedder | None = None,
    ocr: OcrEngine | None = None,
) -> list[SeenImage]:
    """Each keyframe of a fact-checked video as a remembered picture carrying `record`."""
    kept: list[SeenImage] = []
    for frame in decoded.keyframes:
        try:
            taken = decode(frame.png, cfg, keyframe_source(source, frame.t))
        except ImageUnreadable:  # our own child's PNG: not expected, and one frame is not all
            continue
        kept.append(
            configured_fact_check_image(taken, record, seen_at, cfg, embedder=embedder, ocr=ocr)
        )
    return kept


def store_fact_check_videos(
    records: Sequence[ClaimRecord],
    urls: Mapping[str, Sequence[str]],
    fetcher: Fetcher,
    video_cfg: VideoConfig,
    images_cfg: ImagesConfig,
    store: ImageStore,
    *,
    embedder: ImageEmbedder | None = None,
    ocr: OcrEngine | None = None,
    now: datetime | None = None,
) -> FactCheckVideos:
    """Decode the videos of `records` (`urls` by `ClaimRecord.key`, as
    `pipeline.claims.claimreview.ImportResult.videos` gives them) and remember each keyframe with
    its record. A video that cannot be read is a failure line with the reason; the others are
    still stored."""
    result = FactCheckVideos()
    seen_at = now or utcnow()
    decoded: dict[str, DecodedVideo] = {}  # several ratings of one review: decoded once
    failed: set[str] = set()
    for record in records:
        for url in urls.get(record.key, ()):
            if url in failed:
                continue
            if url not in decoded:
                try:
                    decoded[url] = take_in_video(url, fetcher, video_cfg)
                except VideoUnreadable as exc:
                    failed.add(url)
                    result.failures.append(f"video of {record.review_url}: {exc}")
                    continue
            frames = fact_check_keyframes(
                decoded[url], url, record, seen_at, images_cfg, embedder=embedder, ocr=ocr
            )
            for frame in frames:
                store.add(frame)
            result.videos += 1
            result.keyframes += len(frames)
    return result
