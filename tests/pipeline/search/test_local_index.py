"""The local index: storage, lexical and fused search, site filters, persistence, threads."""

from __future__ import annotations

import hashlib
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.config import RelevanceConfig
from pipeline.indexes.words import query_words
from pipeline.records import Document, IndexStoreError
from pipeline.relevance.scoring import Embedder, get_embedder
from pipeline.search.base import SearchError, SearchProvider
from pipeline.search.local_index import LocalIndexError
from pipeline.web.html_text import extract_document
from storage.indexes.fulltext import fts5_expression
from testing import indexes

MMR = (
    "Large studies of hundreds of thousands of children found that the measles, mumps and "
    "rubella vaccine does not cause autism. The 1998 paper that claimed a link was retracted."
)
BREAD = (
    "To bake bread, mix flour, water, yeast and salt, knead the dough for ten minutes and let "
    "it rise for an hour before baking it in a hot oven."
)
MOON = (
    "Apollo 11 landed on the Moon in July 1969, and the astronauts brought back rock samples "
    "that geologists still study today."
)
# Shares no content word with MMR (not even a stem: autistic/autism, jab/vaccine, kids/children).
PARAPHRASE = "jab makes kids autistic"


def doc(url: str, text: str, title: str = "", published: datetime | None = None) -> Document:
    """A plain-text page as `factnote index add` makes it of a file with its sidecar."""
    extracted = extract_document(url, text, "text/plain", published=published)
    return extracted.model_copy(update={"title": title})


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder(RelevanceConfig())


@pytest.fixture
def corpus() -> list[Document]:
    return [
        doc(
            "https://health.example/mmr",
            MMR,
            "MMR safety",
            datetime(2021, 3, 4, tzinfo=UTC),
        ),
        doc("https://food.example/bread", BREAD, "Baking bread"),
        doc("https://space.example/moon", MOON, "The Moon landing"),
    ]


def test_added_documents_are_found_with_their_metadata(
    tmp_path: Path, corpus: list[Document]
) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        assert isinstance(index, SearchProvider)
        assert [index.add(d) for d in corpus] == [True, True, True]
        assert len(index) == 3
        results = index.search("does the rubella vaccine cause autism?", limit=5)
    assert [r.url for r in results] == ["https://health.example/mmr"]
    top = results[0]
    assert top.rank == 1 and top.provider == "local" and top.title == "MMR safety"
    assert top.published == datetime(2021, 3, 4, tzinfo=UTC)
    assert "autism" in top.snippet
    assert top.query == "does the rubella vaccine cause autism?"


def test_ranks_follow_bm25_and_limit_applies(tmp_path: Path) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        index.add(doc("https://a.example/1", "vaccine " * 3 + "autism trial results " * 5))
        index.add(doc("https://a.example/2", "vaccine autism " * 10 + "vaccine schedule"))
        index.add(doc("https://a.example/3", "a page about gardening and vaccine storage"))
        results = index.search("vaccine autism", limit=2)
    assert [r.rank for r in results] == [1, 2]
    assert results[0].url == "https://a.example/2"
    assert len(results) == 2


def test_same_content_again_is_a_no_op_and_a_new_hash_replaces(
    tmp_path: Path, corpus: list[Document]
) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        first = corpus[0]
        assert index.add(first) is True
        assert (
            index.add(first.model_copy(update={"url": "https://www.health.example/mmr/"})) is False
        )
        assert len(index) == 1
        changed_text = "Measles outbreaks followed the drop in vaccination rates."
        changed = doc(first.url, changed_text, "MMR update")
        assert index.add(changed) is True
        assert len(index) == 1
        assert index.search("retracted", limit=5) == []
        assert [r.title for r in index.search("measles outbreaks", limit=5)] == ["MMR update"]
        stored = index.get(first.url)
    assert stored is not None and stored.text == changed_text


def test_get_finds_any_spelling_of_the_url(tmp_path: Path, corpus: list[Document]) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        index.add(corpus[0])
        found = index.get("HTTPS://www.Health.example/mmr/?utm_source=x#top")
        assert found is not None and found.title == "MMR safety" and found.text == MMR
        assert index.get("https://health.example/other") is None


