"""The X adapter through the runtime's posting step: duplicates and permission refusals."""

from __future__ import annotations

from datetime import UTC, datetime

import responses

from adapters.base import (
    Summons,
)
from storage.db import Database
from storage.models import Request as RequestRow
from tests.adapters.x.helpers import (
    BOT_TWEETS,
    NOT_VISIBLE,
    POST,
    PROBLEM,
    READ_ONLY_TOKEN,
    Sleeps,
    adapter,
    fixture,
    forbidden,
    summons,
)

# --- through the runtime's posting step ---------------------------------------------------------


def posting_request(db: Database, mention: Summons, text: str) -> int:
    from adapters.base import jsonable

    with db.transaction() as session:
        # An earlier intake, so this database has seen X since before the mention (a new
        # database would look for our reply before the first attempt too).
        if session.get(RequestRow, 1) is None:
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
    from bot.requests.posting import post_one

    api.post(POST, status=403, content_type=PROBLEM, json=DUPLICATE)
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
    from bot.requests.posting import post_one

    api.post(POST, status=403, content_type=PROBLEM, json=DUPLICATE)
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
    from bot.ops.summary import overview
    from bot.requests.posting import post_one

    api.post(POST, status=403, content_type=PROBLEM, json=READ_ONLY_TOKEN)
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


# X's other wording of the reply rule for self-serve apps.
ONLY_MENTIONED = (
    "You can only reply to or quote posts where you are mentioned or have been otherwise "
    "engaged by the author."
)


def test_reply_rule_refusals_in_a_row_stop_posting_and_status_says_why(
    api: responses.RequestsMock, sleeps: Sleeps, db: Database
) -> None:
    from bot.config import RuntimeConfig
    from bot.ops.summary import overview
    from bot.requests.posting import post_one

    for _ in range(3):
        api.post(POST, status=403, content_type=PROBLEM, json=forbidden(ONLY_MENTIONED))
    x = adapter(sleeps, max_reply_refusals=3)
    refused = [
        posting_request(db, summons(f"189700000000000050{i}"), f"reply {i}") for i in range(3)
    ]
    for request_id in refused:
        assert post_one(db, x, request_id, RuntimeConfig()) is False
    assert x.posting_halted is not None and "3 reply-rule refusals in a row" in x.posting_halted

    later = posting_request(db, summons("1897000000000000510"), "a fourth reply")
    assert post_one(db, x, later, RuntimeConfig()) is False

    assert len(api.calls) == 3  # nothing sent after the third refusal
    with db.session() as session:
        rows = [session.get(RequestRow, i) for i in (*refused, later)]
        states = [row.state if row is not None else None for row in rows]
        waiting = session.get(RequestRow, later)
        assert waiting is not None and waiting.last_error is not None
        assert "reply-rule refusals in a row" in waiting.last_error
    assert states == ["failed", "failed", "failed", "posting"]  # the fourth waits, unburnt
    assert overview(db).recent_errors[0][0] == later


def test_a_posted_reply_or_another_refusal_breaks_the_run_of_reply_rule_refusals(
    api: responses.RequestsMock, sleeps: Sleeps
) -> None:
    from adapters.base import ReplyForbidden

    x = adapter(sleeps, max_reply_refusals=2)
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden(ONLY_MENTIONED))
    api.post(POST, status=201, json=fixture("create_tweet"))
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden(ONLY_MENTIONED))
    api.post(POST, status=403, content_type=PROBLEM, json=forbidden(NOT_VISIBLE))
    outcomes = []
    for i in range(4):
        try:
            x.post_reply(summons(f"189700000000000060{i}"), f"text {i}")
            outcomes.append("posted")
        except ReplyForbidden:
            outcomes.append("refused")
    assert outcomes == ["refused", "posted", "refused", "refused"]
    assert x.posting_halted is None  # a vanished parent is not the reply rule
