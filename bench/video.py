"""Videos: CPU seconds per minute of video for keyframes (the decoding child) and OCR (this
process), peak memory of each, and the OCR character error rate of burned-in captions at
several sizes and positions.

The video is rendered here by `testing.video_samples` (PyAV): 12 scenes of 5 s (one minute,
640x360, 10 fps, MPEG-4 part 2), each with its own background colour and one caption, at font
sizes 12, 18, 28 and 44 px in the top, middle and bottom thirds. It is read by the real
`VideoReader` (child process with its budget, keyframes by scene change, RapidOCR) after one
warm-up read, so OCR's model load is not counted.

Numbers: `decode_cpu_s_per_min` (the child's user+sys seconds, from RUSAGE_CHILDREN),
`ocr_cpu_s_per_min` (this process's CPU seconds during the read, OCR and pHash of the
keyframes), `wall_s_per_min`, `decoder_peak_rss_mib` (the child's own VmHWM: ru_maxrss would
count the parent's pages it was forked with), `reader_peak_rss_mib` (this process, OCR models
loaded), `keyframes`, `cer_mean` and `cer_size_<px>` (mean over positions; a caption with no
finding covering its scene counts 1.0).
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pipeline.config import FetchConfig, ImagesConfig, VideoConfig
from pipeline.fetch import Fetcher
from pipeline.ocr import get_ocr
from pipeline.records import Post, Video
from pipeline.video.reader import VideoReader
from pipeline.video.records import VideoReport
from testing.image_samples import cer
from testing.video_samples import Scene, render

Log = Callable[[str], None]
SIZES = (12, 18, 28, 44)
POSITIONS = ("top", "middle", "bottom")
WORDS = [
    "Dam burst upstream tonight",
    "Officials hide the flood toll",
    "Banks close on Monday",
    "Water supply is poisoned",
    "Army moves into the city",
    "Schools shut for a month",
    "Power cut across the region",
    "Bridge collapsed at noon",
    "Curfew starts at six",
    "Hospitals refuse patients",
    "Fuel runs out by Friday",
    "Phones will be cut off",
]


def scenes() -> list[Scene]:
    out: list[Scene] = []
    for i, text in enumerate(WORDS):
        size = SIZES[i % len(SIZES)]
        position = POSITIONS[(i // len(SIZES)) % len(POSITIONS)]
        colour = ((i * 53) % 200 + 30, (i * 97) % 200 + 30, (i * 31) % 200 + 30)
        out.append(Scene(text, 5.0, background=colour, size=size, position=position))
    return out


def _read(reader: VideoReader, path: Path) -> VideoReport:
    post = Post(
        id="bench",
        author="bench",
        text="",
        created_at=datetime.now(UTC),
        videos=[Video(source=str(path))],
    )
    [report] = reader.read_post(post, datetime.now(UTC)).reports
    if report.error:
        raise RuntimeError(report.error)
    return report


def caption_errors(report: VideoReport, shown: list[Scene]) -> list[float]:
    """Per scene: CER of the finding on screen at its midpoint that reads most like it."""
    errors: list[float] = []
    start = 0.0
    for scene in shown:
        middle = start + scene.seconds / 2
        start += scene.seconds
        candidates = [f.text for f in report.findings if f.start <= middle < f.end]
        errors.append(min((cer(scene.caption, t) for t in candidates), default=1.0))
    return errors


def run(log: Log = print) -> dict[str, float]:
    shown = scenes()
    with tempfile.TemporaryDirectory(prefix="bench-video-") as folder:
        path = render(Path(folder) / "minute.mp4", shown)
        cfg = VideoConfig(local_dir=folder)
        reader = VideoReader(cfg, Fetcher(FetchConfig()), ocr=get_ocr(ImagesConfig()))
        _read(reader, path)  # warm-up: OCR models loaded
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, wall = time.process_time(), time.perf_counter()
        report = _read(reader, path)
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    minutes = (report.duration or 60.0) / 60
    decode_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    errors = caption_errors(report, shown)
    out = {
        "decode_cpu_s_per_min": round(decode_cpu / minutes, 3),
        "ocr_cpu_s_per_min": round(cpu / minutes, 3),
        "wall_s_per_min": round(wall / minutes, 3),
        "decoder_peak_rss_mib": report.decoder_peak_mib,
        "reader_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "keyframes": float(len(report.keyframes)),
        "cer_mean": round(sum(errors) / len(errors), 4),
    }
    for size in SIZES:
        mine = [e for e, s in zip(errors, shown, strict=True) if s.size == size]
        out[f"cer_size_{size}"] = round(sum(mine) / len(mine), 4)
    for scene, error in zip(shown, errors, strict=True):
        log(f"{scene.size:>3} px {scene.position:<6} CER {error:.3f}  {scene.caption}")
    return out


if __name__ == "__main__":
    print(run())
