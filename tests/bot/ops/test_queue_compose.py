"""`docker-compose.yml`, read as Compose reads it (no daemon here): PostgreSQL, one scheduler,
scalable workers and the review app, each running a real `factnote` command, with settings
that really switch the deployment to the Procrastinate backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import cli
from bot.config import load_settings
from bot.ops.queue import uses_procrastinate

COMPOSE = Path(__file__).resolve().parents[3] / "docker-compose.yml"


def services() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))  # merges the `<<:` anchors
    found: dict[str, Any] = loaded["services"]
    return found


def test_compose_runs_postgres_one_scheduler_workers_and_the_web_app() -> None:
    found = services()
    assert set(found) == {"postgres", "scheduler", "worker", "web"}
    assert found["scheduler"]["command"] == ["run"]
    assert found["worker"]["command"] == ["worker"]
    assert found["web"]["command"][0] == "serve"
    for name in ("scheduler", "worker", "web"):
        assert found[name]["command"][0] in cli.COMMANDS
        assert found[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    # `--scale worker=N` needs a service without a fixed container name or host port.
    assert "container_name" not in found["worker"] and "ports" not in found["worker"]


def test_compose_environment_selects_the_procrastinate_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    environment = services()["worker"]["environment"]
    for key, value in environment.items():
        # Compose fills ${POSTGRES_PASSWORD:?...} in from the shell.
        monkeypatch.setenv(key, value.replace("${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}", "pw"))
    settings = load_settings()
    assert settings.database_url == "postgresql+psycopg://factnote:pw@postgres:5432/factnote"
    assert uses_procrastinate(settings)


def test_the_web_app_trusts_the_compose_networks_gateway_as_its_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 33: through Docker's port mapping the app sees the gateway, not 127.0.0.1.
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    [network] = loaded["networks"]["default"]["ipam"]["config"]
    environment = services()["web"]["environment"]
    for key, value in environment.items():
        monkeypatch.setenv(key, value.replace("${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}", "pw"))
    settings = load_settings()
    assert settings.web.trusted_proxies == [network["gateway"]]
    assert uses_procrastinate(settings)  # the shared environment is kept