def test_missing_hash_is_computed_from_the_text(tmp_path: Path) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        bare = Document(url="https://a.example/x", canonical_url="", ok=True, text=BREAD)
        assert index.add(bare) is True
        assert index.add(bare) is False
        stored = index.get("https://a.example/x")
    assert stored is not None
    assert stored.content_hash == hashlib.sha256(BREAD.encode()).hexdigest()


def test_failed_or_empty_documents_are_refused(tmp_path: Path) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        failed = Document(url="https://a.example/", canonical_url="", ok=False, error="404")
        with pytest.raises(LocalIndexError, match="failed"):
            index.add(failed)
        with pytest.raises(LocalIndexError, match="without text"):
            index.add(Document(url="https://a.example/", canonical_url="", ok=True, text="   "))
        assert len(index) == 0


@pytest.mark.parametrize(
    "query",
    [
        '"vaccine',
        "vaccine AND",
        "AND OR NOT",
        "vacc* autism",
        "title:vaccine",
        "-autism",
        "(vaccine OR (autism",
        "vaccine NEAR(autism, 2)",
        '""""',
        "^autism",
        "autism'); DROP TABLE documents; --",
        "✓ 💉 ¿autismo?",
    ],
)
def test_hostile_queries_never_raise(tmp_path: Path, corpus: list[Document], query: str) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        for d in corpus:
            index.add(d)
        results = index.search(query, limit=5)
        assert len(index) == 3
    words = {"vaccine", "autism"} & set(query.lower().replace("(", " ").split())
    if words:
        assert results and results[0].url == "https://health.example/mmr"


def test_the_fts_expression_quotes_every_term_and_drops_stopwords() -> None:
    def fts_query(query: str) -> str | None:
        return fts5_expression(query_words(query))

    assert fts_query('Does the "MMR" vaccine* cause -autism?') == (
        '"mmr" OR "vaccine" OR "cause" OR "autism"'
    )
    assert fts_query("the AND of") == '"the" OR "and" OR "of"'  # nothing else left
    assert fts_query("?!* :") is None


def test_empty_query_or_zero_limit_gives_nothing(tmp_path: Path, corpus: list[Document]) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        index.add(corpus[0])
        assert index.search("   ", limit=5) == []
        assert index.search("?!", limit=5) == []
        assert index.search("vaccine", limit=0) == []


def test_sites_restrict_by_domain_host_and_path(tmp_path: Path) -> None:
    text = "Vaccines are tested in large clinical trials before approval."
    urls = [
        "https://www.bbc.co.uk/news/health-1",
        "https://news.bbc.co.uk/health-2",
        "https://who.int/news/item/3",
        "https://who.int/about/4",
        "https://cdc.gov/vaccines/5",
    ]
    with indexes.local_index(tmp_path / "ix.sqlite") as index:
        for url in urls:
            index.add(doc(url, text))

        def urls_for(sites: list[str]) -> set[str]:
            return {r.url for r in index.search("vaccines trials", limit=10, sites=sites)}

        assert urls_for([]) == set(urls)
        assert urls_for(["bbc.co.uk"]) == set(urls[:2])  # registrable domain covers subdomains
        assert urls_for(["news.bbc.co.uk"]) == {urls[1]}  # a host names just that host
        # www. is dropped as in canonical URLs, so it names the registrable domain here.
        assert urls_for(["www.bbc.co.uk"]) == set(urls[:2])
        assert urls_for(["who.int/news"]) == {urls[2]}  # a path is a URL prefix
        assert urls_for(["https://who.int/about/"]) == {urls[3]}
        assert urls_for(["cdc.gov", "who.int/news"]) == {urls[2], urls[4]}
        assert urls_for(["example.org"]) == set()
        results = index.search("vaccines trials", limit=10, sites=["bbc.co.uk"])
    assert {r.domain for r in results} == {"bbc.co.uk"}


