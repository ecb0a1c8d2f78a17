"""A search provider over documents kept on this machine, in one SQLite file.

It serves pages that no web engine has (demo `.example` sites, an operator's own corpus) and
runs the whole pipeline offline. Ranking is SQLite FTS5 bm25 over title and text; when an
embedder is given, passage embeddings are stored too and the lexical and dense rankings are
fused by reciprocal-rank fusion, so a paraphrase with no word in common still surfaces.
The stored `Document` is also what the fetch stage reads for local URLs, via `get`.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from pipeline.config import RelevanceConfig
from pipeline.lexical import ENGLISH_STOPWORDS
from pipeline.records import Document, SearchResult
from pipeline.relevance import Embedder, split_passages
from pipeline.search.base import SearchError
from pipeline.sqlite_store import open_store
from pipeline.urls import canonical_url

SCHEMA_VERSION = "1"
RRF_K = 60  # the constant from Cormack et al. (2009); it damps the weight of the very top ranks
SNIPPET_CHARS = 300
MAX_QUERY_TERMS = 32

_TERM = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    canonical_url TEXT NOT NULL UNIQUE,
    url_key TEXT NOT NULL,          -- canonical URL without its scheme, for path prefixes
    host TEXT NOT NULL,
    domain TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    embedded INTEGER NOT NULL,
    doc_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_host ON documents(host);
CREATE INDEX IF NOT EXISTS documents_domain ON documents(domain);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id, idx);
CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(
    title, text, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


class LocalIndexError(RuntimeError):
    """The index file cannot be used (incompatible schema or embedding size, bad document)."""


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression for free text: its words, each quoted, OR-ed together.

    Quoting every word makes FTS5 syntax in the input (`AND`, `*`, `:`, `-`, quotes,
    parentheses, column filters) plain text. None when the query has no word at all.
    """
    terms = [t.lower() for t in _TERM.findall(query)]
    # Function words match nearly every document; OR-ing them into an FTS query would turn any
    # query into "everything", so they are dropped unless nothing else is left.
    content = [t for t in terms if t not in ENGLISH_STOPWORDS and (len(t) > 1 or t.isdigit())]
    chosen = list(dict.fromkeys(content or terms))[:MAX_QUERY_TERMS]
    if not chosen:
        return None
    return " OR ".join(f'"{t}"' for t in chosen)


