"""Queries about the Community Notes the bot writes (tables `x_notes`, `x_note_evaluations`,
migration 0007) for the review app's note panel and the writer's figures in `status` and a
run's report. The bot calls these and writes no SQL of its own for them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.models import Request, XNote, XNoteEvaluation

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
