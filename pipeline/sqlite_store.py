"""Opening the pipeline's own SQLite files (local index, claim index, authority index).

Each is one file with a `meta` table recording its schema version and the embedding size it
was built with: opening a file written by another schema or another embedding model fails
with a clear error instead of mixing incompatible vectors.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_store(
    path: str,
    *,
    schema_sql: str,
    schema_version: str,
    embedding_dim: int | None,
    error: type[Exception],
    label: str,
) -> sqlite3.Connection:
    """A WAL-mode connection to `path` with `schema_sql` applied and the meta checked.
    Failures raise `error` naming `label` ("local index", ...) and the file."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
    except sqlite3.Error as exc:
        raise error(f"cannot open {label} {path}: {exc}") from exc
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        with conn:
            conn.executescript(schema_sql)
        _check_meta(conn, path, schema_version, embedding_dim, error, label)
    except (sqlite3.Error, error) as exc:
        conn.close()
        if isinstance(exc, error):
            raise
        raise error(f"cannot open {label} {path}: {exc}") from exc
    return conn


def _check_meta(
    conn: sqlite3.Connection,
    path: str,
    schema_version: str,
    embedding_dim: int | None,
    error: type[Exception],
    label: str,
) -> None:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    with conn:
        if "schema" not in meta:
            conn.execute("INSERT INTO meta VALUES ('schema', ?)", (schema_version,))
        elif meta["schema"] != schema_version:
            raise error(f"{path} has {label} schema {meta['schema']}, expected {schema_version}")
        if embedding_dim is None:
            return
        dim = str(embedding_dim)
        if "embedding_dim" not in meta:
            conn.execute("INSERT INTO meta VALUES ('embedding_dim', ?)", (dim,))
        elif meta["embedding_dim"] != dim:
            raise error(
                f"{path} holds {meta['embedding_dim']}-dimensional embeddings; this embedder "
                f"makes {dim}-dimensional ones (rebuild the {label})"
            )
