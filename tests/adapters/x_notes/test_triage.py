"""Triage of video-only posts in the Community Notes feed: one whose video X offers as an MP4
within the pipeline's caps goes on to be checked (its smallest MP4 is the file the pipeline
reads); one with nothing to read (only an HLS playlist, or over the caps) is skipped, saying
which. The feed is the loopback fake (testing/fakes/x_notes_api.py: media `variants` shaped
after spec 2.159 `Video`/`AnimatedGif`/`Variant` and spec 2.167 `MediaVariants`, served only
when `media.fields` asks for them), every exchange held to both specs (tests/contract)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from adapters.base import FetchResult, MediaRef, SocialPost, TargetStatus, VideoCaps
from adapters.x.client import XCredentials
from adapters.x_notes.adapter import NotesOptions, XNotesAdapter
from adapters.x_notes.budget import RequestBudget
from adapters.x_notes.client import NotesClient
from adapters.x_notes.triage import skip_reason
from bot.notes.store import SqlNoteStore
from storage.db import Database
from testing.fakes.x_notes_api import VIDEO_CDN, FakeNotesApi, post

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CREDS = XCredentials("bearer", "ck", "cs", "at", "ats", "1", "factnote")
HOUR_AGO = NOW - timedelta(hours=1)


def fetch(db: Database, items: list[dict[str, Any]], **options: Any) -> FetchResult:
    with FakeNotesApi([items]) as api:
        budget = RequestBudget(90, timedelta(minutes=15), lambda: NOW)
        client = NotesClient(CREDS, budget, base_url=api.base_url)
        notes = XNotesAdapter(client, SqlNoteStore(db), NotesOptions(**options), clock=lambda: NOW)
        return notes.fetch_summons(None)


def by_id(result: FetchResult) -> dict[str, tuple[TargetStatus, str]]:
    return {s.id: (s.target_status, s.target_reason) for s in result.summons}


def test_a_video_only_post_with_an_mp4_goes_on_to_be_checked_with_its_smallest_file(
    db: Database,
) -> None:
    result = fetch(db, [post("31", "watch this", HOUR_AGO, media=["video"])])

    [summons] = result.summons
    assert summons.target_status is TargetStatus.OK
    assert summons.target is not None
    [clip] = summons.target.media
    assert clip.kind == "video"
    assert clip.video_url == f"{VIDEO_CDN}/ext_tw_video/7_310/pu/vid/480x270/v.mp4"
    assert clip.url.endswith("/pu/img/p.jpg")  # the preview a reviewer is shown


def test_a_gif_only_post_goes_on_with_its_one_mp4(db: Database) -> None:
    result = fetch(db, [post("32", "lol", HOUR_AGO, media=["animated_gif"])])

    [summons] = result.summons
    assert summons.target_status is TargetStatus.OK
    assert summons.target is not None
    assert summons.target.media[0].video_url == f"{VIDEO_CDN}/tweet_video/16_320.mp4"


def test_a_video_only_post_offered_only_as_an_hls_playlist_is_skipped_saying_so(
    db: Database,
) -> None:
    result = fetch(db, [post("33", "watch this", HOUR_AGO, media=["video/hls"])])

    assert by_id(result)["33"] == (
        TargetStatus.UNAVAILABLE,
        "notes triage: video-only post with no video file to read "
        "(media 7_330: no MP4 file (application/x-mpegURL))",
    )


def test_a_video_only_post_over_the_byte_cap_by_estimate_is_skipped_saying_so(
    db: Database,
) -> None:
    # The fake's smallest MP4: 256,000 bit/s for 20 s, about 640,000 bytes.
    items = [post("34", "watch this", HOUR_AGO, media=["video"])]
    result = fetch(db, items, video_caps=VideoCaps(max_bytes=600_000))

    status, reason = by_id(result)["34"]
    assert status is TargetStatus.UNAVAILABLE
    assert reason == (
        "notes triage: video-only post with no video file to read (media 7_340: its smallest "
        "MP4 is about 640,000 bytes (256,000 bit/s), over the cap of 600,000)"
    )


def test_a_video_only_post_longer_than_the_seconds_cap_is_skipped_saying_so(
    db: Database,
) -> None:
    items = [post("35", "watch this", HOUR_AGO, media=["video"])]
    result = fetch(db, items, video_caps=VideoCaps(max_seconds=10))

    assert by_id(result)["35"][1] == (
        "notes triage: video-only post with no video file to read "
        "(media 7_350: 20 s long, over the cap of 10 s)"
    )


def test_a_post_with_a_video_and_a_photo_is_not_video_only(db: Database) -> None:
    result = fetch(db, [post("36", "see both", HOUR_AGO, media=["video/hls", "photo"])])

    assert by_id(result)["36"] == (TargetStatus.OK, "")


def test_the_skip_reason_says_none_offered_when_no_video_has_a_note() -> None:
    bare = SocialPost(
        id="1",
        author="a",
        text="",
        created_at=HOUR_AGO,
        media=[MediaRef(url="https://pbs.twimg.com/x.jpg", kind="video")],
    )
    assert skip_reason(bare, now=NOW, max_age=timedelta(hours=24)) == (
        "video-only post with no video file to read (none offered)"
    )
