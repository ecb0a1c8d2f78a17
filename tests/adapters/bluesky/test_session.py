"""Bluesky credentials and the session: stored, reused, refreshed, and a refused login."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from atproto import Session

from adapters.base import (
    AccessDenied,
    Adapter,
    PlatformError,
)
from adapters.bluesky.adapter import BlueskyAdapter
from adapters.bluesky.client import BlueskyCredentials
from storage.db import Database
from tests.adapters.bluesky.helpers import (
    BOT_DID,
    BOT_HANDLE,
    HEALTH,
    PASSWORD,
    PDS,
    FakePDS,
)

# ------------------------------------------------------------------ credentials


def test_credentials_hide_the_password(creds: BlueskyCredentials) -> None:
    assert BOT_HANDLE in repr(creds)
    assert PASSWORD not in repr(creds)


def test_adapter_satisfies_the_adapter_protocol(adapter: BlueskyAdapter) -> None:
    assert isinstance(adapter, Adapter)
    assert adapter.name == "bluesky"


# ------------------------------------------------------------------ session


def test_without_a_stored_session_logs_in_once_and_stores_it_privately(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    adapter = make_adapter()
    adapter.fetch_summons("2026-03-01T10:02:59.100Z")
    adapter.recent_posts(HEALTH, limit=2)

    assert len(pds.named("com.atproto.server.createSession")) == 1
    path = tmp_path / "state" / "bluesky.session"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    stored = Session.decode(path.read_text())
    assert (stored.did, stored.handle) == (BOT_DID, BOT_HANDLE)
    assert stored.access_jwt in pds.access
    assert PASSWORD not in path.read_text()
    assert list(path.parent.glob("*.tmp")) == []


def test_a_working_stored_session_is_reused_without_login(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "bluesky.session"
    path.parent.mkdir()
    path.write_text(pds.session_string())
    stored = Session.decode(path.read_text())

    make_adapter().fetch_summons("2026-03-01T10:02:59.100Z")

    assert pds.named("com.atproto.server.createSession") == []
    listed = pds.named("app.bsky.notification.listNotifications")[0]
    assert listed.auth == f"Bearer {stored.access_jwt}"


def test_an_expiring_stored_session_is_refreshed_not_recreated(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "bluesky.session"
    path.parent.mkdir()
    old = pds.session_string(access_ttl=60)  # inside the client's 15-minute refresh window
    path.write_text(old)

    make_adapter().recent_posts(HEALTH, limit=1)

    assert pds.named("com.atproto.server.createSession") == []
    assert len(pds.named("com.atproto.server.refreshSession")) == 1
    assert path.read_text() != old
    assert Session.decode(path.read_text()).access_jwt in pds.access
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_stored_session_of_another_account_or_garbage_is_not_used(
    make_adapter: Callable[..., BlueskyAdapter], pds: FakePDS, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "bluesky.session"
    path.parent.mkdir()
    path.write_text("not a session")
    make_adapter().recent_posts(HEALTH, limit=1)
    foreign = Session("someone.else", "did:plc:other", *pds.issue(), f"{PDS}/xrpc").encode()
    path.write_text(foreign)
    make_adapter().recent_posts(HEALTH, limit=1)

    assert len(pds.named("com.atproto.server.createSession")) == 2


def test_a_rejected_session_is_replaced_by_one_password_login(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    adapter.recent_posts(HEALTH, limit=1)
    pds.revoke_all()

    posts = adapter.recent_posts(HEALTH, limit=1)

    assert len(posts) == 1
    assert len(pds.named("com.atproto.server.createSession")) == 2
    assert adapter.relogins == 1


def test_after_a_refused_login_the_adapter_stops_logging_in(pds: FakePDS, tmp_path: Path) -> None:
    creds = BlueskyCredentials(handle=BOT_HANDLE, app_password="wrong", pds=PDS)
    adapter = BlueskyAdapter(creds, session_path=tmp_path / "s", client=pds.client())
    assert adapter.login_halted is None

    with pytest.raises(AccessDenied) as first:
        adapter.recent_posts(HEALTH)
    with pytest.raises(AccessDenied) as second:
        adapter.fetch_summons(None)

    # createSession allows 30 per 5 minutes and 300 a day: one refused try is enough.
    assert len(pds.named("com.atproto.server.createSession")) == 1
    assert first.value.status == 401
    assert adapter.login_halted is not None and "refused" in adapter.login_halted
    assert "restart" in str(second.value)
    assert PASSWORD not in str(second.value) and "wrong" not in str(second.value)
    assert not (tmp_path / "s").exists()


def test_a_server_error_at_login_does_not_stop_logging_in(
    adapter: BlueskyAdapter, pds: FakePDS
) -> None:
    pds.fail("com.atproto.server.createSession", pds._error(502, "UpstreamFailure", "down"))

    with pytest.raises(PlatformError) as info:
        adapter.recent_posts(HEALTH, limit=1)
    posts = adapter.recent_posts(HEALTH, limit=1)

    assert info.value.retryable and not isinstance(info.value, AccessDenied)
    assert adapter.login_halted is None
    assert len(posts) == 1
    assert len(pds.named("com.atproto.server.createSession")) == 2


def test_factnote_status_shows_a_stopped_login(pds: FakePDS, tmp_path: Path, db: Database) -> None:
    from bot.ops.summary import overview
    from bot.requests.intake import poll

    creds = BlueskyCredentials(handle=BOT_HANDLE, app_password="wrong", pds=PDS)
    adapter = BlueskyAdapter(creds, session_path=tmp_path / "s", client=pds.client())

    poll(adapter, db, "dry-run")
    poll(adapter, db, "dry-run")

    (row,) = overview(db).polls
    assert row.adapter == "bluesky"
    assert row.last_error is not None
    assert row.last_error.startswith("AccessDenied") and "not logging in again" in row.last_error
    assert len(pds.named("com.atproto.server.createSession")) == 1
