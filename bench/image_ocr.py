"""Images: offline OCR time per image, its character error rate, and peak memory with OCR loaded.

The images are rendered by `testing.image_samples` (sentences, tweet-like screenshots,
memes with outlined text on texture: known text) plus the two real photos in scikit-learn's
wheel (no text). Everything runs in a child process so that the memory figure is OCR's own:
the child reports its `VmHWM` from /proc/self/status (the high-water mark of its own address
space, which starts fresh at exec, unlike `ru_maxrss`), once after the imports and once after
the engine was built and every image read twice. The first read of each image is the cold one
(the first of all also initialises onnxruntime's sessions); the warm time is the second.

Numbers: `ocr_init_s` (engine built), `ocr_first_call_s`, `ocr_warm_mean_s` and
`ocr_warm_max_s` per image, `ocr_cer_mean` on the images with text, `rss_imports_mib` and
`rss_peak_mib`, `images`.

End to end (`e2e_*`, in this process): one fixture post of `bench.world` checked by the real
`Checker` with the fake LLM (no delays) twice, as text only and with a screenshot of its text
attached (an inbox file: OCR, pHash, the vision call to the fake model), after one warm-up
check of each; `e2e_image_extra_s` is the difference, mostly OCR.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

Log = Callable[[str], None]
ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])

def hwm_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")

from pipeline.config import ImagesConfig
from pipeline.images.ocr import RapidOcrEngine
from testing import image_samples as s

cases = [
    ("sentence", s.sentence("Lemon water cures the flu in three days, doctors say"),
     "Lemon water cures the flu in three days, doctors say"),
    ("screenshot", s.screenshot("Daily Health News", "@dailyhealth_news",
     ["BREAKING: WHO confirms 5G towers", "spread the virus in 12 countries"]),
     "Daily Health News\n@dailyhealth_news\nBREAKING: WHO confirms 5G towers\n"
     "spread the virus in 12 countries\n10:42 AM - Nov 3, 2026"),
    ("meme", s.meme("VACCINES CONTAIN", "MICROCHIPS"), "VACCINES CONTAIN\nMICROCHIPS"),
    ("china.jpg", s.photo("china.jpg"), None),
    ("flower.jpg", s.photo("flower.jpg"), None),
]
rss_imports = hwm_mib()
cfg = ImagesConfig()
start = time.perf_counter()
engine = RapidOcrEngine(cfg.ocr_min_score, cfg.ocr_det_side)
engine._loaded()
init_s = time.perf_counter() - start
rows = []
for name, image, expected in cases:
    t0 = time.perf_counter(); first = engine.read(image); cold = time.perf_counter() - t0
    t0 = time.perf_counter(); again = engine.read(image); warm = time.perf_counter() - t0
    rows.append({"name": name, "size": list(image.size), "cold_s": cold, "warm_s": warm,
                 "cer": None if expected is None else s.cer(expected, again.text),
                 "lines": len(again.lines)})
print(json.dumps({"init_s": init_s, "rows": rows, "rss_imports_mib": rss_imports,
                  "rss_peak_mib": hwm_mib()}))
"""


def end_to_end(log: Log = print) -> dict[str, float]:
    from bench import fixtures
    from bench.world import (
        FixtureModel,
        FixtureSearch,
        FixtureWeb,
        build_shared_parts,
        pipeline_config,
    )
    from pipeline.check import Checker
    from pipeline.config import ImagesConfig
    from pipeline.records import Image, Platform
    from testing.fakes.openai_server import FakeLLM, Reply
    from testing.image_samples import encode, screenshot

    post = next(p for p in fixtures.POSTS if p.checkable)
    words = post.text.split()
    lines = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as inbox, FakeLLM(delay_s=0.0) as fake:
        shot = Path(inbox) / "shot.png"
        shot.write_bytes(encode(screenshot("A fixture author", f"@user_{post.id}", lines), "PNG"))
        FixtureModel().install(fake)
        caption = {"text_in_image": "", "caption": "A screenshot of a post", "people": []}
        fake.script("describe_image", Reply.json(caption))
        with FixtureWeb(delay_s=0.0) as web:
            cfg = pipeline_config(fake)
            cfg.images = ImagesConfig(local_dir=inbox)
            shared = build_shared_parts(cfg, FixtureSearch(0.0), web)
            try:
                checker = Checker(shared)
                text_post = post.to_post()
                image_post = text_post.model_copy(update={"images": [Image(source=str(shot))]})
                for name, checked in (("text", text_post), ("image", image_post)):
                    checker.check(checked, Platform.X, as_of=fixtures.AS_OF)  # warm-up
                    start = time.perf_counter()
                    decision = checker.check(checked, Platform.X, as_of=fixtures.AS_OF)
                    seconds[name] = time.perf_counter() - start
                    log(f"e2e {name} post: {seconds[name]:.2f} s, {decision.status.value}")
            finally:
                shared.close()
    return {
        "e2e_text_post_s": round(seconds["text"], 3),
        "e2e_image_post_s": round(seconds["image"], 3),
        "e2e_image_extra_s": round(seconds["image"] - seconds["text"], 3),
    }


def run(log: Log = print) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
        cwd=ROOT,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    rows = out["rows"]
    for row in rows:
        cer = "-" if row["cer"] is None else f"{row['cer']:.3f}"
        log(
            f"{row['name']:12} {row['size'][0]}x{row['size'][1]}: cold {row['cold_s']:.2f} s, "
            f"warm {row['warm_s']:.2f} s, {row['lines']} line(s), CER {cer}"
        )
    warm = [row["warm_s"] for row in rows]
    rates = [row["cer"] for row in rows if row["cer"] is not None]
    return {
        "images": float(len(rows)),
        "ocr_init_s": round(out["init_s"], 3),
        "ocr_first_call_s": round(rows[0]["cold_s"], 3),
        "ocr_warm_mean_s": round(sum(warm) / len(warm), 3),
        "ocr_warm_max_s": round(max(warm), 3),
        "ocr_cer_mean": round(sum(rates) / len(rates), 4),
        "rss_imports_mib": round(out["rss_imports_mib"], 1),
        "rss_peak_mib": round(out["rss_peak_mib"], 1),
        **end_to_end(log),
    }


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
