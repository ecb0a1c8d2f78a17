"""Queries about the Community Notes the bot writes (tables `x_notes`, `x_note_evaluations`,
migration 0007) for the review app's note panel and the writer's figures in `status` and a
run's report. The bot calls these and writes no SQL of its own for them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.models import Request, XNote, XNoteCap, XNoteEvaluation

NOTES_PLATFORM = "x_notes"


def note_for_post(session: Session, post_id: str) -> XNote | None:
    """The note written for a post: the test-mode one first, else the newest."""
    return session.scalar(
        select(XNote)
        .where(XNote.post_id == post_id)
        .order_by(XNote.test_mode.desc(), XNote.id.desc())
        .limit(1)
    )


def evaluation_of(session: Session, post_id: str, text_sha256: str) -> XNoteEvaluation | None:
    """The evaluate answer stored for this exact note text (by its SHA-256)."""
    return session.scalar(
        select(XNoteEvaluation).where(
            XNoteEvaluation.post_id == post_id, XNoteEvaluation.text_sha256 == text_sha256
        )
    )


def last_test_notes(session: Session, window: int) -> list[XNote]:
    """The last `window` test notes submitted, newest first."""
    return list(
        session.scalars(
            select(XNote)
            .where(XNote.test_mode.is_(True), XNote.submitted_at.is_not(None))
            .order_by(XNote.submitted_at.desc())
            .limit(window)
        )
    )


def submitted_count(session: Session) -> int:
    """Notes submitted, test and public."""
    return int(
        session.scalar(select(func.count(XNote.id)).where(XNote.submitted_at.is_not(None))) or 0
    )


def cycle_rows(
    session: Session, since: datetime, test_mode: bool
) -> tuple[list[tuple[str, str]], int, int, int]:
    """What the note writer did since `since`: the (state, reason) of each feed post taken in
    as a request, and the notes drafted, evaluated and submitted in `test_mode` (or not)."""
    requests = [
        (state, reason)
        for state, reason in session.execute(
            select(Request.state, Request.reason).where(
                Request.platform == NOTES_PLATFORM, Request.created_at >= since
            )
        )
    ]

    def count(column: Any, *where: Any) -> int:
        return int(session.scalar(select(func.count()).where(column >= since, *where)) or 0)

    drafted = count(XNote.drafted_at, XNote.test_mode == test_mode)
    evaluated = count(XNoteEvaluation.evaluated_at, XNoteEvaluation.test_mode == test_mode)
    submitted = count(XNote.submitted_at, XNote.test_mode == test_mode)
    return requests, drafted, evaluated, submitted


# -- the note writer's ledger (bot/notes/store.py adapts these to the adapter's interface) ----


@dataclass(frozen=True)
class WrittenRow:
    """A note as X's notes_written lists it: what a status sync copies onto its row."""

    post_id: str
    note_id: str
    status: str | None
    buckets: dict[str, str]


def note_row(session: Session, post_id: str, test_mode: bool) -> XNote | None:
    return session.scalar(
        select(XNote).where(XNote.post_id == post_id, XNote.test_mode == test_mode)
    )


def prepare_note(
    session: Session,
    post_id: str,
    test_mode: bool,
    fields: dict[str, Any],
    at: datetime,
) -> None:
    """Write a note's draft `fields` (request_id, classification, misleading_tags,
    trustworthy_sources, text); an intent or a submission is never rewritten."""
    row = note_row(session, post_id, test_mode)
    if row is None:
        row = XNote(post_id=post_id, test_mode=test_mode, drafted_at=at, buckets={})
        session.add(row)
    elif row.state != "prepared":
        return
    for name, value in fields.items():
        setattr(row, name, value)


def score_of(session: Session, post_id: str, sha: str) -> float | None:
    return session.scalar(
        select(XNoteEvaluation.score).where(
            XNoteEvaluation.post_id == post_id, XNoteEvaluation.text_sha256 == sha
        )
    )


def record_score(
    session: Session,
    post_id: str,
    sha: str,
    score: float | None,
    error: str | None,
    test_mode: bool,
) -> None:
    row = evaluation_of(session, post_id, sha)
    if row is None:
        row = XNoteEvaluation(post_id=post_id, text_sha256=sha, test_mode=test_mode)
        session.add(row)
    row.score, row.error = score, error


def submitted_times(session: Session, since: datetime, test_mode: bool) -> list[datetime]:
    times = session.scalars(
        select(XNote.submitted_at).where(XNote.test_mode == test_mode, XNote.submitted_at > since)
    )
    return [t for t in times if t is not None]


def learned_cap(session: Session, test_mode: bool) -> tuple[int, datetime] | None:
    row = session.scalar(
        select(XNoteCap)
        .where(XNoteCap.test_mode == test_mode)
        .order_by(XNoteCap.id.desc())
        .limit(1)
    )
    return (row.cap, row.observed_at) if row is not None else None


def learn_cap(session: Session, cap: int, test_mode: bool, at: datetime) -> None:
    session.add(XNoteCap(cap=cap, test_mode=test_mode, observed_at=at))


def mark_intent(session: Session, post_id: str, text: str, test_mode: bool, at: datetime) -> None:
    row = note_row(session, post_id, test_mode)
    if row is not None and row.state == "prepared":
        row.state, row.text, row.intent_at = "intent", text, at


def mark_submitted(
    session: Session, post_id: str, note_id: str, test_mode: bool, at: datetime
) -> None:
    row = note_row(session, post_id, test_mode)
    if row is None:
        row = XNote(
            post_id=post_id,
            test_mode=test_mode,
            classification="",
            misleading_tags=[],
            buckets={},
            drafted_at=at,
        )
        session.add(row)
    if row.state != "submitted":
        row.state, row.note_id, row.submitted_at = "submitted", note_id, at


def apply_written(
    session: Session, written: list[WrittenRow], test_mode: bool, at: datetime
) -> int:
    """Copy each written note's id, status and buckets onto its row; how many matched."""
    rows = {
        r.post_id: r for r in session.scalars(select(XNote).where(XNote.test_mode == test_mode))
    }
    updated = 0
    for note in written:
        row = rows.get(note.post_id)
        if row is None:
            continue
        row.note_id = row.note_id or note.note_id
        if row.state != "submitted":  # the POST landed; its receipt was lost
            row.state, row.submitted_at = "submitted", row.intent_at or at
        row.status = note.status
        row.buckets = dict(note.buckets)
        row.synced_at = at
        updated += 1
    return updated


def last_synced(session: Session, test_mode: bool) -> datetime | None:
    return session.scalar(select(func.max(XNote.synced_at)).where(XNote.test_mode == test_mode))


def count(session: Session, test_mode: bool) -> int:
    return int(
        session.scalar(select(func.count(XNote.id)).where(XNote.test_mode == test_mode)) or 0
    )
