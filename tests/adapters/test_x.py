"""The X adapter drives a real `tweepy.Client`; only the HTTP answers from api.twitter.com are fake.

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
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import responses
import tweepy
from sqlalchemy import select

from adapters.base import (
    MAX_TEXT_CHARS,
    AccessDenied,
    Adapter,
    DuplicateReply,
    PlatformError,
    RateLimited,
    ReplyForbidden,
    Summons,
    TargetStatus,
)
from adapters.x import XAdapter, XCredentials, XCredentialsError
from storage.db import Database
from storage.models import Cursor
from storage.models import Request as RequestRow

API = "https://api.twitter.com/2"
BOT_ID = "1500000000000000001"
MENTIONS = f"{API}/users/{BOT_ID}/mentions"
BOT_TWEETS = f"{API}/users/{BOT_ID}/tweets"
POST = f"{API}/tweets"
# The 429 body X API v2 sends (an RFC 7807 problem); the reset time comes in the headers.
TOO_MANY = {"title": "Too Many Requests", "detail": "Too Many Requests", "status": 429}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "x"
NEXT_TOKEN = "7140dibdnow9c7btw3w29grvxfcgvpb9n9coehpk7xz5i"

MENTION_QUERY = {
    "max_results": "100",
    "expansions": "author_id,referenced_tweets.id,referenced_tweets.id.author_id,"
    "in_reply_to_user_id,attachments.media_keys,referenced_tweets.id.attachments.media_keys",
    "tweet.fields": "created_at,display_text_range,author_id,conversation_id,in_reply_to_user_id,"
    "referenced_tweets,attachments,entities,lang,note_tweet,withheld",
    "media.fields": "url,preview_image_url,alt_text,type",
    "user.fields": "username",
}

SECRETS = {
    "FACTNOTE_X_BEARER_TOKEN": "AAAAbearer-secret-value-0001",
    "FACTNOTE_X_CONSUMER_KEY": "consumer-key-secret-0002",
    "FACTNOTE_X_CONSUMER_SECRET": "consumer-secret-secret-0003",
    "FACTNOTE_X_ACCESS_TOKEN": f"{BOT_ID}-access-token-secret-0004",
    "FACTNOTE_X_ACCESS_TOKEN_SECRET": "access-token-secret-secret-0005",
}
ENV = {**SECRETS, "FACTNOTE_X_BOT_USER_ID": BOT_ID, "FACTNOTE_X_BOT_USERNAME": "@factnote"}
CREDS = XCredentials.from_env(ENV)


def fixture(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(body, dict)
    return body


def query(call: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(call.request.url).query).items()}


def path(call: Any) -> str:
    return urlsplit(call.request.url).path


@pytest.fixture
def api() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


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


def two_pages(api: responses.RequestsMock) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))
    api.get(MENTIONS, json=fixture("mentions_page2"))


# --- fetch_summons ------------------------------------------------------------------------------


def test_fetch_asks_for_mentions_since_cursor_with_expansions_as_the_bot_user(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_loop"))

    result = adapter(sleeps).fetch_summons("1897000000000000150")

    assert len(api.calls) == 1
    call = api.calls[0]
    assert path(call) == f"/2/users/{BOT_ID}/mentions"
    assert query(call) == {**MENTION_QUERY, "since_id": "1897000000000000150"}
    # Read as the bot user (OAuth 1.0a), so the bot's own mentions are an "owned read".
    assert call.request.headers["Authorization"].startswith("OAuth ")
    assert (
        'oauth_token="' + SECRETS["FACTNOTE_X_ACCESS_TOKEN"] + '"'
        in call.request.headers["Authorization"]
    )
    # tweepy passes no timeout; the adapter's transport supplies one.
    assert call.request.req_kwargs["timeout"] == 30.0  # type: ignore[attr-defined]
    assert result.cursor == "1897000000000000202"


def test_fetch_pages_with_next_token_and_returns_oldest_first_with_newest_cursor(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    two_pages(api)

    result = adapter(sleeps).fetch_summons("1897000000000000001")

    first, second = (query(c) for c in api.calls)
    assert "pagination_token" not in first
    assert second == {
        **MENTION_QUERY,
        "since_id": "1897000000000000001",
        "pagination_token": NEXT_TOKEN,
    }
    assert [s.id for s in result.summons] == [f"1897000000000000{n}" for n in range(100, 106)]
    assert result.cursor == "1897000000000000105"
    assert all(s.platform == "x" for s in result.summons)
    assert sleeps == []


def test_fetch_without_cursor_sends_no_since_id(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_loop"))

    adapter(sleeps).fetch_summons(None)

    assert query(api.calls[0]) == MENTION_QUERY


def test_no_new_mentions_keeps_previous_cursor(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    api.get(MENTIONS, json=fixture("mentions_empty"))

    result = adapter(sleeps).fetch_summons("1897000000000000105")

    assert result.summons == []
    assert result.cursor is None


def by_id(api: responses.RequestsMock, sleeps: Sleeps, **kwargs: Any) -> dict[str, Summons]:
    two_pages(api)
    api.get(MENTIONS, json=fixture("mentions_loop"))
    x = adapter(sleeps, **kwargs)
    found = (
        x.fetch_summons("1897000000000000001").summons
        + x.fetch_summons("1897000000000000105").summons
    )
    return {s.id: s for s in found}


def test_reply_to_a_photo_post_targets_the_parent_with_its_media(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000103"]

    assert s.author == "erin" and s.author_id == "555"
    assert s.url == "https://x.com/erin/status/1897000000000000103"
    assert s.parent_id == "1897000000000000040" and s.quoted_id is None
    assert s.target_status == TargetStatus.OK
    assert s.target is not None
    assert s.target.id == "1897000000000000040"
    assert s.target.author == "bob"
    assert s.target.text.startswith("Sharks found swimming")
    assert s.target.url == "https://x.com/bob/status/1897000000000000040"
    assert [(m.url, m.kind) for m in s.target.media] == [
        ("https://pbs.twimg.com/media/GsharkAbCd.jpg", "photo")
    ]
    assert s.target.media[0].alt_text == "A shark fin in brown flood water next to a road sign"
    assert s.target.links == []  # the photo's own pic link is media, not a source
    assert s.reply_context == {"conversation_id": "1897000000000000040"}
    assert not s.replies_to_bot and not s.author_is_bot


def test_quote_targets_the_quoted_post_and_keeps_its_links(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000104"]

    assert s.quoted_id == "1897000000000000050" and s.parent_id is None
    assert s.target_status == TargetStatus.OK
    assert s.target is not None
    assert s.target.author == "carol"
    assert s.target.links == ["https://blog.example.com/water-myth"]
    assert s.target.created_at == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)


def test_long_post_reads_full_text_and_links_from_note_tweet(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000105"]

    assert s.target_status == TargetStatus.SELF
    assert s.text.endswith("I have seen it shared thousands of times.")
    assert len(s.text) > 280
    assert s.author == "dave"
    # The mention is its own target, with the links of the long text, not the truncated one.
    assert s.target is not None and s.target.id == s.id and s.target.text == s.text
    assert s.target.links == [
        "https://journal.example.org/measles-trial",
        "https://viral.example.net/summary",
    ]


def test_plain_mention_carries_the_claim_itself(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000102"]

    assert s.target_status == TargetStatus.SELF
    assert s.parent_id is None and s.quoted_id is None
    assert s.target is not None and s.target.id == s.id and s.target.author == "alice"
    assert "Great Wall of China" in s.text
    assert s.created_at == datetime(2026, 3, 2, 10, 20, tzinfo=UTC)


def test_deleted_parent_is_missing_with_the_api_detail(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000101"]

    assert s.parent_id == "1897000000000000030"
    assert s.target is None
    assert s.target_status == TargetStatus.MISSING
    assert "Could not find tweet" in s.target_reason


def test_unauthorized_parent_is_not_ok_and_not_missing(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000100"]

    assert s.target is None
    assert s.target_status not in (TargetStatus.OK, TargetStatus.MISSING, TargetStatus.SELF)
    assert "not authorized" in s.target_reason


def test_post_withheld_in_countries_is_withheld(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    s = by_id(api, sleeps)["1897000000000000200"]

    assert s.target_status == TargetStatus.WITHHELD
    assert "DE" in s.target_reason and "FR" in s.target_reason


def test_mention_replying_to_our_own_reply_is_flagged(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = by_id(api, sleeps)

    assert found["1897000000000000201"].replies_to_bot
    assert found["1897000000000000201"].target is not None
    assert found["1897000000000000201"].target.author_is_bot  # the parent is ours
    assert [i for i, s in found.items() if s.replies_to_bot] == ["1897000000000000201"]


def test_known_bots_are_flagged_by_handle_case_insensitively(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found = by_id(api, sleeps, known_bots=["@otherbot"])

    assert found["1897000000000000202"].author == "OtherBot"
    assert found["1897000000000000202"].author_is_bot
    assert [i for i, s in found.items() if s.author_is_bot] == ["1897000000000000202"]


def test_without_known_bots_no_author_is_a_bot(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    assert not any(s.author_is_bot for s in by_id(api, sleeps).values())


def test_fetch_retries_a_failed_page_without_losing_its_token(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))
    api.get(MENTIONS, status=503, json={"title": "Service Unavailable", "detail": "Overloaded"})
    api.get(MENTIONS, body=requests.ConnectionError("connection reset by peer"))
    api.get(MENTIONS, json=fixture("mentions_page2"))

    result = adapter(sleeps).fetch_summons("1897000000000000001")

    assert len(api.calls) == 4
    assert [query(c).get("pagination_token") for c in api.calls] == [None] + [NEXT_TOKEN] * 3
    assert len(result.summons) == 6
    assert sleeps == [1.0, 2.0]


def test_fetch_rate_limited_raises_with_reset_and_does_not_sleep(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(
        MENTIONS,
        status=429,
        json=TOO_MANY,
        headers={"x-rate-limit-limit": "450", "x-rate-limit-remaining": "0",
                 "x-rate-limit-reset": "1772450100"},
    )  # fmt: skip

    with pytest.raises(RateLimited) as err:
        adapter(sleeps).fetch_summons("1897000000000000001")

    assert err.value.reset_at == datetime(2026, 3, 2, 11, 15, tzinfo=UTC)
    assert err.value.retryable
    assert sleeps == []
    assert len(api.calls) == 1


def test_fetch_stops_at_max_pages_and_warns_about_the_gap(
    api: responses.RequestsMock, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))

    with caplog.at_level(logging.WARNING, logger="adapters.x"):
        result = adapter(sleeps, max_pages=1).fetch_summons("1897000000000000001")

    assert len(api.calls) == 1
    assert result.cursor == "1897000000000000105"
    assert "skipped" in caplog.text


def test_fetch_without_cursor_reads_only_the_newest_page(
    api: responses.RequestsMock, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    api.get(MENTIONS, json=fixture("mentions_page1"))  # has a next_token: an old backlog

    with caplog.at_level(logging.WARNING, logger="adapters.x"):
        result = adapter(sleeps).fetch_summons(None)

    assert len(api.calls) == 1
    assert [s.id for s in result.summons] == [f"1897000000000000{n}" for n in (103, 104, 105)]
    assert result.cursor == "1897000000000000105"
    assert "skipped" not in caplog.text  # a first run skips the backlog by design


# Bad input (tests/fixtures/x/mentions_bad_input.json; shapes from X's OpenAPI spec as listed
# in tests/fixtures/x/SOURCES.md): each mention is read on its own.


def bad_input(api: responses.RequestsMock, sleeps: Sleeps) -> tuple[dict[str, Summons], str]:
    api.get(MENTIONS, json=fixture("mentions_bad_input"))
    result = adapter(sleeps).fetch_summons("1897000000000000200")
    assert result.cursor is not None
    return {s.id: s for s in result.summons}, result.cursor


def test_unreadable_mentions_are_recorded_as_skipped_and_the_rest_are_read(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    found, cursor = bad_input(api, sleeps)

    # The cursor moves past every item, readable or not: no poison item fails later polls.
    assert cursor == "1897000000000000304"
    bad_date = found["1897000000000000303"]
    assert bad_date.target_status is TargetStatus.UNAVAILABLE
    assert bad_date.target_reason.startswith("unreadable summons: created_at: ")
    [no_id] = [s for s in found.values() if s.id.startswith("malformed:x:sha256-")]
    assert "id: Field required" in no_id.target_reason
    assert {"1897000000000000304", "1897000000000000301", "1897000000000000300"} <= set(found)

    # Through intake: every item becomes a request row, and the poll is not failing.
    from bot.intake import poll

    api.get(MENTIONS, json=fixture("mentions_bad_input"))
    poll(adapter(sleeps), db, "dry-run")
    with db.session() as session:
        rows = {r.summons_id: r for r in session.scalars(select(RequestRow))}
        cursor_row = session.get(Cursor, "x")
    assert len(rows) == 5
    assert cursor_row is not None and cursor_row.last_error is None


def test_a_video_is_recorded_as_video_and_unreadable_media_are_noted(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found, _ = bad_input(api, sleeps)

    target = found["1897000000000000304"].target
    assert target is not None
    video, gif, photo, missing = target.media
    assert (video.kind, video.alt_text) == ("video", "A flooded street")
    assert video.url.endswith("/ext_tw_video_thumb/1897000000000000061/pu/img/flood.jpg")
    assert gif.kind == "animated_gif"
    assert (photo.kind, photo.url, photo.note) == (
        "photo",
        "",
        "media 3_1897000000000000063: no URL in the response",
    )
    assert missing.kind == "unsupported"
    assert missing.note == "media 3_1897000000000000064: not included in the response"


def test_an_included_post_that_cannot_be_read_makes_the_target_unavailable_with_why(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found, _ = bad_input(api, sleeps)

    quoting = found["1897000000000000301"]
    assert quoting.target_status is TargetStatus.UNAVAILABLE
    assert quoting.target_reason.startswith("post could not be read: referenced_tweets: ")


def test_text_with_a_lone_surrogate_is_kept_storable_with_a_note(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    found, _ = bad_input(api, sleeps)

    odd = found["1897000000000000300"]
    assert odd.text == "@factnote is \\ud83d this right? (long post)"
    odd.text.encode("utf-8")  # storable: no lone surrogate left
    assert odd.notes == ["text had characters that are not valid Unicode; kept as escapes"]


def test_oversized_text_is_cut_and_the_cut_noted(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    body = fixture("mentions_bad_input")
    huge = "@factnote " + "claim " * 10_000
    body["data"][4]["note_tweet"]["text"] = huge
    api.get(MENTIONS, json=body)

    [odd] = [s for s in adapter(sleeps).fetch_summons("1").summons if s.id == "1897000000000000300"]

    assert odd.text == huge[:MAX_TEXT_CHARS]
    assert odd.notes == [f"text cut to 25,000 of {len(huge):,} characters"]


def test_a_body_with_bytes_that_are_not_utf8_is_still_read(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    # requests decodes a body that is not UTF-8 with a guessed charset (Response.json falls
    # back to Response.text), so the page is read and its text stays storable.
    raw = json.dumps(fixture("mentions_page2")).encode().replace(b"naked eye", b"naked \xff eye")
    api.get(MENTIONS, body=raw, content_type="application/json")

    result = adapter(sleeps).fetch_summons("1897000000000000001")

    wall = next(s for s in result.summons if s.id == "1897000000000000102")
    assert wall.text.startswith("@factnote The Great Wall of China is visible")
    wall.text.encode("utf-8")


def forbidden(detail: str) -> dict[str, Any]:
    """A 403 as X API v2 sends it: an RFC 7807 problem (title, type, status, detail)."""
    return {"title": "Forbidden", "type": "about:blank", "status": 403, "detail": detail}


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


def test_fetch_by_an_app_outside_a_project_is_access_denied(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(MENTIONS, status=403, json=NOT_ENROLLED)

    with pytest.raises(AccessDenied) as err:
        adapter(sleeps).fetch_summons(None)

    assert err.value.status == 403 and err.value.retryable


def test_fetch_forbidden_for_another_reason_is_a_plain_platform_error(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(
        MENTIONS,
        status=403,
        json=forbidden("Forbidden"),
    )

    with pytest.raises(PlatformError) as err:
        adapter(sleeps).fetch_summons(None)

    assert type(err.value) is PlatformError
    assert err.value.status == 403 and not err.value.retryable


def test_a_reply_chain_with_our_handle_only_in_the_prefix_makes_no_request(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    from bot.intake import poll

    # Under our reply, X prefixed "@factnote" to Erin's and Frank's replies; only Gail typed it.
    api.get(MENTIONS, json=fixture("mentions_reply_chain"))

    result = poll(adapter(sleeps), db, "dry-run")

    assert (result.seen, result.new, result.error) == (1, 1, None)
    with db.session() as session:
        (request,) = session.scalars(select(RequestRow)).all()
        cursor = session.get(Cursor, "x")
    assert request.summons_id == "1897000000000000502"
    assert request.summons["replies_to_bot"] is False
    # The skipped mentions are behind the cursor: they are not read again.
    assert cursor is not None and cursor.cursor == "1897000000000000502"


def test_prefix_only_mentions_move_the_cursor_past_them(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    chain = fixture("mentions_reply_chain")
    chain["data"] = chain["data"][1:]  # Erin's and Frank's only
    api.get(MENTIONS, json=chain)

    result = adapter(sleeps).fetch_summons("1897000000000000400")

    assert result.summons == []
    assert result.cursor == "1897000000000000502"


def test_a_mention_typed_at_the_start_of_a_reply_whose_prefix_was_removed_counts(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    # Mention 101 replies to a post but starts with "@factnote": the author cleared the prefix
    # (display_text_range starts at 0), so the handle was typed.
    api.get(MENTIONS, json=fixture("mentions_page2"))

    ids = [s.id for s in adapter(sleeps).fetch_summons("1897000000000000001").summons]

    assert "1897000000000000101" in ids


def test_injected_client_with_tweepy_default_return_type_gives_same_summons(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    for _ in range(2):
        api.get(MENTIONS, json=fixture("mentions_page1"))
    client = tweepy.Client(
        bearer_token=CREDS.bearer_token,
        consumer_key=CREDS.consumer_key,
        consumer_secret=CREDS.consumer_secret,
        access_token=CREDS.access_token,
        access_token_secret=CREDS.access_token_secret,
    )

    via_objects = XAdapter(CREDS, client=client, sleep=sleeps, max_pages=1).fetch_summons(None)
    via_dicts = adapter(sleeps, max_pages=1).fetch_summons(None)

    assert via_objects == via_dicts
    assert [s.target_status for s in via_objects.summons] == [
        TargetStatus.OK,
        TargetStatus.OK,
        TargetStatus.SELF,
    ]
    photo_post = via_objects.summons[0].target
    assert photo_post is not None and photo_post.author == "bob"
    assert [m.url for m in photo_post.media] == ["https://pbs.twimg.com/media/GsharkAbCd.jpg"]


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
    api.post(
        POST,
        status=403,
        json=forbidden("You are not allowed to create a Tweet with duplicate content."),
    )

    with pytest.raises(DuplicateReply) as err:
        adapter(sleeps).post_reply(summons(), "same text again")

    assert not err.value.retryable
    assert len(api.calls) == 1


def test_the_reply_rule_refusal_is_reply_forbidden(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(
        POST,
        status=403,
        json=forbidden(
            "Reply to this conversation is not allowed because you have not been "
            "mentioned or otherwise engaged by the author of the post you are replying to."
        ),
    )

    with pytest.raises(ReplyForbidden) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert not isinstance(err.value, DuplicateReply)
    assert err.value.status == 403 and not err.value.retryable
    assert "not allowed" in str(err.value)


@pytest.mark.parametrize(
    "body", [NOT_ENROLLED, READ_ONLY_TOKEN, ACCESS_LEVEL], ids=["project", "read-only", "level"]
)
def test_a_permission_refusal_stops_posting_without_ending_the_request(
    api: responses.RequestsMock, sleeps: Sleeps, body: dict[str, Any]
) -> None:
    api.post(POST, status=403, json=body)
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
    api.post(
        POST,
        status=403,
        json=forbidden("Forbidden"),
    )
    x = adapter(sleeps)

    with pytest.raises(AccessDenied):
        x.post_reply(summons(), "hello")

    assert x.posting_halted is not None


def test_a_reply_settings_refusal_ends_only_that_request(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(
        POST,
        status=403,
        json=forbidden("You attempted to reply to a Tweet that is deleted or not visible to you."),
    )
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
        POST,
        status=429,
        json=TOO_MANY,
        headers={"x-rate-limit-limit": "100", "x-rate-limit-remaining": "0",
                 "x-rate-limit-reset": "1772450100"},
    )  # fmt: skip

    with pytest.raises(RateLimited) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert err.value.reset_at == datetime(2026, 3, 2, 11, 15, tzinfo=UTC)
    assert sleeps == [] and len(api.calls) == 1


def test_rate_limited_by_the_daily_cap_waits_for_the_daily_reset(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(
        POST,
        status=429,
        json=TOO_MANY,
        headers={"x-rate-limit-limit": "100", "x-rate-limit-remaining": "42",
                 "x-rate-limit-reset": "1772450100",
                 "x-user-limit-24hour-limit": "10000", "x-user-limit-24hour-remaining": "0",
                 "x-user-limit-24hour-reset": "1772496000"},
    )  # fmt: skip

    with pytest.raises(RateLimited) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert err.value.reset_at == datetime(2026, 3, 3, 0, 0, tzinfo=UTC)


def test_server_error_is_retried_then_the_reply_succeeds(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(POST, status=503, json={"title": "Service Unavailable", "detail": "Overloaded"})
    api.post(POST, status=201, json=fixture("create_tweet"))

    receipt = adapter(sleeps).post_reply(summons(), "hello")

    assert receipt.reply_id == "2028425079813046272"
    assert len(api.calls) == 2
    assert sleeps == [1.0]


def test_persistent_server_errors_end_in_a_retryable_error(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    for _ in range(3):
        api.post(POST, status=503, json={"title": "Service Unavailable", "detail": "Overloaded"})

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
    api.post(POST, status=status, json={"title": title, "detail": title, "status": status})

    with pytest.raises(PlatformError) as err:
        adapter(sleeps).post_reply(summons(), "hello")

    assert type(err.value) is PlatformError
    assert not err.value.retryable and err.value.status == status
    assert len(api.calls) == 1 and sleeps == []


def test_post_reply_refuses_a_summons_from_another_platform(sleeps: Sleeps) -> None:
    other = summons().model_copy(update={"platform": "bluesky"})

    with pytest.raises(ValueError, match="bluesky"):
        adapter(sleeps).post_reply(other, "hello")


# --- find_reply ---------------------------------------------------------------------------------


def test_find_reply_reads_at_most_two_pages(api: responses.RequestsMock, sleeps: Sleeps) -> None:
    page = fixture("bot_timeline")
    page["meta"]["next_token"] = NEXT_TOKEN
    for _ in range(2):
        api.get(BOT_TWEETS, json=page)

    assert adapter(sleeps, max_pages=5).find_reply(summons("1897000000000000400")) is None

    assert len(api.calls) == 2  # a third page was on offer


def test_find_reply_reads_nothing_after_x_refused_the_attempt(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.post(
        POST,
        status=429,
        json=TOO_MANY,
        headers={"x-rate-limit-reset": "1772450100"},
    )
    api.post(POST, status=503, json={"title": "Service Unavailable", "detail": "Overloaded"})
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))
    x = adapter(sleeps, server_retries=0)

    with pytest.raises(RateLimited):
        x.post_reply(summons("1897000000000000102"), "hello")
    refused = x.find_reply(summons("1897000000000000102"))
    with pytest.raises(PlatformError):
        x.post_reply(summons("1897000000000000102"), "hello")
    maybe_posted = x.find_reply(summons("1897000000000000102"))

    assert refused is None
    assert [path(c) for c in api.calls] == ["/2/tweets", "/2/tweets", f"/2/users/{BOT_ID}/tweets"]
    assert maybe_posted is not None and maybe_posted.reply_id == "1897000000000000305"


def test_find_reply_finds_our_reply_on_the_bot_timeline(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))

    receipt = adapter(sleeps).find_reply(summons("1897000000000000102"))

    assert path(api.calls[0]) == f"/2/users/{BOT_ID}/tweets"
    assert api.calls[0].request.headers["Authorization"].startswith("OAuth ")
    assert query(api.calls[0]) == {
        "since_id": "1897000000000000102",
        "max_results": "100",
        "tweet.fields": "created_at,referenced_tweets",
    }
    assert receipt is not None
    assert receipt.reply_id == "1897000000000000305"
    assert receipt.url == "https://x.com/factnote/status/1897000000000000305"
    assert receipt.posted_at == datetime(2026, 3, 2, 11, 5, tzinfo=UTC)


def test_find_reply_returns_none_when_we_never_replied(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))
    api.get(BOT_TWEETS, json=fixture("mentions_empty"))

    x = adapter(sleeps)
    assert x.find_reply(summons("1897000000000000101")) is None
    assert x.find_reply(summons("1897000000000000400")) is None


# --- recent_posts -------------------------------------------------------------------------------


def test_recent_posts_resolves_the_handle_and_returns_newest_first(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(f"{API}/users/by/username/HealthAgency", json=fixture("user_lookup"))
    api.get(f"{API}/users/999/tweets", json=fixture("user_timeline"))

    posts = adapter(sleeps).recent_posts(
        "@HealthAgency", limit=3, since=datetime(2026, 3, 1, 1, 0, tzinfo=UTC)
    )

    timeline = query(api.calls[1])
    assert all(c.request.headers["Authorization"].startswith("OAuth ") for c in api.calls)
    assert timeline["start_time"] == "2026-03-01T01:00:00Z"
    assert timeline["exclude"] == "retweets"
    assert timeline["max_results"] == "5"  # the API's minimum page
    assert "note_tweet" in timeline["tweet.fields"].split(",")
    assert [p.id for p in posts] == [
        "1897000000000000403",
        "1897000000000000402",
        "1897000000000000401",
    ]
    assert all(p.author == "HealthAgency" and p.author_id == "999" for p in posts)
    assert posts[0].links == ["https://health.example.gov/measles"]
    assert posts[1].quoted is not None and posts[1].quoted.author == "carol"
    assert [(m.url, m.kind) for m in posts[1].media] == [
        ("https://pbs.twimg.com/tweet_video_thumb/Gif402.jpg", "animated_gif")
    ]


def test_recent_posts_of_an_unknown_user_is_a_clear_error(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    api.get(f"{API}/users/by/username/nobody_here", json=fixture("user_unknown"))

    with pytest.raises(PlatformError, match="nobody_here") as err:
        adapter(sleeps).recent_posts("nobody_here")

    assert not err.value.retryable


# --- budgets ------------------------------------------------------------------------------------


def test_budgets_follow_the_rate_limit_headers_per_endpoint(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    def limits(limit: int, remaining: int, reset: int) -> dict[str, str]:
        return {
            "x-rate-limit-limit": str(limit),
            "x-rate-limit-remaining": str(remaining),
            "x-rate-limit-reset": str(reset),
        }

    api.get(MENTIONS, json=fixture("mentions_empty"), headers=limits(450, 449, 1772450100))
    api.get(MENTIONS, json=fixture("mentions_empty"), headers=limits(450, 448, 1772450100))
    api.post(POST, status=201, json=fixture("create_tweet"), headers=limits(100, 99, 1772496000))
    x = adapter(sleeps)
    assert x.budgets() == []

    x.fetch_summons(None)
    x.fetch_summons(None)
    x.post_reply(summons(), "hello")

    budgets = {b.endpoint: b for b in x.budgets()}
    assert set(budgets) == {"GET /2/users/:id/mentions", "POST /2/tweets"}
    mentions = budgets["GET /2/users/:id/mentions"]
    assert (mentions.limit, mentions.remaining) == (450, 448)
    assert mentions.reset_at == datetime(2026, 3, 2, 11, 15, tzinfo=UTC)
    assert (budgets["POST /2/tweets"].limit, budgets["POST /2/tweets"].remaining) == (100, 99)


# --- credentials, secrets, interface ------------------------------------------------------------


def test_credentials_come_from_the_environment() -> None:
    assert CREDS.bot_user_id == BOT_ID
    assert CREDS.bot_username == "factnote"
    assert CREDS.bearer_token == SECRETS["FACTNOTE_X_BEARER_TOKEN"]
    assert not any(secret in repr(CREDS) for secret in SECRETS.values())


def test_missing_credentials_name_the_variables_and_never_the_values() -> None:
    env = {k: v for k, v in ENV.items() if k != "FACTNOTE_X_ACCESS_TOKEN_SECRET"}
    env["FACTNOTE_X_CONSUMER_SECRET"] = "   "

    with pytest.raises(XCredentialsError) as err:
        XCredentials.from_env(env)

    message = str(err.value)
    assert "FACTNOTE_X_ACCESS_TOKEN_SECRET" in message
    assert "FACTNOTE_X_CONSUMER_SECRET" in message
    assert "FACTNOTE_X_BEARER_TOKEN" not in message
    assert not any(secret in message for secret in SECRETS.values())


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


# --- through the runtime's posting step ---------------------------------------------------------


def posting_request(db: Database, mention: Summons, text: str) -> int:
    from adapters.base import jsonable

    with db.transaction() as session:
        # An earlier intake, so this database has seen X since before the mention (a new
        # database would look for our reply before the first attempt too).
        session.add(
            RequestRow(
                platform="x",
                summons_id="1890000000000000000",
                state="posted",
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
        row = RequestRow(
            platform="x",
            summons_id=mention.id,
            requester=mention.author,
            summons=jsonable(mention),
            state="posting",
            mode="live",
            reply_text=text,
        )
        session.add(row)
        session.flush()
        return row.id


DUPLICATE = {
    "detail": "You are not allowed to create a Tweet with duplicate content.",
    "type": "about:blank",
    "title": "Forbidden",
    "status": 403,
}


def test_a_duplicate_refusal_without_our_reply_on_the_timeline_is_a_failure_not_a_post(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    from bot.config import RuntimeConfig
    from bot.posting import post_one

    api.post(POST, status=403, json=DUPLICATE)
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))  # no reply to this mention there
    request_id = posting_request(db, summons("1897000000000000400"), "Same text as before")

    posted = post_one(db, adapter(sleeps), request_id, RuntimeConfig())

    assert posted is False
    with db.session() as session:
        row = session.get(RequestRow, request_id)
        assert row is not None
        assert row.state == "failed" and row.reply_id is None
        assert row.reason.startswith("duplicate text, reply not found")
    assert [c.request.method for c in api.calls] == ["POST", "GET"]  # never sent again


def test_a_duplicate_refusal_with_our_reply_found_is_posted_with_its_receipt(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    from bot.config import RuntimeConfig
    from bot.posting import post_one

    api.post(POST, status=403, json=DUPLICATE)
    api.get(BOT_TWEETS, json=fixture("bot_timeline"))
    request_id = posting_request(db, summons("1897000000000000102"), "The Great Wall ...")

    assert post_one(db, adapter(sleeps), request_id, RuntimeConfig()) is True

    with db.session() as session:
        row = session.get(RequestRow, request_id)
        assert row is not None
        assert (row.state, row.reply_id) == ("posted", "1897000000000000305")


def test_a_permission_refusal_keeps_the_request_queued_and_reports_it(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    from bot.config import RuntimeConfig
    from bot.posting import post_one
    from bot.summary import overview

    api.post(POST, status=403, json=READ_ONLY_TOKEN)
    request_id = posting_request(db, summons(), "hello")
    x = adapter(sleeps)

    for _ in range(RuntimeConfig().max_attempts + 1):
        assert post_one(db, x, request_id, RuntimeConfig()) is False
        with db.transaction() as session:  # let the deferred attempt come due at once
            row = session.get(RequestRow, request_id)
            assert row is not None
            row.next_attempt_at = None

    with db.session() as session:
        row = session.get(RequestRow, request_id)
        assert row is not None
        assert row.state == "posting" and row.post_attempts == 0
        assert row.last_error is not None and row.last_error.startswith("AccessDenied")
    assert len(api.calls) == 1  # posting stopped after the first refusal
    assert overview(db).recent_errors[0][0] == request_id


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
