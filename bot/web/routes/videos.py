"""The videos of a request's post as the item page shows them: each keyframe with its time and
the text read in it, the texts with the time ranges they were on screen (where the post's
claims came from), and what became of the sound track (the transcript, or why there is none).

Keyframe pictures are never stored by the video stage itself: the trace keeps each keyframe's
time and pHash only. What the page shows is the copy the image store already keeps of every
keyframe it compared (`ImageReader.match_picture`: our re-encoded JPEG, longer side at most
`[images] copy_side`, 1024 px by default, ~50-150 kB), served by `/images/{sha256}` like a
posted image. It is found by the keyframe's pHash and the source the video stage gives it
("<video source>#t=<seconds>"); a keyframe stored first from another video (a re-upload) is
shown with the source it was first seen at. Without an image store copy (no store, `copy_side`
0) the page says there is none. Everything read from a video is data: the template escapes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.web.routes.images import ImageMatchView, match_view
from pipeline.video.records import KeyframeReport, VideoReport, clock
from storage.db import Session
from storage.images import copies_by_phash


@dataclass(frozen=True)
class KeyframeView:
    number: int  # from 1, as the decision's reasons count them
    at: str  # m:ss, as a video player shows it
    until: str
    sha256: str | None  # our stored copy, when there is one
    first_seen: str | None  # the copy's source when it was first stored from another video
    ocr_text: str
    ocr_error: str | None
    matches: list[ImageMatchView] = field(default_factory=list)


@dataclass(frozen=True)
class FindingView:
    span: str  # m:ss-m:ss
    text: str
    frames: str  # "2, 3"


@dataclass(frozen=True)
class VideoView:
    label: str  # "video 1", "quoted post video 2"
    source: str  # shown as text only, never linked or loaded
    error: str | None
    facts: str  # duration, size, codec, keyframes
    speech: str  # the plain statement: transcribed, or why not
    transcript: str | None
    keyframes: list[KeyframeView] = field(default_factory=list)
    findings: list[FindingView] = field(default_factory=list)


def keyframe_source(video_source: str, t: float | None = None) -> str:
    """The source the video stage gives a keyframe it stores (`pipeline.video.reader`); without
    `t`, what the sources of all its keyframes start with."""
    return f"{video_source[:200]}#t=" + ("" if t is None else f"{t:g}")


def video_views(session: Session, trace: dict[str, Any] | None) -> list[VideoView]:
    """The videos of a decision's trace (`VideoReport`s as JSON), with their keyframes' stored
    copies looked up by pHash."""
    # Written by the pipeline from this model; the guard check of a draft (`review.check_edit`)
    # validates the whole stored decision the same way.
    reports = [VideoReport.model_validate(raw) for raw in (trace or {}).get("videos") or []]
    copies = _stored_copies(session, reports)
    return [_view(report, copies) for report in reports]


def _stored_copies(
    session: Session, reports: list[VideoReport]
) -> dict[str, list[tuple[str, str]]]:
    """(sha256, source) of the stored copies with each keyframe pHash, by pHash."""
    hashes = {k.phash for r in reports for k in r.keyframes if k.phash}
    return copies_by_phash(session, hashes)


def _view(report: VideoReport, copies: dict[str, list[tuple[str, str]]]) -> VideoView:
    facts: list[str] = []
    if report.duration is not None:
        facts.append(f"{clock(report.duration)} long ({report.duration:.1f} s)")
    if report.width and report.height:
        facts.append(f"{report.width}x{report.height}")
    if report.codec:
        facts.append(report.codec)
    if report.error is None:
        facts.append(f"{len(report.keyframes)} keyframe(s)")
    return VideoView(
        label=report.label,
        source=report.source,
        error=report.error,
        facts=", ".join(facts),
        speech=report.speech,
        transcript=report.transcript,
        keyframes=[
            _keyframe(n, k, report.source, copies) for n, k in enumerate(report.keyframes, 1)
        ],
        findings=[
            FindingView(span=f.span, text=f.text, frames=", ".join(map(str, f.frames)))
            for f in report.findings
        ],
    )


def _keyframe(
    number: int,
    frame: KeyframeReport,
    video_source: str,
    copies: dict[str, list[tuple[str, str]]],
) -> KeyframeView:
    own = keyframe_source(video_source, frame.t)
    stored = copies.get(frame.phash or "", [])
    mine = next((sha for sha, source in stored if source == own), None)
    first = None
    if mine is None and stored:  # the same picture, first stored from another video
        mine, first = stored[0]
    return KeyframeView(
        number=number,
        at=clock(frame.t),
        until=clock(frame.end),
        sha256=mine,
        first_seen=first,
        ocr_text="\n".join(line.text for line in frame.ocr),
        ocr_error=frame.ocr_error,
        matches=[
            match_view(m.model_dump(mode="json"))
            for m in frame.matches
            # Another keyframe of this same video, stored moments before: nothing learned.
            if m.fact_check_url or not m.source.startswith(keyframe_source(video_source))
        ],
    )
