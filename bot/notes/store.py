"""The note writer's store in SQL (`adapters.x_notes.note_store.NoteStore`): tables `x_notes`,
`x_note_evaluations` and `x_note_caps` (migration 0007), through `storage.notes`. Every write
is its own transaction, so a submission intent is committed before the POST that follows it."""

from __future__ import annotations

from datetime import datetime

from adapters.x_notes.api import WrittenNote
from adapters.x_notes.note_store import PreparedNote
from storage import notes
from storage.db import Database


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
        fields = {
            "request_id": request_id,
            "classification": classification,
            "misleading_tags": list(tags),
            "trustworthy_sources": trustworthy,
            "text": text,
        }
        with self.db.transaction() as session:
            notes.prepare_note(session, post_id, test_mode, fields, at)

    def prepared(self, post_id: str, test_mode: bool) -> PreparedNote | None:
        with self.db.session() as session:
            row = notes.note_row(session, post_id, test_mode)
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
            return notes.score_of(session, post_id, sha)

    def record_score(
        self, post_id: str, sha: str, score: float | None, error: str | None, test_mode: bool
    ) -> None:
        with self.db.transaction() as session:
            notes.record_score(session, post_id, sha, score, error, test_mode)

    def submissions_since(self, since: datetime, test_mode: bool) -> list[datetime]:
        with self.db.session() as session:
            return notes.submitted_times(session, since, test_mode)

    def learned_cap(self, test_mode: bool) -> tuple[int, datetime] | None:
        with self.db.session() as session:
            return notes.learned_cap(session, test_mode)

    def learn_cap(self, cap: int, test_mode: bool, at: datetime) -> None:
        with self.db.transaction() as session:
            notes.learn_cap(session, cap, test_mode, at)

    def mark_intent(self, post_id: str, text: str, test_mode: bool, at: datetime) -> None:
        with self.db.transaction() as session:
            notes.mark_intent(session, post_id, text, test_mode, at)

    def mark_submitted(self, post_id: str, note_id: str, test_mode: bool, at: datetime) -> None:
        with self.db.transaction() as session:
            notes.mark_submitted(session, post_id, note_id, test_mode, at)

    def apply_written(self, written: list[WrittenNote], test_mode: bool, at: datetime) -> int:
        rows = [
            notes.WrittenRow(n.post_id, n.id, n.status or n.scoring_status, dict(n.buckets))
            for n in written
        ]
        with self.db.transaction() as session:
            return notes.apply_written(session, rows, test_mode, at)

    def last_synced(self, test_mode: bool) -> datetime | None:
        with self.db.session() as session:
            return notes.last_synced(session, test_mode)

    def count(self, test_mode: bool) -> int:
        with self.db.session() as session:
            return notes.count(session, test_mode)
