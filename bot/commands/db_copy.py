"""Copying every table of one factnote database into another (`factnote db migrate-to`).

The target is brought to the same schema by the migrations first; rows then go table by table
in foreign-key order, in batches, all in one target transaction (a failed copy leaves the
target as it was). The rows travel through the models' column types, so a SQLite timestamp
arrives in PostgreSQL as a timestamp. Afterwards each table's row count is compared.

Not copied: `alembic_version` (the migrations wrote it) and the SQLite FTS tables (their
triggers fill them as rows arrive; PostgreSQL's GIN indexes follow the rows by themselves).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from storage.db import Engine
from storage.indexes.tables import FTS_TABLES
from storage.indexes.tables import metadata as index_metadata
from storage.models import Base
from storage.table_copy import (
    Table,
    batches,
    empty,
    insert_rows,
    reset_sequences,
    row_counts,
    table_names,
)

# A table's progress while it is copied: called once with its row count, then with each batch.
Progress = Callable[[str, int], Callable[[int], None]]


class TargetNotEmpty(Exception):
    """The target already holds rows; copying would mix two deployments."""


@dataclass(frozen=True)
class TableCount:
    table: str
    source: int
    target: int

    @property
    def ok(self) -> bool:
        return self.source == self.target


def copied_tables() -> list[Table]:
    """Every table a deployment keeps, parents before children."""
    return [*Base.metadata.sorted_tables, *index_metadata.sorted_tables]


def uncopied_tables(engine: Engine) -> list[str]:
    """Tables of `engine`'s database this copy does not know (another tool's, or a model
    missing from `copied_tables`): reported, so nothing is left behind silently."""
    known = {t.name for t in copied_tables()} | {"alembic_version"}
    return sorted(
        name
        for name in table_names(engine)
        if name not in known and not name.startswith(FTS_TABLES)
    )


def copy_database(
    source: Engine,
    target: Engine,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> list[TableCount]:
    """Copy every row of `source` into `target` (both at the same schema) and return the row
    counts per table. Raises `TargetNotEmpty` when the target holds rows, unless `force`,
    which empties it first (in the same transaction)."""
    tables = copied_tables()
    with source.connect() as reader, target.begin() as writer:
        filled = {name: n for name, n in row_counts(writer, tables).items() if n}
        if filled and not force:
            listed = ", ".join(f"{name} ({n})" for name, n in sorted(filled.items()))
            raise TargetNotEmpty(f"the target database already holds rows: {listed}")
        empty(writer, tables)
        totals = row_counts(reader, tables)
        for table in tables:
            advance = progress(table.name, totals[table.name]) if progress else None
            for rows in batches(reader, table):
                insert_rows(writer, table, rows)
                if advance is not None:
                    advance(len(rows))
        reset_sequences(writer, tables)
    with source.connect() as reader, target.connect() as written:
        before, after = row_counts(reader, tables), row_counts(written, tables)
    return [TableCount(t.name, before[t.name], after[t.name]) for t in tables]
