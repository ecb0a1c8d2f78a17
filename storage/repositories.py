"""Reading and writing the records the pipeline produces."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from pipeline.records import (
    Decision,
    DecisionStatus,
    Document,
    Evidence,
    LLMCall,
    Passage,
    Platform,
    Post,
    Stance,
    Tier,
    Trace,
    Verdict,
)
from storage.db import Database
from storage.models import DecisionRow, DocumentRow, EvidenceRow, LLMCallRow, Request


class SqlDocumentStore:
    """The pipeline's `DocumentStore` on SQL: snapshots by canonical URL and content hash."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()  # SQLite allows one writer; serialise our own puts

    def get(self, canonical_url: str) -> Document | None:
        with self._db.session() as session:
            row = session.scalars(
                select(DocumentRow)
                .where(DocumentRow.canonical_url == canonical_url)
                .order_by(DocumentRow.fetched_at.desc(), DocumentRow.id.desc())
                .limit(1)
            ).first()
            return _document_from_row(row) if row else None

    def put(self, doc: Document) -> None:
        with self._lock, self._db.session() as session:
            exists = session.scalars(
                select(DocumentRow.id).where(
                    DocumentRow.canonical_url == doc.canonical_url,
                    DocumentRow.content_hash == doc.content_hash,
                )
            ).first()
            if exists is not None:
                # Same snapshot seen again: only the fetch time moves.
                row = session.get(DocumentRow, exists)
                assert row is not None
                row.fetched_at = doc.fetched_at
            else:
                session.add(_document_to_row(doc))
            try:
                session.commit()
            except IntegrityError:  # another process stored the same snapshot first
                session.rollback()


def _document_to_row(doc: Document) -> DocumentRow:
    return DocumentRow(
        canonical_url=doc.canonical_url,
        url=doc.url,
        final_url=doc.final_url,
        ok=doc.ok,
        status_code=doc.status_code,
        content_type=doc.content_type,
        title=doc.title,
        text=doc.text,
        published=doc.published,
        date_source=doc.date_source,
        word_count=doc.word_count,
        content_hash=doc.content_hash,
        fetched_at=doc.fetched_at,
        error=doc.error,
    )


def _document_from_row(row: DocumentRow) -> Document:
    return Document(
        url=row.url,
        canonical_url=row.canonical_url,
        final_url=row.final_url,
        ok=row.ok,
        status_code=row.status_code,
        content_type=row.content_type,
        title=row.title,
        text=row.text,
        published=row.published,
        date_source=row.date_source,
        word_count=row.word_count,
        content_hash=row.content_hash,
        fetched_at=row.fetched_at,
        error=row.error,
    )


def snapshot_for(session: Session, canonical_url: str, content_hash: str) -> DocumentRow | None:
    """The exact page text an evidence item quoted."""
    return session.scalars(
        select(DocumentRow).where(
            DocumentRow.canonical_url == canonical_url, DocumentRow.content_hash == content_hash
        )
    ).first()


def create_cli_request(session: Session, post: Post) -> Request:
    """A request row for a one-off `factnote check`, so CLI checks are audited like bot ones."""
    request = Request(
        platform="cli",
        summons_id=f"cli-{uuid.uuid4().hex}",
        requester="cli",
        summons=post.model_dump(mode="json"),
        target=post.model_dump(mode="json"),
        state="processing",
        mode="dry-run",
    )
    session.add(request)
    session.flush()
    return request


