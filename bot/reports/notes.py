"""The audit report's Community Notes section (issue 11): the notes the `x_notes` writer
prepared in the period, how far each got (prepared, submission intent, submitted), X's status
for the submitted ones, the evaluators' buckets, and what raters made of them.

X reports a note's rating as its status (`notes_written`, synced every few hours):
"currently_rated_helpful", "currently_rated_not_helpful", or "needs_more_ratings" until
enough raters agree (twitter/communitynotes documentation). A submitted note not synced yet
has no status and counts as awaiting ratings.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from bot.reports.detail import Drill
from storage import report as report_db
from storage.db import Session

AWAITING = "awaiting ratings"
UNSYNCED = "not synced yet"


def rating_of(status: str | None) -> str:
    """A submitted note's rating from X's status: helpful, not helpful or awaiting ratings."""
    value = (status or "").lower()
    if "not_helpful" in value or "not helpful" in value:
        return "not helpful"
    if "helpful" in value:
        return "helpful"
    return AWAITING


@dataclass
class NotesSummary:
    drafted: int = 0  # notes prepared in the period (past the verdict, tag and URL gates)
    states: Counter[str] = field(default_factory=Counter)  # prepared | intent | submitted
    submitted: int = 0
    test_mode: int = 0  # of the submitted, how many in test mode
    statuses: Counter[str] = field(default_factory=Counter)  # X's status of the submitted
    ratings: Counter[str] = field(default_factory=Counter)  # helpful | not helpful | awaiting
    # evaluator -> bucket -> submitted notes (UrlValidity, HarassmentAbuse, ClaimOpinion)
    buckets: dict[str, Counter[str]] = field(default_factory=dict)
    tags: Counter[str] = field(default_factory=Counter)
    evaluated: int = 0  # evaluate answers stored in the period (a score or an error)
    evaluate_errors: int = 0
    scores: list[float] = field(default_factory=list)

    @property
    def test_share(self) -> float:
        return self.test_mode / self.submitted if self.submitted else 0.0

    @property
    def median_score(self) -> float | None:
        return statistics.median(self.scores) if self.scores else None

    @property
    def bucket_rows(self) -> list[tuple[str, str, int]]:
        return [
            (evaluator, bucket, n)
            for evaluator, counts in sorted(self.buckets.items())
            for bucket, n in sorted(counts.items())
        ]


def notes_summary(session: Session, since: datetime | None, drill: Drill) -> NotesSummary:
    """The notes drafted since `since` (all when None); their requests go into `drill` under
    "note:<state>", "note_status:<status>" and "note_rating:<rating>"."""
    notes, evaluations = report_db.notes_since(session, since)
    summary = NotesSummary()
    for note in notes:
        summary.drafted += 1
        summary.states[note.state] += 1
        summary.tags.update(str(t) for t in note.misleading_tags or [])
        keys = [f"note:{note.state}"]
        if note.state == "submitted":
            summary.submitted += 1
            summary.test_mode += bool(note.test_mode)
            status = note.status or UNSYNCED
            rating = rating_of(note.status)
            summary.statuses[status] += 1
            summary.ratings[rating] += 1
            keys += [f"note_status:{status}", f"note_rating:{rating}"]
            for evaluator, bucket in (note.buckets or {}).items():
                summary.buckets.setdefault(str(evaluator), Counter())[str(bucket).lower()] += 1
        if note.request_id is not None:
            for key in keys:
                drill.add(key, note.request_id)
    for evaluation in evaluations:
        summary.evaluated += 1
        if evaluation.score is None:
            summary.evaluate_errors += 1
        else:
            summary.scores.append(evaluation.score)
    return summary