def _host(url: str) -> str:
    host = (urlsplit(canonical_url(url)).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _domain(host: str) -> str:
    """The registrable domain (`news.bbc.co.uk` -> `bbc.co.uk`), or the host itself when the
    credibility module cannot say (an IP address, a made-up `.example` name)."""
    if not host:
        return host
    try:
        from pipeline.domains import registrable_domain
    except ImportError:  # pragma: no cover - credibility ships with the pipeline
        return host
    try:
        found = registrable_domain(host)
    except Exception:  # a malformed host must not make a document unindexable
        found = ""
    return str(found) if found else host


def _url_key(url: str) -> str:
    return canonical_url(url).split("://", 1)[-1]


@dataclass(frozen=True)
class _SiteFilter:
    sql: str
    params: tuple[str, ...]


def _site_filter(sites: Sequence[str]) -> _SiteFilter | None:
    """SQL over `documents d` keeping the documents any of `sites` names: a bare host or
    domain matches the registrable domain or the host; an entry with a path is a URL prefix."""
    names: list[str] = []
    prefixes: list[str] = []
    for raw in sites:
        entry = raw.strip()
        if not entry:
            continue
        bare = entry.split("://", 1)[-1]
        if "/" in bare.rstrip("/"):
            prefixes.append(_url_key(entry))
        else:
            host = _host(entry)
            if host:
                names.append(host)
    if not names and not prefixes:
        return None
    clauses: list[str] = []
    params: list[str] = []
    if names:
        marks = ",".join("?" * len(names))
        clauses.append(f"d.domain IN ({marks}) OR d.host IN ({marks})")
        params += names + names
    for prefix in prefixes:
        clauses.append("substr(d.url_key, 1, length(?)) = ?")
        params += [prefix, prefix]
    return _SiteFilter("(" + " OR ".join(clauses) + ")", tuple(params))


@dataclass(frozen=True)
class _DenseMatrix:
    version: tuple[int, int, int]
    doc_ids: npt.NDArray[np.int64]  # doc id of each passage row, grouped by document
    passage_ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


@dataclass
class _Hit:
    doc_id: int
    snippet: str = ""
    lexical_rank: int | None = None
    dense_rank: int | None = None
    fused: float = 0.0


# Every SQL string built with an f-string below interpolates only fixed SQL and `?` placeholders
# (from `_SiteFilter` or a count of ids); values always travel as parameters.


class LocalIndex:
    """A `SearchProvider` over a local SQLite corpus. Safe to search from several threads."""

    name = "local"
    max_sites = 1000

    def __init__(
        self,
        path: str | Path,
        embedder: Embedder | None = None,
        *,
        dense_min_score: float | None = None,
        passage_words: int | None = None,
    ) -> None:
        defaults = RelevanceConfig()
        self._embedder = embedder
        # A dense hit below the page-relevance threshold would be dropped by the relevance
        # stage anyway; letting it in here would only crowd out real lexical hits.
        self._dense_min = defaults.page_threshold if dense_min_score is None else dense_min_score
        self._passage_words = passage_words or defaults.passage_words
        self._path = str(path)
        # One connection behind a lock: SQLite work here is short, and the expensive part of a
        # search (embedding the query, the matrix product) runs outside the lock.
        self._lock = threading.RLock()
        self._dense: _DenseMatrix | None = None
        self._writes = 0
        self._conn = open_store(
            self._path,
            schema_sql=_SCHEMA,
            schema_version=SCHEMA_VERSION,
            embedding_dim=self._embedder.dim if self._embedder else None,
            error=LocalIndexError,
            label="local index",
        )

    # --- writing ------------------------------------------------------------------------------

    def add(self, doc: Document) -> bool:
        """Store `doc` under its canonical URL. False when the same content is already there;
        a changed `content_hash` replaces the old version. Raises `LocalIndexError` for a
        failed or empty document."""
        if not doc.ok or doc.error:
            raise LocalIndexError(f"refusing to index a failed document: {doc.url} ({doc.error})")
        if not doc.text.strip():
            raise LocalIndexError(f"refusing to index a document without text: {doc.url}")
        key = canonical_url(doc.canonical_url or doc.url)
        content_hash = doc.content_hash or hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
        with self._lock:
            row = self._conn.execute(
                "SELECT content_hash, embedded FROM documents WHERE canonical_url = ?", (key,)
            ).fetchone()
        # An entry stored without embeddings is refreshed once an embedder is available.
        if row is not None and row[0] == content_hash and (row[1] or self._embedder is None):
            return False

        passages = split_passages(doc.text, self._passage_words)
        vectors = self._embedder.encode(passages) if self._embedder is not None else None
        stored = doc.model_copy(update={"canonical_url": key, "content_hash": content_hash})
        host = _host(doc.url)
        try:
            with self._lock, self._conn:
                old = self._conn.execute(
                    "SELECT id FROM documents WHERE canonical_url = ?", (key,)
                ).fetchone()
                if old is not None:
                    self._conn.execute("DELETE FROM documents_fts WHERE rowid = ?", (old[0],))
                    self._conn.execute("DELETE FROM documents WHERE id = ?", (old[0],))
                cursor = self._conn.execute(
                    "INSERT INTO documents (canonical_url, url_key, host, domain, content_hash,"
                    " embedded, doc_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        _url_key(key),
                        host,
                        _domain(host),
                        content_hash,
                        int(vectors is not None),
                        stored.model_dump_json(),
                    ),
                )
                doc_id = cursor.lastrowid
                self._conn.execute(
                    "INSERT INTO documents_fts (rowid, title, text) VALUES (?, ?, ?)",
                    (doc_id, doc.title, doc.text),
                )
                self._conn.executemany(
                    "INSERT INTO passages (doc_id, idx, text, embedding) VALUES (?, ?, ?, ?)",
                    [
                        (
                            doc_id,
                            i,
                            text,
                            None if vectors is None else vectors[i].astype("<f4").tobytes(),
                        )
                        for i, text in enumerate(passages)
                    ],
                )
                self._writes += 1
        except sqlite3.Error as exc:
            raise LocalIndexError(f"cannot store {doc.url} in {self._path}: {exc}") from exc
        return True

    # --- reading ------------------------------------------------------------------------------

    def get(self, url: str) -> Document | None:
        """The stored document for `url` (any spelling with the same canonical URL)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT doc_json FROM documents WHERE canonical_url = ?", (canonical_url(url),)
            ).fetchone()
        return None if row is None else Document.model_validate_json(row[0])

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT count(*) FROM documents").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> LocalIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, query: str, *, limit: int, sites: Sequence[str] = ()) -> list[SearchResult]:
        """Up to `limit` documents, best first, `rank` from 1. Raises `SearchError` when the
        index cannot be read."""
        if limit <= 0 or not query.strip():
            return []
        site_filter = _site_filter(sites)
        pool = max(limit * 4, 20)
        try:
            query_vector = self._embedder.encode([query])[0] if self._embedder is not None else None
            hits: dict[int, _Hit] = {}
            for rank, (doc_id, snippet) in enumerate(
                self._lexical(query, site_filter, pool), start=1
            ):
                hits[doc_id] = _Hit(doc_id, snippet=snippet, lexical_rank=rank)
            if query_vector is not None:
                for rank, (doc_id, snippet) in enumerate(
                    self._dense_search(query_vector, site_filter, pool), start=1
                ):
                    hit = hits.setdefault(doc_id, _Hit(doc_id, snippet=snippet))
                    hit.dense_rank = rank
            for hit in hits.values():
                hit.fused = sum(
                    1.0 / (RRF_K + r) for r in (hit.lexical_rank, hit.dense_rank) if r is not None
                )
            big = 1 << 30
            ordered = sorted(
                hits.values(),
                key=lambda h: (-h.fused, h.lexical_rank or big, h.dense_rank or big, h.doc_id),
            )[:limit]
            return self._results(query, ordered)
        except sqlite3.Error as exc:
            raise SearchError(f"local: cannot search {self._path}: {exc}") from exc

    def _lexical(
        self, query: str, site_filter: _SiteFilter | None, pool: int
    ) -> list[tuple[int, str]]:
        match = fts_query(query)
        if match is None:
            return []
        where = "documents_fts MATCH ?"
        params: list[object] = [match]
        if site_filter is not None:
            where += f" AND {site_filter.sql}"
            params += site_filter.params
        params.append(pool)
        # Title matches count double: a page titled with the query's words is usually about it.
        sql = (
            "SELECT d.id, snippet(documents_fts, 1, '', '', '…', 40) FROM documents_fts"  # noqa: S608
            " JOIN documents d ON d.id = documents_fts.rowid"
            f" WHERE {where} ORDER BY bm25(documents_fts, 2.0, 1.0), d.id LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def _dense_matrix(self) -> _DenseMatrix:
        with self._lock:
            # max(id) and count change on every insert or replacement, also by another process.
            stamp = self._conn.execute("SELECT coalesce(max(id), 0), count(*) FROM passages")
            top, count = stamp.fetchone()
            version = (self._writes, int(top), int(count))
            if self._dense is not None and self._dense.version == version:
                return self._dense
            rows = self._conn.execute(
                "SELECT id, doc_id, embedding FROM passages WHERE embedding IS NOT NULL"
                " ORDER BY doc_id, idx"
            ).fetchall()
            dim = self._embedder.dim if self._embedder is not None else 0
            vectors = (
                np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim)
                if rows
                else np.zeros((0, dim), dtype=np.float32)
            )
            self._dense = _DenseMatrix(
                version=version,
                doc_ids=np.array([r[1] for r in rows], dtype=np.int64),
                passage_ids=np.array([r[0] for r in rows], dtype=np.int64),
                vectors=vectors.astype(np.float32),
            )
            return self._dense

    def _allowed(self, site_filter: _SiteFilter) -> set[int]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT d.id FROM documents d WHERE {site_filter.sql}",  # noqa: S608
                site_filter.params,
            ).fetchall()
        return {int(r[0]) for r in rows}

    def _dense_search(
        self, vector: npt.NDArray[np.float32], site_filter: _SiteFilter | None, pool: int
    ) -> list[tuple[int, str]]:
        dense = self._dense_matrix()
        if len(dense.doc_ids) == 0:
            return []
        scores = dense.vectors @ vector
        # Rows are grouped by document, so each group's maximum is its best passage.
        starts = np.flatnonzero(np.r_[True, dense.doc_ids[1:] != dense.doc_ids[:-1]])
        best = np.maximum.reduceat(scores, starts)
        allowed = None if site_filter is None else self._allowed(site_filter)
        candidates = []
        for group, start in enumerate(starts):
            doc_id = int(dense.doc_ids[start])
            if best[group] < self._dense_min or (allowed is not None and doc_id not in allowed):
                continue
            candidates.append((-float(best[group]), doc_id, group))
        candidates.sort()
        chosen = candidates[:pool]
        ends = np.r_[starts[1:], len(scores)]
        passage_ids = [
            int(dense.passage_ids[starts[g] + int(np.argmax(scores[starts[g] : ends[g]]))])
            for _, _, g in chosen
        ]
        texts = self._passage_texts(passage_ids)
        return [
            (doc_id, texts.get(pid, ""))
            for (_, doc_id, _), pid in zip(chosen, passage_ids, strict=True)
        ]

    def _passage_texts(self, ids: Iterable[int]) -> dict[int, str]:
        wanted = list(ids)
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, text FROM passages WHERE id IN ({marks})",  # noqa: S608
                wanted,
            ).fetchall()
        return {int(r[0]): _clip(str(r[1])) for r in rows}

    def _results(self, query: str, hits: list[_Hit]) -> list[SearchResult]:
        if not hits:
            return []
        marks = ",".join("?" * len(hits))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, domain, doc_json FROM documents WHERE id IN ({marks})",  # noqa: S608
                [h.doc_id for h in hits],
            ).fetchall()
        by_id = {int(r[0]): (str(r[1]), Document.model_validate_json(r[2])) for r in rows}
        results: list[SearchResult] = []
        for hit in hits:
            if hit.doc_id not in by_id:  # replaced by a concurrent writer between the queries
                continue
            domain, doc = by_id[hit.doc_id]
            results.append(
                SearchResult(
                    url=doc.url,
                    title=doc.title,
                    snippet=_clip(hit.snippet),
                    provider=self.name,
                    query=query,
                    rank=len(results) + 1,
                    published=doc.published,
                    domain=domain,
                )
            )
        return results


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1].rstrip() + "…"
