"""Queries about requests that the bot runs outside the lifecycle's moves: what a worker reads
of the request it claimed and of the one it records, an earlier request that sent the same
reply, the counts `status` and a cycle's report show, and the adapters' poll cursors.

The bot calls these functions and writes no SQL of its own for them; the lifecycle's guarded
moves are `storage.request_moves`."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import Engine, Row, Select, bindparam, func, select, update
from sqlalchemy.orm import Session, selectinload

from storage.models import (
    Cursor,
    DecisionRow,
    RateBudgetRow,
    Request,
    RequestEvent,
    RequestState,
    ReviewAction,
)

# Requests whose reply text went out, is about to, or would have (dry-run audits show what
# live would do).
SENT_STATES = (
    RequestState.POSTED.value,
    RequestState.POSTING.value,
    RequestState.AWAITING_REVIEW.value,
    RequestState.DRY_RUN.value,
)
# Where a request ends when something went wrong technically (not a decision to abstain).
_TROUBLE_STATES = (RequestState.FAILED.value, RequestState.RETRY.value)


@cache  # built once: it runs on every recorded reply (issue 12)
def repeated_by_query() -> Select[int]:
    """An earlier request of the platform that sent (or queued) the same reply, with
    `:platform`, `:reply` and `:request_id` bound at execution (an index on platform and
    reply text serves it)."""
    return (
        select(Request.id)
        .where(
            Request.platform == bindparam("platform"),
            Request.reply_text == bindparam("reply"),
            Request.state.in_(SENT_STATES),
            Request.id != bindparam("request_id"),
        )
        .order_by(Request.id)
        .limit(1)
    )


def to_process(session: Session, request_id: int) -> Row[Any]:
    """What processing a request reads of it: `summons`, `platform`, `reused_from_id`,
    `attempts`."""
    return session.execute(
        select(Request.summons, Request.platform, Request.reused_from_id, Request.attempts).where(
            Request.id == request_id
        )
    ).one()


@cache  # built once: it runs for every decision recorded (issue 12)
def _record_read() -> Select[Any]:
    earlier = repeated_by_query().scalar_subquery()
    return select(
        Request.state, Request.lease_owner, Request.post_attempts, earlier.label("earlier")
    ).where(Request.id == bindparam("request_id"))


def to_record(session: Session, request_id: int, repeat: dict[str, object]) -> Row[Any] | None:
    """What recording a decision reads of its request, in one query: `state` and
    `lease_owner` (whether this worker still holds it), `post_attempts`, and `earlier`, a
    request that sent the same reply (`repeated_by_query`, its values in `repeat`)."""
    params = {**repeat, "request_id": request_id}
    return session.execute(_record_read(), params).one_or_none()


def get(session: Session, request_id: int) -> Request | None:
    return session.get(Request, request_id)


def all_requests(session: Session) -> list[Request]:
    return list(session.scalars(select(Request).order_by(Request.id)))


def request_id_for(session: Session, platform: str, summons_id: str) -> int | None:
    """The request a summons became, if it was taken in."""
    return session.scalar(
        select(Request.id).where(Request.platform == platform, Request.summons_id == summons_id)
    )


def posted_since(session: Session, since: datetime) -> int:
    """Replies that reached a platform since `since` (every `posted` transition is a row of
    the request history)."""
    count = session.scalar(
        select(func.count(RequestEvent.id)).where(
            RequestEvent.to_state == RequestState.POSTED.value, RequestEvent.at >= since
        )
    )
    return int(count or 0)


def failed_since(session: Session, since: datetime, held: str) -> list[int]:
    """Requests changed since `since` that failed, wait for a retry, or hold a reply whose
    posting was deferred after an error (not one the kill switch holds: its error starts with
    `held`)."""
    return list(
        session.scalars(
            select(Request.id)
            .where(
                Request.updated_at >= since,
                Request.state.in_(_TROUBLE_STATES)
                | (
                    (Request.state == RequestState.POSTING.value)
                    & Request.last_error.is_not(None)
                    & ~Request.last_error.startswith(held)
                ),
            )
            .order_by(Request.id)
        )
    )


def held_since(session: Session, since: datetime, held: str) -> list[int]:
    """Requests changed since `since` whose reply the kill switch holds in `posting` (their
    error starts with `held`)."""
    return list(
        session.scalars(
            select(Request.id)
            .where(
                Request.updated_at >= since,
                Request.state == RequestState.POSTING.value,
                Request.last_error.startswith(held),
            )
            .order_by(Request.id)
        )
    )


def poll_cursors(session: Session) -> list[Cursor]:
    """Each adapter's poll cursor: when it last polled, and its last error."""
    return list(session.scalars(select(Cursor).order_by(Cursor.adapter)))


@dataclass
class Overview:
    by_state: dict[str, int] = field(default_factory=dict)
    needs_llm: list[tuple[int, str]] = field(default_factory=list)  # (request id, summons id)
    recent_errors: list[tuple[int, str]] = field(default_factory=list)
    # Replies the kill switch holds (a deliberate pause, not an error), with why.
    held: list[tuple[int, str]] = field(default_factory=list)
    polls: list[Cursor] = field(default_factory=list)
    budgets: list[RateBudgetRow] = field(default_factory=list)
    cli_checks: int = 0  # `factnote check` runs, not in by_state

    @property
    def total(self) -> int:
        return sum(self.by_state.values())


