"""Shared fixtures: the fakes at the far side of each boundary, and a migrated database."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot import platforms
from storage.db import Database
from testing.databases import migrated_sqlite
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

# The loggers bot/logs.py configures (the root's handler and level, the request-transition
# logger, APScheduler's levels and filter), with the project's own module loggers.
_CONFIGURED_LOGGERS = ("factnote", "bot", "apscheduler")


@dataclass(frozen=True)
class _LoggerState:
    level: int = logging.NOTSET
    handlers: tuple[logging.Handler, ...] = ()
    filters: tuple[object, ...] = ()
    propagate: bool = True
    disabled: bool = False


def _configured_loggers() -> dict[str, logging.Logger]:
    found = {
        name: logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
        and any(name == top or name.startswith(f"{top}.") for top in _CONFIGURED_LOGGERS)
    }
    found[""] = logging.getLogger()
    return found


def _pytests_own(handler: logging.Handler) -> bool:
    # pytest adds its capture handlers to the root around each phase and removes them itself.
    return type(handler).__module__.startswith("_pytest.")


def _state(logger: logging.Logger) -> _LoggerState:
    return _LoggerState(
        logger.level,
        tuple(h for h in logger.handlers if not _pytests_own(h)),
        tuple(logger.filters),
        logger.propagate,
        logger.disabled,
    )


@pytest.fixture(autouse=True, scope="session")
def platform_registry() -> None:
    """The built-in platforms, installed once as the CLI installs them at start-up (a test
    that registers a platform of its own unregisters it)."""
    platforms.install()


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """Put the logging configuration back as it was before each test: a CLI test runs
    `setup_logging`, a logging test raises a logger's level, and without this the next test's
    captured output holds log lines it never asked for."""
    before = {name: _state(logger) for name, logger in _configured_loggers().items()}
    disabled = logging.root.manager.disable
    yield
    logging.disable(disabled)
    for name, logger in _configured_loggers().items():
        state = before.get(name, _LoggerState())
        logger.setLevel(state.level)
        logger.handlers = [h for h in logger.handlers if _pytests_own(h)] + list(state.handlers)
        for added in [f for f in logger.filters if f not in state.filters]:
            logger.removeFilter(added)
        logger.propagate = state.propagate
        logger.disabled = state.disabled


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
    database = Database(migrated_sqlite(tmp_path / "factnote.db"))
    yield database
    database.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def main_db(request: pytest.FixtureRequest) -> Database:
    """A migrated main database of each kind the bot runs on: `db`, then `pg_db`."""
    database: Database = request.getfixturevalue("db" if request.param == "sqlite" else "pg_db")
    return database


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The evaluation data beside the repository (never copied into it)."""
    path = REPO.parent / "shared" / "data"
    if not path.is_dir():
        pytest.fail(f"evaluation data not found at {path}: CI provides ../shared beside the repo")
    return path
