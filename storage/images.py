"""The pipeline's `ImageStore` on SQL: each image once by the sha256 of its bytes.

A near-duplicate lookup is multi-index hashing (Norouzi, Punjani and Fleet, "Fast Search in
Hamming Space with Multi-Index Hashing", CVPR 2012) on the pHash's four 16-bit bands, each an
indexed integer column (migration 0012): if two hashes differ in at most d bits, one band
differs in at most r = d // 4 (pigeonhole), so the rows worth comparing are those with a band
among the 16-bit values within r bits of the probe's (137 a band at r = 2, the default
`hash_distance` of 10), read through the band indexes; the exact distance is then checked in
Python. Past r = 3 (d >= 16) the value lists outgrow a scan and every hash is compared instead.
bench/image_store.py measures both at 10k and 100k images. The embedding lookup is one matrix
product over the stored vectors of the same embedder.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Collection
from datetime import UTC, datetime
from functools import cache

import numpy as np
import numpy.typing as npt
from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from pipeline.records import SeenImage, merged_sighting, ranked_by_cosine
from storage.db import Database
from storage.models import ImageRow

BANDS = 4
BAND_BITS = 16
MAX_BAND_RADIUS = 3  # 697 values a band; at 4 (2517) a full scan reads less
_BAND_COLUMNS = (ImageRow.phash_b0, ImageRow.phash_b1, ImageRow.phash_b2, ImageRow.phash_b3)
BAND_NAMES = tuple(column.key for column in _BAND_COLUMNS)


def phash_bands(phash: str) -> tuple[int, ...]:
    """The four 16-bit bands of a hex pHash, lowest bits first."""
    value = int(phash, 16)
    return tuple((value >> (BAND_BITS * i)) & 0xFFFF for i in range(BANDS))


@cache
def _flips(radius: int) -> tuple[int, ...]:
    """Every 16-bit mask of at most `radius` set bits."""
    return tuple(
        sum(1 << bit for bit in bits)
        for count in range(radius + 1)
        for bits in itertools.combinations(range(BAND_BITS), count)
    )


def band_filter(phash: str, max_distance: int) -> ColumnElement[bool] | None:
    """The rows that can be within `max_distance` of `phash`: a band within distance // 4 bits
    of the probe's; None when that would list more values than a full scan reads."""
    radius = max_distance // BANDS
    if radius > MAX_BAND_RADIUS:
        return None
    masks = _flips(radius)
    return or_(
        *(
            column.in_(sorted(band ^ mask for mask in masks))
            for column, band in zip(_BAND_COLUMNS, phash_bands(phash), strict=True)
        )
    )


class SqlImageStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()  # SQLite allows one writer; serialise our own adds

    def add(self, image: SeenImage) -> None:
        with self._lock, self._db.session() as session:
            row = session.get(ImageRow, image.sha256)
            if row is None:
                bands = zip(BAND_NAMES, phash_bands(image.phash), strict=True)
                session.add(ImageRow(**image.model_dump(), **dict(bands)))
            else:
                known = _seen(row, with_content=True)
                update = merged_sighting(known, image)
                if update is known:
                    return
                # A fact-check turned out to carry it, or an embedding or copy was missing.
                row.fact_check, row.content = update.fact_check, update.content
                row.embedding, row.embedder = update.embedding, update.embedder
                row.ocr_text = update.ocr_text
            try:
                session.commit()
            except IntegrityError:  # another process stored the same image first
                session.rollback()

    def near(self, phash: str, max_distance: int) -> list[tuple[SeenImage, int]]:
        probe = int(phash, 16)
        candidates = select(ImageRow.sha256, ImageRow.phash)
        narrowed = band_filter(phash, max_distance)
        if narrowed is not None:
            candidates = candidates.where(narrowed)
        with self._db.session() as session:
            hashes = session.execute(candidates).all()
            close = {
                sha: d
                for sha, stored in hashes
                if (d := (probe ^ int(stored, 16)).bit_count()) <= max_distance
            }
            if not close:
                return []
            rows = session.scalars(select(ImageRow).where(ImageRow.sha256.in_(close))).all()
            found = [(_seen(row), close[row.sha256]) for row in rows]
        return sorted(found, key=lambda pair: (pair[1], pair[0].seen_at))

    def similar(
        self, vector: npt.NDArray[np.float32], embedder: str, min_cosine: float, limit: int = 5
    ) -> list[tuple[SeenImage, float]]:
        with self._db.session() as session:
            stored = session.execute(
                select(ImageRow.sha256, ImageRow.embedding).where(
                    ImageRow.embedder == embedder, ImageRow.embedding.is_not(None)
                )
            ).all()
            keys = [
                (SeenImage(sha256=sha, phash="0" * 16, source="", seen_at=_EPOCH), data)
                for sha, data in stored
                if data is not None
            ]
            best = ranked_by_cosine(vector, keys, min_cosine, limit)
            if not best:
                return []
            rows = {
                row.sha256: row
                for row in session.scalars(
                    select(ImageRow).where(ImageRow.sha256.in_([s.sha256 for s, _ in best]))
                )
            }
            return [(_seen(rows[s.sha256]), score) for s, score in best if s.sha256 in rows]

    def content(self, sha256: str) -> bytes | None:
        """Our stored copy of the picture, if one was kept (the review app serves it)."""
        with self._db.session() as session:
            return session.scalar(select(ImageRow.content).where(ImageRow.sha256 == sha256))


def stored_copies(session: Session, hashes: Collection[str]) -> set[str]:
    """Which of the images `hashes` (sha256) have our copy stored."""
    if not hashes:
        return set()
    return set(
        session.scalars(
            select(ImageRow.sha256).where(
                ImageRow.sha256.in_(list(hashes)), ImageRow.content.is_not(None)
            )
        )
    )


def copies_by_phash(session: Session, phashes: Collection[str]) -> dict[str, list[tuple[str, str]]]:
    """(sha256, source) of the stored copies with each of `phashes`, first seen first, by
    pHash."""
    found: dict[str, list[tuple[str, str]]] = {}
    if not phashes:
        return found
    rows = session.execute(
        select(ImageRow.phash, ImageRow.sha256, ImageRow.source)
        .where(ImageRow.phash.in_(list(phashes)), ImageRow.content.is_not(None))
        .order_by(ImageRow.seen_at)
    )
    for phash, sha, source in rows:
        found.setdefault(phash, []).append((sha, source))
    return found


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _seen(row: ImageRow, *, with_content: bool = False) -> SeenImage:
    # Every SeenImage field is a column of the same name; the copy is deferred, and read only
    # when asked for (a lookup never loads it).
    fields = (name for name in SeenImage.model_fields if with_content or name != "content")
    return SeenImage.model_validate({name: getattr(row, name) for name in fields})
