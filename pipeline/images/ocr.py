"""Reading the text in an image, offline: RapidOCR (PP-OCR models on onnxruntime).

The `rapidocr` 3.x wheel ships its default detection, orientation and recognition models and
checks their sha256; it downloads only when a model outside the wheel is asked for, which we
never do (tests/pipeline/images/test_ocr.py runs it with networking disabled). The engine is built
on first use and shared; onnxruntime sessions may be called from several threads.

`OcrEngine` is the seam for a better service: anything that turns an RGB image into scored,
boxed lines.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from PIL import Image

from pipeline.config import ImagesConfig
from pipeline.images.records import OcrLine


@dataclass(frozen=True)
class OcrResult:
    lines: list[OcrLine]  # reading order, as the engine returns it
    seconds: float
    error: str | None = None  # the engine failed on this image (no lines then)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


class OcrEngine(Protocol):
    def read(self, image: Image.Image) -> OcrResult: ...


class RapidOcrEngine:
    """RapidOCR with the models bundled in its wheel; lines under `min_score` are dropped."""

    def __init__(self, min_score: float = 0.8, det_side: int = 960) -> None:
        self.min_score = min_score
        self.det_side = det_side
        self._engine: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._engine is None:
                from rapidocr import RapidOCR  # heavy (onnxruntime, opencv): loaded on first use

                self._engine = RapidOCR(
                    params={
                        "Global.text_score": self.min_score,
                        "Global.log_level": "error",  # an image without text is no warning
                        # Cap the longer side for detection: a 4000 px photo is not read at
                        # full size (0.2-0.8 s per image instead of 0.4-1.4 s, measured).
                        "Det.limit_type": "max",
                        "Det.limit_side_len": self.det_side,
                    }
                )
            return self._engine

    def read(self, image: Image.Image) -> OcrResult:
        engine = self._loaded()
        start = time.perf_counter()
        try:
            output = engine(image.convert("RGB"))
        except Exception as exc:
            # A stranger's image must not take the check down: a 2048x4 strip makes the
            # detector's resize fail, for one.
            seconds = round(time.perf_counter() - start, 4)
            return OcrResult(lines=[], seconds=seconds, error=f"{type(exc).__name__}: {exc}")
        seconds = time.perf_counter() - start
        texts = output.txts or ()
        scores = output.scores or ()
        boxes = output.boxes if output.boxes is not None else ()
        lines = [
            OcrLine(
                text=str(text).strip(),
                score=round(float(score), 4),
                box=[(round(float(x), 1), round(float(y), 1)) for x, y in box],
            )
            for text, score, box in zip(texts, scores, boxes, strict=False)
            if str(text).strip() and float(score) >= self.min_score
        ]
        return OcrResult(lines=lines, seconds=round(seconds, 4))


_shared: dict[tuple[float, int], RapidOcrEngine] = {}
_shared_lock = threading.Lock()


def get_ocr(cfg: ImagesConfig) -> OcrEngine:
    """The process's engine for these settings (models load once, on its first image)."""
    key = (cfg.ocr_min_score, cfg.ocr_det_side)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = RapidOcrEngine(cfg.ocr_min_score, cfg.ocr_det_side)
        return _shared[key]
