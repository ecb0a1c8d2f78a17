"""One mapping each way between the pipeline's records and the rows that store them.

A record field and a column of the same name hold the same value. Records become rows through
`to_row`; rows become records through pydantic, `Record.model_validate(row,
from_attributes=True)`. A field added to a record together with a column of that name in its
table therefore needs no change here nor in the repositories. The conversions live here too:
an enum is stored as its value, a JSON column receives the record's JSON form, and a datetime
is stored as it is (the column type keeps it in UTC).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy import JSON, inspect

from storage.models import Base

RowT = TypeVar("RowT", bound=Base)


@cache
def value_columns(row_type: type[Base]) -> frozenset[str]:
    """The names of a table's columns less its primary and foreign keys: the keys are the
    rows' own bookkeeping, which no record carries."""
    return frozenset(
        attr.key
        for attr in inspect(row_type).column_attrs
        if not any(column.primary_key or column.foreign_keys for column in attr.columns)
    )


@cache
def _json_columns(row_type: type[Base]) -> frozenset[str]:
    return frozenset(
        attr.key
        for attr in inspect(row_type).column_attrs
        if any(isinstance(column.type, JSON) for column in attr.columns)
    )


def row_values(
    row_type: type[Base], record: BaseModel, *, exclude: Iterable[str] = ()
) -> dict[str, Any]:
    """The column values of `record`: each field that has a (non-key) column of its name."""
    names = set(value_columns(row_type) & type(record).model_fields.keys()) - set(exclude)
    json_names = names & _json_columns(row_type)
    values = record.model_dump(include=names - json_names)
    values.update(record.model_dump(mode="json", include=json_names))
    return {name: v.value if isinstance(v, Enum) else v for name, v in values.items()}


def to_row(row_type: type[RowT], record: BaseModel, **values: Any) -> RowT:
    """A new row holding `record`; `values` fill the columns the record has no field for (or
    replace what its field of that name would give)."""
    return row_type(**row_values(row_type, record, exclude=values), **values)


def column_values(row: Base) -> dict[str, Any]:
    """Every column of a row, keys included, by name."""
    return {attr.key: getattr(row, attr.key) for attr in inspect(type(row)).column_attrs}
