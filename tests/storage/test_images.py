"""Images seen, on SQL: each stored once by the sha256 of its bytes with its source, a
fact-check attached later, near duplicates found by pHash distance; and the migrated table
matches the model."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from sqlalchemy import inspect, select

from pipeline.records import SeenImage
from storage.db import Database
from storage.images import SqlImageStore
from storage.models import ImageRow

NOW = datetime(2026, 11, 29, tzinfo=UTC)
REVIEW = {"claim_text": "A photo of a flood", "review_url": "https://fc.example/flood"}


def seen(sha: str, phash: str, source: str, **extra: object) -> SeenImage:
    return SeenImage.model_validate(
        {"sha256": sha * 64, "phash": phash, "source": source, "seen_at": NOW, **extra}
    )


def test_each_image_is_stored_once_with_its_first_source(db: Database) -> None:
    store = SqlImageStore(db)
    store.add(seen("a", "8f373714acfcf4d0", "https://cdn.example/a.jpg"))
    store.add(seen("a", "8f373714acfcf4d0", "https://mirror.example/a.jpg"))
    with db.session() as session:
        [row] = session.scalars(select(ImageRow)).all()
    assert row.source == "https://cdn.example/a.jpg"
    assert row.seen_at == NOW and row.fact_check is None


def test_a_fact_check_attaches_to_an_image_seen_before(db: Database) -> None:
    store = SqlImageStore(db)
    store.add(seen("a", "8f373714acfcf4d0", "post"))
    store.add(seen("a", "8f373714acfcf4d0", "fc", fact_check=REVIEW))
    [(found, dist)] = store.near("8f373714acfcf4d0", 0)
    assert found.fact_check == REVIEW and found.source == "post" and dist == 0


def test_near_finds_images_within_the_distance_nearest_first(db: Database) -> None:
    store = SqlImageStore(db)
    store.add(seen("1", "0000000000000000", "one"))
    store.add(seen("2", "000000000000000f", "two"))
    store.add(seen("3", "ffffffffffffffff", "three"))
    found = store.near("0000000000000001", 10)
    assert [(image.source, d) for image, d in found] == [("one", 1), ("two", 3)]
    assert store.near("f0f0f0f0f0f0f0f0", 10) == []
    assert found[0][0].seen_at == NOW


def test_the_migration_creates_the_table_the_model_describes(db: Database) -> None:
    inspector = inspect(db.engine)
    columns = {c["name"] for c in inspector.get_columns("images")}
    assert columns == set(ImageRow.__table__.columns.keys())
    assert inspector.get_pk_constraint("images")["constrained_columns"] == ["sha256"]
    assert [i["column_names"] for i in inspector.get_indexes("images")] == [["phash"]]


def vector(*values: float) -> bytes:
    found = np.array(values, dtype=np.float32)
    return (found / np.linalg.norm(found)).astype("<f4").tobytes()


def test_similar_ranks_one_embedders_vectors_by_cosine_with_their_fact_checks(
    db: Database,
) -> None:
    store = SqlImageStore(db)
    store.add(seen("1", "0" * 16, "one", embedding=vector(1, 0), embedder="m1", fact_check=REVIEW))
    store.add(seen("2", "0" * 16, "two", embedding=vector(1, 1), embedder="m1"))
    store.add(seen("3", "0" * 16, "three", embedding=vector(1, 0), embedder="m2"))
    store.add(seen("4", "0" * 16, "four"))  # no embedding yet
    probe = np.frombuffer(vector(1, 0.05), dtype="<f4")
    found = store.similar(probe, "m1", 0.5)
    assert [(image.source, round(c, 2)) for image, c in found] == [("one", 1.0), ("two", 0.74)]
    assert found[0][0].fact_check == REVIEW
    assert store.similar(probe, "m1", 0.99)[0][0].source == "one"


def test_an_embedding_and_our_copy_fill_in_on_a_later_sighting_and_lookups_skip_the_copy(
    db: Database,
) -> None:
    store = SqlImageStore(db)
    store.add(seen("a", "8f373714acfcf4d0", "post"))
    store.add(
        seen("a", "8f373714acfcf4d0", "again", embedding=vector(0, 1), embedder="m1", content=b"j")
    )
    [(found, _)] = store.near("8f373714acfcf4d0", 0)
    assert found.source == "post" and found.embedder == "m1" and found.content is None
    assert store.content("a" * 64) == b"j" and store.content("b" * 64) is None
