"""Videos rendered at test time with PyAV (FFmpeg from its wheel): scenes of solid colour with
burned-in caption text drawn by Pillow, so what OCR should read is known. Nothing is copied
from anywhere; each test renders what it needs into its own temporary folder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw

from testing.image_samples import font


@dataclass(frozen=True)
class Scene:
    caption: str  # "" for none
    seconds: float
    background: tuple[int, int, int] = (30, 40, 60)
    size: int = 40  # caption font size, pixels
    position: str = "bottom"  # "top", "middle" or "bottom"


def scene_image(scene: Scene, width: int, height: int) -> Image.Image:
    image = Image.new("RGB", (width, height), scene.background)
    if scene.caption:
        draw = ImageDraw.Draw(image)
        face = font(scene.size)
        text_width = draw.textlength(scene.caption, font=face)
        y = {"top": 0.08, "middle": 0.45, "bottom": 0.8}[scene.position] * height
        box = (0, y - 12, width, y + scene.size + 16)
        draw.rectangle(box, fill=(0, 0, 0))  # a caption bar, as news chyrons have
        draw.text(((width - text_width) / 2, y), scene.caption, font=face, fill="white")
    return image


def render(
    path: Path,
    scenes: list[Scene],
    *,
    width: int = 640,
    height: int = 360,
    fps: int = 10,
    codec: str = "mpeg4",
) -> Path:
    """An MP4 of the scenes one after another; `codec` "mpeg4" or "libx264"."""
    shots = [(scene_image(scene, width, height), scene.seconds) for scene in scenes]
    return render_pictures(path, shots, fps=fps, codec=codec)


def render_pictures(
    path: Path,
    shots: list[tuple[Image.Image, float]],
    *,
    fps: int = 10,
    codec: str = "mpeg4",
    tone_hz: float | None = None,
) -> Path:
    """An MP4 showing each picture for its seconds, all of one size; with `tone_hz`, a sound
    track of that sine tone (AAC, 16 kHz mono) for the whole length."""
    width, height = shots[0][0].size
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(codec, rate=fps)
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        sound = container.add_stream("aac", rate=16_000, layout="mono") if tone_hz else None
        if codec == "mpeg4":
            stream.options = {"qscale": "3"}
        for image, seconds in shots:
            for _ in range(round(seconds * fps)):
                frame = av.VideoFrame.from_image(image)
                container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
        if sound is not None and tone_hz is not None:
            _tone(container, sound, tone_hz, sum(seconds for _, seconds in shots))
    return path


def _tone(container: Any, stream: Any, hz: float, seconds: float, rate: int = 16_000) -> None:
    t = np.arange(int(seconds * rate)) / rate
    samples = (np.sin(2 * np.pi * hz * t) * 0.3).astype(np.float32)
    for start in range(0, len(samples), 1024):
        chunk = samples[start : start + 1024].reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="mono")
        frame.sample_rate, frame.pts = rate, start
        container.mux(stream.encode(frame))
    container.mux(stream.encode(None))


THREE_SCENES = [
    Scene("", 1.0, background=(20, 90, 40)),
    Scene("5G towers spread the virus", 2.0, background=(90, 30, 30)),
    Scene("Share before it is deleted", 2.0, background=(30, 30, 110)),
]


def scene_shots(
    seed: int, captions: list[str], seconds: float = 2.0
) -> list[tuple[Image.Image, float]]:
    """Generated pictures (`testing.image_samples.scene`: a gradient sky, a ground and random
    shapes), 640x360, one a caption, each shown for `seconds`: a clip of our own making."""
    from testing.image_samples import scene as picture

    shots: list[tuple[Image.Image, float]] = []
    for number, caption in enumerate(captions):
        image = picture(seed * 100 + number).resize((640, 360))
        if caption:
            image = scene_image_over(image, caption)
        shots.append((image, seconds))
    return shots


def scene_image_over(image: Image.Image, caption: str, size: int = 30) -> Image.Image:
    """`image` with a burned-in caption on a bar near its bottom."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    face = font(size)
    y = 0.8 * out.height
    draw.rectangle((0, y - 10, out.width, y + size + 14), fill=(0, 0, 0))
    draw.text(((out.width - draw.textlength(caption, font=face)) / 2, y), caption, font=face)
    return out


Transform = Callable[[Image.Image], Image.Image]


def transcode(
    source: Path,
    target: Path,
    *,
    codec: str = "libx264",
    bit_rate: int | None = None,
    picture: Transform | None = None,
    cut_start: float = 0.0,
    cut_end: float = 0.0,
    fps: int = 10,
) -> Path:
    """A copy of the video at `source` as a re-upload makes one: decoded and encoded again
    with `codec` (at `bit_rate` bits/s when given), each frame through `picture` (a crop, a
    scale), the first `cut_start` and last `cut_end` seconds left out."""
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        base = stream.time_base
        duration = float(stream.duration * base) if stream.duration and base else 0.0
        frames = [
            frame.to_image()
            for frame in container.decode(stream)
            if frame.time is not None and cut_start <= frame.time < duration - cut_end
        ]
    if picture is not None:
        frames = [picture(frame) for frame in frames]
    # Encoders want even sides in 4:2:0.
    width, height = frames[0].width // 2 * 2, frames[0].height // 2 * 2
    with av.open(str(target), mode="w") as out:
        video = out.add_stream(codec, rate=fps)
        assert isinstance(video, av.VideoStream)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        if bit_rate is not None:
            video.bit_rate = bit_rate
        for image in frames:
            frame = av.VideoFrame.from_image(image.crop((0, 0, width, height)))
            out.mux(video.encode(frame))
        out.mux(video.encode(None))
    return target


def crop_border(share: float) -> Transform:
    """Cut `share` of the width and height off each side."""

    def apply(image: Image.Image) -> Image.Image:
        dx, dy = int(image.width * share), int(image.height * share)
        return image.crop((dx, dy, image.width - dx, image.height - dy))

    return apply


def scale(factor: float) -> Transform:
    def apply(image: Image.Image) -> Image.Image:
        return image.resize((int(image.width * factor), int(image.height * factor)))

    return apply


def strobe(path: Path, frames: int = 30, width: int = 1280, height: int = 720) -> Path:
    """A hostile video for the decoder's CPU budget: full-size noise whose tint flips every
    frame, so that every sample is a scene change and its full-size PNG (noise barely
    compresses) costs the child about 0.2 CPU seconds. Cheap to render (MPEG-4 encodes the
    noise once per frame, ~0.3 CPU s for 30 frames); about 6 CPU seconds to read at 30 samples
    a second, several times a 1 s budget even on a fast machine."""
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 128, (height, width, 3), dtype=np.uint8)
    tints = [np.array(tint, dtype=np.uint8) for tint in ((127, 0, 0), (0, 0, 127))]
    pictures = [Image.fromarray(noise + tint) for tint in tints]
    return render_pictures(path, [(pictures[i % 2], 0.1) for i in range(frames)])
