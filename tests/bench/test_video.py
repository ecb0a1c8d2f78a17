"""The video benchmark's scoring: each caption is scored against the text on screen at its
scene's midpoint, and a caption nothing was read for counts as wholly wrong."""

from __future__ import annotations

from bench.video import SIZES, caption_errors, scenes
from pipeline.video.records import VideoFinding, VideoReport
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
