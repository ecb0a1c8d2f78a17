"""A seeded database, an admin and a moderator, the review app over them, and (for the tests
marked `browser`) the app served by uvicorn and a headless Chromium tab on it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from argon2 import PasswordHasher

from bot.config import load_settings
from bot.moderation import users
from bot.web.app import create_app
from storage.db import Database
from testing.databases import migrated_sqlite
from testing.waits import wait_until
from tests.bot.web.app_env import (
    ADMIN,
    ARGS,
    CHROMIUM,
    MODERATOR,
    PASSWORD,
    SENIOR,
    TIMEOUT_MS,
    AppEnv,
    Session,
    login,
)
from tests.bot.web.seed import seed


@pytest.fixture
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2 with small parameters: the production cost (~0.3 s per verify here) would make
    dozens of logins slow; the code path is the same."""
    monkeypatch.setattr(
        users, "HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )
    monkeypatch.setattr(users, "_dummy_hash", None)


@pytest.fixture
def app_env(tmp_path: Path, cheap_hashes: None) -> Iterator[AppEnv]:
    db = Database(migrated_sqlite(tmp_path / "factnote.db"))
    world = seed(db)
    users.add_user(db, ADMIN, PASSWORD, "admin")
    users.add_user(db, MODERATOR, PASSWORD, "moderator")
    settings = load_settings(database_url=db.url, mode="review")
    settings.local.enabled = True
    settings.local.inbox = str(tmp_path / "inbox")
    settings.local.outbox = str(tmp_path / "outbox.jsonl")
    yield AppEnv(db=db, settings=settings, world=world, outbox=tmp_path / "outbox.jsonl")
    db.dispose()


@pytest.fixture
def moderator(app_env: AppEnv) -> Session:
    client = app_env.client()
    return Session(client, login(client, MODERATOR))


@pytest.fixture
def admin(app_env: AppEnv) -> Session:
    client = app_env.client()
    return Session(client, login(client, ADMIN))


@pytest.fixture
def senior(app_env: AppEnv) -> Session:
    """A senior moderator: decides escalated items too."""
    users.add_user(app_env.db, SENIOR, PASSWORD, "senior")
    client = app_env.client()
    return Session(client, login(client, SENIOR))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: run tools/ensure-chromium.sh (installs Debian's chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield instance
        instance.close()


@pytest.fixture
def base_url(app_env: AppEnv) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(app_env.settings, app_env.db, secret="browser-test-secret")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started or not thread.is_alive(), what="uvicorn's start")
    if not server.started:
        pytest.fail("uvicorn ended before it started serving")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def page(browser: object, base_url: str) -> Iterator[object]:
    context = browser.new_context(base_url=base_url)  # type: ignore[attr-defined]
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    yield tab
    context.close()
