"""What the trace keeps about each video of a post: intake, its keyframes with their times,
what was read in them (each text once, with the time range it was on screen), and the
fact-checked pictures its keyframes match."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pipeline.images.records import ImageMatch, OcrLine


def clock(seconds: float) -> str:
    """`seconds` as m:ss, as a video player shows it."""
    whole = max(0, int(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


class KeyframeReport(BaseModel):
    t: float  # seconds from the start
    end: float  # when the next keyframe starts (or the video ends)
    phash: str | None = None
    ocr: list[OcrLine] = Field(default_factory=list)
    ocr_error: str | None = None
    matches: list[ImageMatch] = Field(default_factory=list)


class VideoFinding(BaseModel):
    """One text read in the video, once, with the time range it was on screen."""

    text: str
    start: float
    end: float
    frames: list[int] = Field(default_factory=list)  # keyframe numbers, from 1

    @property
    def span(self) -> str:
        return f"{clock(self.start)}-{clock(self.end)}"


class VideoReport(BaseModel):
    owner: str  # "post" or "quoted post"
    number: int  # 1-based, among the owner's videos
    source: str
    error: str | None = None  # why it could not be read; None when it was
    sha256: str | None = None
    duration: float | None = None
    width: int | None = None
    height: int | None = None
    codec: str | None = None
    decoded_frames: int = 0
    decoder_peak_mib: float = 0.0  # the decoding child's resident high-water mark
    seconds: float = 0.0  # wall time of intake, decoding and OCR
    keyframes: list[KeyframeReport] = Field(default_factory=list)
    findings: list[VideoFinding] = Field(default_factory=list)
    # Whether the sound track was transcribed, and if not why (said plainly in the decision).
    speech: str = "speech not transcribed: no transcription endpoint configured"
    transcript: str | None = None
    transcript_seconds: float = 0.0  # of the sound track sent

    @property
    def label(self) -> str:
        prefix = "" if self.owner == "post" else f"{self.owner} "
        return f"{prefix}video {self.number}"
