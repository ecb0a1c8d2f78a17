"""All configuration, declared once: a TOML file plus FACTNOTE_* environment variables.

`Settings` is the pipeline's own `PipelineConfig` (its `[llm]`, `[search]` ... sections, declared
in `pipeline/config.py`) plus the sections only the bot has: runtime, web app and one per
platform adapter. Precedence (highest first): values passed in code, the flat environment names
of `FLAT_ENV`, the other environment variables, the TOML file, defaults. Nested sections use `__`
in environment names (`FACTNOTE_SEARCH__SERPER_API_KEY`); the most used settings also have the
flat names of `FLAT_ENV` (`FACTNOTE_LLM_MODEL`, `OPENAI_API_KEY`, `FACTNOTE_X_BEARER_TOKEN`).

Secrets (every `SecretStr` field) come from the environment only: a TOML file that sets one is
refused, so config files can be committed and shared without leaking keys. Nothing else in the
project reads the environment (a test greps for it): the adapters get their credentials from
the sections here.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from adapters.base import AdapterConfig as AdapterConfig
from adapters.base import Mode as Mode
from adapters.base import VideoCaps
from adapters.bluesky.settings import BlueskyAdapterConfig
from adapters.local import LocalAdapterConfig
from adapters.x.settings import XAdapterConfig
from adapters.x_notes.settings import XNotesAdapterConfig
from bot.config_check import environment_warnings as unknown_environment
from bot.config_check import unknown_key_lines
from pipeline.config import PipelineConfig

if TYPE_CHECKING:  # the adapters import their SDKs: only when an adapter is built
    from adapters.bluesky.client import BlueskyCredentials
    from adapters.x.client import XCredentials


# Environment names that stand for one nested setting each, tried in order; the first one set
# (and not blank) wins over the nested `FACTNOTE_SECTION__KEY` name and the TOML file.
FLAT_ENV: dict[tuple[str, str], tuple[str, ...]] = {
    ("llm", "base_url"): ("FACTNOTE_LLM_BASE_URL", "OPENAI_BASE_URL"),
    ("llm", "model"): ("FACTNOTE_LLM_MODEL", "OPENAI_MODEL"),
    ("llm", "api_key"): ("FACTNOTE_LLM_API_KEY", "OPENAI_API_KEY"),
    ("local", "inbox"): ("FACTNOTE_LOCAL_INBOX",),
    ("local", "outbox"): ("FACTNOTE_LOCAL_OUTBOX",),
    ("web", "secret"): ("FACTNOTE_WEB_SECRET",),
    ("web", "secure_cookies"): ("FACTNOTE_WEB_SECURE_COOKIES",),
    ("x", "bearer_token"): ("FACTNOTE_X_BEARER_TOKEN",),
    ("x", "consumer_key"): ("FACTNOTE_X_CONSUMER_KEY",),
    ("x", "consumer_secret"): ("FACTNOTE_X_CONSUMER_SECRET",),
    ("x", "access_token"): ("FACTNOTE_X_ACCESS_TOKEN",),
    ("x", "access_token_secret"): ("FACTNOTE_X_ACCESS_TOKEN_SECRET",),
    ("x", "bot_user_id"): ("FACTNOTE_X_BOT_USER_ID",),
    ("x", "bot_username"): ("FACTNOTE_X_BOT_USERNAME",),
    ("bluesky", "handle"): ("FACTNOTE_BLUESKY_HANDLE",),
    ("bluesky", "app_password"): ("FACTNOTE_BLUESKY_APP_PASSWORD",),
    ("bluesky", "pds"): ("FACTNOTE_BLUESKY_PDS",),
    ("bluesky", "session_path"): ("FACTNOTE_BLUESKY_SESSION_PATH",),
    ("health", "url"): ("FACTNOTE_HEALTHCHECK_URL",),
    ("health", "max_poll_age_s"): ("FACTNOTE_HEALTH_MAX_POLL_AGE_S",),
    ("claim_sync", "api_key"): ("FACTNOTE_FACTCHECK_API_KEY",),
}

# Keys the settings do not know (ignored when loading) are still refused in a TOML file when
# their name says they hold a secret: a key under a misspelt name is a leak all the same.
_SECRET_MARKERS = ("api_key", "password", "secret", "token")


class ConfigError(Exception):
    pass


# The databases the storage layer is built and tested on, with the drivers installed for them.
SUPPORTED_DATABASES: dict[str, tuple[str, ...]] = {
    "sqlite": ("pysqlite",),
    "postgresql": ("psycopg",),
}
DATABASE_EXAMPLES = "sqlite:///data/factnote.db or postgresql+psycopg://user@host/dbname"


def database_url_problem(url: str) -> str | None:
    """Why `url` is not a database this project can use, in words (never echoing the URL, which
    may hold a password), or None. Checked before any driver is imported, so that
    `mysql://...` is one line rather than a driver's ImportError."""
    match = re.match(r"^([A-Za-z0-9_]+)(?:\+([A-Za-z0-9_]+))?://", url.strip())
    if match is None:
        return "not of the form scheme://..."
    backend, driver = match.group(1).lower(), (match.group(2) or "").lower()
    if backend not in SUPPORTED_DATABASES:
        return f"{backend} is not supported (SQLite and PostgreSQL are)"
    drivers = SUPPORTED_DATABASES[backend]
    if driver and driver not in drivers:
        return f"the {driver} driver is not supported ({', '.join(drivers)} is)"
    return None