def test_fusion_finds_a_paraphrase_that_lexical_search_misses(
    tmp_path: Path, corpus: list[Document], embedder: Embedder
) -> None:
    lexical_path = tmp_path / "lexical.sqlite"
    with indexes.local_index(lexical_path) as lexical:
        for d in corpus:
            lexical.add(d)
        assert lexical.search(PARAPHRASE, limit=3) == []
    with indexes.local_index(tmp_path / "dense.sqlite", embedder=embedder) as fused:
        for d in corpus:
            fused.add(d)
        results = fused.search(PARAPHRASE, limit=3)
        # Off-topic pages stay out: a dense hit must clear the page-relevance threshold.
        assert [r.url for r in results] == ["https://health.example/mmr"]
        assert "autism" in results[0].snippet
        # Lexical hits still count: an exact-word query on the bread page puts it first.
        assert fused.search("knead flour", limit=3)[0].url == "https://food.example/bread"
        assert fused.search(PARAPHRASE, limit=3, sites=["space.example"]) == []


def test_lexical_only_entry_gets_embeddings_when_an_embedder_arrives(
    tmp_path: Path, corpus: list[Document], embedder: Embedder
) -> None:
    path = tmp_path / "ix.sqlite"
    with indexes.local_index(path) as lexical:
        lexical.add(corpus[0])
    with indexes.local_index(path, embedder=embedder) as fused:
        assert fused.search(PARAPHRASE, limit=3) == []  # stored without vectors
        assert fused.add(corpus[0]) is True  # same content, but now embedded
        assert fused.add(corpus[0]) is False
        assert [r.url for r in fused.search(PARAPHRASE, limit=3)] == [corpus[0].url]


def test_index_persists_across_reopen(
    tmp_path: Path, corpus: list[Document], embedder: Embedder
) -> None:
    path = tmp_path / "nested" / "ix.sqlite"
    with indexes.local_index(path, embedder=embedder) as index:
        for d in corpus:
            index.add(d)
    with indexes.local_index(path, embedder=embedder) as reopened:
        assert len(reopened) == 3
        assert [r.url for r in reopened.search(PARAPHRASE, limit=3)] == [corpus[0].url]
        stored = reopened.get(corpus[0].url)
        assert stored is not None and stored.published == corpus[0].published
        assert reopened.add(corpus[1]) is False
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_an_index_built_by_another_model_is_refused(
    tmp_path: Path, embedder: Embedder, corpus: list[Document]
) -> None:
    path = tmp_path / "ix.sqlite"
    with indexes.local_index(path, embedder=embedder) as index:
        index.add(corpus[0])  # the first write notes the embedding size
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE index_meta SET value = '768' WHERE key = 'local.embedding_dim'")
    with pytest.raises(LocalIndexError, match="768-dimensional"):
        indexes.local_index(path, embedder=embedder)
    indexes.local_index(path).close()  # lexical-only use of the same file is still fine


def test_a_technical_failure_raises_search_error(tmp_path: Path, corpus: list[Document]) -> None:
    index = indexes.local_index(tmp_path / "ix.sqlite")
    index.add(corpus[0])
    index.close()
    with pytest.raises(SearchError, match="local"):
        index.search("vaccine", limit=3)


def test_concurrent_searches_agree(
    tmp_path: Path, corpus: list[Document], embedder: Embedder
) -> None:
    with indexes.local_index(tmp_path / "ix.sqlite", embedder=embedder) as index:
        for d in corpus:
            index.add(d)
        queries = [PARAPHRASE, "knead flour", "moon rock samples"] * 10
        expected = {q: [r.url for r in index.search(q, limit=3)] for q in set(queries)}
        with ThreadPoolExecutor(max_workers=6) as pool:
            answers = list(pool.map(lambda q: [r.url for r in index.search(q, limit=3)], queries))
        assert answers == [expected[q] for q in queries]
        assert expected["moon rock samples"][0] == "https://space.example/moon"


def test_a_file_that_is_not_an_index_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"this is not a database " * 200)
    with pytest.raises(IndexStoreError, match="cannot open the local index"):
        indexes.local_index(path)
