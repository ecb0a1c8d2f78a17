"""The pipeline's `ImageStore` on SQL: each image once by the sha256 of its bytes.

A near-duplicate lookup compares the probe's pHash with every stored one in Python (a 64-bit
XOR and popcount: about a million rows a second), which suits the thousands of images a bot
sees; a BK-tree or multi-index hashing would be the next step past that.
"""

from __future__ import annotations

import threading

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from pipeline.records import SeenImage
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
                    )
                )
            elif row.fact_check is None and image.fact_check is not None:
                row.fact_check = image.fact_check  # a fact-check turned out to carry it
            else:
                return
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
            found = [
                (
                    SeenImage(
                        sha256=row.sha256,
                        phash=row.phash,
                        source=row.source,
                        seen_at=row.seen_at,
                        fact_check=row.fact_check,
                    ),
                    close[row.sha256],
                )
                for row in rows
            ]
        return sorted(found, key=lambda pair: (pair[1], pair[0].seen_at))
