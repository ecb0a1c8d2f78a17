"""Safe video intake: the bytes of a post's video (a URL through the SSRF-guarded fetcher, or a
file from the inbox folder, both with a byte cap), decoded into keyframes by a child process
with a budget (`pipeline.video.frames`), so that a hostile file can cost a worker at most
`VideoConfig.decode_timeout_s` and never its memory.

What a refused or broken video gets is `VideoUnreadable` with the reason, one line: over a cap
(bytes, seconds, pixels), no video stream, FFmpeg's own error, killed past the wall deadline,
or killed by its CPU or memory limit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import VideoConfig
from pipeline.web.fetch import Fetcher
from pipeline.web.media_source import MediaLimits, MediaUnreadable, fetch_media, media_bytes

# What a video URL's server may declare; a generic type is sniffed by FFmpeg in the child.
VIDEO_MEDIA_TYPES = frozenset(
    {
        "video/mp4",
        "video/quicktime",
        "video/webm",
        "video/x-matroska",
        "video/mpeg",
        "image/gif",
        "application/octet-stream",
        "binary/octet-stream",
    }
)
VIDEO_ACCEPT = "video/mp4,video/webm;q=0.9,*/*;q=0.1"
_ROOT = Path(__file__).resolve().parents[2]


class VideoUnreadable(Exception):
    """The video could not be taken in or decoded: the message says why."""


@dataclass(frozen=True)
class Keyframe:
    t: float  # seconds from the start of the video
    png: bytes


@dataclass(frozen=True)
class DecodedVideo:
    sha256: str  # of the bytes as received
    duration: float
    width: int
    height: int
    codec: str
    decoded: int  # frames the child decoded
    keyframes: list[Keyframe]
    audio: bytes | None = None  # the first seconds of the sound track, 16 kHz mono WAV
    audio_seconds: float = 0.0  # 0.0: no sound track (or none asked for)
    audio_error: str | None = None
    peak_rss_mib: float = 0.0  # the decoding child's resident high-water mark


def _limits(cfg: VideoConfig) -> MediaLimits:
    return MediaLimits(
        "videos", "video.local_dir", cfg.local_dir, cfg.max_bytes, VIDEO_ACCEPT, VIDEO_MEDIA_TYPES
    )


def fetch_video(url: str, fetcher: Fetcher, cfg: VideoConfig) -> bytes:
    """The bytes at `url`, through the SSRF-guarded fetcher with the video byte cap."""
    try:
        return fetch_media(url, fetcher, _limits(cfg))
    except MediaUnreadable as exc:
        raise VideoUnreadable(str(exc)) from exc


def video_bytes(source: str, fetcher: Fetcher, cfg: VideoConfig) -> bytes:
    try:
        return media_bytes(source, fetcher, _limits(cfg))
    except MediaUnreadable as exc:
        raise VideoUnreadable(str(exc)) from exc


def _request(path: str, cfg: VideoConfig, audio_seconds: float) -> str:
    return json.dumps(
        {
            "path": path,
            "audio_path": str(Path(path).with_name("audio.wav")) if audio_seconds else None,
            "audio_seconds": audio_seconds,
            "max_seconds": cfg.max_seconds,
            "max_keyframes": cfg.max_keyframes,
            "max_pixels": cfg.max_pixels,
            "cpu_seconds": cfg.cpu_seconds,
            "memory_mb": cfg.memory_mb,
            "sample_fps": cfg.sample_fps,
            "scene_threshold": cfg.scene_threshold,
            "frame_side": cfg.frame_side,
        }
    )


def _child_env() -> dict[str, str]:
    # A clean environment: the process that parses a stranger's file gets none of our secrets.
    # PYTHONPATH: the child imports this tree's pipeline.video.frames, whatever the cwd.
    return {"PATH": os.defpath, "PYTHONPATH": str(_ROOT), "OMP_NUM_THREADS": "1"}


def _died(returncode: int, cfg: VideoConfig) -> str:
    if returncode == -signal.SIGXCPU or returncode == -signal.SIGKILL:
        return f"decoder killed: over its budget of {cfg.cpu_seconds} CPU seconds"
    if returncode < 0:
        return f"decoder died of signal {signal.Signals(-returncode).name}"
    return f"decoder exited with status {returncode}"


def run_child(data: bytes, cfg: VideoConfig, audio_seconds: float = 0.0) -> dict[str, object]:
    """The child's answer for the video in `data`; VideoUnreadable when it gave none. With
    `audio_seconds`, the WAV it wrote is in the answer as bytes under "audio"."""
    with tempfile.TemporaryDirectory(prefix="factnote-video-") as folder:
        path = Path(folder) / "video"
        path.write_bytes(data)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pipeline.video.frames"],
                input=_request(str(path), cfg, audio_seconds).encode("utf-8"),
                capture_output=True,
                timeout=cfg.decode_timeout_s,
                env=_child_env(),
                cwd=folder,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:  # run() has killed it
            raise VideoUnreadable(
                f"decoding stopped: over the wall deadline of {cfg.decode_timeout_s:g} s"
            ) from exc
        wav = path.with_name("audio.wav")
        audio = wav.read_bytes() if audio_seconds and wav.is_file() else None
    if done.returncode != 0:
        raise VideoUnreadable(_died(done.returncode, cfg))
    try:
        answer = json.loads(done.stdout)
    except ValueError as exc:
        # An rlimit can end it mid-write: the memory budget, most often.
        raise VideoUnreadable(f"decoder gave no answer (over {cfg.memory_mb} MB?)") from exc
    if not isinstance(answer, dict):
        raise VideoUnreadable("decoder gave no answer")
    answer["audio"] = audio
    return answer


def decode_video(data: bytes, cfg: VideoConfig, audio_seconds: float = 0.0) -> DecodedVideo:
    """Keyframes of the video in `data` (and the first `audio_seconds` of its sound track),
    decoded in a budgeted child process."""
    answer = run_child(data, cfg, audio_seconds)
    if not answer.get("ok"):
        raise VideoUnreadable(str(answer.get("reason", "not decoded"))[:300])
    frames = answer.get("keyframes")
    assert isinstance(frames, list)
    return DecodedVideo(
        sha256=hashlib.sha256(data).hexdigest(),
        duration=float(answer["duration"]),  # type: ignore[arg-type]
        width=int(answer["width"]),  # type: ignore[call-overload]
        height=int(answer["height"]),  # type: ignore[call-overload]
        codec=str(answer["codec"]),
        decoded=int(answer["decoded"]),  # type: ignore[call-overload]
        keyframes=[Keyframe(float(f["t"]), base64.b64decode(f["png"])) for f in frames],
        audio=answer["audio"] if isinstance(answer["audio"], bytes) else None,
        audio_seconds=float(answer.get("audio_seconds", 0.0)),  # type: ignore[arg-type]
        audio_error=str(answer["audio_error"]) if answer.get("audio_error") else None,
        peak_rss_mib=float(answer.get("peak_rss_mib", 0.0)),  # type: ignore[arg-type]
    )


def take_in_video(
    source: str, fetcher: Fetcher, cfg: VideoConfig, audio_seconds: float = 0.0
) -> DecodedVideo:
    """Read and decode one video of a post, by URL or by local path."""
    data = video_bytes(source, fetcher, cfg)
    try:
        return decode_video(data, cfg, audio_seconds)
    except VideoUnreadable as exc:
        raise VideoUnreadable(f"{source[:200]}: {exc}") from exc
