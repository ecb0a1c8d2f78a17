"""The image's HEALTHCHECK (`python -m bot.ops.healthcheck`): the review app's `/healthz` when it
runs, else the bot's own signs of life in the database."""

from __future__ import annotations

import socket
from datetime import timedelta
from pathlib import Path

import pytest

from bot.ops import healthcheck
from pipeline.records import utcnow
from storage.db import Database
from storage.models import Cursor
from testing.fakes.http_server import LocalHTTPServer, Route

# Shaped after bot/web/routes/ops.py: 200 {"status": "ok"}, or 503 when the database fails.
HEALTHY = Route.text('{"status": "ok"}', content_type="application/json")
UNHEALTHY = Route(status=503, body=b'{"status": "error", "error": "OperationalError"}')


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/healthz"  # nothing listens there any more


@pytest.mark.parametrize(("route", "code"), [(HEALTHY, 0), (UNHEALTHY, 1)])
def test_the_review_app_is_judged_by_its_healthz(
    monkeypatch: pytest.MonkeyPatch, route: Route, code: int
) -> None:
    with LocalHTTPServer() as server:
        server.add("/healthz", route)
        monkeypatch.setenv("FACTNOTE_HEALTHCHECK_URL", server.url("/healthz"))
        assert healthcheck.main() == code
        assert server.hits("/healthz") == 1


def poll(db: Database, *, age_s: float, failing: bool = False) -> None:
    at = utcnow() - timedelta(seconds=age_s)
    with db.transaction() as session:
        session.add(
            Cursor(
                adapter="local",
                last_poll_at=at,
                last_error="inbox unreadable" if failing else None,
                last_error_at=at if failing else None,
            )
        )


@pytest.mark.parametrize(
    ("age_s", "failing", "code"),
    [(30, False, 0), (30, True, 1), (7200, False, 1)],
)
def test_without_a_web_app_the_bot_is_healthy_while_it_polls(
    monkeypatch: pytest.MonkeyPatch, db: Database, age_s: float, failing: bool, code: int
) -> None:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.setenv("FACTNOTE_HEALTHCHECK_URL", closed_port_url())
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", db.url)
    poll(db, age_s=age_s, failing=failing)
    assert healthcheck.main() == code


def test_a_bot_that_never_polled_or_has_no_database_is_unhealthy(
    monkeypatch: pytest.MonkeyPatch, db: Database, tmp_path: Path
) -> None:
    assert healthcheck.bot_problem(db.url, 3600) == "no adapter has polled yet"
    missing = f"sqlite:///{tmp_path}/nothing-here/factnote.db"
    problem = healthcheck.bot_problem(missing, 3600)
    assert problem is not None and problem.startswith("database:")
