"""The review app under test and how tests use it: its users, a client logged in through the
form, the CSRF token of a page, the route table by role, and logging in from a browser tab.
The fixtures that build these are in conftest.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.routing import BaseRoute, Route

from bot.config import Settings
from bot.moderation import actions as review
from bot.web.app import create_app
from storage.db import Database
from storage.models import Request, ReviewAction
from tests.bot.web.seed import World

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 15_000
PASSWORD = "correct horse battery"
ADMIN = "admin_demo"
MODERATOR = "mod_demo"
SENIOR = "senior_demo"  # added by the `senior` fixture only
_CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


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


# Every route of the app, by who may use it. A route missing here fails
# test_every_route_is_classified, so new pages cannot skip the permission tests.
OPEN = {
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/login"),
    ("POST", "/login"),
    ("GET", "/favicon.ico"),
}
ANY_SESSION = {("POST", "/logout")}
# Our stored copies of post images: any signed-in user (the moderator pages embed them).
SIGNED_IN_MEDIA = {("GET", "/images/{sha256}")}
MODERATOR_ROUTES = {
    ("GET", "/"),
    ("GET", "/queue"),
    ("GET", "/queue/next"),
    ("POST", "/queue/bulk"),
    ("POST", "/queue/quick"),
    ("GET", "/requests/{request_id}"),
    ("GET", "/requests/{request_id}/measure"),
    ("POST", "/requests/{request_id}/approve"),
    ("POST", "/requests/{request_id}/edit"),
    ("POST", "/requests/{request_id}/reject"),
    ("POST", "/requests/{request_id}/escalate"),
    ("POST", "/requests/{request_id}/claim"),
    ("POST", "/requests/{request_id}/release"),
    ("GET", "/decisions"),
}
ADMIN_ROUTES = {
    ("GET", "/admin/posting"),
    ("POST", "/admin/posting/pause"),
    ("POST", "/admin/posting/resume"),
    ("POST", "/admin/posting/mode"),
    ("POST", "/admin/users/{username}/role"),
    ("POST", "/admin/users/{username}/password"),
    ("GET", "/admin/settings"),
    ("POST", "/admin/settings"),
    ("POST", "/admin/settings/reset"),
    ("GET", "/admin/users"),
    ("POST", "/admin/users"),
    ("POST", "/admin/users/{username}/{change}"),
    ("POST", "/admin/lockouts/address"),
    ("POST", "/admin/memory/{item_id}/{change}"),
}
# The Memory pages and a proposal's approval: every moderator (test_memory_approval); disabling
# and deleting (`{change}` above) stay the admins'.
MEMORY_ROUTES = {
    ("GET", "/admin/memory"),
    ("GET", "/admin/memory/{item_id}"),
    ("POST", "/admin/memory/{item_id}/decide"),
}


def concrete(path: str, request_id: int) -> str:
    return (
        path.replace("{request_id}", str(request_id))
        .replace("{username}", MODERATOR)
        .replace("{change}", "disable")
        .replace("{item_id}", "0" * 32)
        .replace("{sha256}", "0" * 64)
    )


def log_in(page: object, username: str) -> None:
    page.goto("/login")  # type: ignore[attr-defined]
    page.fill("input[name=username]", username)  # type: ignore[attr-defined]
    page.fill("input[name=password]", PASSWORD)  # type: ignore[attr-defined]
    page.click("form.login button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_url("**/queue")  # type: ignore[attr-defined]
