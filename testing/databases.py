"""A migrated SQLite database for a test, as a copy of one migrated once per test process.

Opening a fresh file runs every Alembic migration (about a second each on the shared 2-core
machine); hundreds of tests start from an empty database, and the migrations themselves are
pinned by tests/storage. A copy of a file the same migrations produced is the same database, and
`storage.db.Database` finds it at head and opens it as it is."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from storage.db import Database

_lock = threading.Lock()
_template: Path | None = None


def _migrated_template() -> Path:
    global _template
    with _lock:
        if _template is None:
            folder = Path(tempfile.mkdtemp(prefix="factnote-test-template-"))
            atexit.register(shutil.rmtree, folder, True)
            template = folder / "factnote.db"
            # Disposing closes the last connection, which checkpoints SQLite's write-ahead log
            # into the file: the file alone is the whole database.
            Database(f"sqlite:///{template}").dispose()
            _template = template
        return _template


def migrated_sqlite(path: Path) -> str:
    """Put an empty database migrated to head at `path` and return its URL."""
    shutil.copyfile(_migrated_template(), path)
    return f"sqlite:///{path}"
