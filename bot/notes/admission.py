"""The Community Notes writer's figures, from the database alone: admission progress (for
`factnote status`, which must answer fast: no runtime, pipeline or SDK imports) and what one
run did (`factnote run --once`).

X admits a writer to public notes by its last 50 test notes' evaluator results: at least 95%
UrlValidity High, at least 98% HarassmentAbuse High, at least 30% ClaimOpinion High and at most
30% ClaimOpinion Low (twitter/communitynotes documentation/api/overview.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from storage import notes
from storage.db import Database

ADMISSION_WINDOW = 50


@dataclass(frozen=True)
class Admission:
    written: int  # notes submitted, test and public
    notes: int  # test notes with evaluator results, of the last `ADMISSION_WINDOW`
    url_high: float
    harassment_high: float
    claim_high: float
    claim_low: float

    @property
    def passes(self) -> bool:
        return (
            self.notes >= ADMISSION_WINDOW
            and self.url_high >= 0.95
            and self.harassment_high >= 0.98
            and self.claim_high >= 0.30
            and self.claim_low <= 0.30
        )

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "passes": self.passes}

    def line(self) -> str:
        figures = (
            f"UrlValidity high {self.url_high:.0%} (>= 95%), "
            f"HarassmentAbuse high {self.harassment_high:.0%} (>= 98%), "
            f"ClaimOpinion high {self.claim_high:.0%} (>= 30%), low {self.claim_low:.0%} (<= 30%)"
        )
        return (
            f"community notes written: {self.written}; admission over the last {self.notes} "
            f"test note(s): {figures}: {'passes' if self.passes else 'not yet'}"
        )


def admission(db: Database) -> Admission:
    with db.session() as session:
        rows = notes.last_test_notes(session, ADMISSION_WINDOW)
        written = notes.submitted_count(session)
    scored = [{k: str(v).lower() for k, v in (r.buckets or {}).items()} for r in rows]
    scored = [b for b in scored if b]

    def share(evaluator: str, bucket: str) -> float:
        return sum(b.get(evaluator) == bucket for b in scored) / len(scored) if scored else 0.0

    return Admission(
        written=written,
        notes=len(scored),
        url_high=share("UrlValidity", "high"),
        harassment_high=share("HarassmentAbuse", "high"),
        claim_high=share("ClaimOpinion", "high"),
        claim_low=share("ClaimOpinion", "low"),
    )


@dataclass(frozen=True)
class NotesCycle:
    """What one run of the note writer did, from the rows it wrote."""

    read: int  # feed posts recorded as requests
    skipped: dict[str, int]  # by reason
    drafted: int  # notes past the verdict, tag and URL gates
    evaluated: int  # evaluate answers stored
    submitted: int  # notes X accepted
    test_mode: bool

    def line(self) -> str:
        return (
            f"notes: read {self.read}, skipped {sum(self.skipped.values())}, drafted "
            f"{self.drafted}, evaluated {self.evaluated}, submitted {self.submitted} "
            f"({'test_mode' if self.test_mode else 'public'})"
        )


def notes_cycle(db: Database, since: datetime, test_mode: bool) -> NotesCycle:
    with db.session() as session:
        requests, drafted, evaluated, submitted = notes.cycle_rows(session, since, test_mode)
    skipped = Counter(reason for state, reason in requests if state == "skipped")
    return NotesCycle(len(requests), dict(skipped), drafted, evaluated, submitted, test_mode)
