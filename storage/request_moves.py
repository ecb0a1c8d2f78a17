"""Guarded UPDATEs that move one request to another state: the statements under
`bot.requests.lifecycle.transition_where`, which owns the rules (allowed moves, events, log lines).

A move is guarded by the state its caller read (a request another worker moved first is left
alone) and, for a worker's own result, by its lease. On the hot paths (claims, recorded
decisions, posted receipts) each statement is built once per shape and only its values are
bound: building it cost as much CPU as running it (issue 12). On PostgreSQL such a move also
writes its event row in the same statement (the UPDATE as a data-modifying CTE feeding the
INSERT): one round trip per transition instead of two."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple, cast

from sqlalchemy import (
    ClauseElement,
    ColumnElement,
    Executable,
    Result,
    Table,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Session

from pipeline.records import utcnow
from storage.dialect import on_postgres
from storage.models import Request, RequestEvent

EVENT_COLUMNS = ("request_id", "at", "from_state", "to_state", "reason", "actor")


class Moved(NamedTuple):
    moved: bool  # the request was still where the guard expected, and moved
    event_written: bool  # the event row was written by the same statement


class Guard(NamedTuple):
    """What a move requires of its request beyond the state its caller read, and counts up."""

    where: Sequence[ColumnElement[bool]] = ()  # further conditions (built per call: no cache)
    owned_by: str | None = None  # the lease holder it must still be
    increment: tuple[str, ...] = ()  # integer columns counted up by one


def guarded_move(
    session: Session,
    request_id: int,
    state: str,
    to: str,
    guard: Guard,
    values: Mapping[str, object],
    event: Mapping[str, object] | None = None,
) -> Moved:
    """Move request `request_id` from `state` to `to` if it is still there and meets `guard`,
    setting `values`. `event`: the request's event row (`EVENT_COLUMNS`), written by the same
    statement where the database allows; otherwise the caller writes it."""
    where, owned_by, increment = guard
    given = dict(values or {})
    if where or any(isinstance(v, ClauseElement) for v in given.values()):
        counted = {name: getattr(Request, name) + 1 for name in increment}
        owner = [Request.lease_owner == owned_by] if owned_by is not None else []
        result = session.execute(
            update(Request)
            .where(Request.id == request_id, Request.state == state, *where, *owner)
            .values(state=to, **given, **counted)
            .execution_options(synchronize_session=False)
        )
        return Moved(_one(result), False)
    with_event = event is not None and on_postgres(session)
    if with_event:
        # The onupdate default of a CTE's UPDATE is not filled in: set it here.
        given.setdefault("updated_at", utcnow())
    names = tuple(sorted(given))
    statement = _update_shaped(names, increment, owned_by is not None, with_event)
    params = {f"v_{name}": value for name, value in given.items()}
    params.update(g_id=request_id, g_state=state, v_state=to)
    if owned_by is not None:
        params["g_owner"] = owned_by
    if with_event:
        assert event is not None
        params.update({f"e_{name}": event[name] for name in EVENT_COLUMNS[1:]})
    result = session.execute(statement, params)
    if with_event:  # rows returned, not the rowcount: psycopg reports none for this form
        return Moved(len(result.all()) == 1, True)
    return Moved(_one(result), False)


def _one(result: Result[Any]) -> bool:
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


@lru_cache(maxsize=64)  # a handful of shapes; bounded all the same
def _update_shaped(
    names: tuple[str, ...], increment: tuple[str, ...], owned: bool, with_event: bool
) -> Executable:
    """The guarded UPDATE of one request setting `names` (bound as `:v_<name>`, `:v_state`
    the new state), counting up `increment`, where `:g_id` is still in `:g_state` (and leased
    to `:g_owner` when `owned`); `with_event`: inserting its event row (`:e_<column>`) from
    the moved row, so its rowcount is the events written. Bound names differ from the
    columns': SQLAlchemy reserves a column's own name for the SET clause."""
    # The tables, not the ORM entities: plain Core statements, which the session runs as
    # given (an ORM insert with a parameter dict is taken for a bulk insert).
    requests, events = cast(Table, Request.__table__), cast(Table, RequestEvent.__table__)
    guards = [requests.c.id == bindparam("g_id"), requests.c.state == bindparam("g_state")]
    if owned:
        guards.append(requests.c.lease_owner == bindparam("g_owner"))
    assigned: dict[str, Any] = {name: bindparam(f"v_{name}") for name in names}
    assigned.update({name: requests.c[name] + 1 for name in increment})
    moving = update(requests).where(*guards).values(state=bindparam("v_state"), **assigned)
    if not with_event:
        return moving
    moved = moving.returning(requests.c.id).cte("moved")
    row = select(
        moved.c.id, *(bindparam(f"e_{n}", type_=events.c[n].type) for n in EVENT_COLUMNS[1:])
    )
    # The CTE at the top (`add_cte`): PostgreSQL allows a data-modifying WITH only there.
    written = insert(events).from_select(list(EVENT_COLUMNS), row).add_cte(moved)
    return written.returning(events.c.request_id)


# -- the lifecycle's other statements (bot.requests.lifecycle owns when each runs)
# ---------------------

Condition = ColumnElement[bool]  # a further guard on a move (`Guard.where`)
_EVENT_INSERT = insert(RequestEvent)  # built once: it runs for every transition


def insert_events(session: Session, values: Sequence[Mapping[str, object]]) -> None:
    """Event rows (`EVENT_COLUMNS`) in one Core insert (an ORM object each cost twice as much;
    issue 12)."""
    # The request's own pending changes are flushed with the rest at the commit: one UPDATE
    # for everything a step changes, not one before its event and one after.
    with session.no_autoflush:
        # One row: a plain execute (a list is an executemany, a pipeline sync on psycopg).
        session.execute(_EVENT_INSERT, dict(values[0]) if len(values) == 1 else list(values))


def states_of(session: Session, ids: Sequence[int]) -> list[tuple[int, str, str]]:
    """(id, state, platform) of each of the requests `ids` that exists."""
    if not ids:
        return []
    rows = session.execute(
        select(Request.id, Request.state, Request.platform).where(Request.id.in_(ids))
    )
    return [(row.id, row.state, row.platform) for row in rows]


def claimable(
    session: Session, states: Sequence[str], moment: datetime, limit: int = 1
) -> list[tuple[int, str, str]]:
    """(id, state, platform) of the oldest requests in `states` due at `moment`, locked for
    this transaction. On PostgreSQL `FOR UPDATE SKIP LOCKED` lets many workers claim at once
    without waiting on each other's candidates; SQLite has one writer at a time, and the
    guarded move settles a race there."""
    rows = session.execute(
        select(Request.id, Request.state, Request.platform)
        .where(
            Request.state.in_(states),
            Request.next_attempt_at.is_(None) | (Request.next_attempt_at <= moment),
        )
        .order_by(Request.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return [(row.id, row.state, row.platform) for row in rows]


def renew_lease(
    session: Session, request_id: int, state: str, worker: str, until: datetime
) -> bool:
    """Extend `worker`'s lease on a request still in `state` and leased to it; False when it
    is not (the lease was lost)."""
    result = session.execute(
        update(Request)
        .where(Request.id == request_id, Request.state == state, Request.lease_owner == worker)
        .values(lease_until=until)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def lease_expired(moment: datetime) -> Condition:
    """A lease that ran out before `moment`, or none at all (rows from before leases)."""
    return Request.lease_until.is_(None) | (Request.lease_until < moment)


def leased_to(owner: str | None) -> Condition:
    return Request.lease_owner == owner


def expired_leases(session: Session, state: str, moment: datetime) -> list[tuple[int, str | None]]:
    """(id, lease owner) of the requests in `state` whose lease ran out before `moment`."""
    rows = session.execute(
        select(Request.id, Request.lease_owner).where(Request.state == state, lease_expired(moment))
    )
    return [(row.id, row.lease_owner) for row in rows]


def leased_on_host(
    session: Session, states: Sequence[str], host: str
) -> list[tuple[int, str, str | None]]:
    """(id, state, lease owner) of the requests in `states` leased to a process of `host`
    (owners are `host:pid:n`)."""
    rows = session.execute(
        select(Request.id, Request.state, Request.lease_owner).where(
            Request.state.in_(states), Request.lease_owner.like(f"{host}:%")
        )
    )
    return [(row.id, row.state, row.lease_owner) for row in rows]


def release_posting(session: Session, request_id: int, owner: str | None) -> None:
    """Make a reply `owner` was posting due again now, its lease given up."""
    session.execute(
        update(Request)
        .where(Request.id == request_id, Request.lease_owner == owner)
        .values(next_attempt_at=None, lease_owner=None)
        .execution_options(synchronize_session=False)
    )


def events_of(session: Session, request_id: int) -> list[RequestEvent]:
    """A request's history, oldest first."""
    return list(
        session.scalars(
            select(RequestEvent)
            .where(RequestEvent.request_id == request_id)
            .order_by(RequestEvent.id)
        )
    )
