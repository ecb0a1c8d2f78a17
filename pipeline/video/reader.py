"""Videos as text: each video of a post is taken in safely and decoded into keyframes in a
budgeted child process (`intake`), each keyframe is read offline (the images' OCR), hashed
(pHash) and, with `[images] embedding`, embedded, and matched like a posted picture
(`ImageReader.match_picture`) against the remembered fact-checked pictures and the keyframes of
fact-checked videos (`pipeline.video.factchecks`): a re-upload of a debunked clip is a known
claim whose query names the keyframe's time in both videos. The text read is de-duplicated
across frames, each text once with the time range it was on screen.

What was read becomes the video's description ("Text in the video ... [0:01-0:03] "..."") and
text, untrusted data like a post's own words, capped at `VideoConfig.max_text_chars`; the
decision's reasons say which frames and time ranges the text came from, and whether speech was
transcribed. A video that cannot be read is a problem line with the reason, never a failure of
the check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from pipeline.claims.index import ClaimMatch
from pipeline.config import ImagesConfig, VideoConfig
from pipeline.images.intake import ImageUnreadable, IntakeImage, decode
from pipeline.images.ocr import OcrEngine
from pipeline.images.phash import phash
from pipeline.images.reader import ImageReader, possible_match_notes
from pipeline.images.records import ImageReport, OcrLine
from pipeline.llm.prompts import cut_text
from pipeline.records import Post, Video
from pipeline.relevance.lexical import terms
from pipeline.video.factchecks import source_time
from pipeline.video.intake import DecodedVideo, VideoUnreadable, take_in_video
from pipeline.video.records import KeyframeReport, VideoFinding, VideoReport, clock
from pipeline.video.transcribe import Transcriber, TranscriptionFailed, build_transcriber
from pipeline.web.fetch import Fetcher

if TYPE_CHECKING:
    from pipeline.shared_parts import SharedParts

__all__ = ["VideoReader", "VideoStageResult", "merge_findings", "video_unreadable_only"]

# Two OCR readings of one caption on two frames differ by a letter or two (compression, a
# moving background): this similarity (rapidfuzz ratio, 0-100) or more is the same text.
SAME_TEXT = 85.0


@dataclass
class VideoStageResult:
    reports: list[VideoReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per video not read
    notes: list[str] = field(default_factory=list)  # where the text came from, speech
    claim_matches: list[ClaimMatch] = field(default_factory=list)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def merge_findings(frames: list[KeyframeReport], min_chars: int = 2) -> list[VideoFinding]:
    """Each line read in the keyframes once, in order of first appearance, with the time range
    from its first frame's start to its last frame's end."""
    found: list[VideoFinding] = []
    for number, frame in enumerate(frames, 1):
        for line in frame.ocr:
            text = " ".join(line.text.split())
            if sum(ch.isalnum() for ch in text) < min_chars:
                continue
            same = next(
                (f for f in found if fuzz.ratio(_normal(f.text), _normal(text)) >= SAME_TEXT),
                None,
            )
            if same is None:
                found.append(VideoFinding(text=text, start=frame.t, end=frame.end, frames=[number]))
            else:
                same.start, same.end = min(same.start, frame.t), max(same.end, frame.end)
                if number not in same.frames:
                    same.frames.append(number)
    return found


def describe(report: VideoReport, limit: int) -> tuple[str, str]:
    """The video's description (text with times, then speech) and its plain text, each cut to
    `limit` plus the transcript's own cap."""
    parts: list[str] = []
    plain: list[str] = []
    if report.findings:
        quoted = "; ".join(f'[{f.span}] "{f.text}"' for f in report.findings)
        said = f"Text in the video (read by OCR from its keyframes): {quoted}"
        parts.append(cut_text(said, limit))
        plain.append(cut_text(" ".join(f.text for f in report.findings), limit))
    if report.transcript:
        span = f"0:00-{clock(report.transcript_seconds)}"
        parts.append(f'Speech in the video ({span}, transcribed): "{report.transcript}"')
        plain.append(report.transcript)
    return ". ".join(parts), " ".join(plain)


