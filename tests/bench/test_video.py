"""The video benchmark's scoring: each caption is scored against the text on screen at its
scene's midpoint, and a caption nothing was read for counts as wholly wrong; the near-duplicate
copies are what their names say, a known claim and a possible match are counted apart, and a
small run recalls a trimmed re-upload without taking an unrelated clip for it."""

from __future__ import annotations

from pathlib import Path

import av
import pytest

from bench.video import COPIES, SIZES, _found, caption_errors, clip, duplicates, scenes
from pipeline.claims.index import ClaimMatch, ClaimRecord, MatchStrength
from pipeline.claims.ratings import Rating
from pipeline.images.records import ImageMatch
from pipeline.video.reader import VideoStageResult
from pipeline.video.records import KeyframeReport, VideoFinding, VideoReport
from testing.video_samples import Scene


def test_a_caption_is_scored_against_the_text_on_screen_at_its_midpoint() -> None:
    shown = [Scene("Dam burst", 2.0), Scene("Banks close", 2.0), Scene("Curfew", 2.0)]
    report = VideoReport(
        owner="post",
        number=1,
        source="v.mp4",
        findings=[
            VideoFinding(text="Dam burst", start=0.0, end=2.0),
            VideoFinding(text="Banks clase", start=2.0, end=4.0),
            VideoFinding(text="Curfew", start=0.0, end=0.5),  # not on screen in scene 3
        ],
    )
    assert caption_errors(report, shown) == [0.0, 1 / len("Banks close"), 1.0]


def test_every_size_and_position_is_rendered() -> None:
    shown = scenes()
    assert {s.size for s in shown} == set(SIZES)
    assert {s.position for s in shown} == {"top", "middle", "bottom"}


def test_a_copy_is_what_its_name_says(tmp_path: Path) -> None:
    original = clip(tmp_path, 0, seed=1)
    cropped = COPIES["crop_10pct"](original, tmp_path / "crop.mp4")
    trimmed = COPIES["trim_1s"](original, tmp_path / "trim.mp4")
    halved = COPIES["scale_50pct"](original, tmp_path / "half.mp4")
    with av.open(str(original)) as a, av.open(str(cropped)) as b:
        assert (b.streams.video[0].width, b.streams.video[0].height) == (512, 288)
        assert a.streams.video[0].codec_context.name == "mpeg4"
        assert b.streams.video[0].codec_context.name == "h264"
    with av.open(str(trimmed)) as c, av.open(str(halved)) as d:
        assert c.streams.video[0].frames == 40  # 6 s at 10 fps, a second off each end
        assert (d.streams.video[0].width, d.streams.video[0].height) == (320, 180)


def test_known_and_possible_matches_are_told_apart_and_counted_once_per_fact_check() -> None:
    record = ClaimRecord(claim_text="x", review_url="https://a.example/1", rating=Rating.FALSE)
    strong = ClaimMatch(
        record=record,
        score=1.0,
        dense=0.0,
        lexical=0.0,
        strength=MatchStrength.STRONG,
        possibly_outdated=False,
    )
    frames = [
        KeyframeReport(t=0.0, end=2.0, matches=[match("https://a.example/1", possible=False)]),
        KeyframeReport(t=2.0, end=4.0, matches=[match("https://a.example/1", possible=True)]),
        KeyframeReport(t=4.0, end=6.0, matches=[match("https://a.example/2", possible=True)]),
    ]
    report = VideoReport(owner="post", number=1, source="v.mp4", keyframes=frames)
    found = VideoStageResult(reports=[report], claim_matches=[strong, strong])
    assert _found(found) == ({"https://a.example/1"}, {"https://a.example/2"})


def match(url: str, *, possible: bool) -> ImageMatch:
    return ImageMatch(
        sha256="0" * 64, source="s", distance=20, fact_check_url=url, possible=possible
    )


@pytest.mark.process
def test_a_trimmed_reupload_is_recalled_and_an_unrelated_clip_is_no_known_claim() -> None:
    found = duplicates(
        lambda _: None, sources=1, distractors=1, copies={"trim_1s": COPIES["trim_1s"]}, ocr=False
    )
    assert found["dup_trim_1s_known"] == 1.0 and found["dup_trim_1s_wrong"] == 0.0
    assert found["dup_distractor_false_known"] == 0.0
    assert found["dup_trim_1s_false_known"] == 0.0  # the same edit on the unrelated clip
    assert {"dup_trim_1s_false_possible", "dup_distractor_false_possible"} <= found.keys()
