"""The claim index, authority statements and local search index as tables of the main
database, migrated by Alembic, on SQLite and on PostgreSQL (a throwaway cluster,
tests/postgres.py): the same behaviour through each database's own full-text search."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pipeline.authority.retrieval import Statement
from pipeline.claims.index import ClaimIndexError, ClaimRecord
from pipeline.claims.ratings import Rating
from pipeline.config import RelevanceConfig
from pipeline.records import Document
from pipeline.relevance.scoring import Embedder, get_embedder
from pipeline.search.local_index import LocalIndex
from storage.db import Database
from testing import indexes

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
LEMON = "Drinking hot lemon water every hour kills the flu virus in your throat."
BIRDS = "The new 5G mast in Northvale is killing the birds in the park."
PAGES = {
    "https://health.example/mmr": (
        "MMR vaccine safety",
        "Large studies of hundreds of thousands of children found that the measles, mumps "
        "and rubella vaccine does not cause autism.",
    ),
    "https://food.example/bread": (
        "Baking bread",
        "To bake bread, mix flour, water, yeast and salt, knead the dough and let it rise.",
    ),
    "https://space.example/moon/apollo": (
        "The Moon landing",
        "Apollo 11 landed on the Moon in July 1969 and brought back rock samples.",
    ),
    "https://space.example/mars": (
        "Mars rovers",
        "Rovers on Mars study rock samples, and none has yet brought one back to Earth.",
    ),
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder(RelevanceConfig())


def review(text: str, url: str, rating: Rating = Rating.FALSE) -> ClaimRecord:
    return ClaimRecord(
        claim_text=text,
        review_url=url,
        rating=rating,
        publisher_name="Snopes",
        review_date=NOW - timedelta(days=10),
    )


def page(url: str) -> Document:
    title, text = PAGES[url]
    return Document(url=url, canonical_url=url, ok=True, title=title, text=text)


def fill_local(engine: Engine, embedder: Embedder | None) -> LocalIndex:
    local = indexes.local_index(engine, embedder=embedder)
    for url in PAGES:
        local.add(page(url))
    return local


def test_claims_are_stored_matched_and_replaced_in_the_main_database(
    main_db: Database, embedder: Embedder
) -> None:
    with indexes.claim_index(main_db.engine, embedder) as index:
        lemon = review(LEMON, "https://www.snopes.com/fact-check/lemon/")
        assert index.add([lemon, review(BIRDS, "https://www.snopes.com/fact-check/5g/")]) == 2
        assert index.add([lemon]) == 0
        [top, *_] = index.match("hot lemon water kills the flu virus", as_of=NOW)
        assert top.record.claim_text == LEMON
        changed = lemon.model_copy(update={"rating": Rating.MISLEADING})
        assert index.add([changed]) == 1
        assert len(index) == 2
        [top, *_] = index.match("hot lemon water kills the flu virus", as_of=NOW)
        assert top.record.rating is Rating.MISLEADING
    # The caller's engine stays open: the index never disposes of what it did not create.
    with indexes.claim_index(main_db.engine, embedder) as again:
        assert len(again) == 2


def test_a_store_built_with_another_embedding_size_is_refused_on_the_main_database(
    main_db: Database, embedder: Embedder
) -> None:
    with indexes.claim_index(main_db.engine, embedder) as index:
        index.add([review(LEMON, "https://www.snopes.com/fact-check/lemon/")])

    class Wider:
        dim = embedder.dim + 1

    with pytest.raises(ClaimIndexError, match=f"{embedder.dim}-dimensional"):
        indexes.claim_index(main_db.engine, Wider())  # type: ignore[arg-type]


def test_authority_statements_are_stored_once_and_retrieved_before_the_post(
    main_db: Database, embedder: Embedder
) -> None:
    def said(post_id: str, text: str, hours: float) -> Statement:
        return Statement(
            account="@HealthMin",
            post_id=post_id,
            text=text,
            created_at=NOW - timedelta(hours=hours),
            url=f"https://x.com/healthmin/status/{post_id}",
        )

    with indexes.authority_index(main_db.engine, embedder) as index:
        old = said("1", "The measles vaccination campaign continues in every school.", 5)
        late = said("2", "The measles vaccination campaign has ended after all.", -5)
        assert index.add_statements([old, late]) == 2
        assert index.add_statements([old]) == 0
        assert index.accounts() == {"healthmin"}
        latest = index.latest("x", "HealthMin")
        assert latest is not None and latest.post_id == "2"
        found = index.retrieve("measles vaccination campaign stopped", before=NOW)
        assert [r.statement.post_id for r in found] == ["1"]
        assert found[0].statement.created_at == old.created_at


def test_local_documents_are_found_by_full_text_and_by_meaning(
    main_db: Database, embedder: Embedder
) -> None:
    with fill_local(main_db.engine, embedder) as local:
        assert len(local) == 4
        hits = local.search("measles vaccine autism", limit=2)
        assert hits[0].url == "https://health.example/mmr"
        assert hits[0].snippet
        # No word in common: only the embeddings find it.
        assert local.search("jab makes kids autistic", limit=1)[0].url == hits[0].url
        stored = local.get("https://health.example/mmr")
        assert stored is not None and stored.text == PAGES["https://health.example/mmr"][1]


def test_site_filters_and_replacement_work_on_the_main_database(
    main_db: Database, embedder: Embedder
) -> None:
    with fill_local(main_db.engine, None) as local:
        urls = {r.url for r in local.search("rock samples", limit=5, sites=["space.example"])}
        assert urls == {"https://space.example/moon/apollo", "https://space.example/mars"}
        prefix = local.search("rock samples", limit=5, sites=["https://space.example/moon/"])
        assert [r.url for r in prefix] == ["https://space.example/moon/apollo"]
        changed = page("https://food.example/bread").model_copy(
            update={"text": "Sourdough needs a starter of flour and water.", "content_hash": ""}
        )
        assert local.add(changed) is True
        assert local.search("yeast knead", limit=5) == []
        assert [r.url for r in local.search("sourdough starter", limit=5)] == [
            "https://food.example/bread"
        ]
        assert len(local) == 4


def test_query_syntax_is_plain_text_on_every_database(main_db: Database) -> None:
    with fill_local(main_db.engine, None) as local:
        for query in ('"bread', "bread AND (", "NEAR(bread", "bread:*", "bread'; DROP TABLE x"):
            assert [r.url for r in local.search(query, limit=3)] == ["https://food.example/bread"]
        assert len(local) == 4


@pytest.mark.postgres
def test_full_text_results_agree_in_substance_on_sqlite_and_postgresql(
    pg_db: Database, tmp_path: Path
) -> None:
    sqlite_db = Database(f"sqlite:///{tmp_path / 'factnote.db'}")
    queries = [
        "measles vaccine autism",
        "bread yeast",
        "rock samples brought back",
        "Apollo landed on the Moon",
        "children studies",
    ]
    try:
        with fill_local(sqlite_db.engine, None) as lite, fill_local(pg_db.engine, None) as pg:
            for query in queries:
                on_sqlite = [r.url for r in lite.search(query, limit=4)]
                on_pg = [r.url for r in pg.search(query, limit=4)]
                # bm25 and ts_rank weigh differently: the same pages, the same best one.
                assert set(on_sqlite) == set(on_pg), query
                assert on_sqlite[0] == on_pg[0], query
    finally:
        sqlite_db.dispose()
