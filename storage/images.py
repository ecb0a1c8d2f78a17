"""The pipeline's `ImageStore` on SQL: each image once by the sha256 of its bytes.

A near-duplicate lookup compares the probe's pHash with every stored one in Python (a 64-bit
XOR and popcount: about a million rows a second), which suits the thousands of images a bot
sees; a BK-tree or multi-index hashing would be the next step past that. The embedding lookup
is likewise one matrix product over the stored vectors of the same embedder.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from pipeline.records import SeenImage, merged_sighting, ranked_by_cosine
from storage.db import Database
from storage.models import ImageRow


class SqlImageStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()  # SQLite allows one writer; serialise our own adds

    def add(self, image: SeenImage) -> None:
        with self._lock, self._db.session() as session:
            row = session.get(ImageRow, image.sha256)
            if row is None:
                session.add(
                    ImageRow(
                        sha256=image.sha256,
                        phash=image.phash,
                        source=image.source,
                        seen_at=image.seen_at,
                        fact_check=image.fact_check,
                        embedding=image.embedding,
                        embedder=image.embedder,
                        content=image.content,
                        ocr_text=image.ocr_text,
                    )
                )
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
        with self._db.session() as session:
            hashes = session.execute(select(ImageRow.sha256, ImageRow.phash)).all()
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


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _seen(row: ImageRow, *, with_content: bool = False) -> SeenImage:
    return SeenImage(
        sha256=row.sha256,
        phash=row.phash,
        source=row.source,
        seen_at=row.seen_at,
        fact_check=row.fact_check,
        embedding=row.embedding,
        embedder=row.embedder,
        content=row.content if with_content else None,
        ocr_text=row.ocr_text,
    )
