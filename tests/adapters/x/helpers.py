"""The X adapter tests' shared world: a real `tweepy.Client`, only the X API's answers fake.

`responses` stands in for the X API at the transport (requests' HTTPAdapter), answering with
response bodies written in the API v2 shapes (`tests/fixtures/x/`). Every test checks what the
real client actually sent: path, query parameters, auth scheme and JSON body.

Where the shapes come from (tests/fixtures/x/SOURCES.md lists each file): X's API v2 OpenAPI
spec (https://api.x.com/2/openapi.json: Get2UsersIdMentionsResponse, Tweet with
display_text_range and entities.mentions, Expansions, Problem with type/title/detail, and the
ClientForbiddenProblem with reason/registration_url/required_enrollment) and X's documented
403 texts for posting (duplicate content, the reply rule of 2026-02-23, OAuth 1.0a app
permissions). tweepy's own client turns them into exceptions (tweepy/client.py `request`,
tweepy/errors.py: Forbidden keeps the body in `response` and `api_codes`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from adapters.base import (
    Summons,
)
from adapters.x.adapter import XAdapter
from adapters.x.client import XCredentials

API = "https://api.twitter.com/2"
BOT_ID = "1500000000000000001"
MENTIONS = f"{API}/users/{BOT_ID}/mentions"
BOT_TWEETS = f"{API}/users/{BOT_ID}/tweets"
POST = f"{API}/tweets"
# X API v2 sends its errors as RFC 7807 problems: this media type, with `type` and `title`
# required (both specs' `default` answers; `about:blank` is spec 2.159's GenericProblem).
PROBLEM = "application/problem+json"
# The 429 body X API v2 sends; the reset time comes in the headers.
TOO_MANY = {
    "title": "Too Many Requests",
    "type": "about:blank",
    "detail": "Too Many Requests",
    "status": 429,
}
# The 503 body X API v2 sends when it is overloaded.
OVERLOADED = {"title": "Service Unavailable", "type": "about:blank", "detail": "Overloaded"}
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "x"
NEXT_TOKEN = "7140dibdnow9c7btw3w29grvxfcgvpb9n9coehpk7xz5i"

SECRETS = {
    "FACTNOTE_X_BEARER_TOKEN": "AAAAbearer-secret-value-0001",
    "FACTNOTE_X_CONSUMER_KEY": "consumer-key-secret-0002",
    "FACTNOTE_X_CONSUMER_SECRET": "consumer-secret-secret-0003",
    "FACTNOTE_X_ACCESS_TOKEN": f"{BOT_ID}-access-token-secret-0004",
    "FACTNOTE_X_ACCESS_TOKEN_SECRET": "access-token-secret-secret-0005",
}
# As `bot.config` builds them from those variables (tests/bot/test_config.py pins that).
CREDS = XCredentials(
    bearer_token=SECRETS["FACTNOTE_X_BEARER_TOKEN"],
    consumer_key=SECRETS["FACTNOTE_X_CONSUMER_KEY"],
    consumer_secret=SECRETS["FACTNOTE_X_CONSUMER_SECRET"],
    access_token=SECRETS["FACTNOTE_X_ACCESS_TOKEN"],
    access_token_secret=SECRETS["FACTNOTE_X_ACCESS_TOKEN_SECRET"],
    bot_user_id=BOT_ID,
    bot_username="factnote",
)


def fixture(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(body, dict)
    return body


def query(call: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(call.request.url).query).items()}


def path(call: Any) -> str:
    return urlsplit(call.request.url).path


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def adapter(sleeps: Sleeps, **kwargs: Any) -> XAdapter:
    return XAdapter(CREDS, sleep=sleeps, **kwargs)


def summons(mention_id: str = "1897000000000000103", **kwargs: Any) -> Summons:
    return Summons(
        platform="x",
        id=mention_id,
        author="erin",
        text="@bob @factnote is this photo real?",
        created_at=datetime(2026, 3, 2, 10, 28, tzinfo=UTC),
        parent_id="1897000000000000040",
        **kwargs,
    )


def limits(limit: int, remaining: int, reset: int) -> dict[str, str]:
    """The rate-limit headers X API v2 sends on every answer: the endpoint's window (`reset` in
    epoch seconds)."""
    return {
        "x-rate-limit-limit": str(limit),
        "x-rate-limit-remaining": str(remaining),
        "x-rate-limit-reset": str(reset),
    }


def daily_limits(limit: int, remaining: int, reset: int) -> dict[str, str]:
    """The headers of the per-user 24-hour cap on posting, which X sends beside `limits`."""
    return {
        "x-user-limit-24hour-limit": str(limit),
        "x-user-limit-24hour-remaining": str(remaining),
        "x-user-limit-24hour-reset": str(reset),
    }


def forbidden(detail: str) -> dict[str, Any]:
    """A 403 as X API v2 sends it: an RFC 7807 problem (title, type, status, detail)."""
    return {"title": "Forbidden", "type": "about:blank", "status": 403, "detail": detail}


# X's documented 403 details for a reply it refuses: the text repeats one of ours; the reply rule
# of 2026-02-23 (the author never mentioned us); the post is gone or hidden from us.
DUPLICATE_CONTENT = "You are not allowed to create a Tweet with duplicate content."
REPLY_RULE = (
    "Reply to this conversation is not allowed because you have not been mentioned or otherwise "
    "engaged by the author of the post you are replying to."
)
NOT_VISIBLE = "You attempted to reply to a Tweet that is deleted or not visible to you."
# The 403 X sends to an app outside a Project (OpenAPI ClientForbiddenProblem).
NOT_ENROLLED = {
    "client_id": "29384756",
    "detail": "When authenticating requests to the Twitter API v2 endpoints, you must use keys "
    "and tokens from a Twitter developer App that is attached to a Project. You can create a "
    "project via the developer portal.",
    "registration_url": "https://developer.twitter.com/en/docs/projects/overview",
    "title": "Client Forbidden",
    "required_enrollment": "Appropriate Level of API Access",
    "reason": "client-not-enrolled",
    "type": "https://api.twitter.com/2/problems/client-forbidden",
}
# A token from an app whose user authentication settings are "Read" only.
READ_ONLY_TOKEN = {
    "title": "Forbidden",
    "type": "about:blank",
    "status": 403,
    "detail": "Your client app is not configured with the appropriate oauth1 app permissions "
    "for this endpoint.",
}
