"""The statements `factnote db migrate-to` (`bot.commands.db_copy`) copies a database with:
the tables a database holds, each table's row count, its rows in batches, emptying and
filling a table, and PostgreSQL's id sequences after the copy. The bot orders the copy and
writes no SQL of its own."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import Connection, Engine, Integer, Table, false, func, inspect, select

from storage.dialect import on_postgres

__all__ = [
    "COPY_BATCH",
    "Table",
    "batches",
    "empty",
    "insert_rows",
    "reset_sequences",
    "row_counts",
    "table_names",
]

COPY_BATCH = 1000


def table_names(engine: Engine) -> list[str]:
    """The names of the tables in `engine`'s database."""
    return list(inspect(engine).get_table_names())


def row_counts(connection: Connection, tables: Iterable[Table]) -> dict[str, int]:
    return {
        t.name: int(connection.execute(select(func.count()).select_from(t)).scalar_one())
        for t in tables
    }


def batches(connection: Connection, table: Table) -> Iterator[list[dict[str, object]]]:
    """The table's rows, by primary key, `COPY_BATCH` at a time."""
    ordered = select(table).order_by(*table.primary_key.columns)
    result = connection.execution_options(yield_per=COPY_BATCH).execute(ordered)
    for rows in result.mappings().partitions(COPY_BATCH):
        yield [dict(row) for row in rows]


def empty(connection: Connection, tables: list[Table]) -> None:
    """Delete every row of these tables (given parents first: emptied children first)."""
    for table in reversed(tables):
        connection.execute(table.delete())


def insert_rows(connection: Connection, table: Table, rows: list[dict[str, object]]) -> None:
    connection.execute(table.insert(), rows)


def reset_sequences(connection: Connection, tables: Iterable[Table]) -> None:
    """Move PostgreSQL's id sequences past the copied ids: rows were inserted with their ids,
    which does not advance a sequence, and the next insert would collide."""
    if not on_postgres(connection):
        return
    for table in tables:
        keys = list(table.primary_key.columns)
        if len(keys) != 1 or not isinstance(keys[0].type, Integer):
            continue
        key = keys[0]
        top = func.coalesce(select(func.max(key)).scalar_subquery(), 0) + 1
        sequence = func.pg_get_serial_sequence(table.name, key.name)
        connection.execute(select(func.setval(sequence, top, false())))
