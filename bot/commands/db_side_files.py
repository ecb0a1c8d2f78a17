"""Bringing the index side files of an older deployment into the main database
(`factnote db import-side-files`).

Before migration 0010 the claim index, the authority statements and the local search index
were SQLite files of their own (schema "1", a `meta` table with the embedding size). Their rows
are read as they are (the embeddings are not recomputed) and added to the tables of
`storage.indexes.tables`; a row the database already holds (same review key, same post, same
canonical URL) is skipped, so running the import twice adds nothing. A file whose embedding
size differs from what the database's store holds is refused: vectors of two models never mix.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage import side_files
from storage.db import Engine
from storage.indexes.tables import (
    EmbeddingSizeMismatch,
    authority_statements,
    check_embedding_dim,
    claims,
    local_documents,
    local_passages,
)
from storage.side_files import Connection

SIDE_FILE_SCHEMA = "1"


class SideFileError(Exception):
    """A side file that cannot be imported (not one of ours, another schema or embedding)."""


@dataclass(frozen=True)
class SideFileImport:
    store: str  # "claims", "authority", "local"
    path: str
    rows: int  # rows in the file
    added: int
    skipped: int  # already in the database


@contextmanager
def _read_only(path: Path) -> Iterator[sqlite3.Connection]:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SideFileError(f"cannot open {path}: {exc}") from exc
    with closing(conn):
        yield conn


def _meta(conn: sqlite3.Connection, path: Path) -> dict[str, str]:
    try:
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    except sqlite3.Error as exc:
        raise SideFileError(f"{path} is not a factnote index file: {exc}") from exc
    if meta.get("schema") != SIDE_FILE_SCHEMA:
        raise SideFileError(f"{path} has index schema {meta.get('schema')}, expected 1")
    return meta


def _dim(connection: Connection, meta: dict[str, str], store: str, label: str) -> None:
    if "embedding_dim" in meta:
        try:
            check_embedding_dim(connection, store, int(meta["embedding_dim"]), label, record=True)
        except EmbeddingSizeMismatch as exc:
            raise SideFileError(str(exc)) from exc


def _claims(conn: sqlite3.Connection, connection: Connection) -> tuple[int, int]:
    known = side_files.values_of(connection, claims.c.key)
    rows = conn.execute("SELECT key, record_json, embedding FROM claims ORDER BY id").fetchall()
    fresh = [
        {
            "key": key,
            "claim_text": json.loads(record)["claim_text"],
            "record_json": record,
            "embedding": bytes(embedding),
        }
        for key, record, embedding in rows
        if key not in known
    ]
    if fresh:
        side_files.insert_many(connection, claims, fresh)
    return len(rows), len(fresh)


def _statements(conn: sqlite3.Connection, connection: Connection) -> tuple[int, int]:
    table = authority_statements
    known = side_files.pairs(connection, table.c.platform, table.c.post_id)
    columns = ("platform", "account", "post_id", "text", "created_at", "created_ts", "url")
    rows = conn.execute(
        f"SELECT {', '.join(columns)}, terms, embedding FROM statements ORDER BY id"  # noqa: S608
    ).fetchall()
    fresh = [
        {**dict(zip(columns, row[:7], strict=True)), "terms": row[7], "embedding": bytes(row[8])}
        for row in rows
        if (row[0], row[2]) not in known
    ]
    if fresh:
        side_files.insert_many(connection, table, fresh)
    return len(rows), len(fresh)


def _documents(conn: sqlite3.Connection, connection: Connection) -> tuple[int, int]:
    known = side_files.values_of(connection, local_documents.c.canonical_url)
    rows = conn.execute(
        "SELECT id, canonical_url, url_key, host, domain, content_hash, embedded, doc_json"
        " FROM documents ORDER BY id"
    ).fetchall()
    added = 0
    for old_id, url, url_key, host, domain, content_hash, embedded, doc_json in rows:
        if url in known:
            continue
        doc: dict[str, Any] = json.loads(doc_json)
        text = str(doc.pop("text", ""))
        new_id = side_files.insert_returning_id(
            connection,
            local_documents,
            {
                "canonical_url": url,
                "url_key": url_key,
                "host": host,
                "domain": domain,
                "content_hash": content_hash,
                "embedded": bool(embedded),
                "title": str(doc.get("title") or ""),
                "text": text,
                "doc_json": json.dumps(doc, ensure_ascii=False),
            },
        )
        passages = conn.execute(
            "SELECT idx, text, embedding FROM passages WHERE doc_id = ? ORDER BY idx", (old_id,)
        ).fetchall()
        if passages:
            side_files.insert_many(
                connection,
                local_passages,
                [
                    {
                        "doc_id": new_id,
                        "idx": idx,
                        "text": passage,
                        "embedding": None if vector is None else bytes(vector),
                    }
                    for idx, passage, vector in passages
                ],
            )
        added += 1
    return len(rows), added


_STORES: dict[str, tuple[str, Callable[[sqlite3.Connection, Connection], tuple[int, int]]]] = {
    "claims": ("claim index", _claims),
    "authority": ("authority index", _statements),
    "local": ("local index", _documents),
}


def import_side_file(engine: Engine, store: str, path: Path) -> SideFileImport:
    """Add the rows of the side file at `path` for `store` ("claims", "authority", "local")
    to the main database, in one transaction."""
    label, copy = _STORES[store]
    with _read_only(path) as conn:
        meta = _meta(conn, path)
        try:
            with engine.begin() as connection:
                _dim(connection, meta, store, label)
                rows, added = copy(conn, connection)
        except (sqlite3.Error, ValueError, KeyError, TypeError) as exc:
            # A row this import cannot read (malformed JSON, a missing field): nothing of the
            # file was added, the transaction rolled back.
            raise SideFileError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc
    return SideFileImport(store, str(path), rows, added, rows - added)
