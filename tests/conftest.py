"""Shared fixtures: the fakes at the far side of each boundary, and a migrated database."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.db import Database
from testing.fakes.http_server import LocalHTTPServer
from testing.fakes.openai_server import FakeLLM
from tests.pages import FIXTURE_PAGES
from tests.postgres import pg_db, postgres_cluster, postgres_url

__all__ = [
    "pg_db",
    "postgres_cluster",
    "postgres_url",
    "shared_data",
]

# Never let a library reach for a model hub from a test.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A running fake OpenAI-compatible server, torn down after the test."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def http_server() -> Iterator[LocalHTTPServer]:
    """A started LocalHTTPServer serving tests/fixtures/pages; stopped after the test."""
    with LocalHTTPServer(root=FIXTURE_PAGES) as server:
        yield server


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'factnote.db'}")
    yield database
    database.dispose()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The evaluation data beside the repository (never copied into it)."""
    path = REPO.parent / "shared" / "data"
    if not path.is_dir():
        pytest.fail(f"evaluation data not found at {path}: CI provides ../shared beside the repo")
    return path
