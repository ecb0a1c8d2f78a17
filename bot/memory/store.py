"""Experience memory kept in the main database, and the judge's judgments beside decisions.

`StoredMemory` is the bank a running bot hands the pipeline (`SharedParts.memory`): the items are
loaded into a `pipeline.learning.memory.MemoryIndex` once, searched there, and every change (a use,
a new or merged item, a credit, decay, an admin's disable or delete) is written through to
`memory_items`. One lock serialises the index: workers share it. The table is the truth: a
bank re-reads it every `REFRESH_S` seconds (`refresh`), so what an admin disabled or deleted in
the review app (`list_items`, `set_item_disabled`, `delete_item`, each change stored with who
made it in `setting_changes`) stops being retrieved by a running bot, and its own writes never
bring such an item back.

Nothing crosses deployments implicitly: items come only from this database's episodes, and
`export_items`/`import_items` are the explicit way to carry them elsewhere.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipeline.config import MemoryConfig
from pipeline.learning.judge import Judgment
from pipeline.learning.memory import STATUSES, MemoryIndex, MemoryItem, Mode, Phase
from pipeline.records import utcnow
from pipeline.relevance.scoring import Embedder
from storage import memory as memory_db
from storage.db import Database, Session
from storage.models import Judgment as JudgmentRow
from storage.models import MemoryItemRow, SettingChange

log = logging.getLogger(__name__)

# How stale a running bank's view of governance may be: an item an admin disabled or deleted
# in the review app (another process) stops being retrieved within this many seconds.
REFRESH_S = 10.0
CHANGE_PREFIX = "memory:"  # `SettingChange.key` of a governance action: "memory:<item id>"


# `MemoryItem` fields whose `memory_items` column has another name; the rest match.
_COLUMNS = {"created": "created_at", "last_used": "last_used_at", "last_useful": "last_useful_at"}


def item_from_row(row: MemoryItemRow) -> MemoryItem:
    return MemoryItem.model_validate(
        {name: getattr(row, _COLUMNS.get(name, name)) for name in MemoryItem.model_fields}
    )


def _write(session: Session, item: MemoryItem) -> None:
    row = session.get(MemoryItemRow, item.id) or MemoryItemRow(id=item.id)
    # The phase as its plain value: a driver may write an enum member by its name.
    values = {**item.model_dump(), "phase": item.phase.value}
    for name, value in values.items():
        setattr(row, _COLUMNS.get(name, name), value)
    session.add(row)


class StoredMemory:
    """A `MemoryBank` over `memory_items` (see the module doc)."""

    def __init__(
        self,
        db: Database,
        cfg: MemoryConfig,
        *,
        embedder: Embedder | None = None,
        refresh_s: float = REFRESH_S,
    ) -> None:
        self.db = db
        self.cfg = cfg
        self._embedder = embedder
        self.refresh_s = refresh_s
        self.index = self._load()
        self._lock = threading.Lock()
        self._refreshed = time.monotonic()

    def _load(self) -> MemoryIndex:
        with self.db.session() as session:
            items = [item_from_row(r) for r in memory_db.item_rows(session)]
        return MemoryIndex(self.cfg, items, embedder=self._embedder)

    # -- the bank ---------------------------------------------------------------------------

    def search(self, phase: Phase, query: str, k: int) -> list[tuple[MemoryItem, float]]:
        if time.monotonic() - self._refreshed >= self.refresh_s:
            try:
                self.refresh()
            except memory_db.StoreError as exc:  # a check goes on with the view it has
                log.warning("memory: could not refresh from the database: %s", exc)
        with self._lock:
            return self.index.search(phase, query, k)

    def refresh(self) -> None:
        """Catches up with what other processes changed in `memory_items`: an admin's disable,
        enable or delete in the review app, items learned or imported by a command. The table
        is the truth: this bank writes every change of its own through at once."""
        with self._lock:  # read under the lock: an item learned meanwhile is not taken as gone
            self._refreshed = time.monotonic()  # a failed read is tried again in refresh_s
            with self.db.session() as session:
                stored = memory_db.item_states(session)
            if set(stored) - {i.id for i in self.index.items} or any(
                stored[i.id][1] != i.status for i in self.index.items if i.id in stored
            ):
                # Rare (a command learned or imported, a person approved or rejected):
                # reloading is simpler than merging.
                self.index = self._load()
                return
            gone = [i.id for i in self.index.items if i.id not in stored]
            self.index.remove(gone)
            for item in self.index.items:
                if item.disabled != stored[item.id][0]:
                    self.index.set_disabled(item.id, stored[item.id][0])

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
        self.refresh()  # a merge must not revive an item an admin disabled or deleted
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
                memory_db.delete_items(session, removed)
                memory_db.mark_distilled(session, source, len(kept), utcnow())
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

    def find(
        self, text: str = "", phase: Phase | None = None, status: str = ""
    ) -> list[MemoryItem]:
        """Items whose trigger or strategy contains `text` (any case), of `status` ("" for
        any), newest first."""
        needle = text.lower()
        with self._lock:
            items = [
                i
                for i in self.index.items
                if (phase is None or i.phase is phase)
                and (not status or i.status == status)
                and (needle in i.trigger.lower() or needle in i.strategy.lower())
            ]
        return sorted(items, key=lambda i: i.created, reverse=True)

    def set_disabled(self, item_id: str, disabled: bool, actor: str = "cli") -> bool:
        found = set_item_disabled(self.db, item_id, disabled, actor)
        with self._lock:
            self.index.set_disabled(item_id, disabled)
        return found

    def delete(self, item_id: str, actor: str = "cli") -> bool:
        found = delete_item(self.db, item_id, actor) is not None
        with self._lock:
            self.index.remove([item_id])
        return found

    def export_items(self) -> list[dict[str, Any]]:
        with self._lock:
            return [i.model_dump(mode="json") for i in self.index.items]

    def import_items(self, records: Iterable[dict[str, Any]]) -> int:
        """Items exported from another deployment, added like distilled ones, each proposed
        whatever it was there (a person here approves it); how many."""
        undecided = {"status": "proposed", "origin": "import", "decided_by": None}
        items = [
            MemoryItem.model_validate({**r, **undecided, "decided_at": None, "reason": ""})
            for r in records
        ]
        before = len(self.index)
        self.learn(items, source=f"import:{utcnow().isoformat(timespec='seconds')}")
        return len(self.index) - before

    def _save(self, ids: Sequence[str]) -> None:
        """Writes the use record and weight of `ids`: never `disabled`, which is the admins'
        (see `refresh`), and never a row deleted meanwhile, which stays deleted."""
        with self.db.transaction() as session:
            for item_id in ids:
                item = self.index.get(item_id)
                row = session.get(MemoryItemRow, item_id)
                if item is None or row is None:
                    continue
                row.uses = item.uses
                row.last_used_at = item.last_used
                row.last_useful_at = item.last_useful
                row.weight = item.weight

    def _delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self.db.transaction() as session:
                memory_db.delete_items(session, ids)


# -- governance over the table (the review app; no index loaded) ---------------------------


def list_items(
    db: Database, text: str = "", phase: Phase | None = None, status: str = ""
) -> list[MemoryItem]:
    """Items whose trigger or strategy contains `text` (any case), of `phase`, "enabled",
    "disabled" or one of `pipeline.learning.memory.STATUSES` ("" for any), newest first."""
    disabled = status == "disabled" if status in ("enabled", "disabled") else None
    with db.session() as session:
        rows = memory_db.matching_items(
            session,
            text,
            phase.value if phase is not None else None,
            disabled=disabled,
            status=status if status in STATUSES else None,
        )
        return [item_from_row(r) for r in rows]


def count_items(db: Database) -> int:
    with db.session() as session:
        return memory_db.item_count(session)


def get_item(db: Database, item_id: str) -> MemoryItem | None:
    with db.session() as session:
        row = session.get(MemoryItemRow, item_id)
        return item_from_row(row) if row is not None else None


@dataclass(frozen=True)
class SourceEpisode:
    """Where an item came from: a judged decision or a moderator action (with the request it
    belongs to), or an import from another deployment."""

    source: str  # "decision:12", "review:40", "import:2026-12-01T10:00:00"
    kind: str  # decision | review | import | unknown
    request_id: int | None
    detail: str  # "edit by alice", "judged decision", ...


def source_episodes(db: Database, sources: Sequence[str]) -> list[SourceEpisode]:
    """The episodes behind `sources`, in their order; a request that was deleted since has no
    request id."""
    ids: dict[str, list[int]] = {"decision": [], "review": []}
    for source in sources:
        kind, _, number = source.partition(":")
        if kind in ids and number.isdigit():
            ids[kind].append(int(number))
    with db.session() as session:
        decisions, reviews = memory_db.episode_requests(session, ids["decision"], ids["review"])
    found: list[SourceEpisode] = []
    for source in sources:
        kind, _, number = source.partition(":")
        key = int(number) if number.isdigit() else -1
        if kind == "decision":
            found.append(SourceEpisode(source, kind, decisions.get(key), "judged decision"))
        elif kind == "review":
            request_id, detail = reviews.get(key, (None, "moderator action (gone)"))
            found.append(SourceEpisode(source, kind, request_id, detail))
        elif kind == "import":
            found.append(SourceEpisode(source, kind, None, "imported from another deployment"))
        else:
            found.append(SourceEpisode(source, "unknown", None, ""))
    return found


def _summary(row: MemoryItemRow) -> str:
    return f"{row.phase}: {row.trigger}"[:200]


def set_item_disabled(db: Database, item_id: str, disabled: bool, actor: str) -> bool:
    """Disables (never retrieved, kept) or enables an item; the change is stored with who made
    it. False when there is no such item."""
    with db.transaction() as session:
        row = session.get(MemoryItemRow, item_id)
        if row is None:
            return False
        if row.disabled != disabled:
            old, new = ("disabled", "enabled") if row.disabled else ("enabled", "disabled")
            row.disabled = disabled
            _log_change(session, item_id, old, new, actor, _summary(row))
    log.warning("memory item %s %s by %s", item_id, "disabled" if disabled else "enabled", actor)
    return True


class DecisionRefused(Exception):
    """An approval or rejection that cannot be made (the message says why)."""


# Which statuses a person may move an item from, per decision. A refused item copied a
# stranger's words: nobody approves it (a moderator may write the lesson as an edit instead).
_DECIDABLE = {"approve": ("proposed", "rejected"), "reject": ("proposed", "approved")}


def decide_item(
    db: Database, item_id: str, decision: str, actor: str, reason: str = ""
) -> MemoryItem:
    """A person's approval (the item reaches prompts from now on) or rejection (it never
    does) of an item, stored with who made it, when and why in the item and in the
    governance log. Raises `DecisionRefused` for an unknown item or a move not allowed."""
    if decision not in _DECIDABLE:
        raise DecisionRefused(f"unknown decision {decision!r}")
    new = "approved" if decision == "approve" else "rejected"
    with db.transaction() as session:
        row = session.get(MemoryItemRow, item_id)
        if row is None:
            raise DecisionRefused(f"no memory item {item_id}")
        if row.status not in _DECIDABLE[decision]:
            why = f": {row.reason}" if row.reason else ""
            raise DecisionRefused(f"memory item {item_id} is {row.status}{why}")
        old = row.status
        row.status, row.decided_by, row.decided_at = new, actor, utcnow()
        row.reason = reason.strip()[:500]
        note = f"{_summary(row)} ({row.reason})" if row.reason else _summary(row)
        _log_change(session, item_id, old, new, actor, note[:500])
        item = item_from_row(row)
    log.warning("memory item %s %s by %s", item_id, new, actor)
    return item


def delete_item(db: Database, item_id: str, actor: str) -> MemoryItem | None:
    """Deletes an item for good; the deletion is stored with who made it and what the item
    said. The item deleted, or None when there was none."""
    with db.transaction() as session:
        row = session.get(MemoryItemRow, item_id)
        if row is None:
            return None
        item = item_from_row(row)
        _log_change(
            session,
            item_id,
            "disabled" if row.disabled else "enabled",
            None,
            actor,
            f"deleted: {_summary(row)}",
        )
        session.delete(row)
    log.warning("memory item %s deleted by %s", item_id, actor)
    return item


def governance_log(
    db: Database, item_id: str | None = None, limit: int = 50
) -> list[SettingChange]:
    """The latest disables, enables and deletions (of one item, or of all), newest first."""
    key = CHANGE_PREFIX + item_id if item_id else None
    with db.session() as session:
        return memory_db.changes(session, CHANGE_PREFIX, key, limit)


def distilled(db: Database, sources: Sequence[str]) -> set[str]:
    """Which of `sources` were distilled already."""
    if not sources:
        return set()
    with db.session() as session:
        return memory_db.distilled_sources(session, sources)


# The `Judgment` fields that are columns of `judgments` (queried); the rest go in `detail`.
_JUDGMENT_COLUMNS: set[str] = {"kind", "mode", "helpful", "failed_gate"}


def save_judgment(db: Database, decision_id: int, judgment: Judgment) -> int:
    """Stores a judgment with its decision; the row id."""
    with db.transaction() as session:
        row = JudgmentRow(
            decision_id=decision_id,
            **judgment.model_dump(include=_JUDGMENT_COLUMNS),
            model=judgment.model,
            detail=judgment.model_dump(mode="json", exclude=_JUDGMENT_COLUMNS),
        )
        session.add(row)
        session.flush()
        return row.id


def judgments_of(db: Database, decision_id: int) -> list[Judgment]:
    with db.session() as session:
        return [judgment_from_row(r) for r in memory_db.judgment_rows(session, decision_id)]


def judgment_from_row(row: JudgmentRow) -> Judgment:
    return Judgment.model_validate(
        {**row.detail, **{name: getattr(row, name) for name in _JUDGMENT_COLUMNS}}
    )


def _log_change(
    session: Session, item_id: str, old: str, new: str | None, actor: str, note: str
) -> None:
    """One governance-log line for an item (the web app's memory page and `factnote memory`
    read them): what it was, what it became (None: deleted), who and why."""
    session.add(
        SettingChange(
            key=CHANGE_PREFIX + item_id,
            old_value=old,
            new_value=new,
            actor=actor or "?",
            note=note,
        )
    )