def check_database_url(
    url: str, setting: str = "setting database_url (env FACTNOTE_DATABASE_URL)"
) -> str:
    """`url`, or a ConfigError of one line saying why it cannot be used."""
    problem = database_url_problem(url)
    if problem is not None:
        raise ConfigError(
            f"{setting} is not a usable database URL: {problem}; use e.g. {DATABASE_EXAMPLES}"
        )
    return url


def bluesky_credentials(cfg: BlueskyAdapterConfig) -> BlueskyCredentials:
    """The adapter's credentials; ConfigError naming the variables that are not set."""
    from adapters.bluesky.client import DEFAULT_PDS, BlueskyCredentials

    values = _required(
        "bluesky", "Bluesky credentials", handle=cfg.handle, app_password=cfg.app_password
    )
    return BlueskyCredentials(
        handle=values["handle"].lstrip("@"),
        app_password=values["app_password"],
        pds=(cfg.pds or "").strip() or DEFAULT_PDS,
    )


def x_credentials(cfg: XAdapterConfig) -> XCredentials:
    """The adapter's credentials; ConfigError naming the variables that are not set."""
    from adapters.x.client import XCredentials

    # Every field of XCredentials is a required setting of the same name here.
    wanted = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(XCredentials)}
    values = _required("x", "X credentials", **wanted)
    if not values["bot_user_id"].isdigit():
        raise ConfigError(f"{FLAT_ENV['x', 'bot_user_id'][0]} must be the numeric user id")
    values["bot_username"] = values["bot_username"].lstrip("@")
    return XCredentials(**values)


def video_caps(settings: Settings) -> VideoCaps:
    """The pipeline's video intake caps, for the adapters that choose a video's file."""
    return VideoCaps(max_bytes=settings.video.max_bytes, max_seconds=settings.video.max_seconds)


def inbox_folder(inbox: str) -> Path:
    """The folder of the local inbox: the inbox itself, or the folder of a .jsonl inbox."""
    path = Path(inbox)
    return path.parent if path.suffix == ".jsonl" or path.is_file() else path


def _required(section: str, what: str, **values: str | SecretStr | None) -> dict[str, str]:
    """`values` as plain stripped text, or a ConfigError that names every unset variable (and
    never a value)."""
    plain = {
        key: (value.get_secret_value() if isinstance(value, SecretStr) else value or "").strip()
        for key, value in values.items()
    }
    missing = [FLAT_ENV[section, key][0] for key, value in plain.items() if not value]
    if missing:
        raise ConfigError(
            f"{what} incomplete; set these environment variables: {', '.join(missing)} "
            f"(or disable the adapter: [{section}] enabled = false)"
        )
    return plain


