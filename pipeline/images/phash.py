"""Near-duplicate images: a perceptual hash, and the images seen before it is compared with.

pHash (`imagehash`, 64 bits) of a copy at most `ImagesConfig.hash_side` pixels catches the
same picture re-shared: resized, recompressed or turned grey (distance <= 2 measured), and
small crops; not large crops, caption bars, borders or mirror images (docs/images.md, and
tests/pipeline/images/test_phash.py measures it on generated pairs). Unrelated pictures were
>= 22 apart.

An `ImageStore` keeps every image seen once, by the sha256 of its bytes, with its source and,
for an image a fact-check carries, that fact-check: a repost of a debunked image is then a
known claim (`pipeline.images.reader.image_claim_matches`). It also keeps each image's learned
embedding (`pipeline.images.embedding`), the second stage for what pHash does not see past.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

import imagehash
from PIL import Image

from pipeline.images.embedding import Vector
from pipeline.images.records import SeenImage, merged_sighting, ranked_by_cosine

__all__ = ["ImageStore", "MemoryImageStore", "SeenImage", "distance", "phash"]


def phash(image: Image.Image, side: int = 512) -> str:
    """The 64-bit pHash of `image` as 16 hex digits, computed on a copy at most `side` px."""
    small = image.copy()
    small.thumbnail((side, side))
    return str(imagehash.phash(small))


def distance(a: str, b: str) -> int:
    """Hamming distance between two hex pHashes."""
    return (int(a, 16) ^ int(b, 16)).bit_count()


class ImageStore(Protocol):
    """Images seen before; storage implements it with SQL, the pipeline only knows this."""

    def add(self, image: SeenImage) -> None:
        """Keep `image` once per sha256; a later add with a fact-check attaches it."""
        ...

    def near(self, phash: str, max_distance: int) -> list[tuple[SeenImage, int]]:
        """Stored images within `max_distance` of `phash`, nearest first."""
        ...

    def similar(
        self, vector: Vector, embedder: str, min_cosine: float, limit: int = 5
    ) -> list[tuple[SeenImage, float]]:
        """Stored images embedded by `embedder` whose cosine with `vector` is at least
        `min_cosine`, most similar first, at most `limit`."""
        ...


class MemoryImageStore:
    """A dict-backed, thread-safe ImageStore (tests, and a bot without a database)."""

    def __init__(self, images: Sequence[SeenImage] = ()) -> None:
        self._images: dict[str, SeenImage] = {}
        self._lock = threading.Lock()
        for image in images:
            self.add(image)

    def add(self, image: SeenImage) -> None:
        with self._lock:
            known = self._images.get(image.sha256)
            self._images[image.sha256] = image if known is None else merged_sighting(known, image)

    def near(self, phash: str, max_distance: int) -> list[tuple[SeenImage, int]]:
        with self._lock:
            found = [(seen, distance(phash, seen.phash)) for seen in self._images.values()]
        return sorted(
            ((seen, d) for seen, d in found if d <= max_distance), key=lambda pair: pair[1]
        )

    def similar(
        self, vector: Vector, embedder: str, min_cosine: float, limit: int = 5
    ) -> list[tuple[SeenImage, float]]:
        with self._lock:
            stored = [
                seen
                for seen in self._images.values()
                if seen.embedding is not None and seen.embedder == embedder
            ]
        return ranked_by_cosine(
            vector, [(seen, seen.embedding or b"") for seen in stored], min_cosine, limit
        )

    def content(self, sha256: str) -> bytes | None:
        """Our stored copy of the picture, if one was kept."""
        with self._lock:
            seen = self._images.get(sha256)
        return seen.content if seen is not None else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._images)
