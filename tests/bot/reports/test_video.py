"""The audit report counts posts with a video and what was read from them (issue 34): videos
read, refused over a cap, not readable, keyframes and those with text, transcripts, and the
claims read from a video; from each request's latest run, a batch at a time."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from sqlalchemy import select

import bot.reports.audit
from bot.ops.summary import CLI_PLATFORM
from bot.reports.audit import collect, render_html
from bot.reports.video import OVER_CAP, VideoCounts
from pipeline.images.records import ImageMatch, OcrLine
from pipeline.video.records import KeyframeReport, VideoFinding, VideoReport
from storage.db import Database
from storage.models import DecisionRow, Request, RequestState
from tests.bot.web.seed import Spec, seed

CAPTION = "The new 5G mast in Northvale is killing birds"
OWN_CLAIM = "Lemons cure every kind of flu within a day"


def figures(page: str) -> dict[str, str]:
    return {
        html.unescape(k): v.strip() for k, v in re.findall(r'data-key="([^"]+)">([^<]*)<', page)
    }


def read_video(**update: Any) -> dict[str, Any]:
    """A video read as `pipeline.video.reader` leaves it: three keyframes, two with the
    caption, the last the same picture as a fact-checked one."""
    caption = [OcrLine(text=CAPTION, score=0.97)]
    report = VideoReport(
        owner="post",
        number=1,
        source="https://video.example/a.mp4",
        duration=6.0,
        keyframes=[
            KeyframeReport(t=0.0, end=1.0, phash="0" * 16),
            KeyframeReport(t=1.0, end=3.0, phash="1" * 16, ocr=caption),
            KeyframeReport(
                t=3.0,
                end=6.0,
                phash="2" * 16,
                ocr=caption,
                matches=[
                    ImageMatch(
                        sha256="d" * 64,
                        source="https://fc.example/mast.jpg",
                        distance=1,
                        fact_check_url="https://fc.example/mast",
                    )
                ],
            ),
        ],
        findings=[VideoFinding(text=CAPTION, start=1.0, end=6.0, frames=[2, 3])],
    )
    return report.model_copy(update=update).model_dump(mode="json")


def refused(error: str, number: int = 1) -> dict[str, Any]:
    return VideoReport(owner="post", number=number, source="clip.mp4", error=error).model_dump(
        mode="json"
    )


def video_media(video_url: str | None) -> dict[str, Any]:
    return {"url": "https://pbs.example/preview.jpg", "kind": "video", "video_url": video_url}


def set_post(db: Database, request_id: int, media: list[dict[str, Any]], quoted: bool) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None and request.target is not None
        if quoted:
            request.target = {**request.target, "quoted": {**request.target, "media": media}}
        else:
            request.target = {**request.target, "media": media}


def set_trace(
    db: Database, request_id: int, videos: list[dict[str, Any]], claims: list[str]
) -> None:
    """The request's latest run reads `videos` and finds `claims`; its seeded run, before it,
    read a video too (the report counts the latest run only)."""
    with db.transaction() as session:
        [earlier] = session.scalars(select(DecisionRow).where(DecisionRow.request_id == request_id))
        earlier.trace = {"videos": [read_video()], "analysis": {"claims": [CAPTION]}}
        session.add(
            DecisionRow(
                request_id=request_id,
                status=earlier.status,
                platform=earlier.platform,
                as_of=earlier.as_of,
                trace={"videos": videos, "analysis": {"checkable": True, "claims": claims}},
            )
        )


@pytest.fixture
def video_db(main_db: Database) -> tuple[Database, dict[str, int]]:
    """On SQLite and on PostgreSQL: the trace's parts are read with each one's JSON operators."""
    db = main_db
    names = ["read", "failed_speech", "refused", "preview_quoted", "no_video", "check_run"]
    specs = [Spec(n, RequestState.DRY_RUN, platform="x", mode="dry-run") for n in names]
    specs[-1].platform = CLI_PLATFORM
    ids = seed(db, specs).ids
    set_post(db, ids["read"], [video_media("https://video.example/a.mp4")], quoted=False)
    set_trace(
        db,
        ids["read"],
        [read_video(transcript="birds fall from the sky near the mast", transcript_seconds=6.0)],
        [CAPTION, OWN_CLAIM],
    )
    set_post(db, ids["failed_speech"], [video_media("https://video.example/b.mp4")], quoted=False)
    failed = "speech not transcribed: transcription failed: Error code: 500"
    set_trace(db, ids["failed_speech"], [read_video(speech=failed)], [CAPTION.lower() + "!"])
    set_post(db, ids["refused"], [video_media("a.mp4"), video_media("b.mp4")], quoted=False)
    set_trace(
        db,
        ids["refused"],
        [
            refused("a.mp4: 5 s long, over the cap of 2.0 s"),
            refused("b.mp4: cannot decode: InvalidDataError: Invalid data", number=2),
        ],
        [],
    )
    set_post(db, ids["preview_quoted"], [video_media(None)], quoted=True)
    set_post(db, ids["check_run"], [video_media("c.mp4")], quoted=False)
    set_trace(db, ids["check_run"], [read_video()], [CAPTION])
    return db, ids


EXPECTED = VideoCounts(
    posts=3 + 1,  # read, failed_speech, refused; the quoted post's preview; not the check run
    previews_only=1,
    videos=4,
    read=2,
    over_caps=1,
    unreadable=1,
    keyframes=6,
    keyframes_with_text=4,
    with_text=2,
    with_transcript=1,
    transcription_failed=1,
    not_transcribed=0,
    keyframe_fact_checks=2,
    claims=4,  # the quoted preview's post has its seeded claim too
    claims_from_video=2,
)


def test_video_posts_and_what_was_read_are_counted_from_the_latest_run(
    video_db: tuple[Database, dict[str, int]],
) -> None:
    db, ids = video_db
    data = collect(db)
    assert data.videos == EXPECTED
    # Each figure links to the requests behind it.
    assert data.drill.get("video:over_caps") == [ids["refused"]]
    assert data.drill.get("video:previews_only") == [ids["preview_quoted"]]
    assert data.drill.get("video:claims_from_video") == [ids["read"], ids["failed_speech"]]
    assert data.drill.get("video:posts") == sorted(
        ids[n] for n in ("read", "failed_speech", "refused", "preview_quoted")
    )


def test_the_counts_are_the_same_whatever_the_batch_size(
    video_db: tuple[Database, dict[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot.reports.audit, "BATCH", 2)
    data = collect(video_db[0])
    assert data.videos == EXPECTED
    assert len(data.drill.get("video:posts")) == EXPECTED.posts


def test_the_report_page_shows_the_video_figures(
    video_db: tuple[Database, dict[str, int]],
) -> None:
    db, ids = video_db
    page = render_html(collect(db))
    shown = figures(page)
    assert shown["video:posts"] == "4"
    assert shown["video:over_caps"] == "1" and shown["video:unreadable"] == "1"
    assert shown["video:keyframes_with_text"] == "4"
    assert shown["video:claims_from_video"] == "2"
    assert "video:none" not in shown
    row = page[page.index('data-key="video:over_caps"') :].split("</tr>")[0]
    assert f'href="#r{ids["refused"]}"' in row


def test_a_period_without_video_posts_says_so(tmp_path: Any) -> None:
    db = Database(f"sqlite:///{tmp_path / 'plain.db'}")
    seed(db)
    shown = figures(render_html(collect(db)))
    db.dispose()
    assert "video:none" in shown and "video:posts" not in shown


@pytest.mark.parametrize(
    "error",
    [
        "clip.mp4: 5 s long, over the cap of 2.0 s",
        "clip.mp4: runs past the cap of 2.0 s",
        "clip.mp4: 640x360 is over 10,000 pixels a frame",
        "clip.mp4: a 4000x4000 frame is over the pixel cap",
        "clip.mp4: over 1000 bytes",
        "https://v.example/a.mp4: too large: over 1000 bytes",
        "decoding stopped: over the wall deadline of 0.05 s",
        "decoder killed: over its budget of 20 CPU seconds",
        "over the memory budget of 300 MB",
        "decoder gave no answer (over 300 MB?)",
    ],
)
def test_each_cap_refusal_is_over_a_cap(error: str) -> None:
    assert OVER_CAP.search(error)


@pytest.mark.parametrize(
    "error",
    [
        "clip.mp4: cannot decode: InvalidDataError: Invalid data found when processing input",
        "clip.mp4: no such file in the inbox folder /srv/inbox",
        "clip.mp4: outside the inbox folder /srv/inbox",
        "https://v.example/a.mp4: HTTP 404",
        "no video stream in the file",
    ],
)
def test_a_broken_or_missing_video_is_not_over_a_cap(error: str) -> None:
    assert not OVER_CAP.search(error)
