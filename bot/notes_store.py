"""The note writer's store in SQL (`adapters.x_notes.note_store.NoteStore`): tables `x_notes`,
`x_note_evaluations` and `x_note_caps` (migration 0007). Every write is its own transaction, so
a submission intent is committed before the POST that follows it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from adapters.x_notes.api import WrittenNote
from adapters.x_notes.note_store import PreparedNote
from storage.db import Database
from storage.models import XNote, XNoteCap, XNoteEvaluation


class SqlNoteStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def prepare(
        self,
        post_id: str,
        test_mode: bool,
        *,
        request_id: int | None,
        classification: str,
        tags: tuple[str, ...],
        trustworthy: bool,
        text: str,
        at: datetime,
    ) -> None:
        with self.db.transaction() as session:
            row = _note(session, post_id, test_mode)
            if row is None:
                row = XNote(post_id=post_id, test_mode=test_mode, drafted_at=at, buckets={})
                session.add(row)
            elif row.state != "prepared":
                return  # an intent or a submission is never rewritten
            row.request_id = request_id
            row.classification = classification
            row.misleading_tags = list(tags)
            row.trustworthy_sources = trustworthy
            row.text = text

    def prepared(self, post_id: str, test_mode: bool) -> PreparedNote | None:
        with self.db.session() as session:
            row = _note(session, post_id, test_mode)
            if row is None:
                return None
            return PreparedNote(
                row.classification,
                tuple(row.misleading_tags or ()),
                row.trustworthy_sources,
                row.drafted_at,
            )

    def score(self, post_id: str, sha: str) -> float | None:
        with self.db.session() as session:
            return session.scalar(
                select(XNoteEvaluation.score).where(
                    XNoteEvaluation.post_id == post_id, XNoteEvaluation.text_sha256 == sha
                )
            )

    def record_score(
        self, post_id: str, sha: str, score: float | None, error: str | None, test_mode: bool
    ) -> None:
        with self.db.transaction() as session:
            row = session.scalar(
                select(XNoteEvaluation).where(
                    XNoteEvaluation.post_id == post_id, XNoteEvaluation.text_sha256 == sha
                )
            )
            if row is None:
                row = XNoteEvaluation(post_id=post_id, text_sha256=sha, test_mode=test_mode)
                session.add(row)
            row.score, row.error = score, error

    def submissions_since(self, since: datetime, test_mode: bool) -> list[datetime]:
        with self.db.session() as session:
            return [
                t
                for t in session.scalars(
                    select(XNote.submitted_at).where(
                        XNote.test_mode == test_mode, XNote.submitted_at > since
                    )
                )
                if t is not None
            ]

    def learned_cap(self, test_mode: bool) -> tuple[int, datetime] | None:
        with self.db.session() as session:
            row = session.scalar(
                select(XNoteCap)
                .where(XNoteCap.test_mode == test_mode)
                .order_by(XNoteCap.id.desc())
                .limit(1)
            )
            return (row.cap, row.observed_at) if row is not None else None

    def learn_cap(self, cap: int, test_mode: bool, at: datetime) -> None:
        with self.db.transaction() as session:
            session.add(XNoteCap(cap=cap, test_mode=test_mode, observed_at=at))

    def mark_intent(self, post_id: str, text: str, test_mode: bool, at: datetime) -> None:
        with self.db.transaction() as session:
            row = _note(session, post_id, test_mode)
            if row is not None and row.state == "prepared":
                row.state, row.text, row.intent_at = "intent", text, at

    def mark_submitted(self, post_id: str, note_id: str, test_mode: bool, at: datetime) -> None:
        with self.db.transaction() as session:
            row = _note(session, post_id, test_mode)
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

    def apply_written(self, written: list[WrittenNote], test_mode: bool, at: datetime) -> int:
        updated = 0
        with self.db.transaction() as session:
            rows = {
                r.post_id: r
                for r in session.scalars(select(XNote).where(XNote.test_mode == test_mode))
            }
            for note in written:
                row = rows.get(note.post_id)
                if row is None:
                    continue
                row.note_id = row.note_id or note.id
                if row.state != "submitted":  # the POST landed; its receipt was lost
                    row.state, row.submitted_at = "submitted", row.intent_at or at
                row.status = note.status or note.scoring_status
                row.buckets = dict(note.buckets)
                row.synced_at = at
                updated += 1
        return updated

    def last_synced(self, test_mode: bool) -> datetime | None:
        with self.db.session() as session:
            return session.scalar(
                select(func.max(XNote.synced_at)).where(XNote.test_mode == test_mode)
            )

    def count(self, test_mode: bool) -> int:
        with self.db.session() as session:
            return int(
                session.scalar(select(func.count(XNote.id)).where(XNote.test_mode == test_mode))
                or 0
            )


def _note(session: Session, post_id: str, test_mode: bool) -> XNote | None:
    return session.scalar(
        select(XNote).where(XNote.post_id == post_id, XNote.test_mode == test_mode)
    )
