"""The `[x]` section of the settings: the plan, the bot's app and account, posting limits."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator

from adapters.base import AdapterConfig

# The least time between two X mention reads per plan: pay-per-use bills each read (one a
# minute is plenty); the legacy Free plan allows one mentions request per 15 minutes.
X_PLAN_MIN_POLL_S = {"pay-per-use": 60.0, "free": 900.0}


class XAdapterConfig(AdapterConfig):
    plan: Literal["pay-per-use", "free"] = "pay-per-use"
    # poll_interval_s unset: the plan's minimum. Lower than that is refused.
    # The bot's X app and account (FACTNOTE_X_*). The bearer token is kept but not used.
    bearer_token: SecretStr | None = None
    consumer_key: SecretStr | None = None
    consumer_secret: SecretStr | None = None
    access_token: SecretStr | None = None
    access_token_secret: SecretStr | None = None
    bot_user_id: str | None = None
    bot_username: str | None = None
    # Reply-rule refusals in a row after which posting stops until restart.
    max_reply_refusals: int = Field(default=5, ge=1)

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
