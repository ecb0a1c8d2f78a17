"""Who may read `/metrics` (issue 16, item 10): loopback only by default, or whoever sends the
configured bearer token."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from bot.config import ConfigError, load_settings
from bot.web.app import create_app
from tests.bot.web.app_env import AppEnv

LOOPBACK = ("127.0.0.1", 50000)
REMOTE = ("203.0.113.5", 50000)
TOKEN = "s3cret-metrics-token-for-tests"


def metrics_client(app_env: AppEnv, address: tuple[str, int]) -> TestClient:
    return TestClient(create_app(app_env.settings, app_env.db, secret="s"), client=address)


def test_metrics_are_not_shown_to_a_remote_client_without_login(app_env: AppEnv) -> None:
    # The reproduction: /metrics, without login, showed model name, tokens and cost.
    response = metrics_client(app_env, REMOTE).get("/metrics")
    assert response.status_code == 403
    assert "fake-model" not in response.text and "factnote_llm" not in response.text


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.53", "::1", "::ffff:127.0.0.1"])
def test_metrics_are_served_to_loopback_clients(app_env: AppEnv, host: str) -> None:
    response = metrics_client(app_env, (host, 50000)).get("/metrics")
    assert response.status_code == 200
    assert 'factnote_llm_cost_usd_total{model="fake-model"}' in response.text


def test_a_request_relayed_by_an_untrusted_local_proxy_is_not_local(app_env: AppEnv) -> None:
    client = metrics_client(app_env, LOOPBACK)
    for header in ("X-Forwarded-For", "Forwarded", "X-Real-IP"):
        response = client.get("/metrics", headers={header: "203.0.113.5"})
        assert response.status_code == 403, header


def test_behind_a_trusted_proxy_the_real_client_decides(app_env: AppEnv) -> None:
    app_env.settings.web.trusted_proxies = ["127.0.0.1"]
    client = metrics_client(app_env, LOOPBACK)
    remote = client.get("/metrics", headers={"X-Forwarded-For": "203.0.113.5"})
    assert remote.status_code == 403
    # A client cannot claim to be local: the proxy appends the address it saw.
    spoofed = client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1, 203.0.113.5"})
    assert spoofed.status_code == 403
    assert client.get("/metrics").status_code == 200  # from the proxy host itself


def test_with_a_token_metrics_need_it_from_everyone(app_env: AppEnv) -> None:
    app_env.settings.web.metrics_token = SecretStr(TOKEN)
    for address in (REMOTE, LOOPBACK):
        client = metrics_client(app_env, address)
        missing = client.get("/metrics")
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert "fake-model" not in missing.text
        for wrong in (f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", TOKEN):
            assert client.get("/metrics", headers={"Authorization": wrong}).status_code == 401
        right = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200 and "fake-model" in right.text


def test_the_token_is_compared_in_constant_time(
    app_env: AppEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hmac

    from bot.web import security

    compared: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(security.hmac, "compare_digest", spy)
    app_env.settings.web.metrics_token = SecretStr(TOKEN)
    client = metrics_client(app_env, REMOTE)
    assert client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert compared == [(b"nope", TOKEN.encode())]


def test_the_token_comes_from_the_environment_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("FACTNOTE_CONFIG", raising=False)
    monkeypatch.setenv("FACTNOTE_WEB__METRICS_TOKEN", TOKEN)
    token = load_settings().web.metrics_token
    assert token is not None and token.get_secret_value() == TOKEN
    monkeypatch.delenv("FACTNOTE_WEB__METRICS_TOKEN")
    config = tmp_path / "factnote.toml"
    config.write_text(f'[web]\nmetrics_token = "{TOKEN}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"web\.metrics_token"):
        load_settings(config)
