"""Offline OCR (RapidOCR with the models in its wheel): its character error rate on rendered
screenshots and memes with known text, its score floor, and the models in the wheel (no network
at run time: tests/pipeline/test_image_models_offline.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from pipeline.config import ImagesConfig
from pipeline.images.ocr import RapidOcrEngine, get_ocr
from testing.image_samples import cer, meme, photo, screenshot, sentence

ROOT = Path(__file__).resolve().parents[3]

# (image, the text it shows), one line of expected text per rendered line.
RENDERED: list[tuple[str, Image.Image, str]] = [
    (
        "sentence",
        sentence("Lemon water cures the flu in three days, doctors say"),
        "Lemon water cures the flu in three days, doctors say",
    ),
    (
        "sentence with numbers",
        sentence("Turnout was 112% in 3 districts on 4 November 2026"),
        "Turnout was 112% in 3 districts on 4 November 2026",
    ),
    (
        "screenshot",
        screenshot(
            "Daily Health News",
            "@dailyhealth_news",
            ["BREAKING: WHO confirms 5G towers", "spread the virus in 12 countries"],
        ),
        "Daily Health News\n@dailyhealth_news\nBREAKING: WHO confirms 5G towers\n"
        "spread the virus in 12 countries\n10:42 AM - Nov 3, 2026",
    ),
    (
        "screenshot 2",
        screenshot("Mayor Jane Doe", "@mayorjanedoe", ["We cut the city budget by", "40 percent"]),
        "Mayor Jane Doe\n@mayorjanedoe\nWe cut the city budget by\n40 percent\n"
        "10:42 AM - Nov 3, 2026",
    ),
    ("meme", meme("VACCINES CONTAIN", "MICROCHIPS"), "VACCINES CONTAIN\nMICROCHIPS"),
    (
        "meme 2",
        meme("THE MOON LANDING", "WAS FILMED IN 1969", seed=3),
        "THE MOON LANDING\nWAS FILMED IN 1969",
    ),
]


def test_rendered_text_is_read_with_a_low_character_error_rate() -> None:
    engine = get_ocr(ImagesConfig())
    rates = {name: cer(expected, engine.read(image).text) for name, image, expected in RENDERED}
    print("OCR character error rate per image:", {k: round(v, 3) for k, v in rates.items()})
    assert sum(rates.values()) / len(rates) <= 0.02
    assert max(rates.values()) <= 0.05


def test_lines_keep_their_scores_and_boxes_and_the_floor_drops_weaker_ones() -> None:
    image = RENDERED[2][1]
    lines = get_ocr(ImagesConfig()).read(image).lines
    assert len(lines) == 5
    for line in lines:
        xs = [x for x, _ in line.box]
        ys = [y for _, y in line.box]
        assert len(line.box) == 4 and line.score >= 0.8
        assert 0 <= min(xs) < max(xs) <= image.width and 0 <= min(ys) < max(ys) <= image.height
    strict = RapidOcrEngine(min_score=0.9995).read(image).lines
    assert len(strict) < len(lines)
    assert all(line.score >= 0.9995 for line in strict)


def test_a_photo_without_text_reads_no_phantom_text_at_the_default_floor() -> None:
    assert get_ocr(ImagesConfig()).read(photo("flower.jpg")).lines == []


def test_the_detection_size_is_configurable() -> None:
    engine = get_ocr(ImagesConfig(ocr_det_side=640))
    assert isinstance(engine, RapidOcrEngine) and engine.det_side == 640
    # Even capped at 640 px for detection, a 2000 px wide sentence is read.
    wide = sentence("Lemon water cures the flu", width=2000, size=60)
    assert engine.read(wide).text == "Lemon water cures the flu"


@pytest.mark.parametrize("name", ["PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx"])
def test_the_wheel_ships_the_models(name: str) -> None:
    import rapidocr

    assert (Path(rapidocr.__file__).parent / "models" / name).stat().st_size > 1_000_000


def test_an_image_the_engine_fails_on_gives_no_lines_and_says_why() -> None:
    # RapidOCR's detector cannot resize a 2048x4 strip: that must not take a check down.
    read = get_ocr(ImagesConfig()).read(Image.new("RGB", (2048, 4), "white"))
    assert read.lines == [] and read.error is not None
    assert read.error.startswith("ResizeImgError")