class RuntimeConfig(BaseModel):
    workers: int = 2  # requests processed at once
    max_attempts: int = 3  # technical failures before a request is `failed`
    retry_backoff_s: float = 60.0  # doubled per attempt
    review_ttl_h: float = 24.0  # review items expire to an abstention after this
    escalation_ttl_h: float = 48.0  # an escalated item's new deadline, from its escalation
    per_user_hourly: int = 5
    global_hourly: int = 200
    reuse_days: int = 7  # a claim answered this recently is answered the same way
    ignore_bots: bool = True
    known_bots: list[str] = Field(default_factory=list)
    maintenance_interval_s: float = 30.0
    timeline_interval_s: float = 3600.0  # authority timelines pulled this often
    # Memory learning (memory mode "learn"): new moderator actions and judged decisions are
    # distilled this often (0: never; `factnote memory learn` still does it by hand), judging
    # at most memory_judge_per_run new decisions each time (an LLM call each; 0: none).
    memory_learn_interval_s: float = Field(default=3600.0, ge=0)
    memory_judge_per_run: int = Field(default=20, ge=0)
    # A database locked by another process past the busy timeout: runs of a step before
    # giving up (one line, no traceback), waiting db_lock_backoff_s doubled between them.
    db_lock_attempts: int = Field(default=5, ge=1)
    db_lock_backoff_s: float = Field(default=1.0, ge=0)
    # A summons older than this when it is triaged is recorded as skipped, not answered: a
    # first run or a backlog after downtime must not answer old mentions. 0 or None: no limit.
    max_summons_age_s: float | None = Field(default=21600.0, ge=0)
    # A worker holds a request it is checking for this long and renews the hold (a heartbeat)
    # every third of it; a hold that runs out means the worker died, and the request is run
    # again by another. Longer than the slowest database pause, shorter than users will wait.
    lease_s: float = Field(default=60.0, gt=0)
    # One check's total time: past it the request fails, naming the stage (pipeline.web.deadline).
    check_deadline_s: float = Field(default=600.0, gt=0)


class QueueConfig(BaseModel):
    """Where queued requests wait for a worker. "local": the bot's own thread pool claims them
    from the requests table (the embedded default, SQLite or PostgreSQL). "procrastinate"
    (PostgreSQL only): `factnote run` polls and enqueues, and any number of `factnote worker`
    processes, on any machine, run the checks (bot/ops/queue.py)."""

    backend: Literal["local", "procrastinate"] = "local"
    concurrency: int = Field(default=4, ge=1)  # requests one `factnote worker` runs at once
    # A worker's heartbeat, and how long without one before its jobs are run again elsewhere.
    heartbeat_s: float = Field(default=10.0, gt=0)
    stalled_after_s: float = Field(default=30.0, gt=0)
    recover_every_s: int = Field(default=15, ge=1, le=59)  # stalled jobs and expired leases
    # On SIGTERM, a worker waits this long for the requests it runs before it stops them.
    shutdown_timeout_s: float = Field(default=150.0, ge=0)
    # Many `factnote run` instances: the one holding the leader lock polls; the others try to
    # take it over this often.
    leader_retry_s: float = Field(default=2.0, gt=0)


class HealthConfig(BaseModel):
    """`python -m bot.ops.healthcheck` (the Docker HEALTHCHECK): the review app's health URL, and
    for a bot without the web app, how recent its last poll must be."""

    url: str = "http://127.0.0.1:8000/healthz"
    max_poll_age_s: float = Field(default=3600.0, gt=0)


class WebConfig(BaseModel):
    """The review app (`factnote serve`). Its secrets come from the environment only:
    FACTNOTE_WEB_SECRET (or FACTNOTE_WEB__SECRET) and FACTNOTE_WEB__METRICS_TOKEN."""

    secret: SecretStr | None = None  # signs session cookies; unset: random per process
    secure_cookies: bool | None = None  # Secure flag; unset: when the request came over HTTPS
    # Reverse proxies (IPs or networks) whose X-Forwarded-For/-Proto are believed; none: ignored.
    trusted_proxies: list[str] = Field(default_factory=list)
    metrics_token: SecretStr | None = None  # bearer token for /metrics; unset: loopback only
    login_max_failures: int = Field(default=5, ge=1)  # per account name, within the window
    login_address_max_failures: int = Field(default=20, ge=1)  # per client address
    login_window_s: float = Field(default=900.0, gt=0)
    login_lockout_s: float = Field(default=300.0, gt=0)  # first lockout; doubled each time
    login_lockout_max_s: float = Field(default=3600.0, gt=0)


