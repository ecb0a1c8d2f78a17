"""Fact-checked videos in the claim index: the video files a ClaimReview carries are decoded
into keyframes at import and remembered like fact-checked pictures, each with its time in the
video; a re-upload of the clip is then a known claim whose query names the keyframe's time in
the post's video and in the fact-checked one. A crop pHash does not see past is found by the
keyframes' learned embedding: a possible match for moderators, a known claim only with
`embedding_auto_match`. Videos are rendered and re-encoded here with PyAV.

The ClaimReview markup is shaped after schema.org: `Claim.appearance`/`firstAppearance` are
CreativeWorks, here VideoObjects whose `contentUrl` is the media file and whose `embedUrl` is a
player page (https://schema.org/VideoObject, https://schema.org/MediaObject#contentUrl);
`CreativeWork.video` holds a VideoObject (https://schema.org/video)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.claims.claimreview import read_jsonld, video_urls
from pipeline.config import FetchConfig, ImagesConfig, VideoConfig
from pipeline.images.embedding import embedder_for
from pipeline.images.phash import MemoryImageStore
from pipeline.images.reader import ImageReader
from pipeline.records import Post, Video
from pipeline.video.factchecks import keyframe_source, source_time, store_fact_check_videos
from pipeline.video.reader import VideoReader, VideoStageResult
from pipeline.web.fetch import Fetcher
from testing.fakes.http_server import LocalHTTPServer, Route
from testing.video_samples import crop_border, render_pictures, scene_shots, transcode

pytestmark = pytest.mark.process

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
REVIEW_URL = "https://checkers.example/fact-check/dam-burst-clip"
IMAGES = ImagesConfig(embedding=False, ocr=False)


def review(**fields: Any) -> dict[str, Any]:
    return {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": REVIEW_URL,
        "claimReviewed": "A clip shows the dam upstream bursting last night.",
        "datePublished": "2026-11-01",
        "reviewRating": {"@type": "Rating", "alternateName": "False"},
        **fields,
    }


def test_the_content_urls_of_a_reviews_video_objects_are_read_never_player_pages() -> None:
    item = {
        "@type": "Claim",
        "video": {"@type": "VideoObject", "contentUrl": "https://a.example/claim.mp4"},
        "firstAppearance": {
            "@type": "VideoObject",
            "contentUrl": "https://a.example/first.mp4",
            "embedUrl": "https://player.example/embed/1",
        },
        "appearance": [
            {"@type": "VideoObject", "url": "https://video.example/watch?v=1"},
            {"@type": "ImageObject", "contentUrl": "https://a.example/still.jpg"},
            {"@type": "VideoObject", "contentUrl": "javascript:alert(1)"},
        ],
    }
    assert video_urls(review(), item) == [
        "https://a.example/claim.mp4",
        "https://a.example/first.mp4",
    ]
    result = read_jsonld(review(itemReviewed=item))
    [record] = result.records
    assert result.videos == {record.key: video_urls(review(), item)}
    assert result.images == {record.key: ["https://a.example/still.jpg"]}


def test_a_keyframes_source_names_its_time_as_a_media_fragment() -> None:
    source = keyframe_source("https://a.example/clip.mp4", 12.5)
    assert source == "https://a.example/clip.mp4#t=12.5"
    assert source_time(source) == 12.5
    assert source_time("https://a.example/still.jpg") is None


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shots = scene_shots(1, ["", "Dam burst upstream tonight", ""])
    return render_pictures(tmp_path_factory.mktemp("clip") / "clip.mp4", shots)


def imported(clip: Path, images: ImagesConfig) -> tuple[MemoryImageStore, list[str]]:
    store = MemoryImageStore()
    with LocalHTTPServer() as server, Fetcher(FetchConfig(allow_hosts=["127.0.0.1"])) as fetcher:
        server.add("/clip.mp4", Route(body=clip.read_bytes(), content_type="video/mp4"))
        url = server.url("/clip.mp4")
        server.add("/page.mp4", Route(body=b"<html>a player page</html>", content_type="video/mp4"))
        node = {
            "@type": "Claim",
            "appearance": [
                {"@type": "VideoObject", "contentUrl": url},
                {"@type": "VideoObject", "contentUrl": server.url("/page.mp4")},
            ],
        }
        result = read_jsonld(review(itemReviewed=node))
        taken = store_fact_check_videos(
            result.records,
            result.videos,
            fetcher,
            VideoConfig(),
            images,
            store,
            embedder=embedder_for(images),
            now=NOW,
        )
    assert (taken.videos, taken.keyframes) == (1, 3)
    [failure] = taken.failures
    assert failure.startswith(f"video of {REVIEW_URL}: ") and "cannot decode" in failure
    return store, [url]


def read(reupload: Path, store: MemoryImageStore, images: ImagesConfig) -> VideoStageResult:
    local = images.model_copy(update={"local_dir": str(reupload.parent)})
    fetcher = Fetcher(FetchConfig())
    pictures = ImageReader(local, fetcher, store=store, embedder=embedder_for(local))
    reader = VideoReader(
        VideoConfig(local_dir=str(reupload.parent)), fetcher, images_cfg=local, pictures=pictures
    )
    post = Post(id="v", author="a", text="", created_at=NOW, videos=[Video(source=str(reupload))])
    return reader.read_post(post, NOW)


def test_a_trimmed_reencoded_reupload_is_a_known_claim_tied_to_both_videos_times(
    clip: Path, tmp_path: Path
) -> None:
    store, [url] = imported(clip, IMAGES)
    every = store.near("0" * 16, 64)  # within 64 of 64 bits: every picture stored
    assert all(seen.fact_check and seen.fact_check["review_url"] == REVIEW_URL for seen, _ in every)
    stored = sorted(seen.source for seen, _ in every)
    assert stored == [f"{url}#t=0", f"{url}#t=2", f"{url}#t=4"]
    # The first second cut, H.264 at a low bit rate: every keyframe is a second earlier.
    reupload = transcode(clip, tmp_path / "re.mp4", bit_rate=150_000, cut_start=1.0)
    found = read(reupload, store, IMAGES)
    queries = sorted(m.query for m in found.claim_matches)
    assert [m.record.review_url for m in found.claim_matches] == [REVIEW_URL] * 3
    assert queries == [
        "video 1 keyframe 1 at 0:00 (pHash distance 0), the fact-checked video at 0:00",
        "video 1 keyframe 2 at 0:01 (pHash distance 0), the fact-checked video at 0:02",
        "video 1 keyframe 3 at 0:03 (pHash distance 0), the fact-checked video at 0:04",
    ]
    [report] = found.reports
    assert report.keyframes[1].matches[0].source == f"{url}#t=2"


def test_a_cropped_reupload_pHash_misses_is_found_by_the_keyframe_embedding(
    clip: Path, tmp_path: Path
) -> None:
    images = IMAGES.model_copy(update={"embedding": True})
    store, _ = imported(clip, images)
    reupload = transcode(clip, tmp_path / "crop.mp4", picture=crop_border(0.10))
    found = read(reupload, store, images)
    [report] = found.reports
    assert found.claim_matches == []  # pHash: 16-22 bits apart, over the distance of 10
    possible = [m for k in report.keyframes for m in k.matches]
    assert possible and all(m.possible and m.similarity for m in possible)
    assert all(m.fact_check_url == REVIEW_URL for m in possible)
    [note, *_] = [n for n in found.notes if "may be the image of the fact-check" in n]
    assert note.startswith("video 1 keyframe 1 at 0:00 may be the image of the fact-check ")

    auto = images.model_copy(update={"embedding_auto_match": True})
    matched = read(reupload, imported(clip, auto)[0], auto)
    assert matched.claim_matches
    first = min(matched.claim_matches, key=lambda m: m.query)
    assert first.query.startswith("video 1 keyframe 1 at 0:00 (embedding 0.")
    assert first.query.endswith(", the fact-checked video at 0:00")
