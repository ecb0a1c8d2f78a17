"""Queries the Procrastinate queue backend (`bot.ops.queue`) runs on the requests table: the claim
of one request a job names, the requests left without a job, and the requests a transaction
woke. The bot calls these and writes no SQL of its own; Procrastinate's own tables are its
business (`bot.ops.queue.ensure_schema` installs them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Row, Select, bindparam, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from storage.models import Request
from storage.overrides import mode_overrides

# A database error worth running the same job again for a little later (a dropped
# connection, a server restarting).
OPERATIONAL_ERRORS: tuple[type[Exception], ...] = (OperationalError,)


def claimable(
    session: Session, request_id: int, states: Sequence[str], moment: datetime
) -> list[Row[Any]]:
    """The request, locked, if it is in one of `states` and due at `moment` (else nothing),
    with what processing needs of it: id, state, platform, summons, reused_from_id, attempts,
    and the mode overrides of its platform (own_mode, global_mode): no query of their own."""
    query = _claim_query(tuple(states))
    return list(session.execute(query, {"request_id": request_id, "moment": moment}).all())


@cache  # built once: building it cost as much CPU as running it (issue 12)
def _claim_query(states: tuple[str, ...]) -> Select[Any]:
    own_mode, global_mode = mode_overrides()
    return (
        select(
            Request.id,
            Request.state,
            Request.platform,
            Request.summons,
            Request.reused_from_id,
            Request.attempts,
            own_mode.label("own_mode"),
            global_mode.label("global_mode"),
        )
        .where(
            Request.id == bindparam("request_id"),
            Request.state.in_(states),
            Request.next_attempt_at.is_(None) | (Request.next_attempt_at <= bindparam("moment")),
        )
        .with_for_update(skip_locked=True)
    )


_ORPHANS = text(
    """
    SELECT r.id, r.next_attempt_at FROM requests r
    WHERE r.state IN ('queued', 'retry')
      AND NOT EXISTS (
        SELECT 1 FROM procrastinate_jobs j
        WHERE j.task_name = :task AND j.status IN ('todo', 'doing')
          AND j.args ->> 'request_id' = r.id::text)
    ORDER BY r.id
    """
)


def orphans(session: Session, task: str) -> list[tuple[int, datetime | None]]:
    """Claimable requests without a pending job of `task` (PostgreSQL: the job table is
    Procrastinate's), as (id, next_attempt_at) by id."""
    rows = session.execute(_ORPHANS, {"task": task}).all()
    return [(row.id, row.next_attempt_at) for row in rows]


def still_waiting(
    session: Session, ids: Iterable[int], states: Sequence[str]
) -> list[tuple[int, datetime | None]]:
    """Of these requests, those in one of `states`, as (id, next_attempt_at) by id. Read on
    the transaction's connection: the retry times it wrote are visible there."""
    rows = session.connection().execute(
        select(Request.id, Request.next_attempt_at)
        .where(Request.id.in_(sorted(ids)), Request.state.in_(states))
        .order_by(Request.id)
    )
    return [(row.id, row.next_attempt_at) for row in rows]
