"""Local-index search latency in the main database at 10k and 50k passages: is pgvector needed?

Embeddings are stored as float32 bytes and scored in numpy (one matrix product per query over
every passage, cached between queries until a write). This measures, on SQLite and on
PostgreSQL, the time to load that matrix after a write, and a warm search: the database's full
text (FTS5 / tsvector) for the query plus the numpy product and per-document maximum.

The passages are synthetic (words drawn from a fixed vocabulary, one 40-word passage per
document) and so are the vectors (seeded random unit vectors of the real model's 384
dimensions): what is measured is the store and the scoring, not the model, whose encoding of
the one query (~10 ms) is the same whatever the store.

    python -m bench.index_scale --url sqlite:////tmp/scale.db --passages 10000 50000

Measured 2026-12-01 on the 2-core development machine under a load average of 10-15 (other
jobs running; every number is inflated by that), median of 20 warm searches, limit 10:

    passages  backend     fused search  lexical only  cold (matrix load)
    10,000    SQLite         96 ms          25 ms         415 ms
    50,000    SQLite        163 ms          51 ms       1,780 ms
    10,000    PostgreSQL    138 ms          64 ms         712 ms
    50,000    PostgreSQL    190 ms          79 ms       4,178 ms

The dense part (fused minus lexical) is about 110 ms at 50k on both, and the bare numpy
scoring of 50k × 384 measured alone under the same load 77 ms (27 ms at 10k): a search stays
well under the seconds an LLM step takes, so pgvector is not needed at this size. It would
be worth it past a few hundred thousand passages, or when the per-process matrix (77 MB at
50k) times the worker count starts to matter.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, insert

from pipeline.records import Document
from pipeline.search.local_index import LocalIndex
from storage.db import Database
from storage.indexes import open_document_rows
from storage.indexes.tables import local_documents, local_passages

DIM = 384
WORDS = 40
QUERIES = 20


class RandomEmbedder:
    """Seeded random unit vectors: the shape of the real model's output, none of its cost."""

    dim = DIM

    def __init__(self, seed: int = 7) -> None:
        self._rng = np.random.default_rng(seed)

    def encode(self, texts: Sequence[str], **_: Any) -> npt.NDArray[np.float32]:
        vectors = self._rng.standard_normal((len(texts), DIM)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _vocabulary(size: int = 5000) -> list[str]:
    rng = np.random.default_rng(1)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(rng.integers(4, 10)))) for _ in range(size)]


def fill(engine: Engine, start: int, stop: int, vocabulary: list[str]) -> None:
    """Documents `start` to `stop`, one passage each, written in bulk straight to the tables
    (`LocalIndex.add` stores one document per transaction: fine for an operator's corpus,
    minutes for 50k synthetic pages; the search does not care how rows arrived)."""
    rng = np.random.default_rng(start)
    embedder = RandomEmbedder(seed=start)
    for first in range(start, stop, 1000):
        last = min(first + 1000, stop)
        docs, passages = [], []
        vectors = embedder.encode([""] * (last - first))
        for n in range(first, last):
            text = " ".join(vocabulary[i] for i in rng.choice(len(vocabulary), size=WORDS))
            url = f"https://corpus.example/page/{n}"
            doc = Document(url=url, canonical_url=url, ok=True, title=f"page {n}", text=text)
            docs.append(
                {
                    "id": n + 1,
                    "canonical_url": url,
                    "url_key": url.split("://", 1)[1],
                    "host": "corpus.example",
                    "domain": "corpus.example",
                    "content_hash": str(n),
                    "embedded": True,
                    "title": doc.title,
                    "text": text,
                    "doc_json": doc.model_dump_json(exclude={"text"}),
                }
            )
            passages.append(
                {
                    "doc_id": n + 1,
                    "idx": 0,
                    "text": text,
                    "embedding": vectors[n - first].astype("<f4").tobytes(),
                }
            )
        with engine.begin() as connection:
            connection.execute(insert(local_documents), docs)
            connection.execute(insert(local_passages), passages)


def measure(index: LocalIndex, vocabulary: list[str]) -> dict[str, float]:
    rng = np.random.default_rng(99)
    queries = [" ".join(rng.choice(vocabulary, size=4)) for _ in range(QUERIES)]
    started = time.perf_counter()
    index.search(queries[0], limit=10)  # the first search after a write loads the matrix
    cold = time.perf_counter() - started
    warm = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, limit=10)
        warm.append(time.perf_counter() - started)
    return {
        "cold_ms": round(cold * 1000, 1),
        "warm_median_ms": round(statistics.median(warm) * 1000, 1),
        "warm_max_ms": round(max(warm) * 1000, 1),
    }


def run(url: str, sizes: Sequence[int]) -> list[dict[str, Any]]:
    db = Database(url)
    vocabulary = _vocabulary()
    rows: list[dict[str, Any]] = []
    try:
        index = LocalIndex(open_document_rows(db.engine), embedder=RandomEmbedder())  # type: ignore[arg-type]
        done = 0
        for size in sorted(sizes):
            started = time.perf_counter()
            fill(db.engine, done, size, vocabulary)
            build_s = time.perf_counter() - started
            done = size
            row = {"backend": db.engine.dialect.name, "passages": size}
            row |= {"bulk_fill_s": round(build_s, 1)} | measure(index, vocabulary)
            # The same searches without embeddings: the difference is what numpy's dense
            # scoring costs, the part pgvector would replace.
            lexical = measure(LocalIndex(open_document_rows(db.engine)), vocabulary)
            row |= {"lexical_only_median_ms": lexical["warm_median_ms"]}
            rows.append(row)
            print(row, flush=True)
    finally:
        db.dispose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="an empty database to fill")
    parser.add_argument("--passages", type=int, nargs="+", default=[10_000, 50_000])
    args = parser.parse_args()
    run(args.url, args.passages)


if __name__ == "__main__":
    main()
