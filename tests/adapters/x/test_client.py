"""X credentials, secrets out of logs, the adapter interface and the poll interval."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import responses

from adapters.base import (
    Adapter,
)
from tests.adapters.x.helpers import (
    BOT_ID,
    CREDS,
    MENTIONS,
    SECRETS,
    Sleeps,
    adapter,
    fixture,
)

# --- credentials, secrets, interface ------------------------------------------------------------


def test_credentials_keep_their_secrets_out_of_repr() -> None:
    assert BOT_ID in repr(CREDS)
    assert not any(secret in repr(CREDS) for secret in SECRETS.values())


def test_bearer_token_never_reaches_the_logs(
    api: responses.RequestsMock, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    api.get(MENTIONS, json=fixture("mentions_empty"))

    with caplog.at_level(logging.DEBUG):
        adapter(sleeps).fetch_summons(None)

    assert "Making API request" in caplog.text  # tweepy did log the request...
    assert SECRETS["FACTNOTE_X_BEARER_TOKEN"] not in caplog.text  # ...without the token


def test_the_adapter_implements_the_interface(sleeps: Sleeps) -> None:
    x = adapter(sleeps)
    assert isinstance(x, Adapter)
    assert x.name == "x"


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "interval"),
    [
        ({}, 60.0),
        ({"plan": "free"}, 900.0),
        ({"plan": "pay-per-use", "poll_interval_s": 120}, 120.0),
    ],
)
def test_the_poll_interval_defaults_to_the_plan_minimum(
    section: dict[str, Any], interval: float
) -> None:
    from bot.config import Settings

    assert Settings(x=section).x.poll_interval_s == interval


def test_polling_faster_than_the_plan_allows_is_refused() -> None:
    from pydantic import ValidationError

    from bot.config import Settings

    with pytest.raises(ValidationError, match="900"):
        Settings(x={"plan": "free", "poll_interval_s": 60})
