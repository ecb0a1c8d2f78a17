"""A search provider over documents kept in the main database (`local_documents`).

It serves pages that no web engine has (demo `.example` sites, an operator's own corpus) and
runs the whole pipeline offline. Ranking is the database's full text over title and text
(`storage.indexes.fulltext`: FTS5 bm25 on SQLite, ts_rank on PostgreSQL); when an
embedder is given, passage embeddings are stored too and the lexical and dense rankings are
fused by reciprocal-rank fusion, so a paraphrase with no word in common still surfaces.
The stored `Document` is also what the fetch stage reads for local URLs, via `get`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from pipeline.config import RelevanceConfig
from pipeline.indexes.store import StoredIndex
from pipeline.indexes.words import query_words
from pipeline.records import Document, IndexStoreError, SearchResult, SiteFilter
from pipeline.relevance.scoring import Embedder, split_passages
from pipeline.search.base import SearchError
from pipeline.search.rows import DocumentRow, DocumentRows
from pipeline.web.urls import canonical_url

RRF_K = 60  # the constant from Cormack et al. (2009); it damps the weight of the very top ranks
SNIPPET_CHARS = 300


class LocalIndexError(RuntimeError):
    """The index cannot be used (other embedding size, unreadable database, bad document)."""


def _host(url: str) -> str:
    host = (urlsplit(canonical_url(url)).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _domain(host: str) -> str:
    """The registrable domain (`news.bbc.co.uk` -> `bbc.co.uk`), or the host itself when the
    credibility module cannot say (an IP address, a made-up `.example` name)."""
    if not host:
        return host
    try:
        from pipeline.web.domains import registrable_domain
    except ImportError:  # pragma: no cover - credibility ships with the pipeline
        return host
    try:
        found = registrable_domain(host)
    except Exception:  # a malformed host must not make a document unindexable
        found = ""
    return str(found) if found else host


def _url_key(url: str) -> str:
    return canonical_url(url).split("://", 1)[-1]


def _site_filter(sites: Sequence[str]) -> SiteFilter | None:
    """The documents any of `sites` names: a bare host or domain matches the registrable
    domain or the host; an entry with a path is a URL prefix."""
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
    return SiteFilter(names=tuple(names), prefixes=tuple(prefixes))


@dataclass(frozen=True)
class _DenseMatrix:
    version: tuple[int, int]
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


class LocalIndex(StoredIndex):
    """A `SearchProvider` over the documents kept in `rows` (`pipeline.search.rows`). Safe to
    search from several threads."""

    name = "local"
    max_sites = 1000
    kind = "local"
    error = LocalIndexError

    def __init__(
        self,
        rows: DocumentRows,
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
        # Database work here is short; the expensive part of a search (embedding the query,
        # the matrix product) runs outside the lock, which guards the cached matrix (and the
        # one connection of a ":memory:" store).
        self._lock = threading.RLock()
        self._dense: _DenseMatrix | None = None
        self._writes = 0
        self._documents = rows
        self._open(rows, None if embedder is None else embedder.dim)

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
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            row = self._documents.content_state(key)
        # An entry stored without embeddings is refreshed once an embedder is available.
        if row is not None and row[0] == content_hash and (row[1] or self._embedder is None):
            return False

        passages = split_passages(doc.text, self._passage_words)
        vectors = self._embedder.encode(passages) if self._embedder is not None else None
        stored = doc.model_copy(update={"canonical_url": key, "content_hash": content_hash})
        host = _host(doc.url)
        document: DocumentRow = {
            "canonical_url": key,
            "url_key": _url_key(key),
            "host": host,
            "domain": _domain(host),
            "content_hash": content_hash,
            "embedded": vectors is not None,
            "title": doc.title,
            "text": doc.text,
            # The text lives once, in its own column (the full-text source).
            "doc_json": stored.model_dump_json(exclude={"text"}),
        }
        rows = [
            (text, None if vectors is None else vectors[i].astype("<f4").tobytes())
            for i, text in enumerate(passages)
        ]
        dim = None if self._embedder is None else self._embedder.dim
        with self._lock, self._failing_as(f"cannot store {doc.url} in {self._where}"):
            self._documents.replace(document, rows, dim)
            self._writes += 1
        return True

    # --- reading ------------------------------------------------------------------------------

    def get(self, url: str) -> Document | None:
        """The stored document for `url` (any spelling with the same canonical URL)."""
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            row = self._documents.document(canonical_url(url))
        return None if row is None else _document(*row)

    def __len__(self) -> int:
        with self._lock, self._failing_as(f"cannot read {self._where}"):
            return self._documents.count()

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
        except IndexStoreError as exc:
            raise SearchError(f"local: cannot search {self._where}: {exc}") from exc

    def _lexical(self, query: str, sites: SiteFilter | None, pool: int) -> list[tuple[int, str]]:
        with self._lock:
            return self._documents.fulltext_hits(query_words(query), pool, sites)

    def _dense_matrix(self) -> _DenseMatrix:
        with self._lock:
            # The highest passage id grows on every insert or replacement, also by another
            # process, and reads from the primary key alone (count(*) scanned every
            # embedding: 50 ms at 50k).
            version = (self._writes, self._documents.passage_version())
            if self._dense is not None and self._dense.version == version:
                return self._dense
            rows = self._documents.passage_embeddings()
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

    def _allowed(self, sites: SiteFilter) -> set[int]:
        with self._lock:
            return self._documents.allowed(sites)

    def _dense_search(
        self, vector: npt.NDArray[np.float32], site_filter: SiteFilter | None, pool: int
    ) -> list[tuple[int, str]]:
        dense = self._dense_matrix()
        if len(dense.doc_ids) == 0:
            return []
        scores = dense.vectors @ vector
        # Rows are grouped by document, so each group's maximum is its best passage.
        starts = np.flatnonzero(np.r_[True, dense.doc_ids[1:] != dense.doc_ids[:-1]])
        best = np.maximum.reduceat(scores, starts)
        group_docs = dense.doc_ids[starts]
        keep = best >= self._dense_min
        if site_filter is not None:
            keep &= np.isin(group_docs, list(self._allowed(site_filter)))
        # Whole-array steps, not a loop per document: at 50k passages a Python loop took
        # most of a search's time (bench/index_scale.py).
        kept = np.flatnonzero(keep)
        chosen = kept[np.lexsort((group_docs[kept], -best[kept]))][:pool]
        ends = np.r_[starts[1:], len(scores)]
        passage_ids = [
            int(dense.passage_ids[starts[g] + int(np.argmax(scores[starts[g] : ends[g]]))])
            for g in chosen
        ]
        texts = self._passage_texts(passage_ids)
        return [
            (int(group_docs[g]), texts.get(pid, ""))
            for g, pid in zip(chosen, passage_ids, strict=True)
        ]

    def _passage_texts(self, ids: Iterable[int]) -> dict[int, str]:
        wanted = list(ids)
        if not wanted:
            return {}
        with self._lock:
            rows = self._documents.passage_texts(wanted)
        return {i: _clip(text) for i, text in rows.items()}

    def _results(self, query: str, hits: list[_Hit]) -> list[SearchResult]:
        if not hits:
            return []
        with self._lock:
            rows = self._documents.documents([h.doc_id for h in hits])
        by_id = {
            i: (domain, _document(doc_json, text)) for i, (domain, doc_json, text) in rows.items()
        }
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


def _document(doc_json: str, text: str) -> Document:
    data = json.loads(doc_json)
    data["text"] = text
    return Document.model_validate(data)


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1].rstrip() + "…"
