"""Every POST needs the session's CSRF token."""

from __future__ import annotations

from sqlalchemy import select

from bot import overrides
from bot.moderation import users
from bot.web.app import create_app
from storage.models import Request, ReviewAction
from tests.bot.web.app_env import (
    ADMIN,
    ADMIN_ROUTES,
    ANY_SESSION,
    MEMORY_ROUTES,
    MODERATOR_ROUTES,
    OPEN,
    AppEnv,
    Session,
    concrete,
    csrf_of,
    endpoints,
    login,
)


def _post_routes(app_env: AppEnv) -> list[str]:
    app = create_app(app_env.settings, app_env.db, secret="s")
    return sorted(path for method, path in endpoints(app) if method == "POST")


def test_every_post_without_or_with_a_wrong_token_is_refused(
    app_env: AppEnv, admin: Session
) -> None:
    request_id = app_env.world.ids["review_local"]
    routes = _post_routes(app_env)
    assert set(routes) == {
        p
        for m, p in OPEN | ANY_SESSION | MODERATOR_ROUTES | ADMIN_ROUTES | MEMORY_ROUTES
        if m == "POST"
    }
    with app_env.db.session() as session:
        actions_before = len(session.scalars(select(ReviewAction)).all())
    for path in routes:
        url = concrete(path, request_id)
        form = {
            "text": "ok",
            "reason": "other",
            "key": "mode",
            "value": "live",
            "action": "approve",
            "ids": str(request_id),
            "username": "new_demo",
            "password": "long enough pw",
        }
        missing = admin.client.post(url, data=form, follow_redirects=False)
        assert missing.status_code == 403, url
        assert "security token" in missing.text
        wrong = admin.client.post(url, data={**form, "csrf_token": "x" + admin.token[1:]})
        assert wrong.status_code == 403, url
    with app_env.db.session() as session:
        assert len(session.scalars(select(ReviewAction)).all()) == actions_before
        assert session.get(Request, request_id).state == "awaiting_review"  # type: ignore[union-attr]
    assert {a.username for a in users.list_users(app_env.db)} == {"admin_demo", "mod_demo"}
    assert overrides.stored_overrides(app_env.db) == {}
    # Still logged in: the refusals did not end the session, and the right token works.
    assert admin.post(f"/requests/{request_id}/escalate", note="n").status_code == 303


def test_a_token_from_another_session_is_refused(app_env: AppEnv, moderator: Session) -> None:
    other = app_env.client()
    other_token = csrf_of(other.get("/login").text)
    request_id = app_env.world.ids["review_local"]
    response = moderator.client.post(
        f"/requests/{request_id}/approve", data={"csrf_token": other_token}
    )
    assert response.status_code == 403


def test_login_form_needs_the_token_too(app_env: AppEnv) -> None:
    client = app_env.client()
    client.get("/login")
    response = client.post("/login", data={"username": "admin_demo", "password": "x" * 12})
    assert response.status_code == 403


def test_token_changes_at_login(app_env: AppEnv) -> None:
    client = app_env.client()
    before = csrf_of(client.get("/login").text)
    after = login(client, ADMIN)
    assert before != after
