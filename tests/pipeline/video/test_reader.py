"""Videos in a check: keyframes read offline (OCR), each text once with the time range it was on
screen; a video-only post whose claim is only in burned-in captions is matched to a fact-check
in the claim index and gets the templated reply without an LLM; a re-upload of a debunked clip
is a known claim by its keyframes' pHash; a video-only post nothing can be read from abstains
saying why. Videos are rendered here with PyAV."""

from __future__ import annotations

import io
import wave
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image

from pipeline.check import Checker
from pipeline.claims.index import ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import (
    ClaimsConfig,
    CredibilityConfig,
    ImagesConfig,
    PipelineConfig,
    RelevanceConfig,
    TranscriptionConfig,
    VideoConfig,
)
from pipeline.images.phash import SeenImage, phash
from pipeline.images.records import OcrLine
from pipeline.records import DecisionStatus, Platform, Post, Verdict, Video
from pipeline.relevance.scoring import get_embedder
from pipeline.shared_parts import SharedParts
from pipeline.video.reader import merge_findings
from pipeline.video.records import KeyframeReport
from testing import indexes
from testing.fakes.transcription_server import TranscriptionServer
from testing.image_samples import photo
from testing.video_samples import Scene, render, render_pictures

pytestmark = pytest.mark.process

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
REVIEW_URL = "https://www.snopes.com/fact-check/lemon-water-flu/"
CLAIM = "Drinking hot lemon water every hour kills the flu virus in your throat."
CAPTIONED = [
    Scene("", 1.0, background=(20, 90, 40)),
    Scene("Hot lemon water every hour", 2.0, background=(90, 30, 30), size=34),
    Scene("kills the flu virus in your throat", 2.0, background=(30, 30, 110), size=34),
    Scene("kills the flu virus in your throat", 1.0, background=(100, 100, 30), size=34),
]


def frame(t: float, end: float, *texts: str) -> KeyframeReport:
    return KeyframeReport(t=t, end=end, ocr=[OcrLine(text=x, score=0.95) for x in texts])


def test_a_caption_over_several_keyframes_is_one_finding_with_its_time_range() -> None:
    frames = [
        frame(0.0, 2.0, "BREAKING"),
        frame(2.0, 4.0, "Dam burst upstream", "BREAKING"),
        frame(4.0, 7.5, "Dam burst upstrearn"),  # one letter misread: the same caption
        frame(7.5, 9.0, "-"),
    ]
    found = merge_findings(frames)
    assert [(f.text, f.start, f.end, f.frames) for f in found] == [
        ("BREAKING", 0.0, 4.0, [1, 2]),
        ("Dam burst upstream", 2.0, 7.5, [2, 3]),
    ]
    assert found[1].span == "0:02-0:07"


def shared_parts_for(
    tmp_path: Path,
    *,
    with_review: bool = True,
    transcription: str | None = None,
    enabled: bool = True,
) -> SharedParts:
    index = indexes.claim_index(
        tmp_path / "claims.sqlite", get_embedder(RelevanceConfig()), cfg=ClaimsConfig()
    )
    if with_review:
        index.add([review()])
    cfg = PipelineConfig(
        credibility=CredibilityConfig(),
        images=ImagesConfig(local_dir=str(tmp_path), embedding=False),
        video=VideoConfig(local_dir=str(tmp_path), enabled=enabled),
        transcription=TranscriptionConfig(base_url=transcription),
    )
    return indexes.build_parts(cfg, index_path=tmp_path / "index.sqlite", claim_index=index)


def review() -> ClaimRecord:
    return ClaimRecord(
        claim_text=CLAIM,
        review_url=REVIEW_URL,
        rating=Rating.FALSE,
        rating_text="False",
        publisher_name="Snopes",
        review_date=NOW - timedelta(days=30),
    )


def video_post(path: Path, text: str = "") -> Post:
    return Post(
        id="v1",
        author="someone_demo",
        text=text,
        created_at=NOW - timedelta(hours=1),
        videos=[Video(source=str(path))],
    )


def test_a_video_only_post_with_the_claim_in_burned_in_captions_gets_the_templated_reply(
    tmp_path: Path,
) -> None:
    shared = shared_parts_for(tmp_path)
    post = video_post(render(tmp_path / "clip.mp4", CAPTIONED))
    decision = Checker(shared).check(post, Platform.X, as_of=NOW)
    shared.close()
    [report] = decision.trace.videos
    assert [(f.text, f.span) for f in report.findings] == [
        ("Hot lemon water every hour", "0:01-0:03"),
        ("kills the flu virus in your throat", "0:03-0:06"),
    ]
    assert [k.t for k in report.keyframes] == [0.0, 1.0, 3.0, 5.0]
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.verdict is Verdict.REFUTED
    assert decision.reply is not None and REVIEW_URL in decision.reply
    assert "video 1: text read by OCR at 0:01-0:03, 0:03-0:06" in " ".join(decision.reasons)
    assert "video 1: speech not transcribed: no transcription endpoint configured" in (
        decision.reasons
    )


