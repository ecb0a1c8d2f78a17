"""The running bot remembers images in its database: a second runtime on the same database
finds an image the first one saw."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.ops.runtime import open_runtime
from pipeline.records import SeenImage
from storage.images import SqlImageStore

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def test_images_seen_survive_the_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", f"sqlite:///{tmp_path / 'factnote.db'}")
    monkeypatch.setenv("FACTNOTE_INDEX_PATH", str(tmp_path / "index.sqlite"))
    seen = SeenImage(sha256="a" * 64, phash="8f373714acfcf4d0", source="post:1", seen_at=NOW)
    with open_runtime(load_settings()) as runtime:
        assert isinstance(runtime.shared.images, SqlImageStore)
        runtime.shared.images.add(seen)
    with open_runtime(load_settings()) as runtime:
        [(found, distance)] = runtime.shared.images.near("8f373714acfcf4d1", 2)
    assert found == seen and distance == 1