def overview(session: Session, errors_since: datetime, held: str, cli_platform: str) -> Overview:
    """Requests counted by state (those of `cli_platform` apart), the ones that need an LLM,
    errors since `errors_since`, replies held by the kill switch (their error starts with
    `held`), the poll cursors and the rate budgets."""
    bot = Request.platform != cli_platform
    rows = session.execute(
        select(Request.state, func.count(Request.id)).where(bot).group_by(Request.state)
    ).all()
    needs = session.execute(
        select(Request.id, Request.summons_id)
        .where(Request.state == RequestState.NEEDS_LLM.value, bot)
        .order_by(Request.id)
    ).all()
    checks = session.scalar(select(func.count(Request.id)).where(Request.platform == cli_platform))
    errors = session.execute(
        select(Request.id, Request.last_error)
        .where(
            Request.last_error.is_not(None),
            Request.last_error.not_like(f"{held}%"),
            Request.updated_at >= errors_since,
        )
        .order_by(Request.id.desc())
        .limit(20)
    ).all()
    holding = session.execute(
        select(Request.id, Request.last_error)
        .where(Request.state == RequestState.POSTING.value, Request.last_error.like(f"{held}%"))
        .order_by(Request.id)
        .limit(20)
    ).all()
    budgets = list(session.scalars(select(RateBudgetRow).order_by(RateBudgetRow.adapter)))
    return Overview(
        by_state={state: count for state, count in rows},
        needs_llm=[(i, s) for i, s in needs],
        recent_errors=[(i, e or "") for i, e in errors],
        held=[(i, (e or "").removeprefix(held)) for i, e in holding],
        polls=poll_cursors(session),
        budgets=budgets,
        cli_checks=int(checks or 0),
    )


# -- posting ---------------------------------------------------------------------------------


def due_posts(session: Session, now: datetime) -> list[int]:
    """Requests in `posting` whose attempt is due at `now` (no claim's lease runs)."""
    return list(
        session.scalars(
            select(Request.id)
            .where(
                Request.state == RequestState.POSTING.value,
                Request.next_attempt_at.is_(None) | (Request.next_attempt_at <= now),
            )
            .order_by(Request.id)
        )
    )


def claim_post(
    session: Session, request_id: int, seen: int, now: datetime, lease: timedelta, owner: str
) -> bool:
    """Take posting attempt `seen + 1` of a request still in `posting` with `seen` attempts
    and no other poster's lease running at `now`, for `owner`, leased for `lease`. False when
    another poster got there first."""
    claimed = session.execute(
        update(Request)
        .where(
            Request.id == request_id,
            Request.state == RequestState.POSTING.value,
            Request.post_attempts == seen,
            Request.next_attempt_at.is_(None) | (Request.next_attempt_at <= now),
        )
        .values(post_attempts=seen + 1, next_attempt_at=now + lease, lease_owner=owner)
        .execution_options(synchronize_session=False)
    )
    return bool(claimed.rowcount == 1)  # type: ignore[attr-defined]


# Each platform's horizon, per database: the first request's creation never changes (requests
# are never deleted), and finding it sorts the platform's rows, a cost that grew with the
# database on every post (issue 12).
_HORIZONS: weakref.WeakKeyDictionary[Engine, dict[str, datetime]] = weakref.WeakKeyDictionary()


def horizon(session: Session, platform: str) -> datetime | None:
    """When this database took in its first request from `platform` (None: none yet)."""
    bind = session.get_bind()
    known = _HORIZONS.setdefault(bind, {}) if isinstance(bind, Engine) else {}
    if platform not in known:
        found = session.scalars(
            select(Request.created_at)
            .where(Request.platform == platform)
            .order_by(Request.id)
            .limit(1)
        ).first()
        if found is None:
            return None
        known[platform] = found
    return known[platform]


# -- review ----------------------------------------------------------------------------------


def review_actions(session: Session, request_id: int) -> list[ReviewAction]:
    """What moderators did to a request, oldest first."""
    return list(
        session.scalars(
            select(ReviewAction)
            .where(ReviewAction.request_id == request_id)
            .order_by(ReviewAction.id)
        )
    )


def overdue_reviews(session: Session, moment: datetime) -> list[int]:
    """Requests awaiting review whose deadline passed before `moment`."""
    return list(
        session.scalars(
            select(Request.id).where(
                Request.state == RequestState.AWAITING_REVIEW.value,
                Request.review_deadline.is_not(None),
                Request.review_deadline < moment,
            )
        )
    )


# -- export ----------------------------------------------------------------------------------


def decisions_after(
    session: Session, last_id: int, since: datetime | None, limit: int
) -> list[DecisionRow]:
    """The next `limit` decisions after id `last_id` (made at or after `since`), oldest
    first, with their evidence, LLM calls and request (and its decisions) loaded along."""
    statement = (
        select(DecisionRow)
        .where(DecisionRow.id > last_id)
        .options(
            selectinload(DecisionRow.evidence),
            selectinload(DecisionRow.llm_calls),
            selectinload(DecisionRow.request).selectinload(Request.decisions),
        )
        .order_by(DecisionRow.id)
        .limit(limit)
    )
    if since is not None:
        statement = statement.where(DecisionRow.created_at >= since)
    return list(session.scalars(statement))


def review_actions_of(session: Session, request_ids: list[int]) -> list[ReviewAction]:
    """What moderators did to any of `request_ids`, oldest first."""
    return list(
        session.scalars(
            select(ReviewAction)
            .where(ReviewAction.request_id.in_(request_ids))
            .order_by(ReviewAction.id)
        )
    )
