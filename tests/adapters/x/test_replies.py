"""X replies out: to the mention itself, with X's refusals and rate limits as typed errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import responses

from adapters.base import (
    AccessDenied,
    DuplicateReply,
    PlatformError,
    RateLimited,
    ReplyForbidden,
)
from tests.adapters.x.helpers import (
    DUPLICATE_CONTENT,
    NOT_ENROLLED,
    NOT_VISIBLE,
    OVERLOADED,
    POST,
    PROBLEM,
    READ_ONLY_TOKEN,
    REPLY_RULE,
    TOO_MANY,
    Sleeps,
    adapter,
    daily_limits,
    fixture,
    forbidden,
    limits,
    path,
    summons,
)

# The access level does not include the endpoint (v1.1-style error list, code 453).
ACCESS_LEVEL = {
    "errors": [
        {
            "message": "You currently have access to a subset of X API V2 endpoints and limited "
            "v1.1 endpoints only. If you need access to this endpoint, you may need a different "
            "access level.",
            "code": 453,
        }
    ]
}


# --- post_reply ---------------------------------------------------------------------------------


def test_post_reply_answers_the_mention_never_the_parent(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(POST, status=201, json=fixture("create_tweet"))

    receipt = adapter(sleeps).post_reply(summons(), "The photo is from 2019: https://example.org")

    call = api.calls[0]
    assert path(call) == "/2/tweets"
    assert json.loads(call.request.body or b"") == {
        "text": "The photo is from 2019: https://example.org",
        "reply": {"in_reply_to_tweet_id": "1897000000000000103"},
    }
    auth = call.request.headers["Authorization"]
    assert auth.startswith("OAuth ")  # posted as the bot (user context), not the app
    assert 'oauth_consumer_key="consumer-key-secret-0002"' in auth
    assert receipt.reply_id == "2028425079813046272"
    assert receipt.url == "https://x.com/factnote/status/2028425079813046272"
    assert receipt.posted_at == datetime(2026, 3, 2, 11, 0, tzinfo=UTC)  # from the snowflake id


def test_duplicate_content_is_duplicate_reply(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden(DUPLICATE_CONTENT))

    with pytest.raises(DuplicateReply) as err:
        adapter(sleeps).post_reply(summons(), "same text again")

    assert not err.value.retryable
    assert len(api.calls) == 1


def test_the_reply_rule_refusal_is_reply_forbidden(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden(REPLY_RULE))

    with pytest.raises(ReplyForbidden) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert not isinstance(err.value, DuplicateReply)
    assert err.value.status == 403 and not err.value.retryable
    assert "not allowed" in str(err.value)


@pytest.mark.parametrize(
    "body",
    [
        NOT_ENROLLED,
        READ_ONLY_TOKEN,
        # X's v1.1-style error list, outside the v2 spec's problem shapes.
        pytest.param(ACCESS_LEVEL, marks=pytest.mark.off_spec("X's code 453 error list")),
    ],
    ids=["project", "read-only", "level"],
)
def test_a_permission_refusal_stops_posting_without_ending_the_request(
    api: responses.RequestsMock, sleeps: Sleeps, body: dict[str, Any]
) -> None:
    api.post(POST, status=403, content_type=PROBLEM, json=body)
    x = adapter(sleeps)

    with pytest.raises(AccessDenied) as first:
        x.post_reply(summons(), "hello")
    with pytest.raises(AccessDenied):
        x.post_reply(summons("1897000000000000104"), "another")

    assert first.value.retryable  # the request waits; it is not the request's fault
    assert x.posting_halted is not None
    assert len(api.calls) == 1  # stopped: the second reply never reached X


def test_an_unexplained_403_on_posting_stops_posting_too(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden("Forbidden"))
    x = adapter(sleeps)

    with pytest.raises(AccessDenied):
        x.post_reply(summons(), "hello")

    assert x.posting_halted is not None


def test_a_reply_settings_refusal_ends_only_that_request(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden(NOT_VISIBLE))
    api.post(POST, status=201, json=fixture("create_tweet"))
    x = adapter(sleeps)

    with pytest.raises(ReplyForbidden):
        x.post_reply(summons(), "hello")
    receipt = x.post_reply(summons("1897000000000000104"), "hello")

    assert x.posting_halted is None
    assert receipt.reply_id == "2028425079813046272"


def test_rate_limited_reply_raises_with_header_reset(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(
        POST, status=429, content_type=PROBLEM, json=TOO_MANY, headers=limits(100, 0, 1772450100)
    )

    with pytest.raises(RateLimited) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert err.value.reset_at == datetime(2026, 3, 2, 11, 15, tzinfo=UTC)
    assert sleeps == [] and len(api.calls) == 1


def test_rate_limited_by_the_daily_cap_waits_for_the_daily_reset(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    headers = {**limits(100, 42, 1772450100), **daily_limits(10000, 0, 1772496000)}
    api.post(POST, status=429, content_type=PROBLEM, json=TOO_MANY, headers=headers)

    with pytest.raises(RateLimited) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert err.value.reset_at == datetime(2026, 3, 3, 0, 0, tzinfo=UTC)


def test_server_error_is_retried_then_the_reply_succeeds(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(POST, status=503, content_type=PROBLEM, json=OVERLOADED)
    api.post(POST, status=201, json=fixture("create_tweet"))

    receipt = adapter(sleeps).post_reply(summons(), "hello")

    assert receipt.reply_id == "2028425079813046272"
    assert len(api.calls) == 2
    assert sleeps == [1.0]


def test_persistent_server_errors_end_in_a_retryable_error(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    for _ in range(3):
        api.post(POST, status=503, content_type=PROBLEM, json=OVERLOADED)

    with pytest.raises(PlatformError) as err:
        adapter(sleeps, server_retries=2).post_reply(summons(), "hello")

    assert type(err.value) is PlatformError
    assert err.value.retryable and err.value.status == 503
    assert len(api.calls) == 3
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize(
    ("status", "title"), [(400, "Invalid Request"), (401, "Unauthorized"), (404, "Not Found")]
)
def test_client_errors_are_not_retried(
    api: responses.RequestsMock, sleeps: Sleeps, status: int, title: str
) -> None:
    api.post(
        POST,
        status=status,
        content_type=PROBLEM,
        json={"title": title, "type": "about:blank", "detail": title, "status": status},
    )

    with pytest.raises(PlatformError) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert type(err.value) is PlatformError
    assert not err.value.retryable and err.value.status == status
    assert len(api.calls) == 1 and sleeps == []


def test_post_reply_refuses_a_summons_from_another_platform(sleeps: Sleeps) -> None:
    other = summons().model_copy(update={"platform": "bluesky"})

    with pytest.raises(ValueError, match="bluesky"):
        adapter(sleeps).post_reply(other, "hello")
