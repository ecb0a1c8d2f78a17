"""A post's video on the item page in a real headless Chromium (issue 34): a clip read by the
real video stage (keyframes, offline OCR, the image store's copies, speech through a fake
transcription server) shows each keyframe picture with its time and text, the captions with
their time ranges, and the transcript, whose markup stays text.

With FACTNOTE_SCREENSHOTS=docs/images set, the test also saves the moderator guide's picture
of the section (docs/moderator-guide.md) there."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.config import FetchConfig, ImagesConfig, TranscriptionConfig, VideoConfig
from pipeline.images.ocr import get_ocr
from pipeline.images.reader import ImageReader
from pipeline.records import Post, Video
from pipeline.video.reader import VideoReader
from pipeline.video.records import VideoReport
from pipeline.video.transcribe import build_transcriber
from pipeline.web.fetch import Fetcher
from storage.images import SqlImageStore
from testing.fakes.transcription_server import TranscriptionServer
from testing.video_samples import Scene, render_pictures, scene_image
from tests.bot.web.app_env import MODERATOR, AppEnv, log_in
from tests.bot.web.video_trace import put_videos

SHOTS = os.environ.get("FACTNOTE_SCREENSHOTS", "")  # a folder for the guide's picture, if set

pytestmark = [pytest.mark.browser, pytest.mark.process]

NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
SCENES = [
    Scene("", 1.0, background=(20, 90, 40)),
    Scene("Hot lemon water every hour", 2.0, background=(90, 30, 30), size=34),
    Scene("kills the flu virus in your throat", 3.0, background=(30, 30, 110), size=34),
]
# What a stranger's voice-over might say: markup that must stay text on the page.
SAID = "Doctors hate this <img src=x onerror=\"document.title='pwned'\"> one lemon trick"


def read_clip(app_env: AppEnv, folder: Path) -> VideoReport:
    """The clip read as the worker reads it, its keyframe copies kept in the app's store."""
    shots = [(scene_image(s, 640, 360), s.seconds) for s in SCENES]
    clip = render_pictures(folder / "lemon.mp4", shots, tone_hz=440)
    images_cfg = ImagesConfig(local_dir=str(folder), embedding=False)
    fetcher = Fetcher(FetchConfig())
    with TranscriptionServer(text=SAID) as server:
        reader = VideoReader(
            VideoConfig(local_dir=str(folder)),
            fetcher,
            images_cfg=images_cfg,
            ocr=get_ocr(images_cfg),
            pictures=ImageReader(images_cfg, fetcher, store=SqlImageStore(app_env.db)),
            transcriber=build_transcriber(TranscriptionConfig(base_url=server.base_url)),
        )
        post = Post(
            id="v1",
            author="someone_demo",
            text="",
            created_at=NOW,
            videos=[Video(source=str(clip))],
        )
        [report] = reader.read_post(post, NOW).reports
    return report


def test_the_keyframes_their_times_and_the_transcript_in_a_browser(
    app_env: AppEnv, page: object, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    report = read_clip(app_env, tmp_path)
    assert [round(k.t) for k in report.keyframes] == [0, 1, 3], report
    rid = put_videos(app_env, [report])
    p = page
    p.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    log_in(p, MODERATOR)
    p.goto(f"/requests/{rid}")  # type: ignore[attr-defined]
    section = p.locator("#videos")  # type: ignore[attr-defined]
    expect(section.locator(".keyframe")).to_have_count(3)
    expect(section.locator(".keyframe time.at")).to_have_text(["0:00", "0:01", "0:03"])
    expect(section.locator(".video-findings li")).to_have_count(2)
    expect(section.locator(".video-findings time")).to_have_text(["0:01-0:03", "0:03-0:06"])
    section.scroll_into_view_if_needed()
    # The pictures load after the page (lazily, once in view): wait until each has finished.
    # Playwright's own assertion, not `wait_for_function`: that polls by evaluating a string
    # in the page, which the page's CSP (no 'unsafe-eval') refuses once it has to poll.
    images = section.locator(".keyframe img")
    for n in range(3):
        images.nth(n).scroll_into_view_if_needed()
        expect(images.nth(n)).to_have_js_property("complete", True)
    # Every keyframe picture is our stored copy, loaded (the image route's CSP allows it).
    loaded = p.evaluate(  # type: ignore[attr-defined]
        "Array.from(document.querySelectorAll('#videos .keyframe img'))"
        ".map(i => i.complete && i.naturalWidth > 0 && i.getAttribute('src'))"
    )
    assert len(loaded) == 3 and all(str(src).startswith("/images/") for src in loaded), loaded
    # The voice-over's markup is text: no element made of it, no handler run.
    transcript = section.locator(".transcript")
    expect(transcript).to_have_text(SAID)
    expect(transcript.locator("img")).to_have_count(0)
    assert p.title() != "pwned"  # type: ignore[attr-defined]
    if SHOTS:
        folder = Path(SHOTS)
        folder.mkdir(parents=True, exist_ok=True)
        section.screenshot(path=str(folder / "item-video.png"))
