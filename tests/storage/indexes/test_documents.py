"""The local search index's rows in SQL (`storage.indexes.documents`)."""

from __future__ import annotations

import pytest

from pipeline.records import IndexStoreError, SiteFilter
from pipeline.search.rows import DocumentRow
from storage.db import Database
from storage.indexes import SqlDocumentRows, open_document_rows


def document(url: str, domain: str) -> DocumentRow:
    key = url.split("://", 1)[-1]
    return {
        "canonical_url": url,
        "url_key": key,
        "host": key.split("/", 1)[0],
        "domain": domain,
        "content_hash": "h",
        "embedded": False,
        "title": "Title",
        "text": f"Rock samples from {url}",
        "doc_json": "{}",
    }


def test_site_filters_keep_domains_hosts_and_literal_url_prefixes(main_db: Database) -> None:
    with SqlDocumentRows.open(main_db.engine) as rows:
        urls = {
            "https://news.bbc.co.uk/a": "bbc.co.uk",
            "https://space.example/100%/moon": "space.example",
            "https://space.example/1000/mars": "space.example",
        }
        for url, domain in urls.items():
            rows.replace(document(url, domain), [("passage", None)], dim=None)
        ids = {rows.documents([i])[i][0]: i for i in rows.allowed(SiteFilter(names=("bbc.co.uk",)))}
        assert list(ids) == ["bbc.co.uk"]
        # "%" in a prefix is a literal character, not a wildcard.
        kept = rows.allowed(SiteFilter(prefixes=("space.example/100%",)))
        assert len(kept) == 1
        hits = rows.fulltext_hits(["rock"], 5, SiteFilter(prefixes=("space.example/100%",)))
        assert [i for i, _ in hits] == list(kept)


def test_a_replaced_document_keeps_only_its_new_passages(main_db: Database) -> None:
    with SqlDocumentRows.open(main_db.engine) as rows:
        url = "https://a.example/page"
        rows.replace(document(url, "a.example"), [("one", None), ("two", None)], dim=None)
        rows.replace(document(url, "a.example"), [("three", b"\x00" * 12)], dim=3)
        assert rows.count() == 1
        assert rows.content_state(url) == ("h", False)
        [(passage, _doc, vector)] = rows.passage_embeddings()
        assert rows.passage_texts([passage]) == {passage: "three"}
        assert vector == b"\x00" * 12
        assert rows.passage_version() >= passage


def test_a_closed_store_refuses_work_even_on_a_borrowed_engine(db: Database) -> None:
    rows = open_document_rows(db.engine)
    rows.close()
    with pytest.raises(IndexStoreError, match=r"local index .* is closed"):
        rows.count()