def test_a_reupload_of_a_debunked_clip_is_a_known_claim_by_its_keyframes(
    tmp_path: Path,
) -> None:
    stills = [photo(name).resize((640, 360)) for name in ("flower.jpg", "china.jpg")]
    shared = shared_parts_for(tmp_path, with_review=False)
    assert shared.images is not None
    shared.images.add(
        SeenImage(
            sha256="0" * 64,
            phash=phash(stills[1]),
            source="https://www.snopes.com/uploads/clip-still.jpg",
            seen_at=NOW - timedelta(days=40),
            fact_check=review().model_dump(mode="json"),
        )
    )
    clip = render_pictures(tmp_path / "reupload.mp4", [(stills[0], 1.0), (stills[1], 1.5)])
    post = video_post(clip, "look at this!!")
    decision = Checker(shared).check(post, Platform.X, as_of=NOW)
    shared.close()
    [report] = decision.trace.videos
    assert report.keyframes[0].matches == []
    assert [m.fact_check_url for m in report.keyframes[1].matches] == [REVIEW_URL]
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.reply is not None and REVIEW_URL in decision.reply


def test_a_video_only_post_that_cannot_be_read_abstains_saying_why(tmp_path: Path) -> None:
    shared = shared_parts_for(tmp_path)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00garbage" * 500)
    decision = Checker(shared).check(video_post(broken, "@factnote ?"), Platform.X, as_of=NOW)
    shared.close()
    assert decision.status is DecisionStatus.ABSTAIN
    assert decision.verdict is Verdict.NOT_CHECKABLE
    [reason] = [r for r in decision.reasons if r.startswith("not checkable")]
    assert "a video from which nothing could be read" in reason and "cannot decode" in reason


def test_with_a_transcription_endpoint_the_sound_track_is_transcribed_and_read_like_text(
    tmp_path: Path,
) -> None:
    still = Image.new("RGB", (320, 180), (40, 40, 40))
    clip = render_pictures(tmp_path / "talk.mp4", [(still, 3.0)], tone_hz=440)
    said = "Drinking hot lemon water every hour kills the flu virus in your throat"
    with TranscriptionServer(text=said) as server:
        shared = shared_parts_for(tmp_path, transcription=server.base_url)
        decision = Checker(shared).check(video_post(clip), Platform.X, as_of=NOW)
        shared.close()
    [sent] = server.requests
    assert sent.model == "whisper-1" and sent.filename == "audio.wav"
    with wave.open(io.BytesIO(sent.audio)) as wav:  # our own WAV of the first minutes
        assert (wav.getnchannels(), wav.getframerate()) == (1, 16_000)
        assert wav.getnframes() == pytest.approx(3.0 * 16_000, rel=0.05)
    [report] = decision.trace.videos
    assert report.transcript == said and report.speech.startswith("speech transcribed by")
    assert decision.status is DecisionStatus.REPLY, decision.reasons
    assert decision.reply is not None and REVIEW_URL in decision.reply


def test_a_failed_transcription_is_said_as_a_failure(tmp_path: Path) -> None:
    still = Image.new("RGB", (320, 180), (40, 40, 40))
    clip = render_pictures(tmp_path / "talk.mp4", [(still, 1.0)], tone_hz=440)
    with TranscriptionServer(status=500) as server:
        shared = shared_parts_for(tmp_path, transcription=server.base_url)
        decision = Checker(shared).check(video_post(clip, "@factnote"), Platform.X, as_of=NOW)
        shared.close()
    assert any("speech not transcribed: transcription failed" in r for r in decision.reasons)


def test_with_video_reading_off_a_video_is_said_not_analysed_and_never_opened(
    tmp_path: Path,
) -> None:
    shared = shared_parts_for(tmp_path, enabled=False)
    post = video_post(tmp_path / "never-read.mp4", "Hot lemon water every hour kills the flu")
    decision = Checker(shared).check(post, Platform.X, as_of=NOW)
    shared.close()
    assert decision.trace.videos == []
    assert post.videos[0].description is None  # the check worked on its own copy
    assert "not read" not in " ".join(decision.reasons)
