"""A seeded database, an admin and a moderator, and the review app over them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.routing import BaseRoute, Route

from bot import review, users
from bot.config import Settings, load_settings
from bot.web.app import create_app
from storage.db import Database
from storage.models import Request, ReviewAction
from tests.bot.web.seed import World, seed

PASSWORD = "correct horse battery"
ADMIN = "admin_demo"
MODERATOR = "mod_demo"
SENIOR = "senior_demo"  # added by the `senior` fixture only
_CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2 with small parameters: the production cost (~0.3 s per verify here) would make
    dozens of logins slow; the code path is the same."""
    monkeypatch.setattr(
        users, "HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )
    monkeypatch.setattr(users, "_dummy_hash", None)


class Clock:
    """The time the app's login throttle goes by; tests move it instead of sleeping."""

    def __init__(self, start: datetime = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class AppEnv:
    db: Database
    settings: Settings
    world: World
    outbox: Path
    clock: Clock = field(default_factory=Clock)

    def client(self, **options: Any) -> TestClient:
        """A client of a fresh app over the same database and clock; `options` go to
        TestClient (e.g. client=("203.0.113.7", 50000) for another address)."""
        app = create_app(self.settings, self.db, secret="test-secret", clock=self.clock)
        return TestClient(app, **options)

    def request(self, request_id: int) -> Request:
        """The request's row as stored now."""
        with self.db.session() as session:
            row = session.get(Request, request_id)
            assert row is not None
            return row

    def history(self, request_id: int) -> list[ReviewAction]:
        """The request's review actions, oldest first."""
        with self.db.session() as session:
            return review.history(session, request_id)


@pytest.fixture
def app_env(tmp_path: Path, cheap_hashes: None) -> Iterator[AppEnv]:
    db = Database(f"sqlite:///{tmp_path / 'factnote.db'}")
    world = seed(db)
    users.add_user(db, ADMIN, PASSWORD, "admin")
    users.add_user(db, MODERATOR, PASSWORD, "moderator")
    settings = load_settings(database_url=db.url, mode="review")
    settings.local.enabled = True
    settings.local.inbox = str(tmp_path / "inbox")
    settings.local.outbox = str(tmp_path / "outbox.jsonl")
    yield AppEnv(db=db, settings=settings, world=world, outbox=tmp_path / "outbox.jsonl")
    db.dispose()


def endpoints(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every endpoint of `app`, HEAD aside. FastAPI 0.137.2 and later keep an
    included router as one node of `app.routes`, which `iter_route_contexts` expands; earlier
    versions copy the router's routes into `app.routes`."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI before 0.137.2
        found: list[tuple[BaseRoute, Any]] = [(route, route) for route in app.routes]
    else:
        found = [(c.original_route, c) for c in iter_route_contexts(app.routes)]
    return {
        (method, route.path)
        for original, route in found
        if isinstance(original, Route)
        for method in (route.methods or set()) - {"HEAD"}
    }


def csrf_of(html: str) -> str:
    match = _CSRF_RE.search(html)
    assert match, "no CSRF field in the page"
    return match.group(1)


def login(client: TestClient, username: str, password: str = PASSWORD) -> str:
    """Log in through the form; returns the session's CSRF token."""
    page = client.get("/login")
    response = client.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    return csrf_of(client.get("/queue").text)


@dataclass
class Session:
    client: TestClient
    token: str

    def post(self, url: str, **data: object) -> httpx.Response:
        return self.client.post(
            url, data={"csrf_token": self.token, **data}, follow_redirects=False
        )


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
