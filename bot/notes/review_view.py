"""What a moderator is shown about a Community Note under review: its tags, whether it counts
its sources as trustworthy, the evaluate score of the exact text now in the draft (None when
that text was never scored: an edit is evaluated again before it can go out), test_mode, and
X's status and evaluator buckets once synced."""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.x_notes.note_store import text_hash
from storage.db import Session
from storage.models import Request
from storage.notes import evaluation_of, note_for_post


@dataclass(frozen=True)
class NoteFacts:
    test_mode: bool
    tags: tuple[str, ...]
    trustworthy_sources: bool
    score: float | None  # claim_opinion_score of the exact text shown
    evaluate_error: str | None
    state: str  # prepared | intent | submitted
    status: str | None = None
    buckets: dict[str, str] = field(default_factory=dict)


def note_facts(session: Session, request: Request, text: str | None) -> NoteFacts | None:
    """The note behind an `x_notes` request, or None (another platform, or no note yet)."""
    if request.platform != "x_notes":
        return None
    note = note_for_post(session, request.summons_id)
    if note is None:
        return None
    evaluation = evaluation_of(session, note.post_id, text_hash(text)) if text else None
    return NoteFacts(
        test_mode=note.test_mode,
        tags=tuple(note.misleading_tags or ()),
        trustworthy_sources=note.trustworthy_sources,
        score=evaluation.score if evaluation is not None else None,
        evaluate_error=evaluation.error if evaluation is not None else None,
        state=note.state,
        status=note.status,
        buckets={str(k): str(v) for k, v in (note.buckets or {}).items()},
    )
