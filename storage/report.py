"""What the audit report (`bot.reports.audit` and its parts) reads, batch by batch: the requests
with their decisions and evidence, when each entered review, the guard's and the video stage's parts
of the traces (extracted in SQL: a trace is tens of kB), the event log, and the notes written.
The bot calls these and writes no SQL of its own for them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, defer, selectinload

from storage.models import DecisionRow, Request, RequestEvent, XNote, XNoteEvaluation


def request_batch(session: Session, after: int, since: datetime | None, size: int) -> list[Request]:
    """The next `size` requests after id `after` (created since `since`, when given), with
    their decisions (no traces) and evidence."""
    stmt = (
        select(Request)
        .options(
            defer(Request.summons),
            selectinload(Request.decisions).options(
                defer(DecisionRow.trace), selectinload(DecisionRow.evidence)
            ),
        )
        .where(Request.id > after)
        .order_by(Request.id)
        .limit(size)
    )
    if since is not None:
        stmt = stmt.where(Request.created_at >= since)
    return list(session.scalars(stmt))


def entered(session: Session, request_ids: Sequence[int], state: str) -> dict[int, list[datetime]]:
    """When each of the requests moved into `state`, by request."""
    found: dict[int, list[datetime]] = {}
    for request_id, at in session.execute(
        select(RequestEvent.request_id, RequestEvent.at).where(
            RequestEvent.request_id.in_(list(request_ids)),
            RequestEvent.to_state == state,
        )
    ):
        found.setdefault(request_id, []).append(at)
    return found


def guard_reports(session: Session, request_ids: Sequence[int]) -> dict[int, list[Any]]:
    """The guard reports in the trace of each decision of the requests, by decision."""
    return {
        decision_id: reports or []
        for decision_id, reports in session.execute(
            select(DecisionRow.id, DecisionRow.trace["guard"]).where(
                DecisionRow.request_id.in_(list(request_ids))
            )
        )
    }


def video_traces(session: Session, decision_ids: Sequence[int]) -> list[tuple[int, Any, Any]]:
    """(decision id, the trace's videos, its analysis) of each of the decisions."""
    rows = session.execute(
        select(DecisionRow.id, DecisionRow.trace["videos"], DecisionRow.trace["analysis"]).where(
            DecisionRow.id.in_(list(decision_ids))
        )
    )
    return [(decision_id, videos, analysis) for decision_id, videos, analysis in rows]


def events(session: Session, request_ids: Sequence[int]) -> list[tuple[int, str | None, str, str]]:
    """(request id, from state, to state, actor) of every event of the requests, in each
    request's log order."""
    rows = session.execute(
        select(
            RequestEvent.request_id,
            RequestEvent.from_state,
            RequestEvent.to_state,
            RequestEvent.actor,
        )
        .where(RequestEvent.request_id.in_(list(request_ids)))
        .order_by(RequestEvent.request_id, RequestEvent.id)
    )
    return [(request_id, old, new, actor) for request_id, old, new, actor in rows]


def notes_since(
    session: Session, since: datetime | None
) -> tuple[list[XNote], list[XNoteEvaluation]]:
    """The notes drafted and the evaluations made since `since` (all when None), notes in
    id order."""
    notes = select(XNote).order_by(XNote.id)
    evaluations = select(XNoteEvaluation)
    if since is not None:
        notes = notes.where(XNote.drafted_at >= since)
        evaluations = evaluations.where(XNoteEvaluation.evaluated_at >= since)
    return list(session.scalars(notes)), list(session.scalars(evaluations))
