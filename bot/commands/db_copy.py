"""Copying every table of one factnote database into another (`factnote db migrate-to`).

The target is brought to the same schema by the migrations first; rows then go table by table
in foreign-key order, in batches, all in one target transaction (a failed copy leaves the
target as it was). The rows travel through the models' column types, so a SQLite timestamp
arrives in PostgreSQL as a timestamp. Afterwards each table's row count is compared.

Not copied: `alembic_version` (the migrations wrote it) and the SQLite FTS tables (their
triggers fill them as rows arrive; PostgreSQL's GIN indexes follow the rows by themselves).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, Integer, Table, false, func, inspect, select

from pipeline.index_tables import FTS_TABLES
from pipeline.index_tables import metadata as index_metadata
from storage.models import Base

COPY_BATCH = 1000

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
        for name in inspect(engine).get_table_names()
        if name not in known and not name.startswith(FTS_TABLES)
    )


def row_counts(connection: Connection, tables: list[Table]) -> dict[str, int]:
    return {
        t.name: int(connection.execute(select(func.count()).select_from(t)).scalar_one())
        for t in tables
    }


def _batches(connection: Connection, table: Table) -> Iterator[list[dict[str, object]]]:
    ordered = select(table).order_by(*table.primary_key.columns)
    result = connection.execution_options(yield_per=COPY_BATCH).execute(ordered)
    for rows in result.mappings().partitions(COPY_BATCH):
        yield [dict(row) for row in rows]


def _reset_sequences(connection: Connection, tables: list[Table]) -> None:
    """Move PostgreSQL's id sequences past the copied ids: rows were inserted with their ids,
    which does not advance a sequence, and the next insert would collide."""
    if connection.dialect.name != "postgresql":
        return
    for table in tables:
        keys = list(table.primary_key.columns)
        if len(keys) != 1 or not isinstance(keys[0].type, Integer):
            continue
        key = keys[0]
        top = func.coalesce(select(func.max(key)).scalar_subquery(), 0) + 1
        sequence = func.pg_get_serial_sequence(table.name, key.name)
        connection.execute(select(func.setval(sequence, top, false())))


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
        for table in reversed(tables):
            writer.execute(table.delete())
        totals = row_counts(reader, tables)
        for table in tables:
            advance = progress(table.name, totals[table.name]) if progress else None
            for rows in _batches(reader, table):
                writer.execute(table.insert(), rows)
                if advance is not None:
                    advance(len(rows))
        _reset_sequences(writer, tables)
    with source.connect() as reader, target.connect() as written:
        before, after = row_counts(reader, tables), row_counts(written, tables)
    return [TableCount(t.name, before[t.name], after[t.name]) for t in tables]