def add_decision(session: Session, request: Request, decision: Decision) -> DecisionRow:
    """Persist a decision with its ordered evidence, its LLM calls and its trace."""
    row = DecisionRow(
        request_id=request.id,
        status=decision.status.value,
        verdict=decision.verdict.value if decision.verdict else None,
        confidence=decision.confidence,
        platform=decision.platform.value,
        reply=decision.reply,
        urls=list(decision.urls),
        reasons=list(decision.reasons),
        lang=decision.lang,
        as_of=decision.as_of,
        error=decision.error,
        timings=dict(decision.timings),
        trace=_trace_json(decision),
        llm_calls_count=len(decision.trace.llm_calls),
        prompt_tokens=sum(c.prompt_tokens for c in decision.trace.llm_calls),
        completion_tokens=sum(c.completion_tokens for c in decision.trace.llm_calls),
        cost_usd=sum(c.cost_usd for c in decision.trace.llm_calls),
    )
    for position, ev in enumerate(decision.evidence):
        row.evidence.append(
            EvidenceRow(
                position=position,
                url=ev.url,
                title=ev.title,
                domain=ev.domain,
                tier=ev.tier.value,
                stance=ev.stance.value,
                confidence=ev.confidence,
                quote=ev.quote,
                relevance=ev.relevance,
                published=ev.published,
                content_hash=ev.content_hash,
                round=ev.round,
                source=ev.source,
            )
        )
    for call in decision.trace.llm_calls:
        row.llm_calls.append(
            LLMCallRow(
                step=call.step,
                model=call.model,
                ok=call.ok,
                attempts=call.attempts,
                prompt_tokens=call.prompt_tokens,
                completion_tokens=call.completion_tokens,
                latency_s=call.latency_s,
                cost_usd=call.cost_usd,
                error=call.error,
                started_at=call.started_at,
            )
        )
    session.add(row)
    # Snapshots of the pages evidence was taken from, so quotes stay checkable later.
    for doc in decision.documents:
        if snapshot_for(session, doc.canonical_url, doc.content_hash) is None:
            session.add(_document_to_row(doc))
    session.flush()
    return row


def latest_decision(session: Session, request_id: int) -> Decision | None:
    """The last decision taken on a request, as the pipeline's record."""
    row = session.scalars(
        select(DecisionRow)
        .where(DecisionRow.request_id == request_id)
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).first()
    return decision_from_row(row) if row else None


def decision_from_row(row: DecisionRow) -> Decision:
    trace = Trace.model_validate(row.trace)
    trace.llm_calls = [
        LLMCall(
            step=c.step,
            model=c.model,
            ok=c.ok,
            attempts=c.attempts,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            latency_s=c.latency_s,
            cost_usd=c.cost_usd,
            error=c.error,
            started_at=c.started_at,
        )
        for c in row.llm_calls
    ]
    return Decision(
        status=DecisionStatus(row.status),
        verdict=Verdict(row.verdict) if row.verdict else None,
        confidence=row.confidence,
        platform=Platform(row.platform),
        reply=row.reply,
        urls=list(row.urls or []),
        evidence=[
            Evidence(
                url=e.url,
                title=e.title,
                domain=e.domain,
                tier=Tier(e.tier),
                stance=Stance(e.stance),
                confidence=e.confidence,
                quote=e.quote,
                relevance=e.relevance,
                published=e.published,
                content_hash=e.content_hash,
                round=e.round,
                source=e.source,
            )
            for e in row.evidence
        ],
        reasons=list(row.reasons or []),
        lang=row.lang,
        as_of=row.as_of,
        trace=trace,
        timings=dict(row.timings or {}),
        error=row.error,
        candidates=[Passage.model_validate(c) for c in row.trace.get("candidates", [])],
    )


def _trace_json(decision: Decision) -> dict[str, Any]:
    trace = decision.trace.model_dump(mode="json", exclude={"llm_calls"})
    # What retrieval found when no LLM could judge it: the useful part of a needs_llm answer.
    trace["candidates"] = [c.model_dump(mode="json") for c in decision.candidates]
    return trace


def load_decision(row: DecisionRow) -> dict[str, Any]:
    """A stored decision as plain JSON, for exports and the review app."""
    return {
        "id": row.id,
        "request_id": row.request_id,
        "status": row.status,
        "verdict": row.verdict,
        "confidence": row.confidence,
        "platform": row.platform,
        "reply": row.reply,
        "reasons": row.reasons,
        "as_of": row.as_of.isoformat(),
        "evidence": [
            {
                "url": e.url,
                "tier": e.tier,
                "stance": e.stance,
                "confidence": e.confidence,
                "quote": e.quote,
                "content_hash": e.content_hash,
            }
            for e in row.evidence
        ],
        "trace": row.trace,
    }
