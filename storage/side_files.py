"""The main database's side of `factnote db import-side-files` (`bot.commands.db_side_files`):
what an index table holds already, and the inserts of the rows read from an older
deployment's side file. The tables (`storage.indexes.tables`) are handed in by the bot, which
reads the side file."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Connection, Table, insert, select

__all__ = ["Connection", "insert_many", "insert_returning_id", "pairs", "values_of"]


def values_of(connection: Connection, column: Column[Any]) -> set[Any]:
    """The distinct values a column holds."""
    return set(connection.execute(select(column)).scalars())


def pairs(connection: Connection, first: Column[Any], second: Column[Any]) -> set[tuple[str, str]]:
    """The (first, second) pairs the two columns of a table hold, as text."""
    return {(str(a), str(b)) for a, b in connection.execute(select(first, second))}


def insert_many(connection: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    connection.execute(insert(table), rows)


def insert_returning_id(connection: Connection, table: Table, values: dict[str, Any]) -> int:
    """Insert one row; its new `id`."""
    return int(connection.execute(insert(table).returning(table.c.id), values).scalar_one())