class ClaimSyncConfig(BaseModel):
    """`factnote claims sync`, and the running bot's leader every `interval_s`: fact-checks
    from the Google Fact Check Tools API (one `claims:search` per query and per publisher
    site) and from ClaimReview feed dumps (the Data Commons feed's JSON-LD), into the claim
    index. The API key comes from the environment only (FACTNOTE_FACTCHECK_API_KEY)."""

    interval_s: float = Field(default=0.0, ge=0)  # 0: the bot never syncs on its own
    api_key: SecretStr | None = None
    api_url: str = "https://factchecktools.googleapis.com/v1alpha1/claims:search"
    queries: list[str] = Field(default_factory=list)  # `query`, one search each
    publishers: list[str] = Field(default_factory=list)  # `reviewPublisherSiteFilter`, each
    language: str = ""  # `languageCode` of every search ("": any)
    # A search's first sync reads this many days back; later ones only what is newer.
    max_age_days: int = Field(default=30, ge=1)
    page_size: int = Field(default=100, ge=1, le=1000)
    # Pages read per search and run; a search cut short keeps its cursor for the next run.
    max_pages: int = Field(default=20, ge=1)
    timeout_s: float = Field(default=30.0, gt=0)
    feeds: list[str] = Field(default_factory=list)  # feed dump files or http(s) URLs
    feed_max_bytes: int = Field(default=500_000_000, ge=1)


class _FlatEnv(PydanticBaseSettingsSource):
    """The names of `FLAT_ENV`, as the nested values they stand for. Case does not matter, as
    for the other environment variables."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: `__call__` reads the whole table at once

    def __call__(self) -> dict[str, Any]:
        env = {name.lower(): value for name, value in os.environ.items()}
        found: dict[str, dict[str, str]] = {}
        for (section, key), names in FLAT_ENV.items():
            value = next((env[n.lower()] for n in names if env.get(n.lower(), "").strip()), None)
            if value is not None:
                found.setdefault(section, {})[key] = value
        return found


class Settings(BaseSettings, PipelineConfig):
    """The pipeline's sections (inherited from `PipelineConfig`) and the bot's own."""

    model_config = SettingsConfigDict(
        env_prefix="FACTNOTE_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    database_url: str = "sqlite:///data/factnote.db"
    database_busy_timeout_s: float = Field(default=30.0, gt=0)  # SQLite waits this for a lock
    data_dir: str = "data"
    # The local search index is a table of the main database; this is the side file of a
    # deployment from before, which `factnote db import-side-files` reads.
    index_path: str = "data/index.sqlite"
    mode: Mode = "dry-run"

    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    queue: QueueConfig = Field(default_factory=QueueConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    health: HealthConfig = Field(default_factory=HealthConfig)
    local: LocalAdapterConfig = Field(default_factory=LocalAdapterConfig)
    x: XAdapterConfig = Field(default_factory=XAdapterConfig)
    bluesky: BlueskyAdapterConfig = Field(default_factory=BlueskyAdapterConfig)
    x_notes: XNotesAdapterConfig = Field(default_factory=XNotesAdapterConfig)
    claim_sync: ClaimSyncConfig = Field(default_factory=ClaimSyncConfig)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources = [init_settings, _FlatEnv(settings_cls), env_settings]
        toml_path = _config_path()
        if toml_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    @field_validator("database_url")
    @classmethod
    def _supported_database(cls, url: str) -> str:
        # A ConfigError is not a ValueError: pydantic lets it through as is, one line.
        return check_database_url(url)

    @model_validator(mode="after")
    def _images_follow_the_inbox(self) -> Settings:
        # One inbox: local image names are read from the local adapter's inbox folder unless
        # [images] local_dir says otherwise (an operator who moves the inbox moves both).
        if self.images.local_dir is None:  # a copy: the section may be a caller's object
            folder = str(inbox_folder(self.local.inbox))
            self.images = self.images.model_copy(update={"local_dir": folder})
        return self

    def pipeline(self) -> PipelineConfig:
        """The pipeline's sections of these settings: the same section objects, not copies."""
        return PipelineConfig.model_construct(
            **{name: getattr(self, name) for name in PipelineConfig.model_fields}
        )

    def adapter_section(self, adapter: str) -> AdapterConfig | None:
        """The `[adapter]` section of a platform adapter (`bot/platforms.py`), or None."""
        section = getattr(self, adapter, None) if adapter in type(self).model_fields else None
        return section if isinstance(section, AdapterConfig) else None

    def adapter_mode(self, adapter: str) -> Mode:
        section = self.adapter_section(adapter)
        return section.mode if section is not None and section.mode else self.mode

    def secret_values(self) -> list[str]:
        """Every secret set (each `SecretStr` field, and the database URL's password), longest
        first: the values that must never reach a log line."""
        found = {value for value in _secrets_of(self) if value}
        password = urlsplit(self.database_url).password
        if password:
            found.add(password)
        return sorted(found, key=len, reverse=True)


