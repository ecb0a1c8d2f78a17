"""Videos rendered at test time with PyAV (FFmpeg from its wheel): scenes of solid colour with
burned-in caption text drawn by Pillow, so what OCR should read is known. Nothing is copied
from anywhere; each test renders what it needs into its own temporary folder."""

from __future__ import annotations

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
