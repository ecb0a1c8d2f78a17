"""All configuration, in one place: a TOML file plus FACTNOTE_* environment variables.

Precedence (highest first): values passed in code, environment, the TOML file, defaults.
Nested sections use `__` in environment names (`FACTNOTE_SEARCH__SERPER_API_KEY`); the most used
settings also have flat names (`FACTNOTE_LLM_MODEL`, `FACTNOTE_DATABASE_URL`). Secrets are read
from the environment only: a TOML file that contains one is refused, so config files can be
committed and shared without leaking keys.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from pipeline.config import (
    AuthorityConfig,
    ClaimsConfig,
    CredibilityConfig,
    FetchConfig,
    GuardConfig,
    LLMConfig,
    PipelineConfig,
    RelevanceConfig,
    ResearchConfig,
    SearchConfig,
)

Mode = Literal["dry-run", "review", "live"]
_SECRET_MARKERS = ("api_key", "password", "secret", "token", "app_password")


class ConfigError(Exception):
    pass


class AdapterConfig(BaseModel):
    enabled: bool = False
    mode: Mode | None = None  # per-adapter override of the global mode
    poll_interval_s: float = 60.0
    bot_handle: str = "factnote"  # our own account, for loop prevention


class LocalAdapterConfig(AdapterConfig):
    enabled: bool = True
    inbox: str = "examples/inbox"
    outbox: str = "data/outbox.jsonl"
    poll_interval_s: float = 5.0


class BlueskyAdapterConfig(AdapterConfig):
    session_path: str = "data/bluesky.session"
    # Notifications sort by min(createdAt, indexedAt): each poll reads this far behind its cursor.
    notification_overlap_s: float = Field(default=600.0, ge=0)


# The least time between two X mention reads per plan: pay-per-use bills each read (one a
# minute is plenty); the legacy Free plan allows one mentions request per 15 minutes.
X_PLAN_MIN_POLL_S = {"pay-per-use": 60.0, "free": 900.0}


class XAdapterConfig(AdapterConfig):
    plan: Literal["pay-per-use", "free"] = "pay-per-use"
    # Unset: the plan's minimum. Lower than that is refused.

    @model_validator(mode="before")
    @classmethod
    def _plan_default_interval(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("poll_interval_s") is None:
            plan = data.get("plan", "pay-per-use")
            data = {**data, "poll_interval_s": X_PLAN_MIN_POLL_S.get(plan, 60.0)}
        return data

    @model_validator(mode="after")
    def _plan_floor(self) -> XAdapterConfig:
        floor = X_PLAN_MIN_POLL_S[self.plan]
        if self.poll_interval_s < floor:
            raise ValueError(
                f"x.poll_interval_s is {self.poll_interval_s:g} s; the {self.plan} plan needs "
                f"at least {floor:g} s between mention reads"
            )
        return self


class RuntimeConfig(BaseModel):
    workers: int = 2  # requests processed at once
    max_attempts: int = 3  # technical failures before a request is `failed`
    retry_backoff_s: float = 60.0  # doubled per attempt
    review_ttl_h: float = 24.0  # review items expire to an abstention after this
    per_user_hourly: int = 5
    global_hourly: int = 200
    reuse_days: int = 7  # a claim answered this recently is answered the same way
    ignore_bots: bool = True
    known_bots: list[str] = Field(default_factory=list)
    maintenance_interval_s: float = 30.0
    timeline_interval_s: float = 3600.0  # authority timelines pulled this often
    # A database locked by another process past the busy timeout: runs of a step before
    # giving up (one line, no traceback), waiting db_lock_backoff_s doubled between them.
    db_lock_attempts: int = Field(default=5, ge=1)
    db_lock_backoff_s: float = Field(default=1.0, ge=0)
    # A summons older than this when it is triaged is recorded as skipped, not answered: a
    # first run or a backlog after downtime must not answer old mentions. 0 or None: no limit.
    max_summons_age_s: float | None = Field(default=21600.0, ge=0)


class WebConfig(BaseModel):
    """The review app (`factnote serve`). Its secrets come from the environment only:
    FACTNOTE_WEB__SECRET (or FACTNOTE_WEB_SECRET) and FACTNOTE_WEB__METRICS_TOKEN."""

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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FACTNOTE_",
        env_nested_delimiter="__",
        extra="ignore",
        populate_by_name=True,
    )

    database_url: str = "sqlite:///data/factnote.db"
    database_busy_timeout_s: float = Field(default=30.0, gt=0)  # SQLite waits this for a lock
    data_dir: str = "data"
    index_path: str = "data/index.sqlite"
    mode: Mode = "dry-run"

    # Flat names for the LLM endpoint; OPENAI_* are honoured too. They override [llm].
    llm_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("FACTNOTE_LLM_BASE_URL", "OPENAI_BASE_URL")
    )
    llm_model: str | None = Field(
        default=None, validation_alias=AliasChoices("FACTNOTE_LLM_MODEL", "OPENAI_MODEL")
    )
    llm_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("FACTNOTE_LLM_API_KEY", "OPENAI_API_KEY")
    )

    llm: LLMConfig = Field(default_factory=LLMConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    relevance: RelevanceConfig = Field(default_factory=RelevanceConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    guard: GuardConfig = Field(default_factory=GuardConfig)
    credibility: CredibilityConfig = Field(default_factory=CredibilityConfig)
    claims: ClaimsConfig = Field(default_factory=ClaimsConfig)
    authority: AuthorityConfig = Field(default_factory=AuthorityConfig)
    local: LocalAdapterConfig = Field(
        default_factory=LocalAdapterConfig,
        validation_alias=AliasChoices("local", "FACTNOTE_LOCAL"),
    )
    local_inbox: str | None = Field(
        default=None, validation_alias=AliasChoices("FACTNOTE_LOCAL_INBOX", "local_inbox")
    )
    local_outbox: str | None = Field(
        default=None, validation_alias=AliasChoices("FACTNOTE_LOCAL_OUTBOX", "local_outbox")
    )

    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    x: XAdapterConfig = Field(default_factory=XAdapterConfig)
    bluesky: BlueskyAdapterConfig = Field(default_factory=BlueskyAdapterConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    web_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("FACTNOTE_WEB_SECRET", "web_secret")
    )
    web_secure_cookies: bool | None = Field(
        default=None,
        validation_alias=AliasChoices("FACTNOTE_WEB_SECURE_COOKIES", "web_secure_cookies"),
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml_path = _config_path()
        if toml_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    def pipeline(self) -> PipelineConfig:
        """The pipeline's typed view of these settings, flat LLM names applied."""
        llm = self.llm.model_copy()
        if self.llm_base_url:
            llm.base_url = self.llm_base_url
        if self.llm_model:
            llm.model = self.llm_model
        if self.llm_api_key:
            llm.api_key = self.llm_api_key
        return PipelineConfig(
            llm=llm,
            search=self.search,
            fetch=self.fetch,
            relevance=self.relevance,
            research=self.research,
            guard=self.guard,
            credibility=self.credibility,
            claims=self.claims,
            authority=self.authority,
        )

    def adapter_section(self, adapter: str) -> AdapterConfig | None:
        """The `[adapter]` section of a platform adapter (`bot/platforms.py`), or None."""
        section = getattr(self, adapter, None) if adapter in type(self).model_fields else None
        return section if isinstance(section, AdapterConfig) else None

    def adapter_mode(self, adapter: str) -> Mode:
        section = self.adapter_section(adapter)
        return section.mode if section is not None and section.mode else self.mode

    def web_config(self) -> WebConfig:
        """The review app's settings, flat FACTNOTE_WEB_SECRET/_SECURE_COOKIES applied."""
        web = self.web.model_copy()
        if self.web_secret:
            web.secret = self.web_secret
        if self.web_secure_cookies is not None:
            web.secure_cookies = self.web_secure_cookies
        return web

    @property
    def inbox(self) -> str:
        return self.local_inbox or self.local.inbox

    @property
    def outbox(self) -> str:
        return self.local_outbox or self.local.outbox


_explicit_config: Path | None = None


def _config_path() -> Path | None:
    raw = _explicit_config or os.environ.get("FACTNOTE_CONFIG")
    if not raw:
        return None
    path = Path(raw)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    _refuse_secrets(path)
    return path


def _refuse_secrets(path: Path) -> None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    found = list(_secret_keys(data, ""))
    if found:
        raise ConfigError(
            f"{path}: secrets must come from environment variables, not the config file "
            f"(found {', '.join(found)}); use FACTNOTE_* variables instead"
        )


def _secret_keys(data: dict[str, Any], prefix: str) -> list[str]:
    keys: list[str] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            keys.extend(_secret_keys(value, name + "."))
        elif any(marker in key.lower() for marker in _SECRET_MARKERS) and value:
            keys.append(name)
    return keys


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Load settings; `config_file` wins over FACTNOTE_CONFIG."""
    global _explicit_config
    _explicit_config = Path(config_file) if config_file else None
    try:
        return Settings(**overrides)
    finally:
        _explicit_config = None
