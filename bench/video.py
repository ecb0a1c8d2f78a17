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
loaded), `keyframes`, `cer_mean`, `cer_size_<px>` (mean over positions) and
`cer_<position>` (mean over sizes); a caption with no finding covering its scene counts 1.0.

Near-duplicate recall (`duplicates`): `SOURCES` clips of our own making (three 2 s shots of
generated pictures, `testing.image_samples.scene`, one with a burned-in caption) are imported
as fact-checked videos (`pipeline.video.factchecks`: keyframes hashed, embedded and OCR'd, as
`claims import --videos` stores them); each is then re-uploaded the ways `COPIES` lists
(re-encoded to H.264 at a low bit rate, 5 % and 10 % of each side cropped off, the first and
last second cut, scaled to half size, a mix) and read as a post's video by the real
`VideoReader` at the shipped settings; `DISTRACTORS` unrelated clips made the same way (other
pictures, other captions: the hard case, one template) are read too. Per copy:
`dup_<copy>_known` (share of copies that are a known claim of their source: a pHash match
within `hash_distance` whose texts agree), `dup_<copy>_any` (known, or a possible match by the
keyframe embedding at `embedding_threshold`, shown to moderators), `dup_<copy>_wrong` (share
matched to another source's fact-check), and over the distractors given the same edit
`dup_<copy>_false_known` and `dup_<copy>_false_possible` (share with any known claim, any
possible match); `dup_distractor_false_known` and `dup_distractor_false_possible` for the
distractors as made.
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pipeline.claims.index import ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import FetchConfig, ImagesConfig, VideoConfig
from pipeline.images.embedding import embedder_for
from pipeline.images.ocr import OcrEngine, get_ocr
from pipeline.images.phash import MemoryImageStore, SeenImage
from pipeline.images.reader import ImageReader
from pipeline.records import Post, Video
from pipeline.video.factchecks import fact_check_keyframes
from pipeline.video.intake import decode_video
from pipeline.video.reader import VideoReader, VideoStageResult
from pipeline.video.records import VideoReport
from pipeline.web.fetch import Fetcher
from testing.image_samples import cer
from testing.video_samples import (
    Scene,
    crop_border,
    render,
    render_pictures,
    scale,
    scene_shots,
    transcode,
)

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
    [report] = _read_stage(reader, path).reports
    if report.error:
        raise RuntimeError(report.error)
    return report


def _read_stage(reader: VideoReader, path: Path) -> VideoStageResult:
    post = Post(
        id="bench",
        author="bench",
        text="",
        created_at=datetime.now(UTC),
        videos=[Video(source=str(path))],
    )
    return reader.read_post(post, datetime.now(UTC))


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
    out = reading(log)
    out.update(duplicates(log=log))
    return out


def reading(log: Log = print) -> dict[str, float]:
    """CPU, memory and OCR character error rate of one rendered minute."""
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
    for position in POSITIONS:
        mine = [e for e, s in zip(errors, shown, strict=True) if s.position == position]
        out[f"cer_{position}"] = round(sum(mine) / len(mine), 4)
    for scene, error in zip(shown, errors, strict=True):
        log(f"{scene.size:>3} px {scene.position:<6} CER {error:.3f}  {scene.caption}")
    return out


SOURCES = 6
DISTRACTORS = 4
Copy = Callable[[Path, Path], Path]
# How a debunked clip comes back: what a platform's transcoder, a screen recorder or an editor
# does to it.
COPIES: dict[str, Copy] = {
    "h264_150k": lambda src, dst: transcode(src, dst, bit_rate=150_000),
    "crop_5pct": lambda src, dst: transcode(src, dst, picture=crop_border(0.05)),
    "crop_10pct": lambda src, dst: transcode(src, dst, picture=crop_border(0.10)),
    "trim_1s": lambda src, dst: transcode(src, dst, codec="mpeg4", cut_start=1.0, cut_end=1.0),
    "scale_50pct": lambda src, dst: transcode(src, dst, picture=scale(0.5)),
    "scale_50pct_h264_80k_trim": lambda src, dst: transcode(
        src, dst, bit_rate=80_000, picture=scale(0.5), cut_start=1.0
    ),
}


def clip(folder: Path, number: int, seed: int) -> Path:
    """A 6 s clip of three generated pictures, the middle one captioned."""
    caption = WORDS[number % len(WORDS)]
    return render_pictures(folder / f"clip{seed}.mp4", scene_shots(seed, ["", caption, ""]))


def _fact_check(number: int) -> ClaimRecord:
    return ClaimRecord(
        claim_text=f"Clip {number}: {WORDS[number % len(WORDS)]}",
        review_url=f"https://checks.bench.example/clip-{number}",
        rating=Rating.FALSE,
        rating_text="False",
    )


def _index(sources: list[Path], images: ImagesConfig, ocr: OcrEngine | None) -> list[SeenImage]:
    """Each source's keyframes, remembered as `claims import --videos` does."""
    stored: list[SeenImage] = []
    embedder = embedder_for(images)
    for number, path in enumerate(sources):
        decoded = decode_video(path.read_bytes(), VideoConfig())
        stored.extend(
            fact_check_keyframes(
                decoded,
                f"https://media.bench.example/clip-{number}.mp4",
                _fact_check(number),
                datetime.now(UTC),
                images,
                embedder=embedder,
                ocr=ocr,
            )
        )
    return stored


def _share(count: int, total: int) -> float:
    return round(count / total, 3) if total else 0.0


def _found(result: VideoStageResult) -> tuple[set[str], set[str]]:
    """The fact-check URLs the video is a known claim of, and those only possibly matched."""
    known = {m.record.review_url for m in result.claim_matches}
    possible = {
        m.fact_check_url
        for report in result.reports
        for frame in report.keyframes
        for m in frame.matches
        if m.fact_check_url and m.possible
    }
    return known, possible - known


def duplicates(
    log: Log = print,
    *,
    sources: int = SOURCES,
    distractors: int = DISTRACTORS,
    copies: dict[str, Copy] | None = None,
    ocr: bool = True,
) -> dict[str, float]:
    """Near-duplicate recall on re-uploads of fact-checked clips, and false matches on
    unrelated clips, at the shipped `[images]` thresholds."""
    copies = COPIES if copies is None else copies
    images = ImagesConfig(ocr=ocr)
    engine = get_ocr(images) if ocr else None
    with tempfile.TemporaryDirectory(prefix="bench-video-dup-") as name:
        folder = Path(name)
        originals = [clip(folder, n, seed=n + 1) for n in range(sources)]
        index = _index(originals, images, engine)

        def read(path: Path) -> tuple[set[str], set[str]]:
            local = images.model_copy(update={"local_dir": str(folder)})
            fetcher = Fetcher(FetchConfig())
            store = MemoryImageStore(index)  # a fresh copy: reads add their own keyframes
            pictures = ImageReader(local, fetcher, store=store, embedder=embedder_for(local))
            reader = VideoReader(
                VideoConfig(local_dir=str(folder)),
                fetcher,
                images_cfg=local,
                ocr=engine,
                pictures=pictures,
            )
            return _found(_read_stage(reader, path))

        others = [clip(folder, sources + n, seed=1000 + n) for n in range(distractors)]
        out: dict[str, float] = {
            "dup_sources": float(sources),
            "dup_distractors": float(len(others)),
        }

        def false_matches(kind: str, paths: list[Path]) -> None:
            found = [read(path) for path in paths]
            out[f"dup_{kind}_false_known"] = _share(sum(bool(h) for h, _ in found), len(paths))
            out[f"dup_{kind}_false_possible"] = _share(sum(bool(m) for _, m in found), len(paths))

        for kind, make in copies.items():
            known = any_ = wrong = 0
            for number, original in enumerate(originals):
                url = _fact_check(number).review_url
                hit, maybe = read(make(original, folder / f"{kind}-{number}.mp4"))
                known += url in hit
                any_ += url in hit | maybe
                wrong += bool((hit | maybe) - {url})
            out[f"dup_{kind}_known"] = _share(known, sources)
            out[f"dup_{kind}_any"] = _share(any_, sources)
            out[f"dup_{kind}_wrong"] = _share(wrong, sources)
            # The same edit on unrelated clips: does it make them look like a fact-checked one?
            false_matches(
                kind, [make(p, folder / f"{kind}-d{n}.mp4") for n, p in enumerate(others)]
            )
            log(f"{kind:<28} known {known}/{sources}  any {any_}/{sources}  wrong {wrong}")
        false_matches("distractor", others)
    return out


if __name__ == "__main__":
    print(run())
