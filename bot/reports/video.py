"""The audit report's video figures: how many posts had a video and what the check read from
them (issue 34). Counted a batch of requests at a time inside the report's batched pass
(`bot.reports.audit.collect`): from each request's post (its media kinds) and only the `videos` and
`analysis` of its latest decision's trace, extracted in SQL, never the whole trace.

"Over a cap" is a video refused by one of `[video]`'s caps or budgets (bytes, seconds, pixels,
the decoder's wall, CPU and memory budgets), told from other unreadable videos by the wording
`pipeline.video.intake`, `pipeline.video.frames` and `pipeline.capped_read` give those refusals.
A claim "came from a video" when at least `FROM_VIDEO` of its content words are in the text
read from the post's videos (OCR and transcript): the claim analysis works on the post's whole
content and does not say where each claim was read."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from pydantic import ValidationError

from adapters.base import VIDEO_KINDS
from bot.reports.detail import Drill
from pipeline.relevance.lexical import terms
from pipeline.video.records import VideoReport
from storage import report as report_db
from storage.db import Session
from storage.models import Request

OVER_CAP = re.compile(
    r"over the cap of|runs past the cap|pixels a frame|over the pixel cap|: over \d+ bytes"
    r"|too large: over|over the wall deadline|over its budget of|over the memory budget"
    r"|no answer \(over \d+ MB\?\)"
)
FROM_VIDEO = 0.8  # share of a claim's content words found in the text read from its videos


@dataclass
class VideoCounts:
    posts: int = 0  # posts (or the posts they quote) with a video or animated GIF
    previews_only: int = 0  # videos the platform gave only as a preview image: never read
    videos: int = 0  # videos the check tried to read
    read: int = 0
    over_caps: int = 0
    unreadable: int = 0  # not readable for another reason (broken, not found, refused)
    keyframes: int = 0
    keyframes_with_text: int = 0
    with_text: int = 0  # videos with text read on screen (OCR)
    with_transcript: int = 0
    transcription_failed: int = 0  # an endpoint was configured and did not answer
    not_transcribed: int = 0  # no endpoint configured, or no sound track
    keyframe_fact_checks: int = 0  # keyframes that are a fact-checked picture
    claims: int = 0  # claims of the checked posts with videos
    claims_from_video: int = 0

    def add(self, other: VideoCounts) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def _video_media(post: Any) -> list[dict[str, Any]]:
    """The video media of a stored post and of the post it quotes."""
    found: list[dict[str, Any]] = []
    while isinstance(post, dict):
        found += [
            m
            for m in post.get("media") or []
            if isinstance(m, dict) and m.get("kind") in VIDEO_KINDS
        ]
        post = post.get("quoted")
    return found


def video_counts(session: Session, requests: Sequence[Request], drill: Drill) -> VideoCounts:
    """The figures of one batch: `requests` with their decisions loaded (traces deferred);
    each request goes into `drill` under "video:<figure>" for the figures it counts in."""
    counts = VideoCounts()
    media = {r.id: _video_media(r.target) for r in requests}
    latest = {max(d.id for d in r.decisions): r.id for r in requests if r.decisions}
    traces: dict[int, tuple[Any, Any]] = {}
    if latest:
        rows = report_db.video_traces(session, list(latest))
        traces = {latest[i]: (videos, analysis) for i, videos, analysis in rows}
    for request in requests:
        videos, analysis = traces.get(request.id, (None, None))
        reports = _reports(videos)
        if not media[request.id] and not reports:
            continue
        one = VideoCounts(posts=1)
        one.previews_only = sum(1 for m in media[request.id] if not m.get("video_url"))
        _count_reports(one, reports)
        _count_claims(one, reports, analysis)
        counts.add(one)
        for f in fields(one):
            if getattr(one, f.name):
                drill.add(f"video:{f.name}", request.id)
    return counts


def _reports(raw: Any) -> list[VideoReport]:
    reports = []
    for item in raw if isinstance(raw, list) else []:
        try:
            reports.append(VideoReport.model_validate(item))
        except ValidationError:  # a trace of another version: not counted
            continue
    return reports


def _count_reports(counts: VideoCounts, reports: list[VideoReport]) -> None:
    for report in reports:
        counts.videos += 1
        if report.error is not None:
            if OVER_CAP.search(report.error):
                counts.over_caps += 1
            else:
                counts.unreadable += 1
            continue
        counts.read += 1
        counts.keyframes += len(report.keyframes)
        counts.keyframes_with_text += sum(1 for k in report.keyframes if k.ocr)
        counts.keyframe_fact_checks += sum(
            1 for k in report.keyframes if any(m.fact_check_url for m in k.matches)
        )
        counts.with_text += bool(report.findings)
        if report.transcript:
            counts.with_transcript += 1
        elif "transcription failed" in report.speech:
            counts.transcription_failed += 1
        else:
            counts.not_transcribed += 1


def _count_claims(counts: VideoCounts, reports: list[VideoReport], analysis: Any) -> None:
    claims = (analysis or {}).get("claims") if isinstance(analysis, dict) else None
    if not isinstance(claims, list):
        return
    read = " ".join(
        [f.text for r in reports for f in r.findings] + [r.transcript or "" for r in reports]
    )
    seen = set(terms(read))
    for claim in claims:
        counts.claims += 1
        words = terms(str(claim))
        if words and sum(w in seen for w in words) >= FROM_VIDEO * len(words):
            counts.claims_from_video += 1
