"""What the note writer keeps between calls, as the adapter needs it (the bot implements it in
SQL, `bot.notes.store`): each prepared note's classification and tags, evaluate scores by the
hash of the exact text, the submission intents and receipts, and the learned daily cap."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from adapters.x_notes.api import WrittenNote


def text_hash(text: str) -> str:
    """SHA-256 of the exact note text: any edit means evaluating again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PreparedNote:
    classification: str
    misleading_tags: tuple[str, ...]
    trustworthy_sources: bool
    drafted_at: datetime


class NoteStore(Protocol):
    def prepared(self, post_id: str, test_mode: bool) -> PreparedNote | None: ...

    def score(self, post_id: str, sha: str) -> float | None:
        """The stored claim_opinion_score of this exact text, None if never scored."""
        ...

    def record_score(
        self, post_id: str, sha: str, score: float | None, error: str | None, test_mode: bool
    ) -> None: ...

    def submissions_since(self, since: datetime, test_mode: bool) -> list[datetime]: ...

    def learned_cap(self, test_mode: bool) -> tuple[int, datetime] | None:
        """The latest cap learned from a "daily limit" answer, and when, or None."""
        ...

    def learn_cap(self, cap: int, test_mode: bool, at: datetime) -> None: ...

    def mark_intent(self, post_id: str, text: str, test_mode: bool, at: datetime) -> None: ...

    def mark_submitted(self, post_id: str, note_id: str, test_mode: bool, at: datetime) -> None: ...

    def apply_written(self, written: list[WrittenNote], test_mode: bool, at: datetime) -> int:
        """Copy X's status and evaluator buckets onto our notes; a note X has that we hold
        only an intent for is submitted (its receipt was lost). Returns the notes updated."""
        ...

    def last_synced(self, test_mode: bool) -> datetime | None: ...
