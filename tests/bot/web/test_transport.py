"""Session cookies and transport: the Secure flag over HTTPS (directly or behind a trusted
proxy), settings read through the config only, no session fixation, no logout by GET."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from typer.testing import CliRunner

from bot import cli
from bot.config import ConfigError, load_settings
from bot.web.app import SESSION_COOKIE, create_app
from tests.bot.web.app_env import ADMIN, MODERATOR, AppEnv, csrf_of, login

PROXY = ("127.0.0.1", 50000)
SHARED = "shared-between-processes-32-bytes+"  # a web secret long enough to be accepted
HTTPS = "https://testserver"  # Secure cookies are sent back over HTTPS only


def session_cookie(client: TestClient, **headers: str) -> str:
    cookie = client.get("/login", headers=headers).headers["set-cookie"].lower()
    assert cookie.startswith(SESSION_COOKIE)
    return cookie


def is_secure(cookie: str) -> bool:
    return "; secure" in cookie


def app_client(
    app_env: AppEnv, base_url: str = "http://testserver", **options: object
) -> TestClient:
    app = create_app(app_env.settings, app_env.db, secret="s")
    return TestClient(app, base_url=base_url, **options)  # type: ignore[arg-type]


def test_cookies_are_secure_by_default_when_served_over_https(app_env: AppEnv) -> None:
    assert app_env.settings.web.secure_cookies is None  # the default: by scheme
    https = session_cookie(app_client(app_env, "https://testserver"))
    assert is_secure(https) and "httponly" in https and "samesite=lax" in https
    assert not is_secure(session_cookie(app_client(app_env, "http://testserver")))


def test_the_secure_cookies_setting_overrides_the_scheme(app_env: AppEnv) -> None:
    app_env.settings.web.secure_cookies = True
    assert is_secure(session_cookie(app_client(app_env, "http://testserver")))
    app_env.settings.web.secure_cookies = False
    assert not is_secure(session_cookie(app_client(app_env, "https://testserver")))


def test_forwarded_https_counts_only_from_a_trusted_proxy(app_env: AppEnv) -> None:
    https = {"X-Forwarded-Proto": "https"}
    # Not configured: the header is ignored, whoever sends it.
    assert not is_secure(session_cookie(app_client(app_env, client=PROXY), **https))
    app_env.settings.web.trusted_proxies = ["127.0.0.1"]
    assert is_secure(session_cookie(app_client(app_env, client=PROXY), **https))
    assert not is_secure(session_cookie(app_client(app_env, client=PROXY)))  # plain HTTP
    stranger = app_client(app_env, client=("203.0.113.9", 50000))
    assert not is_secure(session_cookie(stranger, **https))


def test_the_client_address_comes_from_a_trusted_proxy_only(app_env: AppEnv) -> None:
    """The per-address login throttle counts the real client behind a trusted proxy, and a
    client cannot dodge it by sending X-Forwarded-For itself."""
    limit = app_env.settings.web.login_address_max_failures

    def fail_many(client: TestClient, headers: dict[str, str], names: str) -> None:
        for i in range(limit):
            token = csrf_of(client.get("/login").text)
            client.post(
                "/login",
                data={
                    "username": f"{names}{i % 5}_demo",
                    "password": "wrong pw!",
                    "csrf_token": token,
                },
                headers=headers,
            )

    def status(client: TestClient, headers: dict[str, str]) -> int:
        """A made-up name's answer: 429 while the address is locked for such names, else 401
        (a real account's right password gets in either way, see test_login_throttle.py)."""
        token = csrf_of(client.get("/login").text)
        return client.post(
            "/login",
            data={"username": "probe_demo", "password": "wrong pw!", "csrf_token": token},
            headers=headers,
            follow_redirects=False,
        ).status_code

    app_env.settings.web.trusted_proxies = ["127.0.0.1"]
    proxy = app_env.client(client=PROXY)
    fail_many(proxy, {"X-Forwarded-For": "198.51.100.50"}, "a")
    assert status(proxy, {"X-Forwarded-For": "198.51.100.50"}) == 429
    assert status(app_env.client(client=PROXY), {"X-Forwarded-For": "198.51.100.51"}) == 401
    # Untrusted sender: its own address is counted, whatever X-Forwarded-For says.
    direct = app_env.client(client=("203.0.113.20", 1))
    fail_many(direct, {"X-Forwarded-For": "198.51.100.52"}, "b")
    other_headers = {"X-Forwarded-For": "198.51.100.53"}
    assert status(app_env.client(client=("203.0.113.20", 1)), other_headers) == 429


def test_web_settings_come_from_the_config_not_the_process_environment(
    app_env: AppEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.setenv("FACTNOTE_WEB_SECRET", SHARED)
    monkeypatch.setenv("FACTNOTE_WEB__SECURE_COOKIES", "true")
    settings = load_settings(database_url=app_env.db.url)
    web = settings.web
    assert web.secret == SecretStr(SHARED) and web.secure_cookies is True
    monkeypatch.delenv("FACTNOTE_WEB__SECURE_COOKIES")
    monkeypatch.setenv("FACTNOTE_WEB_SECURE_COOKIES", "1")  # the older flat name still works
    assert load_settings().web.secure_cookies is True
    # Two processes with the configured secret share sessions...
    first = TestClient(create_app(settings, app_env.db), base_url=HTTPS)
    login(first, ADMIN)
    second = TestClient(create_app(settings, app_env.db), base_url=HTTPS)
    second.cookies.set(SESSION_COOKIE, first.cookies.get(SESSION_COOKIE) or "")
    assert second.get("/queue", follow_redirects=False).status_code == 200
    # ...and an app is configured by its settings alone, not by variables set later.
    monkeypatch.setenv("FACTNOTE_WEB_SECRET", "another")
    monkeypatch.setenv("FACTNOTE_WEB_SECURE_COOKIES", "0")
    third = create_app(settings, app_env.db)
    assert is_secure(session_cookie(TestClient(third, base_url=HTTPS)))
    replay = TestClient(third, base_url=HTTPS)
    replay.cookies.set(SESSION_COOKIE, first.cookies.get(SESSION_COOKIE) or "")
    assert replay.get("/queue", follow_redirects=False).status_code == 200


def test_a_session_cookie_planted_before_login_stays_anonymous(app_env: AppEnv) -> None:
    attacker = app_env.client()
    attacker.get("/login")
    planted = attacker.cookies.get(SESSION_COOKIE)
    assert planted
    victim = app_env.client()
    victim.cookies.set(SESSION_COOKIE, planted, domain="testserver.local")
    login(victim, MODERATOR)
    assert victim.cookies.get(SESSION_COOKIE) != planted  # a new session, not the planted one
    assert attacker.get("/queue", follow_redirects=False).status_code == 303


def test_logout_cannot_be_triggered_by_a_get(app_env: AppEnv) -> None:
    client = app_env.client()
    login(client, MODERATOR)
    response = client.get("/logout", follow_redirects=False)
    assert response.status_code == 405
    assert client.get("/queue", follow_redirects=False).status_code == 200


def test_a_wildcard_proxy_list_is_warned_about_at_start_up(
    app_env: AppEnv, caplog: pytest.LogCaptureFixture
) -> None:
    app_env.settings.web.trusted_proxies = ["*"]
    with caplog.at_level(logging.WARNING, logger="bot.web"):
        app_client(app_env)
    assert any('trusted_proxies has "*"' in r.getMessage() for r in caplog.records)


def test_a_relay_missing_from_the_trusted_list_is_warned_about_once(
    app_env: AppEnv, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 33: behind Docker's port mapping the app sees the network's gateway, which the
    # usual ["127.0.0.1"] does not match; every client would share that one address.
    app_env.settings.web.trusted_proxies = ["127.0.0.1"]
    client = app_client(app_env, client=("172.30.99.1", 40000))
    with caplog.at_level(logging.WARNING, logger="bot.web"):
        for forwarded in ("198.51.100.7", "198.51.100.8"):
            client.get("/login", headers={"X-Forwarded-For": forwarded})
        app_client(app_env, client=PROXY).get("/login", headers={"X-Forwarded-For": "1.2.3.4"})
        client.get("/login")  # not relayed
    warnings = [r.getMessage() for r in caplog.records if "X-Forwarded-For" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].startswith("requests from 172.30.99.1 carry X-Forwarded-For")


def test_hsts_is_sent_only_over_https(app_env: AppEnv) -> None:
    hsts = "strict-transport-security"
    assert app_client(app_env, HTTPS).get("/login").headers[hsts] == "max-age=31536000"
    assert hsts not in app_client(app_env, "http://testserver").get("/login").headers
    # Behind a trusted proxy that says the client used HTTPS.
    app_env.settings.web.trusted_proxies = ["127.0.0.1"]
    proxied = app_client(app_env, client=PROXY).get(
        "/login", headers={"X-Forwarded-Proto": "https"}
    )
    assert proxied.headers[hsts] == "max-age=31536000"


def test_a_short_web_secret_is_refused_at_start_up(
    app_env: AppEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 33: with FACTNOTE_WEB_SECRET=a a forged cookie signed with "a" gave admin.
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.setenv("FACTNOTE_WEB_SECRET", "a")
    with pytest.raises(ConfigError, match="FACTNOTE_WEB_SECRET is shorter than 32 bytes"):
        create_app(load_settings(database_url=app_env.db.url), app_env.db)
    monkeypatch.setenv("FACTNOTE_WEB_SECRET", "x" * 32)
    create_app(load_settings(database_url=app_env.db.url), app_env.db)


def test_serve_with_a_short_web_secret_ends_in_one_line_naming_the_variable(
    app_env: AppEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.setenv("FACTNOTE_WEB_SECRET", "hunter2")
    monkeypatch.setenv("FACTNOTE_DATABASE_URL", app_env.db.url)
    result = CliRunner().invoke(cli.app, ["serve"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "factnote: error: FACTNOTE_WEB_SECRET is shorter"
    )
    assert "hunter2" not in result.output
