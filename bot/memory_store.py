"""Experience memory kept in the main database, and the judge's judgments beside decisions.

`StoredMemory` is the bank a running bot hands the pipeline (`Toolkit.memory`): the items are
loaded into a `pipeline.memory.MemoryIndex` once, searched there, and every change (a use, a
new or merged item, a credit, decay, an admin's disable or delete) is written through to
`memory_items`. One lock serialises the index: workers share it.

Nothing crosses deployments implicitly: items come only from this database's episodes, and
`export_items`/`import_items` are the explicit way to carry them elsewhere.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from pipeline.config import MemoryConfig
from pipeline.judge import Judgment
from pipeline.memory import MemoryIndex, MemoryItem, Mode, Phase
from pipeline.records import utcnow
from pipeline.relevance import Embedder
from storage.db import Database
from storage.models import Judgment as JudgmentRow
from storage.models import MemoryItemRow, MemorySource


def item_from_row(row: MemoryItemRow) -> MemoryItem:
    return MemoryItem(
        id=row.id,
        phase=Phase(row.phase),
        trigger=row.trigger,
        strategy=row.strategy,
        kind=row.kind,
        sources=list(row.sources),
        created=row.created_at,
        uses=row.uses,
        last_used=row.last_used_at,
        last_useful=row.last_useful_at,
        weight=row.weight,
        disabled=row.disabled,
    )


def _write(session: Session, item: MemoryItem) -> None:
    row = session.get(MemoryItemRow, item.id) or MemoryItemRow(id=item.id)
    row.phase = item.phase.value
    row.trigger = item.trigger
    row.strategy = item.strategy
    row.kind = item.kind
    row.sources = list(item.sources)
    row.created_at = item.created
    row.uses = item.uses
    row.last_used_at = item.last_used
    row.last_useful_at = item.last_useful
    row.weight = item.weight
    row.disabled = item.disabled
    session.add(row)


class StoredMemory:
    """A `MemoryBank` over `memory_items` (see the module doc)."""

    def __init__(
        self, db: Database, cfg: MemoryConfig, *, embedder: Embedder | None = None
    ) -> None:
        self.db = db
        self.cfg = cfg
        with db.session() as session:
            rows = session.scalars(select(MemoryItemRow)).all()
            items = [item_from_row(r) for r in rows]
        self.index = MemoryIndex(cfg, items, embedder=embedder)
        self._lock = threading.Lock()

    # -- the bank ---------------------------------------------------------------------------

    def search(self, phase: Phase, query: str, k: int) -> list[tuple[MemoryItem, float]]:
        with self._lock:
            return self.index.search(phase, query, k)

    def record_uses(self, ids: Sequence[str], when: datetime) -> None:
        with self._lock:
            self.index.record_uses(ids, when)
            self._save(ids)

    # -- learning ---------------------------------------------------------------------------

    def learn(self, items: Iterable[MemoryItem], source: str) -> list[MemoryItem]:
        """Adds distilled items (merging near duplicates, enforcing the cap) and marks
        `source` distilled; returns the items kept. Frozen or off memory learns nothing."""
        if self.cfg.mode != "learn":
            return []
        kept: list[MemoryItem] = []
        removed: list[str] = []
        with self._lock:
            for item in items:
                stored, dropped = self.index.add(item)
                kept.append(stored)
                removed.extend(dropped)
            with self.db.transaction() as session:
                for item in kept:
                    _write(session, item)
                if removed:
                    session.execute(delete(MemoryItemRow).where(MemoryItemRow.id.in_(removed)))
                session.merge(MemorySource(source=source, items=len(kept), distilled_at=utcnow()))
        return kept

    def credit(self, ids: Sequence[str], mode: Mode) -> None:
        """An episode that used `ids` was judged `mode` (see `MemoryIndex.credit`)."""
        if self.cfg.mode != "learn" or not ids:
            return
        with self._lock:
            self.index.credit(ids, mode, utcnow())
            self._save(ids)

    def decay(self, now: datetime | None = None) -> list[str]:
        """Deletes faded items (see `MemoryIndex.decay`); their ids."""
        with self._lock:
            removed = self.index.decay(now or utcnow())
            self._delete(removed)
        return removed

    # -- governance -------------------------------------------------------------------------

    def find(self, text: str = "", phase: Phase | None = None) -> list[MemoryItem]:
        """Items whose trigger or strategy contains `text` (any case), newest first."""
        needle = text.lower()
        with self._lock:
            items = [
                i
                for i in self.index.items
                if (phase is None or i.phase is phase)
                and (needle in i.trigger.lower() or needle in i.strategy.lower())
            ]
        return sorted(items, key=lambda i: i.created, reverse=True)

    def set_disabled(self, item_id: str, disabled: bool) -> bool:
        with self._lock:
            found = self.index.set_disabled(item_id, disabled)
            if found:
                self._save([item_id])
        return found

    def delete(self, item_id: str) -> bool:
        with self._lock:
            removed = self.index.remove([item_id])
            self._delete(removed)
        return bool(removed)

    def export_items(self) -> list[dict[str, Any]]:
        with self._lock:
            return [i.model_dump(mode="json") for i in self.index.items]

    def import_items(self, records: Iterable[dict[str, Any]]) -> int:
        """Items exported from another deployment, added like distilled ones; how many."""
        items = [MemoryItem.model_validate(r) for r in records]
        before = len(self.index)
        self.learn(items, source=f"import:{utcnow().isoformat(timespec='seconds')}")
        return len(self.index) - before

    def _save(self, ids: Sequence[str]) -> None:
        with self.db.transaction() as session:
            for item_id in ids:
                item = self.index.get(item_id)
                if item is not None:
                    _write(session, item)

    def _delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self.db.transaction() as session:
                session.execute(delete(MemoryItemRow).where(MemoryItemRow.id.in_(list(ids))))


def distilled(db: Database, sources: Sequence[str]) -> set[str]:
    """Which of `sources` were distilled already."""
    if not sources:
        return set()
    with db.session() as session:
        found = session.scalars(
            select(MemorySource.source).where(MemorySource.source.in_(list(sources)))
        )
        return set(found)


def save_judgment(db: Database, decision_id: int, judgment: Judgment) -> int:
    """Stores a judgment with its decision; the row id."""
    detail = judgment.model_dump(mode="json", exclude={"kind", "mode", "helpful", "failed_gate"})
    with db.transaction() as session:
        row = JudgmentRow(
            decision_id=decision_id,
            kind=judgment.kind,
            mode=judgment.mode,
            helpful=judgment.helpful,
            failed_gate=judgment.failed_gate,
            model=judgment.model,
            detail=detail,
        )
        session.add(row)
        session.flush()
        return row.id


def judgments_of(db: Database, decision_id: int) -> list[Judgment]:
    with db.session() as session:
        rows = session.scalars(
            select(JudgmentRow)
            .where(JudgmentRow.decision_id == decision_id)
            .order_by(JudgmentRow.id)
        ).all()
        return [
            Judgment.model_validate(
                {
                    **r.detail,
                    "kind": r.kind,
                    "mode": r.mode,
                    "helpful": r.helpful,
                    "failed_gate": r.failed_gate,
                }
            )
            for r in rows
        ]
