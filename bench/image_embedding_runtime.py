"""The image embedding on its two runtimes: torch (the model as packaged) against the ONNX Runtime
export built from the same weights (`pipeline.images.embedding_onnx`).

Each runtime runs in a child process of its own, so that its load time includes its own imports
(torch is most of a cold start) and neither warms the other. A child embeds the pictures of
`bench.image_similarity` (originals and their altered copies: landscape, portrait, small, large)
(the first once cold, model load included, then every one warm) and saves its vectors; the
parent compares them.

Numbers: `<runtime>_load_s` (first image, model load included), `<runtime>_warm_mean_s` and
`<runtime>_cpu_mean_s` per image (CPU time: what a loaded machine distorts least),
`onnx_speedup` and `onnx_cpu_speedup` (torch over ONNX), and `min_cosine` / `max_abs_diff`
between the two runtimes' vectors over all images. `threads` (default 1, as
`ImagesConfig.embedding_threads`) is given to both: ONNX Runtime's session and torch's OpenMP
pool; 0 leaves both at one thread per core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

Log = Callable[[str], None]
ROOT = Path(__file__).resolve().parents[1]
RUNTIMES = ("onnx", "torch")

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from bench.image_similarity import alterations, originals
from pipeline.images.embedding import EfficientNetLite0Embedder

small = sys.argv[4] == "small"
images = []
for picture in originals(small=small):
    images.append(picture.image)
    images.extend(alter(picture.image) for alter in alterations().values())
embedder = EfficientNetLite0Embedder(backend=sys.argv[2], threads=int(sys.argv[5]))
start = time.perf_counter()
embedder.embed(images[0])
load_s = time.perf_counter() - start
warm, vectors = [], []
cpu = time.process_time()
for image in images:
    t0 = time.perf_counter()
    vectors.append(embedder.embed(image))
    warm.append(time.perf_counter() - t0)
cpu_s = (time.process_time() - cpu) / len(images)
np.save(sys.argv[3], np.stack(vectors))
print(json.dumps({"load_s": load_s, "warm": warm, "cpu_s": cpu_s, "runtime": embedder.runtime}))
"""


def _child(runtime: str, out: Path, small: bool, threads: int) -> tuple[float, list[float], float]:
    """(first image's seconds, load included; each image's warm seconds; CPU seconds per warm
    image, which a loaded machine distorts least) on `runtime`."""
    size = "small" if small else "all"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), runtime, str(out), size, str(threads)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
        cwd=ROOT,
        # Both runtimes get the same thread count: torch's OpenMP pool reads it from here.
        env={**os.environ, "OMP_NUM_THREADS": str(threads)} if threads > 0 else None,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["runtime"] != runtime:
        raise RuntimeError(f"asked for {runtime}, ran on {result['runtime']}")
    return float(result["load_s"]), [float(s) for s in result["warm"]], float(result["cpu_s"])


def run(log: Log = print, *, small: bool = False, threads: int = 1) -> dict[str, float]:
    numbers: dict[str, float] = {}
    vectors = {}
    with tempfile.TemporaryDirectory() as work:
        for runtime in RUNTIMES:
            out = Path(work) / f"{runtime}.npy"
            load_s, warm, cpu_s = _child(runtime, out, small, threads)
            vectors[runtime] = np.load(out)
            numbers[f"{runtime}_load_s"] = round(load_s, 3)
            numbers[f"{runtime}_cpu_mean_s"] = round(cpu_s, 4)
            numbers[f"{runtime}_warm_mean_s"] = round(sum(warm) / len(warm), 4)
            log(
                f"{runtime}: first image (load included) {numbers[f'{runtime}_load_s']:.2f} s, "
                f"warm {numbers[f'{runtime}_warm_mean_s'] * 1000:.1f} ms per image "
                f"({cpu_s * 1000:.1f} ms CPU) "
                f"({len(warm)} images, {threads} thread(s))"
            )
    cosines = np.sum(vectors["onnx"] * vectors["torch"], axis=1)
    numbers["images"] = float(len(cosines))
    numbers["min_cosine"] = round(float(cosines.min()), 7)
    numbers["max_abs_diff"] = float(np.abs(vectors["onnx"] - vectors["torch"]).max())
    numbers["onnx_speedup"] = round(numbers["torch_warm_mean_s"] / numbers["onnx_warm_mean_s"], 2)
    numbers["onnx_cpu_speedup"] = round(numbers["torch_cpu_mean_s"] / numbers["onnx_cpu_mean_s"], 2)
    log(
        f"onnx vs torch over {len(cosines)} images: min cosine {numbers['min_cosine']}, "
        f"max |diff| {numbers['max_abs_diff']:.2e}, {numbers['onnx_speedup']}x faster warm "
        f"({numbers['onnx_cpu_speedup']}x by CPU time)"
    )
    return numbers


if __name__ == "__main__":
    for key, value in run(threads=int(sys.argv[1]) if len(sys.argv) > 1 else 1).items():
        print(f"{key}: {value}")
