"""What the review app's item page reads of one request beyond the request itself: its latest
decision with the evidence and the LLM calls, how many decisions it has, and the page a quote
was taken from when only the text's hash finds it. `bot.web.queries` calls these and writes no
SQL of its own."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from storage.models import DecisionRow, DocumentRow


def latest_decision(session: Session, request_id: int) -> DecisionRow | None:
    """The request's latest decision, its evidence and LLM calls loaded with it."""
    return session.scalars(
        select(DecisionRow)
        .where(DecisionRow.request_id == request_id)
        .options(selectinload(DecisionRow.evidence), selectinload(DecisionRow.llm_calls))
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).first()


def decision_count(session: Session, request_id: int) -> int:
    return int(
        session.scalar(
            select(func.count())
            .select_from(DecisionRow)
            .where(DecisionRow.request_id == request_id)
        )
        or 0
    )


def snapshot_by_hash(session: Session, content_hash: str) -> DocumentRow | None:
    """The first stored page whose text has this hash, whatever its URL."""
    return session.scalars(
        select(DocumentRow)
        .where(DocumentRow.content_hash == content_hash)
        .order_by(DocumentRow.id)
        .limit(1)
    ).first()
