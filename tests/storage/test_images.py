"""Images seen, on SQL: each stored once by the sha256 of its bytes with its source, a
fact-check attached later, near duplicates found by pHash distance through the band indexes
(exactly what a full comparison finds); and the migrated table matches the model."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, select, text

from pipeline.records import SeenImage
from storage.db import Database, alembic_config
from storage.images import (
    SqlImageStore,
    band_filter,
    copies_by_phash,
    phash_bands,
    stored_copies,
)
from storage.models import ImageRow

NOW = datetime(2026, 11, 29, tzinfo=UTC)
LATER = datetime(2026, 11, 30, tzinfo=UTC)
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
    indexed = sorted(i["column_names"] for i in inspector.get_indexes("images"))
    assert indexed == [["phash"], ["phash_b0"], ["phash_b1"], ["phash_b2"], ["phash_b3"]]


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


def test_only_images_with_our_copy_count_as_stored_and_copies_group_by_phash(
    db: Database,
) -> None:
    store = SqlImageStore(db)
    store.add(seen("a", "8f373714acfcf4d0", "v#t=1", content=b"j"))
    store.add(seen("b", "8f373714acfcf4d0", "w#t=2", content=b"k", seen_at=LATER))
    store.add(seen("c", "0000000000000000", "no copy"))
    with db.session() as session:
        assert stored_copies(session, {"a" * 64, "c" * 64}) == {"a" * 64}
        assert stored_copies(session, set()) == set()
        copies = copies_by_phash(session, {"8f373714acfcf4d0", "0000000000000000"})
    assert copies == {"8f373714acfcf4d0": [("a" * 64, "v#t=1"), ("b" * 64, "w#t=2")]}


def test_the_bands_are_the_four_16_bit_quarters_of_the_hash() -> None:
    assert phash_bands("0123456789abcdef") == (0xCDEF, 0x89AB, 0x4567, 0x0123)


@pytest.mark.parametrize("max_distance", [0, 3, 7, 10, 15])
def test_the_band_lookup_finds_exactly_what_comparing_every_hash_finds(
    db: Database, max_distance: int
) -> None:
    rng = random.Random(max_distance)
    probe = rng.getrandbits(64)
    stored = [rng.getrandbits(64) for _ in range(300)]
    # Near copies of the probe, with the flipped bits spread over the bands or piled into one.
    for flips in range(0, 18):
        spread = rng.sample(range(64), flips)
        piled = rng.sample(range(16 * (flips % 4), 16 * (flips % 4) + 16), min(flips, 16))
        for bits in (spread, piled):
            stored.append(probe ^ sum(1 << b for b in bits))
    store = SqlImageStore(db)
    for number, value in enumerate(stored):
        store.add(
            SeenImage(
                sha256=f"{number:064x}", phash=f"{value:016x}", source=str(number), seen_at=NOW
            )
        )
    expected = sorted(
        (bin(probe ^ value).count("1"), str(number))
        for number, value in enumerate(stored)
        if bin(probe ^ value).count("1") <= max_distance
    )
    found = store.near(f"{probe:016x}", max_distance)
    assert sorted((d, image.source) for image, d in found) == expected
    assert len(expected) > (0 if max_distance < 3 else 4)


def test_a_distance_past_the_band_radius_falls_back_to_comparing_every_hash(
    db: Database,
) -> None:
    assert band_filter("0" * 16, 15) is not None
    assert band_filter("0" * 16, 16) is None
    store = SqlImageStore(db)
    store.add(seen("1", "00000000000fffff", "twenty bits"))  # one band 16 bits off, one 4
    assert [(image.source, d) for image, d in store.near("0" * 16, 20)] == [("twenty bits", 20)]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'factnote.db'}"


def test_migration_0012_fills_in_the_bands_of_images_stored_before_it(database_url: str) -> None:
    url = database_url
    Database(url).dispose()
    command.downgrade(alembic_config(url), "0011")
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO images (sha256, phash, source, seen_at) "
                "VALUES (:sha, '0123456789abcdef', 'old', :at)"
            ),
            {"sha": "a" * 64, "at": NOW},
        )
    engine.dispose()
    db = Database(url)  # migrates to head
    try:
        [(found, dist)] = SqlImageStore(db).near("0123456789abcdee", 10)
        assert found.source == "old" and dist == 1
        with db.session() as session:
            row = session.get(ImageRow, "a" * 64)
            assert row is not None
            assert (row.phash_b0, row.phash_b1, row.phash_b2, row.phash_b3) == phash_bands(
                "0123456789abcdef"
            )
    finally:
        db.dispose()
    command.downgrade(alembic_config(url), "0011")  # and down again
    check = create_engine(url)
    assert "phash_b0" not in {c["name"] for c in inspect(check).get_columns("images")}
    check.dispose()
