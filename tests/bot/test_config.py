"""`bot.config`: sections declared once, every documented environment name, secrets only from the
environment, credentials handed to the adapters, one index path, no environment read elsewhere."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
import responses
from pydantic import BaseModel, SecretStr
from typer.testing import CliRunner

from adapters.base import AccessDenied
from bot import platforms
from bot.cli import app
from bot.config import ConfigError, Settings, bluesky_credentials, load_settings, x_credentials
from bot.ops.runtime import open_runtime
from pipeline.config import PipelineConfig
from testing.fakes.http_server import LocalHTTPServer, Route

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
runner = CliRunner()

X_SECRETS = {
    "FACTNOTE_X_BEARER_TOKEN": "bearer-secret-0001",
    "FACTNOTE_X_CONSUMER_KEY": "consumer-key-secret-0002",
    "FACTNOTE_X_CONSUMER_SECRET": "consumer-secret-secret-0003",
    "FACTNOTE_X_ACCESS_TOKEN": "1500000000000000001-access-token-secret-0004",
    "FACTNOTE_X_ACCESS_TOKEN_SECRET": "access-token-secret-secret-0005",
}
X_ENV = {**X_SECRETS, "FACTNOTE_X_BOT_USER_ID": "1500000000000000001"}
X_ENV["FACTNOTE_X_BOT_USERNAME"] = " @factnote "


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    """No FACTNOTE_*/OPENAI_* variable of the machine running the tests, in an empty folder."""
    for name in list(os.environ):
        if name.upper().startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield monkeypatch


def secret(value: SecretStr | None) -> str | None:
    return None if value is None else value.get_secret_value()


# Every environment name the README and docs/platforms.md document, and where it lands.
DOCUMENTED: list[tuple[str, str, Callable[[Settings], Any], Any]] = [
    ("FACTNOTE_DATABASE_URL", "sqlite:///x.db", lambda s: s.database_url, "sqlite:///x.db"),
    ("FACTNOTE_INDEX_PATH", "ix.sqlite", lambda s: s.index_path, "ix.sqlite"),
    ("FACTNOTE_LLM_BASE_URL", "http://llm:8000/v1", lambda s: s.llm.base_url, "http://llm:8000/v1"),
    ("OPENAI_BASE_URL", "http://llm:8000/v1", lambda s: s.llm.base_url, "http://llm:8000/v1"),
    ("FACTNOTE_LLM_MODEL", "my-model", lambda s: s.llm.model, "my-model"),
    ("OPENAI_MODEL", "my-model", lambda s: s.llm.model, "my-model"),
    ("FACTNOTE_LLM_API_KEY", "sk-1", lambda s: secret(s.llm.api_key), "sk-1"),
    ("OPENAI_API_KEY", "sk-1", lambda s: secret(s.llm.api_key), "sk-1"),
    ("FACTNOTE_LLM__MODEL", "nested", lambda s: s.llm.model, "nested"),
    ("FACTNOTE_RESEARCH__MAX_ROUNDS", "2", lambda s: s.research.max_rounds, 2),
    ("FACTNOTE_SEARCH__SERPER_API_KEY", "k", lambda s: secret(s.search.serper_api_key), "k"),
    (
        "FACTNOTE_IMAGES__GOOGLE_VISION_API_KEY",
        "g",
        lambda s: secret(s.images.google_vision_api_key),
        "g",
    ),
    ("FACTNOTE_LOCAL_INBOX", "in", lambda s: s.local.inbox, "in"),
    ("FACTNOTE_LOCAL_OUTBOX", "out.jsonl", lambda s: s.local.outbox, "out.jsonl"),
    ("FACTNOTE_WEB_SECRET", "w", lambda s: secret(s.web.secret), "w"),
    ("FACTNOTE_WEB__SECRET", "w", lambda s: secret(s.web.secret), "w"),
    ("FACTNOTE_WEB_SECURE_COOKIES", "true", lambda s: s.web.secure_cookies, True),
    ("FACTNOTE_WEB__SECURE_COOKIES", "false", lambda s: s.web.secure_cookies, False),
    ("FACTNOTE_WEB__METRICS_TOKEN", "m", lambda s: secret(s.web.metrics_token), "m"),
    ("FACTNOTE_X__ENABLED", "true", lambda s: s.x.enabled, True),
    ("FACTNOTE_X_BEARER_TOKEN", "b", lambda s: secret(s.x.bearer_token), "b"),
    ("FACTNOTE_X_CONSUMER_KEY", "c", lambda s: secret(s.x.consumer_key), "c"),
    ("FACTNOTE_X_CONSUMER_SECRET", "c", lambda s: secret(s.x.consumer_secret), "c"),
    ("FACTNOTE_X_ACCESS_TOKEN", "a", lambda s: secret(s.x.access_token), "a"),
    ("FACTNOTE_X_ACCESS_TOKEN_SECRET", "a", lambda s: secret(s.x.access_token_secret), "a"),
    ("FACTNOTE_X_BOT_USER_ID", "12", lambda s: s.x.bot_user_id, "12"),
    ("FACTNOTE_X_BOT_USERNAME", "fn", lambda s: s.x.bot_username, "fn"),
    ("FACTNOTE_BLUESKY_HANDLE", "bot.example", lambda s: s.bluesky.handle, "bot.example"),
    ("FACTNOTE_BLUESKY_APP_PASSWORD", "p", lambda s: secret(s.bluesky.app_password), "p"),
    ("FACTNOTE_BLUESKY_PDS", "https://pds.example", lambda s: s.bluesky.pds, "https://pds.example"),
    ("FACTNOTE_BLUESKY_SESSION_PATH", "s.txt", lambda s: s.bluesky.session_path, "s.txt"),
]


@pytest.mark.parametrize(
    ("name", "raw", "read", "expected"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED]
)
def test_each_documented_environment_name_sets_its_setting(
    env: pytest.MonkeyPatch, name: str, raw: str, read: Callable[[Settings], Any], expected: Any
) -> None:
    assert read(load_settings()) != expected
    env.setenv(name, raw)
    assert read(load_settings()) == expected


def test_a_flat_name_wins_over_the_nested_name_and_the_file_and_code_wins_over_all(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "factnote.toml"
    config.write_text('[llm]\nmodel = "toml"\ntimeout_s = 5\n', encoding="utf-8")
    assert load_settings(config).llm.model == "toml"
    env.setenv("FACTNOTE_LLM__MODEL", "nested")
    assert load_settings(config).llm.model == "nested"
    env.setenv("OPENAI_MODEL", "openai")
    assert load_settings(config).llm.model == "openai"
    env.setenv("FACTNOTE_LLM_MODEL", "flat")
    settings = load_settings(config)
    assert (settings.llm.model, settings.llm.timeout_s) == ("flat", 5)  # the rest of [llm] stays
    assert load_settings(config, llm={"model": "code"}).llm.model == "code"
    env.setenv("FACTNOTE_LLM_MODEL", "  ")  # blank: as if unset
    assert load_settings(config).llm.model == "openai"


def test_the_pipeline_view_is_the_settings_sections_themselves(env: pytest.MonkeyPatch) -> None:
    env.setenv("FACTNOTE_LLM_MODEL", "flat")
    settings = load_settings()
    view = settings.pipeline()
    assert type(view) is PipelineConfig  # the web and platform secrets stay out of the pipeline
    assert set(PipelineConfig.model_fields) <= set(Settings.model_fields)
    for name in PipelineConfig.model_fields:
        assert getattr(view, name) is getattr(settings, name)
    assert view.llm.model == "flat"


def _secret_fields(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            yield from _secret_fields(kind, f"{prefix}{name}.")
        elif SecretStr in (kind, *get_args(kind)):
            yield prefix + name


SECRET_FIELDS = sorted(_secret_fields(Settings))


def test_the_documented_secrets_are_secret_fields() -> None:
    assert set(SECRET_FIELDS) >= {
        "bluesky.app_password",
        "llm.api_key",
        "search.brave_api_key",
        "search.google_api_key",
        "search.serper_api_key",
        "web.metrics_token",
        "web.secret",
        "x.access_token",
        "x.access_token_secret",
        "x.bearer_token",
        "x.consumer_key",
        "x.consumer_secret",
    }


@pytest.mark.parametrize("dotted", SECRET_FIELDS)
def test_a_config_file_setting_a_secret_is_refused_without_echoing_it(
    env: pytest.MonkeyPatch, tmp_path: Path, dotted: str
) -> None:
    section, key = dotted.split(".")
    config = tmp_path / "factnote.toml"
    config.write_text(f'[{section}]\n{key} = "value-never-shown"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(dotted)) as refused:
        load_settings(config)
    assert "value-never-shown" not in str(refused.value)


def test_a_secret_under_an_unknown_key_is_refused_and_a_setting_named_like_one_is_not(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "factnote.toml"
    config.write_text('[llm]\napi_token = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"llm\.api_token"):
        load_settings(config)
    # `max_output_tokens` and a domain named "secret..." are settings, not secrets.
    config.write_text(
        '[llm]\nmax_output_tokens = 800\n[credibility.overrides]\n"secret.example" = "high"\n',
        encoding="utf-8",
    )
    settings = load_settings(config)
    assert settings.llm.max_output_tokens == 800
    assert settings.credibility.overrides == {"secret.example": "high"}


def test_secrets_are_kept_out_of_the_settings_repr(env: pytest.MonkeyPatch) -> None:
    for name, value in X_ENV.items():
        env.setenv(name, value)
    env.setenv("FACTNOTE_BLUESKY_APP_PASSWORD", "app-password-secret")
    shown = repr(load_settings())
    assert not any(value in shown for value in [*X_SECRETS.values(), "app-password-secret"])


def test_secret_values_are_every_secret_set_and_the_database_password(
    env: pytest.MonkeyPatch,
) -> None:
    env.setenv("FACTNOTE_X_CONSUMER_KEY", "consumer-key-secret")
    env.setenv("OPENAI_API_KEY", "sk-openai-secret")
    env.setenv("FACTNOTE_DATABASE_URL", "postgresql://bot:db-password@db/factnote")
    secrets = load_settings().secret_values()
    assert secrets == ["consumer-key-secret", "sk-openai-secret", "db-password"]


def test_x_credentials_come_from_the_environment_trimmed(env: pytest.MonkeyPatch) -> None:
    for name, value in X_ENV.items():
        env.setenv(name, value)
    creds = x_credentials(load_settings().x)
    assert (creds.bot_user_id, creds.bot_username) == ("1500000000000000001", "factnote")
    assert creds.access_token == X_SECRETS["FACTNOTE_X_ACCESS_TOKEN"]
    assert creds.consumer_key == X_SECRETS["FACTNOTE_X_CONSUMER_KEY"]


def test_missing_x_credentials_name_the_variables_and_never_the_values(
    env: pytest.MonkeyPatch,
) -> None:
    for name, value in X_ENV.items():
        if name != "FACTNOTE_X_ACCESS_TOKEN_SECRET":
            env.setenv(name, value)
    env.setenv("FACTNOTE_X_CONSUMER_SECRET", "   ")
    with pytest.raises(ConfigError) as err:
        x_credentials(load_settings().x)
    message = str(err.value)
    assert "FACTNOTE_X_ACCESS_TOKEN_SECRET" in message
    assert "FACTNOTE_X_CONSUMER_SECRET" in message
    assert "FACTNOTE_X_BEARER_TOKEN" not in message
    assert not any(value in message for value in X_SECRETS.values())
    env.setenv("FACTNOTE_X_CONSUMER_SECRET", "c")
    env.setenv("FACTNOTE_X_ACCESS_TOKEN_SECRET", "a")
    env.setenv("FACTNOTE_X_BOT_USER_ID", "@factnote")
    with pytest.raises(ConfigError, match="FACTNOTE_X_BOT_USER_ID must be the numeric user id"):
        x_credentials(load_settings().x)


def test_bluesky_credentials_come_from_the_environment(env: pytest.MonkeyPatch) -> None:
    env.setenv("FACTNOTE_BLUESKY_HANDLE", "@bot.example")
    with pytest.raises(ConfigError, match="FACTNOTE_BLUESKY_APP_PASSWORD"):
        bluesky_credentials(load_settings().bluesky)
    env.setenv("FACTNOTE_BLUESKY_APP_PASSWORD", "app-password-secret")
    creds = bluesky_credentials(load_settings().bluesky)
    assert (creds.handle, creds.pds) == ("bot.example", "https://bsky.social")
    assert creds.app_password == "app-password-secret"


@responses.activate
def test_the_x_adapter_is_built_from_the_settings_credentials(env: pytest.MonkeyPatch) -> None:
    for name, value in X_ENV.items():
        env.setenv(name, value)
    mentions = "https://api.twitter.com/2/users/1500000000000000001/mentions"
    body = json.loads((FIXTURES / "x" / "mentions_empty.json").read_text(encoding="utf-8"))
    responses.get(mentions, json=body)
    spec = platforms.spec_for("x")
    assert spec is not None
    result = spec.build(load_settings()).fetch_summons(None)
    assert result.summons == []
    authorization = responses.calls[0].request.headers["Authorization"]
    assert f'oauth_token="{X_SECRETS["FACTNOTE_X_ACCESS_TOKEN"]}"' in authorization


def test_the_bluesky_adapter_logs_in_with_the_settings_credentials(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with LocalHTTPServer() as pds:
        # The XRPC error body of a refused createSession (lexicon com.atproto.server.createSession;
        # the same answer the FakePDS in tests/adapters/bluesky/helpers.py gives).
        refused = {"error": "AuthenticationRequired", "message": "Invalid identifier or password"}
        pds.add(
            "/xrpc/com.atproto.server.createSession",
            Route(status=401, body=json.dumps(refused), content_type="application/json"),
        )
        env.setenv("FACTNOTE_BLUESKY_HANDLE", "@bot.example")
        env.setenv("FACTNOTE_BLUESKY_APP_PASSWORD", "app-password-secret")
        env.setenv("FACTNOTE_BLUESKY_PDS", pds.base_url)
        env.setenv("FACTNOTE_BLUESKY__SESSION_PATH", str(tmp_path / "bluesky.session"))
        spec = platforms.spec_for("bluesky")
        assert spec is not None
        with pytest.raises(AccessDenied):
            spec.build(load_settings()).fetch_summons(None)
        (login,) = pds.requests
    sent = json.loads(login.body)
    assert (sent["identifier"], sent["password"]) == ("bot.example", "app-password-secret")


def test_setup_reads_the_bluesky_credentials_from_the_settings(env: pytest.MonkeyPatch) -> None:
    result = runner.invoke(app, ["setup", "bluesky"])
    assert result.exit_code == 2
    assert "FACTNOTE_BLUESKY_HANDLE, FACTNOTE_BLUESKY_APP_PASSWORD" in result.stderr


def test_one_index_path_for_the_index_and_claims_commands_and_the_runtime(
    env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env.setenv("FACTNOTE_INDEX_PATH", str(tmp_path / "one" / "index.sqlite"))
    env.setenv("FACTNOTE_CLAIMS__PATH", str(tmp_path / "one" / "claims.sqlite"))
    env.setenv("FACTNOTE_DATABASE_URL", f"sqlite:///{tmp_path / 'factnote.db'}")
    page = FIXTURES / "index" / "pages" / "orphan.txt"
    added = runner.invoke(app, ["index", "add", str(page), "--url", "https://hygiene.example/h"])
    assert added.exit_code == 0, added.output
    claims = FIXTURES / "claims" / "factcheck_api.json"
    imported = runner.invoke(app, ["claims", "import", str(claims)])
    assert imported.exit_code == 0, imported.output
    assert not (tmp_path / "data").exists()  # nothing went to a default path
    with open_runtime(load_settings()) as runtime:
        assert runtime.shared.local_index is not None
        assert runtime.shared.local_index.get("https://hygiene.example/h") is not None
        assert runtime.shared.claim_index is not None  # opened only where the file exists


# Reading the environment anywhere else would bypass the settings (and their secret rules).
_ENV_READ = re.compile(r"\bos\.environ\b|\bgetenv\b|\bfrom os import environ\b|\benvvar=")
# Set before a model loads, so that no library reaches for the Hugging Face hub.
_OFFLINE = re.compile(r'os\.environ\.setdefault\("(HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE)", "1"\)')
# The root command's own options (`--config`, logging) are read before there are settings.
_ROOT_OPTIONS = Path("bot/cli.py")
# Still to move onto the settings (issue 15, item 3; written while this test was):
_NOT_YET = {
    # The demo's own folder holds its config file, so it cannot come from the settings.
    Path("bot/commands/demo.py"): "--examples reads FACTNOTE_EXAMPLES",
}


def test_nothing_reads_the_environment_outside_the_settings() -> None:
    found = []
    for package in ("bot", "adapters", "pipeline", "storage"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path == REPO / "bot" / "config.py" or path.relative_to(REPO) in _NOT_YET:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                root_option = "envvar=" in line and path == REPO / _ROOT_OPTIONS
                if _ENV_READ.search(line) and not (_OFFLINE.search(line) or root_option):
                    found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []
