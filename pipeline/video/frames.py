"""The child side of video decoding: run as `python -m pipeline.video.frames`, never
imported by a worker for its decoding (`pipeline.video.intake` starts it and reads its answer).

A video is written by a stranger and FFmpeg's demuxers and decoders are large C code, so the
decoding runs in a process of its own that limits itself before it opens the file: CPU seconds
(RLIMIT_CPU) and address space (RLIMIT_AS), one decoder thread; the parent adds a wall
deadline and kills it past that. Whatever the file does (truncated, garbage, 60000x60000 claimed
dimensions, an endless stream), the worst outcome is this process dying.

Keyframes are chosen by scene change: frames are sampled at `sample_fps`, each sample is
shrunk to a small colour copy, and a sample whose mean absolute difference from the previous
sample is over `scene_threshold` (0-255) starts a new scene. The first frame is always kept.
When more scenes are found than `max_keyframes`, the kept ones are spread evenly over them (the
first and last included); while decoding, every other one is dropped past 4 x `max_keyframes`,
so a flickering video cannot fill the memory with PNGs.

Request (stdin, JSON): {"path", "max_seconds", "max_keyframes", "max_pixels", "cpu_seconds",
"memory_mb", "sample_fps", "scene_threshold", "frame_side"}. Answer (stdout, JSON):
{"ok": true, "duration", "width", "height", "codec", "decoded", "keyframes": [{"t", "png"}]}
(png base64) or {"ok": false, "reason"}. With "audio_path" and "audio_seconds" in the request,
the first seconds of the sound track are written there as a 16 kHz mono WAV and the answer adds
"audio_seconds" (0 without a sound track) or "audio_error".
"""

from __future__ import annotations

import base64
import errno
import io
import json
import resource
import sys
import wave
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

SMALL = (64, 36)  # the colour copy scene change is measured on


@dataclass
class _Scene:
    t: float
    small: npt.NDArray[np.float32]
    png: bytes


@dataclass
class _Scan:
    scenes: list[_Scene] = field(default_factory=list)
    decoded: int = 0
    last_t: float = 0.0


def limit_self(cpu_seconds: int, memory_mb: int) -> None:
    """Limits on this process, set before any untrusted byte is parsed."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Refused(Exception):
    """The video is over a cap or cannot be decoded; the message says which."""


def _png(frame: Any, side: int) -> bytes:
    image = frame.to_image()  # RGB PIL image
    image.thumbnail((side, side))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _small(frame: Any) -> npt.NDArray[np.float32]:
    # Colour, not grey: two scenes of equal brightness in different colours are two scenes.
    small = frame.reformat(width=SMALL[0], height=SMALL[1], format="rgb24")
    return np.asarray(small.to_ndarray(), dtype=np.float32)


def _spread(scenes: list[_Scene], limit: int) -> list[_Scene]:
    """At most `limit` of `scenes`, evenly spread over them, the first and last included."""
    if len(scenes) <= limit:
        return scenes
    if limit == 1:
        return scenes[:1]
    step = (len(scenes) - 1) / (limit - 1)
    return [scenes[round(i * step)] for i in range(limit)]


def _open_stream(container: Any, req: dict[str, Any]) -> tuple[Any, float | None]:
    if not container.streams.video:
        raise Refused("no video stream in the file")
    stream = container.streams.video[0]
    stream.thread_type = "SLICE"
    stream.codec_context.thread_count = 1
    width, height = stream.codec_context.width, stream.codec_context.height
    if width * height > req["max_pixels"]:
        raise Refused(f"{width}x{height} is over {req['max_pixels']:,} pixels a frame")
    duration = None
    if stream.duration is not None and stream.time_base is not None:
        duration = float(stream.duration * stream.time_base)
    elif container.duration is not None:
        duration = container.duration / 1_000_000
    if duration is not None and duration > req["max_seconds"]:
        raise Refused(f"{duration:.0f} s long, over the cap of {req['max_seconds']} s")
    return stream, duration


def scan(path: str, req: dict[str, Any]) -> dict[str, Any]:
    """Decode the video at `path` within the request's caps; the answer as a dict."""
    import av  # FFmpeg, from PyAV's wheel: loaded only in the child (main loads it first)

    step = 1.0 / req["sample_fps"]
    limit = req["max_keyframes"]
    with av.open(path, mode="r", timeout=5.0) as container:
        stream, duration = _open_stream(container, req)
        found = _Scan()
        next_t = 0.0
        previous: npt.NDArray[np.float32] | None = None
        for frame in container.decode(stream):
            found.decoded += 1
            t = float(frame.time) if frame.time is not None else found.last_t
            if t > req["max_seconds"]:
                raise Refused(f"runs past the cap of {req['max_seconds']} s")
            if frame.width * frame.height > req["max_pixels"]:
                raise Refused(f"a {frame.width}x{frame.height} frame is over the pixel cap")
            found.last_t = max(found.last_t, t)
            if t < next_t and previous is not None:
                continue
            next_t = t + step
            small = _small(frame)
            changed = (
                previous is None or float(np.abs(small - previous).mean()) > req["scene_threshold"]
            )
            previous = small
            if changed:
                found.scenes.append(_Scene(t, small, _png(frame, req["frame_side"])))
                if len(found.scenes) > 4 * limit:  # memory stays bounded on a flickering video
                    found.scenes = found.scenes[::2]
    if not found.scenes:
        raise Refused("no frame could be decoded")
    kept = _spread(found.scenes, limit)
    return {
        "ok": True,
        "duration": duration if duration is not None else found.last_t,
        "width": stream.codec_context.width,
        "height": stream.codec_context.height,
        "codec": stream.codec_context.name,
        "decoded": found.decoded,
        "keyframes": [
            {"t": round(s.t, 3), "png": base64.b64encode(s.png).decode("ascii")} for s in kept
        ],
    }


