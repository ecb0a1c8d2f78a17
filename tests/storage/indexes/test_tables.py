"""Where the index tables come from (`storage.indexes.tables`): created in a standalone
database, required of one that Alembic manages."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.db import Database, upgrade
from storage.indexes.tables import IndexSchemaError, open_index_engine


def test_a_standalone_path_gets_its_tables_but_an_unmigrated_main_database_is_refused(
    tmp_path: Path,
) -> None:
    engine, owned = open_index_engine(tmp_path / "standalone.sqlite")
    assert owned
    engine.dispose()
    main = Database(f"sqlite:///{tmp_path / 'old.db'}", migrate=False)
    upgrade(main.url, "0009")
    with pytest.raises(IndexSchemaError, match="factnote db upgrade"):
        open_index_engine(main.engine)
    main.dispose()
