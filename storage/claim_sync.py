"""What `factnote claims sync` remembers between runs: per source, where to resume and how
the last run went (`claim_sync_sources`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from pipeline.records import utcnow
from storage.db import Database
from storage.models import ClaimSyncSource


@dataclass(frozen=True)
class SyncState:
    source: str
    synced_from: datetime | None = None
    newest_review: datetime | None = None
    digest: str | None = None
    imported: int = 0
    last_run_at: datetime | None = None
    last_error: str | None = None


def _state(row: ClaimSyncSource) -> SyncState:
    return SyncState(
        source=row.source,
        synced_from=row.synced_from,
        newest_review=row.newest_review,
        digest=row.digest,
        imported=row.imported or 0,
        last_run_at=row.last_run_at,
        last_error=row.last_error,
    )


def sync_state(db: Database, source: str) -> SyncState:
    """Where `source` resumes; a source never synced starts from nothing."""
    with db.session() as session:
        row = session.get(ClaimSyncSource, source)
        return _state(row) if row is not None else SyncState(source=source)


def all_states(db: Database) -> list[SyncState]:
    with db.session() as session:
        rows = session.scalars(select(ClaimSyncSource).order_by(ClaimSyncSource.source))
        return [_state(row) for row in rows]


def record_success(
    db: Database,
    source: str,
    *,
    imported: int,
    synced_from: datetime | None = None,
    newest_review: datetime | None = None,
    digest: str | None = None,
) -> None:
    """A sync of `source` that ended: its cursor moves on where given (a run cut short keeps
    the old one), and its last error is cleared."""
    with db.transaction() as session:
        row = session.get(ClaimSyncSource, source) or ClaimSyncSource(source=source, imported=0)
        row.imported = (row.imported or 0) + imported
        row.last_run_at = utcnow()
        row.last_error = None
        if synced_from is not None:
            row.synced_from = synced_from
        if newest_review is not None and (
            row.newest_review is None or newest_review > row.newest_review
        ):
            row.newest_review = newest_review
        if digest is not None:
            row.digest = digest
        session.add(row)


def record_failure(db: Database, source: str, error: str, *, imported: int = 0) -> None:
    """A sync of `source` that failed: the cursor stays where it was (the next run reads the
    same window again; what this one stored is recognised as unchanged)."""
    with db.transaction() as session:
        row = session.get(ClaimSyncSource, source) or ClaimSyncSource(source=source, imported=0)
        row.imported = (row.imported or 0) + imported
        row.last_run_at = utcnow()
        row.last_error = error
        session.add(row)
