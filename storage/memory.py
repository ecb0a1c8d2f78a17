"""Queries about experience memory (tables `memory_items`, `memory_sources`, `judgments`) and
the episodes it learns from, for `bot.memory.store` and `bot.memory.learn`. The bot calls these
and writes no SQL of its own for them; it turns the rows into the pipeline's records."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import String, cast, delete, func, literal, or_, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from storage.models import DecisionRow, MemoryItemRow, MemorySource, ReviewAction, SettingChange
from storage.models import Judgment as JudgmentRow

# What a failed read or write of these tables raises (a running bank goes on without it).
StoreError = SQLAlchemyError


def item_rows(session: Session) -> list[MemoryItemRow]:
    return list(session.scalars(select(MemoryItemRow)))


def item_states(session: Session) -> dict[str, tuple[bool, str]]:
    """Each item's id with whether it is disabled and its status."""
    query = select(MemoryItemRow.id, MemoryItemRow.disabled, MemoryItemRow.status)
    return {item_id: (off, status) for item_id, off, status in session.execute(query)}


def delete_items(session: Session, ids: Sequence[str]) -> None:
    if ids:
        session.execute(delete(MemoryItemRow).where(MemoryItemRow.id.in_(list(ids))))


def mark_distilled(session: Session, source: str, items: int, at: datetime) -> None:
    session.merge(MemorySource(source=source, items=items, distilled_at=at))


def matching_items(
    session: Session,
    text: str,
    phase: str | None,
    *,
    disabled: bool | None = None,
    status: str | None = None,
) -> list[MemoryItemRow]:
    """Items whose trigger or strategy contains `text` (any case; "" for any), of `phase`,
    disabled or not and of `status` (None for any), newest first."""
    stmt = select(MemoryItemRow).order_by(MemoryItemRow.created_at.desc(), MemoryItemRow.id)
    if text.strip():
        needle = f"%{text.strip().lower()}%"
        stmt = stmt.where(
            or_(
                MemoryItemRow.trigger.ilike(needle),
                MemoryItemRow.strategy.ilike(needle),
            )
        )
    if phase is not None:
        stmt = stmt.where(MemoryItemRow.phase == phase)
    if disabled is not None:
        stmt = stmt.where(MemoryItemRow.disabled.is_(disabled))
    if status is not None:
        stmt = stmt.where(MemoryItemRow.status == status)
    return list(session.scalars(stmt))


def item_count(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(MemoryItemRow)) or 0)


def episode_requests(
    session: Session, decision_ids: Sequence[int], review_ids: Sequence[int]
) -> tuple[dict[int, int], dict[int, tuple[int, str]]]:
    """The request of each decision, and of each moderator action with what it was
    ("edit by alice")."""
    decisions = {
        decision_id: request_id
        for decision_id, request_id in session.execute(
            select(DecisionRow.id, DecisionRow.request_id).where(
                DecisionRow.id.in_(list(decision_ids))
            )
        )
    }
    reviews = {
        a.id: (a.request_id, f"{a.action} by {a.actor}")
        for a in session.scalars(select(ReviewAction).where(ReviewAction.id.in_(list(review_ids))))
    }
    return decisions, reviews


def changes(session: Session, prefix: str, key: str | None, limit: int) -> list[SettingChange]:
    """The latest setting changes of `key`, or of every key starting with `prefix`, newest
    first."""
    stmt = select(SettingChange).order_by(SettingChange.created_at.desc(), SettingChange.id.desc())
    stmt = stmt.where(SettingChange.key == key if key else SettingChange.key.startswith(prefix))
    return list(session.scalars(stmt.limit(limit)))


def distilled_sources(session: Session, sources: Sequence[str]) -> set[str]:
    """Which of `sources` were distilled already."""
    if not sources:
        return set()
    found = session.scalars(
        select(MemorySource.source).where(MemorySource.source.in_(list(sources)))
    )
    return set(found)


def judgment_rows(session: Session, decision_id: int) -> list[JudgmentRow]:
    return list(
        session.scalars(
            select(JudgmentRow)
            .where(JudgmentRow.decision_id == decision_id)
            .order_by(JudgmentRow.id)
        )
    )


def review_actions(session: Session, actions: Sequence[str]) -> list[ReviewAction]:
    """Every moderator action of these kinds, oldest first."""
    return list(
        session.scalars(
            select(ReviewAction)
            .where(ReviewAction.action.in_(list(actions)))
            .order_by(ReviewAction.id)
        )
    )


def unjudged_decisions(session: Session, statuses: Sequence[str], limit: int) -> list[DecisionRow]:
    """The latest `limit` decisions of `statuses` with no judgment, newest first."""
    judged = select(JudgmentRow.decision_id)
    return list(
        session.scalars(
            select(DecisionRow)
            .where(DecisionRow.status.in_(list(statuses)))
            .where(DecisionRow.id.not_in(judged))
            .order_by(DecisionRow.id.desc())
            .limit(limit)
        )
    )


def undistilled_judgments(session: Session, limit: int) -> list[tuple[JudgmentRow, DecisionRow]]:
    """Stored judgments whose decision ("decision:<id>") was never distilled, oldest first,
    each with its decision."""
    source = literal("decision:") + cast(JudgmentRow.decision_id, String)
    rows = session.execute(
        select(JudgmentRow, DecisionRow)
        .join(DecisionRow, DecisionRow.id == JudgmentRow.decision_id)
        .where(source.not_in(select(MemorySource.source)))
        .order_by(JudgmentRow.id)
        .limit(limit)
    )
    return [(judgment, decision) for judgment, decision in rows]