def _secrets_of(model: BaseModel) -> Iterator[str]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            yield value.get_secret_value()
        elif isinstance(value, BaseModel):
            yield from _secrets_of(value)


_explicit_config: Path | None = None


def _config_path() -> Path | None:
    raw = _explicit_config or os.environ.get("FACTNOTE_CONFIG")
    if not raw:
        return None
    path = Path(raw)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    _check_file(path)
    return path


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The text of a config file and what it parses to; a ConfigError of one line that names
    the file and line of a syntax error."""
    text = path.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = re.search(r" \(at line (\d+), column (\d+)\)$", message)
        if at is None:
            raise ConfigError(f"{path}: invalid TOML: {message}") from None
        reason = message[: at.start()]
        raise ConfigError(
            f"{path}:{at.group(1)}: invalid TOML: {reason} (column {at.group(2)})"
        ) from None


def _check_file(path: Path) -> None:
    """Refuse a config file that sets a secret (named, never echoed) or a key or section no
    setting has (one line each, with the closest known name)."""
    text, data = read_toml(path)
    found = _secret_keys(data, Settings, "")
    if found:
        raise ConfigError(
            f"{path}: secrets must come from environment variables, not the config file "
            f"(found {', '.join(found)}); use FACTNOTE_* variables instead"
        )
    unknown = unknown_key_lines(path, text, data, Settings)
    if unknown:
        raise ConfigError("\n".join(unknown))


def environment_warnings() -> list[str]:
    """One line per FACTNOTE_* environment variable no setting (nor other reader) knows."""
    flat = [name for names in FLAT_ENV.values() for name in names]
    return unknown_environment(os.environ, Settings, flat)


def _secret_keys(data: Mapping[str, Any], model: type[BaseModel] | None, prefix: str) -> list[str]:
    """The dotted keys of `data` that set a secret: a `SecretStr` field of `model`, or (for a
    key `model` does not have) a key whose name says it is one."""
    keys: list[str] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        field = model.model_fields.get(key) if model is not None else None
        if field is None:
            if isinstance(value, dict):
                keys.extend(_secret_keys(value, None, name + "."))
            elif value and any(marker in key.lower() for marker in _SECRET_MARKERS):
                keys.append(name)
            continue
        section = _section_model(field)
        if section is not None and isinstance(value, dict):
            keys.extend(_secret_keys(value, section, name + "."))
        elif value and SecretStr in (field.annotation, *get_args(field.annotation)):
            keys.append(name)
    return keys


def _section_model(field: FieldInfo) -> type[BaseModel] | None:
    kind = field.annotation
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Load settings; `config_file` wins over FACTNOTE_CONFIG."""
    global _explicit_config
    _explicit_config = Path(config_file) if config_file else None
    try:
        return Settings(**overrides)
    finally:
        _explicit_config = None


def environment() -> Mapping[str, str]:
    """The process environment, for the few readers that must see it before (or besides) the
    settings: the log redaction of secret values. Kept here so that this module stays the
    one place that reads it."""
    return os.environ
