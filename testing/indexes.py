"""The pipeline's index stores over standalone SQLite files (or ":memory:", a URL, an Engine),
for tests, evaluations' tests and benchmarks: each builder opens the rows in `storage.indexes`
and hands them to the store, as the bot does with its main database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from pipeline.authority.retrieval import AuthorityIndex
from pipeline.claims.index import ClaimIndex
from pipeline.config import PipelineConfig
from pipeline.relevance.scoring import Embedder
from pipeline.search.local_index import LocalIndex
from pipeline.shared_parts import SharedParts, StoreRows
from storage.indexes import open_claim_rows, open_document_rows, open_statement_rows

Target = str | Path | Engine


def claim_index(target: Target, embedder: Embedder, **options: Any) -> ClaimIndex:
    """A claim index in `target` (`options`: `ClaimIndex`'s cfg and publishers)."""
    return ClaimIndex(open_claim_rows(target), embedder, **options)


def authority_index(target: Target, embedder: Embedder, **options: Any) -> AuthorityIndex:
    """An authority index in `target` (`options`: `AuthorityIndex`'s cfg)."""
    return AuthorityIndex(open_statement_rows(target), embedder, **options)


def local_index(target: Target, embedder: Embedder | None = None, **options: Any) -> LocalIndex:
    """A local search index in `target` (`options`: `LocalIndex`'s keyword arguments)."""
    return LocalIndex(open_document_rows(target), embedder, **options)


def standalone_rows(cfg: PipelineConfig, index_path: str | Path | None = None) -> StoreRows:
    """The rows a check uses without the bot: the local index in `index_path` (none without
    one), the claim and authority indexes at their configured paths when those files exist
    (a check never creates them: `factnote claims import` and the timeline pull do)."""
    claims = Path(cfg.claims.path)
    statements = Path(cfg.authority.path)
    return StoreRows(
        documents=open_document_rows(index_path) if index_path else None,
        claims=open_claim_rows(claims) if claims.is_file() else None,
        statements=open_statement_rows(statements) if statements.is_file() else None,
    )


def build_parts(
    cfg: PipelineConfig, index_path: str | Path | None = None, **options: Any
) -> SharedParts:
    """`SharedParts.build` over `standalone_rows` (`options`: its other keyword arguments)."""
    return SharedParts.build(cfg, rows=standalone_rows(cfg, index_path), **options)
