"""Reading and writing the records the pipeline produces."""

from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from pipeline.records import Decision, Document, LLMCall, Passage, Post
from storage import metric_totals, review_queue
from storage.db import Database
from storage.mapping import row_values, to_row
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
            return Document.model_validate(row, from_attributes=True) if row else None

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
                session.add(to_row(DocumentRow, doc))
            try:
                session.commit()
            except IntegrityError:  # another process stored the same snapshot first
                session.rollback()


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
    """Persist a decision with its ordered evidence, its LLM calls and its trace, as ORM rows
    (for callers that go on with the row; `insert_decision` writes the same without them)."""
    values = _decision_values(request.id, decision)
    row = DecisionRow(**values)
    row.evidence = [to_row(EvidenceRow, ev, position=i) for i, ev in enumerate(decision.evidence)]
    row.llm_calls = [to_row(LLMCallRow, call) for call in decision.trace.llm_calls]
    session.add(row)
    _add_snapshots(session, decision)
    session.flush()
    _add_totals(session, request.platform, values, decision)
    latest = _latest(request.id, values, decision)
    review_queue.mark_latest(session, [latest])
    # Written in Core: the loaded row learns the values without a read back.
    set_committed_value(request, "latest_verdict", latest[1])
    set_committed_value(request, "latest_tier_rank", latest[2])
    return row


def insert_decision(session: Session, request_id: int, decision: Decision) -> int:
    """`add_decision` in Core inserts, no ORM row built or flushed (the worker's record of
    every request, issue 12): the decision (its id returned), then its evidence and LLM calls
    in one statement each. Returns the decision's id."""
    values = _decision_values(request_id, decision)
    decision_id = int(session.execute(_DECISION_INSERT, values).scalar_one())
    evidence = [
        {**row_values(EvidenceRow, ev), "position": i, "decision_id": decision_id}
        for i, ev in enumerate(decision.evidence)
    ]
    calls = [
        {**row_values(LLMCallRow, call), "decision_id": decision_id}
        for call in decision.trace.llm_calls
    ]
    for table, rows in ((EvidenceRow.__table__, evidence), (LLMCallRow.__table__, calls)):
        if rows:
            session.execute(insert(cast(Table, table)), rows)
    _add_snapshots(session, decision)
    platform = session.scalar(select(Request.platform).where(Request.id == request_id))
    _add_totals(session, platform or "", values, decision)
    review_queue.mark_latest(session, [_latest(request_id, values, decision)])
    return decision_id


def _latest(
    request_id: int, values: dict[str, Any], decision: Decision
) -> tuple[int, str | None, int | None]:
    """What the request's row keeps of its latest decision (`review_queue.mark_latest`): the
    verdict as its decision row has it, the best rank among its evidence's tiers."""
    tiers = (str(e.tier) for e in decision.evidence)
    return request_id, values.get("verdict"), review_queue.best_tier_rank(tiers)


def _add_totals(
    session: Session, platform: str, values: dict[str, Any], decision: Decision
) -> None:
    """The decision's share of `/metrics`' running totals, in the same transaction."""
    metric_totals.add(
        session,
        metric_totals.decision_totals(
            platform=platform,
            status=str(values["status"]),
            timings=values.get("timings"),
            trace=values["trace"],
            calls=[row_values(LLMCallRow, call) for call in decision.trace.llm_calls],
        ),
    )


def insert_decisions(session: Session, decisions: Sequence[tuple[int, str, Decision]]) -> None:
    """Many decisions at once, as (request id, its platform, decision): the rows
    `insert_decision` writes, each table in one statement, the running totals added once
    (bulk imports; the review queue benchmark seeds its 110,000 decisions with it). Page
    snapshots are not written: store the documents first where they matter."""
    if not decisions:
        return
    values = [_decision_values(request_id, decision) for request_id, _, decision in decisions]
    table = cast(Table, DecisionRow.__table__)
    ids = session.execute(
        insert(table).returning(table.c.id, sort_by_parameter_order=True), values
    ).scalars()
    evidence: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    totals: defaultdict[metric_totals.Key, float] = defaultdict(float)
    for decision_id, row, (_, platform, decision) in zip(ids, values, decisions, strict=True):
        evidence += [
            {**row_values(EvidenceRow, ev), "position": i, "decision_id": decision_id}
            for i, ev in enumerate(decision.evidence)
        ]
        own = [row_values(LLMCallRow, call) for call in decision.trace.llm_calls]
        calls += [{**call, "decision_id": decision_id} for call in own]
        one = metric_totals.decision_totals(
            platform=platform,
            status=str(row["status"]),
            timings=row.get("timings"),
            trace=row["trace"],
            calls=own,
        )
        for key, value in one.items():
            totals[key] += value
    for target, rows in ((EvidenceRow.__table__, evidence), (LLMCallRow.__table__, calls)):
        if rows:
            session.execute(insert(cast(Table, target)), rows)
    metric_totals.add(session, totals)
    review_queue.mark_latest(
        session,
        [
            _latest(rid, row, decision)
            for row, (rid, _, decision) in zip(values, decisions, strict=True)
        ],
    )


_DECISION_INSERT = insert(cast(Table, DecisionRow.__table__)).returning(DecisionRow.__table__.c.id)


def _decision_values(request_id: int, decision: Decision) -> dict[str, Any]:
    calls = decision.trace.llm_calls
    return {
        **row_values(DecisionRow, decision, exclude=_DECISION_OWN),
        "request_id": request_id,
        "trace": _trace_json(decision),
        "llm_calls_count": len(calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cost_usd": sum(c.cost_usd for c in calls),
    }


# The decision row's columns computed here rather than taken from the record's fields.
_DECISION_OWN = ("trace", "llm_calls_count", "prompt_tokens", "completion_tokens", "cost_usd")


def _add_snapshots(session: Session, decision: Decision) -> None:
    """Snapshots of the pages evidence was taken from, so quotes stay checkable later."""
    for doc in decision.documents:
        if snapshot_for(session, doc.canonical_url, doc.content_hash) is None:
            session.add(to_row(DocumentRow, doc))


def latest_decision_row(session: Session, request_id: int) -> DecisionRow | None:
    """The row of the last decision taken on a request."""
    return session.scalars(
        select(DecisionRow)
        .where(DecisionRow.request_id == request_id)
        .order_by(DecisionRow.id.desc())
        .limit(1)
    ).first()


def latest_decision(session: Session, request_id: int) -> Decision | None:
    """The last decision taken on a request, as the pipeline's record."""
    row = latest_decision_row(session, request_id)
    return decision_from_row(row) if row else None


def decision_from_row(row: DecisionRow) -> Decision:
    """A stored decision as the pipeline's record. The trace column holds the trace without its
    LLM calls (they have rows of their own) and with the retrieval candidates."""
    decision = Decision.model_validate(row, from_attributes=True)
    decision.trace.llm_calls = [
        LLMCall.model_validate(c, from_attributes=True) for c in row.llm_calls
    ]
    decision.candidates = [Passage.model_validate(c) for c in row.trace.get("candidates", [])]
    return decision


def _trace_json(decision: Decision) -> dict[str, Any]:
    trace = decision.trace.model_dump(mode="json", exclude={"llm_calls"})
    # What retrieval found when no LLM could judge it: the useful part of a needs_llm answer.
    trace["candidates"] = [c.model_dump(mode="json") for c in decision.candidates]
    return trace
