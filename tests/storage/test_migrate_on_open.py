"""Opening a database migrates it only when it is behind: one already at the head revision is
recognised with plain SQLAlchemy, without importing Alembic, and anything else is Alembic's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text

from storage.db import Database, alembic_config, head_revision, upgrade

# Runs Python or the bot as child processes: left out of `make test-fast`.
pytestmark = pytest.mark.process


def _stamped(db: Database) -> list[str]:
    with db.engine.connect() as conn:
        return list(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())


def test_the_head_read_from_the_version_files_is_alembics_head(tmp_path: Path) -> None:
    script = ScriptDirectory.from_config(alembic_config(f"sqlite:///{tmp_path / 'x.db'}"))
    assert head_revision() == script.get_current_head()


def test_a_database_behind_the_head_is_still_upgraded_on_open(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    upgrade(url, "0009")
    db = Database(url)
    assert _stamped(db) == [head_revision()]
    with db.engine.connect() as conn:  # 0011's column exists: the migrations really ran
        columns = [row[1] for row in conn.execute(text("PRAGMA table_info(images)"))]
    assert "embedding" in columns
    db.dispose()


def test_opening_a_database_at_the_head_does_not_import_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'factnote.db'}"
    Database(url).dispose()  # created and migrated to the head
    probe = (
        "import json, sys\n"
        "from storage.db import Database\n"
        f"Database({url!r}).dispose()\n"
        "print(json.dumps('alembic' in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) is False