AUDIO_RATE = 16_000  # what speech models resample to anyway: 32 kB a second, mono 16-bit


def extract_audio(path: str, target: str, seconds: float) -> float:
    """The first `seconds` of the sound track as a 16 kHz mono WAV at `target`; the seconds
    written (0.0 when the file has no sound track)."""
    import av

    with av.open(path, mode="r", timeout=5.0) as container:
        if not container.streams.audio:
            return 0.0
        stream = container.streams.audio[0]
        resampler = av.AudioResampler(format="s16", layout="mono", rate=AUDIO_RATE)
        limit = int(seconds * AUDIO_RATE)
        written = 0
        with wave.open(target, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(AUDIO_RATE)
            for frame in container.decode(stream):
                for chunk in resampler.resample(frame):
                    samples = chunk.to_ndarray().reshape(-1)[: limit - written]
                    out.writeframes(samples.astype("<i2").tobytes())
                    written += len(samples)
                if written >= limit:
                    break
    return round(written / AUDIO_RATE, 3)


def peak_rss_mib() -> float:
    """This process's resident high-water mark (VmHWM: reset at exec, unlike ru_maxrss, which
    a child forked from a large parent inherits)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def main() -> int:
    req = json.loads(sys.stdin.read())
    import av  # noqa: F401  (our own code is loaded before the limits: they are for the file)
    from PIL import Image  # noqa: F401

    limit_self(int(req["cpu_seconds"]), int(req["memory_mb"]))
    try:
        answer = scan(req["path"], req)
        if req.get("audio_path"):
            try:
                answer["audio_seconds"] = extract_audio(
                    req["path"], req["audio_path"], float(req["audio_seconds"])
                )
            except Exception as exc:  # the frames were read: the sound track's failure alone
                answer["audio_error"] = f"{type(exc).__name__}: {exc}"[:300]
    except Refused as exc:
        answer = {"ok": False, "reason": str(exc)}
    except MemoryError:
        answer = {"ok": False, "reason": f"over the memory budget of {req['memory_mb']} MB"}
    except OSError as exc:
        reason = f"cannot decode: {exc}"
        if exc.errno == errno.ENOMEM:
            reason = f"over the memory budget of {req['memory_mb']} MB"
        answer = {"ok": False, "reason": reason[:300]}
    except Exception as exc:  # av.error.*: whatever FFmpeg says of a broken file
        answer = {"ok": False, "reason": f"cannot decode: {type(exc).__name__}: {exc}"[:300]}
    answer["peak_rss_mib"] = peak_rss_mib()
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
