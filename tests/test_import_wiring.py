"""Nothing is wired up as a side effect of an import (issue 31): importing every module of the
bot and of storage attaches no SQLAlchemy listener to a global class (the queue's job writer
and the lifecycle's after-commit lines are attached to the sessions a `Database` makes), and
builds no platform registry (the CLI installs it at start-up: `bot.platforms.install`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Run in a fresh interpreter: this test process has imported (and wired) whatever other tests
# needed. Alembic's env runs migrations when imported, so it is left out.
_PROBE = """
import importlib, json, pkgutil
from sqlalchemy import create_engine
from sqlalchemy.orm import Session, configure_mappers

def listeners(targets):
    return {
        f"{where}.{name}": len(getattr(dispatch, name))
        for where, dispatch in targets.items()
        for name in dispatch._event_names
        if len(getattr(dispatch, name))
    }

def global_targets():
    engine = create_engine("sqlite://")  # SQLAlchemy's own SQLite dialect listens on its pool
    return {"Session": Session().dispatch, "Engine": engine.dispatch, "Pool": engine.pool.dispatch}

before = listeners(global_targets())
import bot, storage
skipped = {"storage.migrations.env"}
for package in (bot, storage):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name not in skipped:
            importlib.import_module(info.name)
from storage.models import Base
from bot import platforms
configure_mappers()
targets = global_targets()
targets.update({m.class_.__name__: m.dispatch for m in Base.registry.mappers})
added = {k: n - before.get(k, 0) for k, n in listeners(targets).items() if n != before.get(k, 0)}
print(json.dumps({"listeners": added, "registry": platforms.installed() is not None}))
"""


@pytest.mark.process
def test_importing_every_bot_and_storage_module_wires_nothing() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["listeners"] == {}
    assert seen["registry"] is False
