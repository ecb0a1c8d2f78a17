"""Admin pages: settings overrides (mode, thresholds) and accounts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import overrides
from bot.config import load_settings
from bot.moderation import users
from storage.db import Database
from storage.models import SettingOverride
from tests.bot.web.app_env import ADMIN, MODERATOR, PASSWORD, AppEnv, Session, login


def test_admin_changes_mode_and_a_threshold_and_they_apply(app_env: AppEnv, admin: Session) -> None:
    assert admin.post("/admin/settings", key="mode", value="live").status_code == 303
    admin.post("/admin/settings", key="guard.min_confidence", value="0.8")
    merged = overrides.apply_overrides(app_env.settings, app_env.db)
    assert merged.mode == "live" and merged.guard.min_confidence == 0.8
    assert app_env.settings.mode == "review"  # the loaded settings object is not changed
    stored = overrides.stored_overrides(app_env.db)
    assert stored["mode"].updated_by == ADMIN
    page = admin.client.get("/admin/settings").text
    assert f"set by {ADMIN}" in page


def test_an_invalid_value_is_refused_and_not_stored(app_env: AppEnv, admin: Session) -> None:
    admin.post("/admin/settings", key="guard.min_confidence", value="1.5")
    admin.post("/admin/settings", key="mode", value="yolo")
    admin.post("/admin/settings", key="database_url", value="sqlite:///evil.db")
    assert overrides.stored_overrides(app_env.db) == {}
    page = admin.client.get("/admin/settings").text
    assert "between 0 and 1" in page and "cannot be changed" in page


def test_reset_goes_back_to_the_configured_value(app_env: AppEnv, admin: Session) -> None:
    admin.post("/admin/settings", key="runtime.review_ttl_h", value="6")
    assert overrides.apply_overrides(app_env.settings, app_env.db).runtime.review_ttl_h == 6.0
    admin.post("/admin/settings/reset", key="runtime.review_ttl_h")
    assert overrides.apply_overrides(app_env.settings, app_env.db).runtime.review_ttl_h == 24.0


def test_admin_adds_and_disables_users(app_env: AppEnv, admin: Session) -> None:
    admin.post("/admin/users", username="new_mod", role="moderator", password="a long passphrase")
    assert [a.role for a in users.list_users(app_env.db) if a.username == "new_mod"] == [
        "moderator"
    ]
    login(app_env.client(), "new_mod", "a long passphrase")
    admin.post(f"/admin/users/{MODERATOR}/disable")
    assert not next(a for a in users.list_users(app_env.db) if a.username == MODERATOR).active
    admin.post(f"/admin/users/{ADMIN}/disable")  # not oneself: that would lock admins out
    assert next(a for a in users.list_users(app_env.db) if a.username == ADMIN).active
    admin.post(f"/admin/users/{MODERATOR}/enable")
    assert next(a for a in users.list_users(app_env.db) if a.username == MODERATOR).active


def test_an_admin_resets_a_password_and_the_old_one_and_its_sessions_stop_working(
    app_env: AppEnv, admin: Session, moderator: Session
) -> None:
    assert moderator.client.get("/queue").status_code == 200
    response = admin.post(f"/admin/users/{MODERATOR}/password", password="a brand new passphrase")
    assert response.status_code == 303
    assert "their open sessions have ended" in admin.client.get("/admin/users").text
    # The moderator's open session is over, the old password is refused, the new one works.
    assert moderator.client.get("/queue", follow_redirects=False).status_code in (302, 303)
    assert users.authenticate(app_env.db, MODERATOR, PASSWORD) is None
    login(app_env.client(), MODERATOR, "a brand new passphrase")


def test_a_short_password_or_an_unknown_user_is_refused_and_nothing_changes(
    app_env: AppEnv, admin: Session
) -> None:
    admin.post(f"/admin/users/{MODERATOR}/password", password="short")
    page = admin.client.get("/admin/users").text
    assert "at least" in page
    admin.post("/admin/users/nobody/password", password="a long enough passphrase")
    assert "no user" in admin.client.get("/admin/users").text
    login(app_env.client(), MODERATOR)  # the old password still works


def test_only_an_admin_may_reset_a_password(app_env: AppEnv, moderator: Session) -> None:
    response = moderator.post(f"/admin/users/{ADMIN}/password", password="a takeover passphrase")
    assert response.status_code == 403
    login(app_env.client(), ADMIN)  # unchanged


def test_a_stored_value_that_no_longer_validates_is_ignored(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/o.db")
    overrides.set_override(db, "research.vote_threshold", "0.3", "admin")
    with db.transaction() as session:
        row = session.get(SettingOverride, "research.vote_threshold")
        assert row is not None
        row.value = "garbage"
    settings = load_settings(database_url=db.url)
    assert overrides.apply_overrides(settings, db).research.vote_threshold == 0.15
    db.dispose()


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("mode", " review ", "review"),
        ("local.mode", "", None),
        ("x.mode", "live", "live"),
        ("guard.min_independent_sources", "3", 3),
        ("research.decide_confidence", "0.6", 0.6),
    ],
)
def test_override_values_are_parsed(key: str, raw: str, expected: object) -> None:
    assert overrides.parse_value(key, raw) == expected


@pytest.mark.parametrize(
    ("key", "raw"),
    [("guard.min_independent_sources", "0"), ("runtime.review_ttl_h", "-1"), ("x.mode", "on")],
)
def test_override_values_out_of_range_are_refused(key: str, raw: str) -> None:
    with pytest.raises(overrides.OverrideError):
        overrides.parse_value(key, raw)
