"""The learned image embedding (EfficientNet-Lite0): what it tells apart and what it looks past
on the real photos in scikit-learn's wheel, that its ONNX Runtime export gives torch's vectors,
and the stores' cosine lookup. The threshold itself is calibrated by bench/image_similarity.py;
that the model loads offline, by tests/pipeline/test_image_models_offline.py."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import ImagesConfig
from pipeline.images import embedding_onnx as image_embedding_onnx
from pipeline.images.embedding import (
    EfficientNetLite0Embedder,
    cosine,
    from_bytes,
    get_image_embedder,
    to_bytes,
)
from pipeline.images.embedding_onnx import build_image_export, image_export_path
from pipeline.images.phash import MemoryImageStore, distance, phash
from pipeline.images.records import SeenImage, merged_sighting
from testing.image_samples import ALTERATIONS, photo

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 29, tzinfo=UTC)
CFG = ImagesConfig()


@pytest.fixture(scope="module")
def china() -> tuple[object, np.ndarray]:
    image = photo("china.jpg")
    return image, get_image_embedder(CFG.embedding_side).embed(image)


def test_the_embedding_is_a_unit_vector_that_survives_resizing(china: tuple) -> None:
    image, vector = china
    embedder = get_image_embedder(CFG.embedding_side)
    assert vector.shape == (1280,) and vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    resized = embedder.embed(ALTERATIONS["resize 50%"](image))
    assert cosine(vector, resized) > 0.95


@pytest.mark.parametrize("size", [(1000, 102), (102, 1000), (3000, 10), (40, 3)])
def test_a_banner_or_a_sliver_is_padded_to_a_shape_the_model_takes(
    china: tuple, size: tuple[int, int]
) -> None:
    # Found on Bluesky's reference network: a 1000 x 102 picture shrunk to 224 px wide was
    # 22 px tall, and ONNX Runtime refused the shape ("internal error" for the request).
    image, _ = china
    vector = get_image_embedder(CFG.embedding_side).embed(image.resize(size))
    assert vector.shape == (1280,) and np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_two_unrelated_photos_are_far_below_the_threshold(china: tuple) -> None:
    _, vector = china
    flower = get_image_embedder(CFG.embedding_side).embed(photo("flower.jpg"))
    assert cosine(vector, flower) < CFG.embedding_threshold - 0.3


@pytest.mark.parametrize("alteration", ["crop 75%", "caption bar", "mirror"])
def test_the_embedding_finds_copies_phash_misses(china: tuple, alteration: str) -> None:
    image, vector = china
    altered = ALTERATIONS[alteration](image)
    assert distance(phash(image), phash(altered)) > CFG.hash_distance  # pHash: not a match
    similar = cosine(vector, get_image_embedder(CFG.embedding_side).embed(altered))
    assert similar >= CFG.embedding_threshold, similar


def test_vectors_round_trip_through_their_stored_bytes() -> None:
    vector = np.linspace(-1, 1, 1280, dtype=np.float32)
    data = to_bytes(vector)
    assert len(data) == 1280 * 4
    assert np.array_equal(from_bytes(data), vector)


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def seen(name: str, vector: np.ndarray | None, embedder: str = "m1") -> SeenImage:
    return SeenImage(
        sha256=name * 64,
        phash="0" * 16,
        source=f"post:{name}",
        seen_at=NOW,
        embedding=to_bytes(vector) if vector is not None else None,
        embedder=embedder if vector is not None else None,
    )


def test_the_store_ranks_by_cosine_over_one_embedders_vectors_only() -> None:
    store = MemoryImageStore(
        [
            seen("a", unit(1, 0, 0)),
            seen("b", unit(1, 1, 0)),
            seen("c", unit(0, 0, 1)),
            seen("d", unit(1, 0, 0), embedder="m2"),  # the same vector from another model
            seen("e", None),
        ]
    )
    found = store.similar(unit(1, 0.1, 0), "m1", 0.5)
    assert [(s.sha256[0], round(c, 2)) for s, c in found] == [("a", 0.99), ("b", 0.77)]
    assert store.similar(unit(1, 0.1, 0), "m1", 0.5, limit=1)[0][0].sha256[0] == "a"
    assert store.similar(unit(1, 0, 0, 0), "m1", 0.0) == []  # another dimension: not compared


def test_an_image_seen_again_keeps_its_first_source_and_gains_what_it_lacked() -> None:
    first = seen("a", None)
    later = seen("a", unit(1, 0, 0)).model_copy(
        update={"source": "post:other", "content": b"\xff\xd8\xffjpeg"}
    )
    both = merged_sighting(first, later)
    assert both.source == "post:a" and both.embedder == "m1" and both.content is not None
    assert merged_sighting(both, later) is both  # nothing new: unchanged


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh export of the packaged weights, made by this test run (not the setup's)."""
    return build_image_export(tmp_path_factory.mktemp("onnx"))


def test_the_onnx_export_gives_the_torch_embedding_within_float_rounding(exported: Path) -> None:
    onnx = EfficientNetLite0Embedder(backend="onnx", onnx_dir=str(exported.parents[1]))
    torch = EfficientNetLite0Embedder(backend="torch")
    original = photo("china.jpg")
    # Landscape, portrait, small and square inputs: the graph's height and width are free.
    images = [original, photo("flower.jpg"), original.rotate(90, expand=True)]
    images += [ALTERATIONS[name](original) for name in ("resize 25%", "crop 60%", "border")]
    worst = min(cosine(onnx.embed(image), torch.embed(image)) for image in images)
    assert onnx.runtime == "onnx" and torch.runtime == "torch"
    assert worst >= 1 - 1e-5, worst


def test_the_export_is_built_once_per_weights_and_recipe(exported: Path) -> None:
    assert exported == image_export_path(exported.parents[1])
    stamp = exported.stat().st_mtime_ns
    assert build_image_export(exported.parents[1]) == exported
    assert exported.stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert image_export_path(exported.parents[1] / "other") != exported


def test_auto_falls_back_to_torch_when_no_export_can_be_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(_cache: Path) -> Path:
        raise OSError("read-only folder")

    monkeypatch.setattr(image_embedding_onnx, "build_image_export", broken)
    auto = EfficientNetLite0Embedder(onnx_dir=str(tmp_path))
    assert auto.embed(photo("flower.jpg")).shape == (1280,) and auto.runtime == "torch"
    with pytest.raises(OSError, match="read-only"):
        EfficientNetLite0Embedder(backend="onnx", onnx_dir=str(tmp_path)).embed(photo("flower.jpg"))