class VideoReader:
    """Reads the videos of posts; built per check from the long-lived shared parts."""

    def __init__(
        self,
        cfg: VideoConfig,
        fetcher: Fetcher,
        *,
        images_cfg: ImagesConfig | None = None,
        ocr: OcrEngine | None = None,
        pictures: ImageReader | None = None,
        transcriber: Transcriber | None = None,
    ) -> None:
        self.cfg = cfg
        self.fetcher = fetcher
        self.images_cfg = images_cfg or ImagesConfig()
        self.ocr = ocr
        self.pictures = pictures
        self.transcriber = transcriber

    @classmethod
    def from_shared(cls, shared: SharedParts) -> VideoReader:
        return cls(
            shared.cfg.video,
            shared.fetcher,
            images_cfg=shared.cfg.images,
            ocr=shared.ocr,
            pictures=ImageReader.from_shared(shared),
            transcriber=build_transcriber(shared.cfg.transcription),
        )

    def read_post(self, post: Post, as_of: datetime) -> VideoStageResult:
        """Read every video of `post` (and of the post it quotes) that has no description yet,
        in place, and report on each."""
        result = VideoStageResult()
        for owner, name in ((post, "post"), (post.quoted, "quoted post")):
            if owner is None:
                continue
            for number, video in enumerate(owner.videos, 1):
                if video.description:
                    continue
                report = VideoReport(owner=name, number=number, source=video.source)
                result.reports.append(report)
                start = time.perf_counter()
                self._read_one(video, report, as_of, result)
                report.seconds = round(time.perf_counter() - start, 3)
        return result

    def _read_one(
        self, video: Video, report: VideoReport, as_of: datetime, result: VideoStageResult
    ) -> None:
        audio = self.transcriber.cfg.max_minutes * 60 if self.transcriber is not None else 0.0
        try:
            decoded = take_in_video(video.source, self.fetcher, self.cfg, audio)
        except VideoUnreadable as exc:
            report.error = str(exc)
            result.problems.append(f"{report.label} not read: {exc}")
            video.description = _not_analysed(video, f"unreadable: {exc}")
            return
        report.sha256, report.codec = decoded.sha256, decoded.codec
        report.duration = decoded.duration
        report.width, report.height = decoded.width, decoded.height
        report.decoded_frames, report.decoder_peak_mib = decoded.decoded, decoded.peak_rss_mib
        report.keyframes = self._keyframes(decoded, report, as_of, result)
        report.findings = merge_findings(report.keyframes)
        self._speech(decoded, report)
        result.notes.append(f"{report.label}: {report.speech}")
        if not report.findings and not report.transcript:
            what = f"no text in its {len(report.keyframes)} keyframe(s)"
            result.notes.append(f"{report.label}: {what}")
            video.description = _not_analysed(video, what)
            return
        video.description, video.text = describe(report, self.cfg.max_text_chars)
        if video.alt_text:
            video.description += f". Alt text: {video.alt_text}"
        if report.findings:
            spans = ", ".join(f.span for f in report.findings)
            frames = sorted({n for f in report.findings for n in f.frames})
            result.notes.append(
                f"{report.label}: text read by OCR at {spans} (keyframe(s) "
                f"{', '.join(map(str, frames))} of {len(report.keyframes)}, "
                f"{decoded.duration:.1f} s)"
            )

    def _speech(self, decoded: DecodedVideo, report: VideoReport) -> None:
        """Transcribe the sound track when an endpoint is configured; `report.speech` says
        what became of it, a failure as a failure."""
        if self.transcriber is None:
            return  # the report's default says so
        if decoded.audio_error is not None:
            report.speech = f"speech not transcribed: sound track unreadable: {decoded.audio_error}"
        elif decoded.audio is None or decoded.audio_seconds == 0:
            report.speech = "speech not transcribed: the video has no sound track"
        else:
            try:
                text = self.transcriber.transcribe(decoded.audio)
            except TranscriptionFailed as exc:
                report.speech = f"speech not transcribed: transcription failed: {exc}"
                return
            report.transcript = cut_text(text, self.transcriber.cfg.max_chars)
            report.transcript_seconds = decoded.audio_seconds
            report.speech = (
                f"speech transcribed by {self.transcriber.name} "
                f"(0:00-{clock(decoded.audio_seconds)})"
            )

    def _keyframes(
        self,
        decoded: DecodedVideo,
        report: VideoReport,
        as_of: datetime,
        result: VideoStageResult,
    ) -> list[KeyframeReport]:
        out: list[KeyframeReport] = []
        last = max(decoded.duration, decoded.keyframes[-1].t)
        ends = [k.t for k in decoded.keyframes[1:]] + [last]
        for number, (frame, end) in enumerate(zip(decoded.keyframes, ends, strict=True), 1):
            kf = KeyframeReport(t=frame.t, end=end)
            out.append(kf)
            source = f"{report.source[:200]}#t={frame.t:g}"
            try:
                taken = decode(frame.png, self.images_cfg, source)
            except ImageUnreadable as exc:  # our own child's PNG: not expected
                kf.ocr_error = str(exc)
                continue
            kf.phash = phash(taken.image, self.images_cfg.hash_side)
            if self.ocr is not None and self.images_cfg.ocr:
                read = self.ocr.read(taken.image)
                kf.ocr, kf.ocr_error = _kept(read.lines), read.error
            if self.pictures is None:
                continue
            picture = ImageReport(
                owner=f"{report.label} keyframe", number=number, source=source, phash=kf.phash
            )
            picture.ocr = kf.ocr
            picture.sha256 = taken.sha256
            where = f"{report.label} keyframe {number} at {clock(frame.t)}"
            result.claim_matches.extend(self._matches(taken, picture, where, as_of))
            kf.matches = picture.matches
            prefix = f"{picture.owner} image {number}"
            result.notes.extend(
                where + line.removeprefix(prefix) for line in possible_match_notes(picture)
            )
        return out

    def _matches(
        self, taken: IntakeImage, picture: ImageReport, where: str, as_of: datetime
    ) -> list[ClaimMatch]:
        """The keyframe's known-claim matches among the remembered pictures (pHash, then the
        embedding), each query naming the keyframe's time and, for a fact-checked video's
        keyframe, that video's time too."""
        assert self.pictures is not None
        prefix = f"{picture.owner} image {picture.number}"
        found = self.pictures.match_picture(taken, picture, as_of)
        out: list[ClaimMatch] = []
        for match in found:
            query = where + match.query.removeprefix(prefix)
            times = {
                t
                for m in picture.matches
                if m.fact_check_url == match.record.review_url
                and (t := source_time(m.source)) is not None
            }
            if times:
                query += f", the fact-checked video at {clock(min(times))}"
            out.append(match.model_copy(update={"query": query}))
        return out


def _kept(lines: list[OcrLine]) -> list[OcrLine]:
    return [line for line in lines if line.text.strip()]


def _not_analysed(video: Video, why: str) -> str:
    said = f"video not analysed ({why})"
    return said + (f". Alt text: {video.alt_text}" if video.alt_text else "")


def video_unreadable_only(post: Post, reports: list[VideoReport]) -> str | None:
    """Why the post cannot be checked when its only content is videos from which nothing could
    be read, else None."""
    if not reports or any(v.text or v.alt_text for v in post.videos):
        return None
    if post.images or (post.quoted is not None and post.quoted.text.strip()):
        return None
    own = " ".join(w for w in post.text.split() if not w.startswith("@"))
    if len(terms(own, stemming=False)) >= 3:
        return None
    why = "; ".join(f"{r.label}: {r.error}" for r in reports if r.error)
    return "the post's only content is a video from which nothing could be read" + (
        f" ({why})" if why else ""
    )
