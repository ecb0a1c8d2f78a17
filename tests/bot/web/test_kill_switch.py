"""The posting kill switch: a pause or a dry-run set in the review app stops the next post of a
bot that is already running (its settings read before the switch), holds the reply without
losing it, lets it go when lifted, and records who did what."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot import overrides, platforms
from bot.config import load_settings
from bot.ops.summary import overview
from bot.requests.posting import post_due
from storage.db import Database
from storage.models import Request, RequestState, SettingChange
from tests.bot.web.app_env import ADMIN, AppEnv, Session


def _posted_lines(app_env: AppEnv) -> int:
    return len(app_env.outbox.read_text().splitlines()) if app_env.outbox.exists() else 0


def _bot_posts(app_env: AppEnv) -> int:
    """One posting run of a bot started before the switch was touched: its adapters and
    settings are built once; only the database tells it about the switch."""
    adapter = platforms.spec_for("local").build(app_env.settings)  # type: ignore[union-attr]
    return post_due(app_env.db, {"local": adapter}, app_env.settings.runtime)


def _make_due(app_env: AppEnv, request_id: int) -> None:
    with app_env.db.transaction() as session:
        row = session.get(Request, request_id)
        assert row is not None
        row.next_attempt_at = None


def test_a_pause_holds_replies_in_the_running_bot_until_it_is_lifted(
    app_env: AppEnv, admin: Session, moderator: Session, caplog: pytest.LogCaptureFixture
) -> None:
    rid = app_env.world.ids["review_local"]
    caplog.set_level(logging.WARNING)
    assert admin.post("/admin/posting/pause", platform="local", note="bad replies").status_code
    assert overrides.posting_hold(app_env.db, "local") is not None
    assert overrides.posting_hold(app_env.db, "x") is None
    # Every signed-in page says so.
    assert "Posting to local is paused by admin_demo (bad replies)." in (
        moderator.client.get("/queue").text
    )
    # Approving now: the reply waits in posting, held; nothing went out.
    moderator.post(f"/requests/{rid}/approve")
    row = app_env.request(rid)
    assert row.state == RequestState.POSTING.value and _posted_lines(app_env) == 0
    assert "held in posting by the kill switch" in moderator.client.get(f"/requests/{rid}").text
    # The bot's posting run (what its maintenance job does every few seconds) holds it too.
    _make_due(app_env, rid)
    assert _bot_posts(app_env) == 0
    row = app_env.request(rid)
    assert row.state == RequestState.POSTING.value and row.post_attempts == 0
    assert (row.last_error or "").startswith("held: posting to local paused by admin_demo")
    assert 'id="held"' in moderator.client.get(f"/requests/{rid}").text
    page = admin.client.get("/admin/posting").text
    assert '<td data-label="Held replies" class="held">1</td>' in page
    # Lifted: the held reply is due at once and goes out at the next run.
    admin.post("/admin/posting/resume", platform="local")
    assert _bot_posts(app_env) == 1
    assert app_env.request(rid).state == RequestState.POSTED.value
    assert _posted_lines(app_env) == 1
    # Who did what is stored and logged.
    with app_env.db.session() as session:
        changes = [
            (c.key, c.old_value, c.new_value, c.actor, c.note)
            for c in session.query(SettingChange).order_by(SettingChange.id)
        ]
    assert changes == [
        ("pause.local", False, True, ADMIN, "bad replies"),
        ("pause.local", True, False, ADMIN, ""),
    ]
    messages = [r.getMessage() for r in caplog.records]
    assert "kill switch: posting to local paused by admin_demo (bad replies)" in messages
    assert "kill switch: posting to local resumed by admin_demo" in messages
    assert any(m.startswith(f"request {rid}: posting held: ") for m in messages)


def test_pausing_every_platform_and_a_dry_run_mode_stop_posting_too(
    app_env: AppEnv, admin: Session, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    moderator.post(f"/requests/{rid}/approve")  # posted: the next one is held
    admin.post("/admin/posting/pause", platform="*")
    assert "paused" in (overrides.posting_hold(app_env.db, "bluesky") or "")
    admin.post("/admin/posting/resume", platform="*")
    assert overrides.posting_hold(app_env.db, "bluesky") is None
    # The global mode to dry-run: held, with who set it.
    admin.post("/admin/posting/mode", key="mode", value="dry-run")
    assert overrides.posting_hold(app_env.db, "local") == "mode is dry-run (set by admin_demo)"
    assert "Dry-run" in moderator.client.get("/queue").text
    # A platform's own mode beats the global one, both ways.
    admin.post("/admin/posting/mode", key="bluesky.mode", value="live")
    assert overrides.posting_hold(app_env.db, "bluesky") is None
    admin.post("/admin/posting/mode", key="mode", value="live")
    admin.post("/admin/posting/mode", key="local.mode", value="dry-run")
    assert overrides.posting_hold(app_env.db, "local") == (
        "local.mode is dry-run (set by admin_demo)"
    )
    assert overrides.live_mode(app_env.db, app_env.settings, "local") == "dry-run"
    assert overrides.live_mode(app_env.db, app_env.settings, "x") == "live"
    admin.post("/admin/posting/mode", key="local.mode", value="")  # follow the global mode
    assert overrides.posting_hold(app_env.db, "local") is None
    admin.post("/admin/posting/pause", platform="nowhere")
    assert overrides.pauses(app_env.db) == {}
    assert "platform must be one of" in admin.client.get("/admin/posting").text
    page = admin.client.get("/admin/posting").text
    assert 'id="changes"' in page and page.count('<td class="actor">admin_demo</td>') == 7


def test_the_admins_global_mode_reaches_adapters_that_set_a_mode_in_the_file(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite:///{tmp_path / 'o.db'}")
    settings = load_settings(database_url=db.url, mode="review")
    settings.x.mode = "live"
    settings.bluesky.mode = "live"
    overrides.set_override(db, "mode", "dry-run", "admin_demo")
    overrides.set_override(db, "bluesky.mode", "review", "admin_demo")
    merged = overrides.apply_overrides(settings, db)
    assert merged.adapter_mode("x") == "dry-run"  # the file's live gives way
    assert merged.adapter_mode("bluesky") == "review"  # its own override wins
    assert overrides.live_mode(db, settings, "x") == "dry-run"
    overrides.clear_override(db, "mode", "admin_demo")
    assert overrides.apply_overrides(settings, db).adapter_mode("x") == "live"
    db.dispose()


def test_held_replies_are_counted_at_once_and_status_does_not_call_them_errors(
    app_env: AppEnv, admin: Session, moderator: Session
) -> None:
    rid = app_env.world.ids["review_local"]
    admin.post("/admin/posting/pause", platform="local", note="bad replies")
    moderator.post(f"/requests/{rid}/approve")
    # Read from the posting state and the switch: no posting pass has marked it yet.
    assert app_env.request(rid).last_error is None
    assert overrides.held_count(app_env.db) == {"local": 1}
    page = admin.client.get("/admin/posting").text
    assert '<td data-label="Held replies" class="held">1</td>' in page
    _make_due(app_env, rid)
    _bot_posts(app_env)  # the pass marks it held
    view = overview(app_env.db)
    assert view.recent_errors == []
    assert [i for i, _ in view.held] == [rid]
    assert view.held[0][1].startswith("posting to local paused by admin_demo")
    admin.post("/admin/posting/resume", platform="local")
    assert overrides.held_count(app_env.db) == {}
