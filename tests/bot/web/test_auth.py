"""Login, logout, sessions and who may reach which page."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from bot.moderation import users
from bot.web.app import SESSION_COOKIE, create_app
from tests.bot.web.app_env import (
    ADMIN,
    ADMIN_ROUTES,
    ANY_SESSION,
    MEMORY_ROUTES,
    MODERATOR,
    MODERATOR_ROUTES,
    OPEN,
    PASSWORD,
    SIGNED_IN_MEDIA,
    AppEnv,
    Session,
    concrete,
    csrf_of,
    endpoints,
    login,
)


def test_every_route_is_classified(app_env: AppEnv) -> None:
    app = create_app(app_env.settings, app_env.db, secret="s")
    assert endpoints(app) == (
        OPEN | ANY_SESSION | SIGNED_IN_MEDIA | MODERATOR_ROUTES | ADMIN_ROUTES | MEMORY_ROUTES
    )


def test_anonymous_is_sent_to_login_on_every_protected_route(app_env: AppEnv) -> None:
    client = app_env.client()
    token = csrf_of(client.get("/login").text)  # a valid anonymous token: only auth stops it
    request_id = app_env.world.ids["review_local"]
    for method, path in SIGNED_IN_MEDIA | MODERATOR_ROUTES | ADMIN_ROUTES | MEMORY_ROUTES:
        url = concrete(path, request_id)
        if method == "GET":
            response = client.get(url, follow_redirects=False)
        else:
            response = client.post(url, data={"csrf_token": token}, follow_redirects=False)
        assert response.status_code == 303, (method, url)
        assert response.headers["location"].startswith("/login"), (method, url)
    assert client.get("/requests/1", follow_redirects=False).headers["location"] == (
        "/login?next=%2Frequests%2F1"
    )


def test_open_endpoints_need_no_login(app_env: AppEnv) -> None:
    client = app_env.client()
    assert client.get("/healthz").json() == {"status": "ok"}
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert client.get("/login").status_code == 200
    # /metrics needs no login either, but only this machine may read it (test_metrics_access).
    assert app_env.client(client=("127.0.0.1", 50000)).get("/metrics").status_code == 200


def test_moderator_reaches_queue_pages_but_not_admin_pages(
    app_env: AppEnv, moderator: Session
) -> None:
    request_id = app_env.world.ids["review_local"]
    for method, path in MODERATOR_ROUTES:
        if method == "GET":
            response = moderator.client.get(concrete(path, request_id))
            assert response.status_code == 200, path
    for method, path in ADMIN_ROUTES:
        url = concrete(path, request_id)
        if method == "GET":
            response = moderator.client.get(url)
        else:
            response = moderator.post(
                url,
                key="mode",
                value="live",
                username="x_demo",
                password="long enough pw",
                role="admin",
            )
        assert response.status_code == 403, (method, url)
    # Nothing an admin page would change has changed.
    assert {a.username for a in users.list_users(app_env.db)} == {ADMIN, MODERATOR}
    assert all(a.active for a in users.list_users(app_env.db))
    assert "Settings" not in moderator.client.get("/queue").text


def test_admin_reaches_admin_pages(admin: Session) -> None:
    assert admin.client.get("/admin/settings").status_code == 200
    assert admin.client.get("/admin/users").status_code == 200
    assert 'href="/admin/settings"' in admin.client.get("/queue").text


def test_login_failure_message_is_the_same_for_every_cause(app_env: AppEnv) -> None:
    users.disable_user(app_env.db, MODERATOR)
    bodies = set()
    for username, password in (
        (ADMIN, "wrong password!"),
        ("nobody_demo", PASSWORD),
        (MODERATOR, PASSWORD),  # disabled
    ):
        client = app_env.client()
        token = csrf_of(client.get("/login").text)
        response = client.post(
            "/login", data={"username": username, "password": password, "csrf_token": token}
        )
        assert response.status_code == 401
        message = re.search(r'role="alert">([^<]*)<', response.text)
        assert message is not None
        bodies.add(message.group(1))
        assert client.get("/queue", follow_redirects=False).status_code == 303
    assert bodies == {"Invalid username or password."}


def test_disabled_user_cannot_log_in_and_loses_open_sessions(
    app_env: AppEnv, moderator: Session
) -> None:
    assert moderator.client.get("/queue").status_code == 200
    users.disable_user(app_env.db, MODERATOR)
    response = moderator.client.get("/queue", follow_redirects=False)
    assert response.status_code == 303
    with pytest.raises(AssertionError):
        login(app_env.client(), MODERATOR)


def test_logout_ends_the_session_even_for_a_replayed_cookie(app_env: AppEnv) -> None:
    client = app_env.client()
    token = login(client, MODERATOR)
    stolen = client.cookies.get(SESSION_COOKIE)
    assert stolen
    response = client.post("/logout", data={"csrf_token": token}, follow_redirects=False)
    assert response.status_code == 303
    assert client.get("/queue", follow_redirects=False).status_code == 303
    replay = app_env.client()
    replay.cookies.set(SESSION_COOKIE, stolen)
    assert replay.get("/queue", follow_redirects=False).status_code == 303


def test_login_redirects_only_to_local_paths(app_env: AppEnv) -> None:
    for target, expected in (
        ("/decisions?q=x", "/decisions?q=x"),
        ("https://evil.example/", "/"),
        ("//evil.example/", "/"),
    ):
        client = app_env.client()
        token = csrf_of(client.get("/login").text)
        response = client.post(
            "/login",
            data={"username": ADMIN, "password": PASSWORD, "csrf_token": token, "next": target},
            follow_redirects=False,
        )
        assert response.headers["location"] == expected


def test_session_cookie_is_httponly_samesite_and_secure_when_asked(app_env: AppEnv) -> None:
    response = app_env.client().get("/login")
    cookie = response.headers["set-cookie"].lower()
    assert SESSION_COOKIE in cookie and "httponly" in cookie and "samesite=lax" in cookie
    assert "secure" not in cookie
    secure = TestClient(
        create_app(app_env.settings, app_env.db, secret="s", secure_cookies=True),
        base_url="https://testserver",
    )
    assert "; secure" in secure.get("/login").headers["set-cookie"].lower()


def test_a_cookie_signed_with_another_secret_is_not_a_session(app_env: AppEnv) -> None:
    client = app_env.client()
    login(client, ADMIN)
    forged = TestClient(create_app(app_env.settings, app_env.db, secret="another-secret"))
    forged.cookies.set(SESSION_COOKIE, client.cookies.get(SESSION_COOKIE) or "")
    assert forged.get("/queue", follow_redirects=False).status_code == 303


def test_pages_carry_a_content_security_policy(moderator: Session) -> None:
    headers = moderator.client.get("/queue").headers
    assert "script-src 'nonce-" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
