"""Records and rows map by name, one mapping each way (`storage.mapping`): every column maps to a
record field of its name, and a record stored and read back is the record it was."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel
from sqlalchemy import JSON, String, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from pipeline.records import (
    Decision,
    Document,
    Evidence,
    LLMCall,
    Stance,
)
from storage.db import Database
from storage.mapping import row_values, to_row, value_columns
from storage.models import Base, DecisionRow, DocumentRow, EvidenceRow, LLMCallRow, UTCDateTime
from storage.repositories import (
    SqlDocumentStore,
    add_decision,
    create_cli_request,
    latest_decision,
)
from testing.builders import (
    WHEN,
    assert_no_defaults,
    full_decision,
    full_document,
    full_llm_call,
    post,
)

A_POST = post("A claim.", id="1", author="someone")

# Columns no record field fills: the repositories set them. A new column must either be a field
# of the record too (then it maps by itself) or be listed here.
ROW_ONLY: dict[type[Base], set[str]] = {
    EvidenceRow: {"position"},  # the evidence's place in the decision
    DocumentRow: set(),
    LLMCallRow: set(),
    # Totals of the LLM calls, and when the row was written.
    DecisionRow: {
        "llm_calls_count",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "created_at",
    },
}
RECORDS: dict[type[Base], type[BaseModel]] = {
    EvidenceRow: Evidence,
    DocumentRow: Document,
    LLMCallRow: LLMCall,
    DecisionRow: Decision,
}


@pytest.mark.parametrize("row_type", list(RECORDS), ids=lambda t: t.__name__)
def test_every_column_but_the_keys_maps_to_a_record_field_of_its_name(
    row_type: type[Base],
) -> None:
    fields = set(RECORDS[row_type].model_fields)
    assert value_columns(row_type) - ROW_ONLY[row_type] <= fields
    assert not ROW_ONLY[row_type] & fields
    assert not {"id", "decision_id", "request_id"} & value_columns(row_type)


@pytest.mark.parametrize(
    ("row_type", "record"),
    [(DocumentRow, full_document()), (LLMCallRow, full_llm_call("verdict"))],
    ids=["document", "llm_call"],
)
def test_a_record_stored_and_read_back_is_the_same_record(
    db: Database, row_type: type[Base], record: BaseModel
) -> None:
    assert_no_defaults(record)
    with db.transaction() as session:
        if row_type is LLMCallRow:  # a call is stored with the decision it was made for
            bare = Decision(
                status="failed", platform="x", as_of=WHEN, trace={"llm_calls": [record]}
            )
            add_decision(
                session,
                create_cli_request(session, A_POST),
                bare,
            )
        else:
            session.add(to_row(row_type, record))
    with db.session() as session:
        stored = session.scalars(select(row_type)).one()
        assert type(record).model_validate(stored, from_attributes=True) == record


def test_a_decision_stored_and_read_back_is_the_same_decision(db: Database) -> None:
    decision = full_decision()
    assert_no_defaults(decision)
    for evidence in decision.evidence:
        assert_no_defaults(evidence)
    with db.transaction() as session:
        add_decision(
            session,
            create_cli_request(session, A_POST),
            decision,
        )
    with db.session() as session:
        request_id = session.scalars(select(DecisionRow.request_id)).one()
        again = latest_decision(session, request_id)
    # The page snapshots are stored apart from the decision, and found by URL.
    assert again == decision.model_copy(update={"documents": []})
    assert SqlDocumentStore(db).get(decision.documents[0].canonical_url) == decision.documents[0]


def test_the_row_holds_plain_values_and_the_llm_totals(db: Database) -> None:
    decision = full_decision()
    with db.transaction() as session:
        row = add_decision(
            session,
            create_cli_request(session, A_POST),
            decision,
        )
        assert (row.status, row.verdict, row.platform) == ("abstain", "misleading", "bluesky")
        assert [(e.position, e.tier, e.stance) for e in row.evidence] == [
            (0, "medium", "context"),
            (1, "medium", "context"),
        ]
        assert type(row.evidence[0].source) is str
        assert (row.llm_calls_count, row.prompt_tokens, row.completion_tokens) == (2, 240, 90)
        assert row.cost_usd == pytest.approx(0.025)
        assert "llm_calls" not in row.trace and row.trace["candidates"][0]["index"] == 2


# --- a field added to a record and its table needs no mapping change ---------------------------


class _OtherBase(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {list[Any]: JSON}


class _NoteRow(_OtherBase):
    __tablename__ = "notes"

    id: Mapped[int] = mapped_column(primary_key=True)
    stance: Mapped[str] = mapped_column(String(16))
    seen: Mapped[datetime] = mapped_column(UTCDateTime())
    tags: Mapped[list[Any]] = mapped_column(JSON)
    added_later: Mapped[str] = mapped_column(String(16), default="")


class _Note(BaseModel):
    stance: Stance
    seen: datetime
    tags: list[str]
    added_later: str = ""


def test_a_field_added_to_a_record_and_a_column_to_its_table_maps_by_itself() -> None:
    engine = create_engine("sqlite://")
    _OtherBase.metadata.create_all(engine)
    note = _Note(stance=Stance.SUPPORTS, seen=WHEN, tags=["a", "b"], added_later="new")
    assert row_values(_NoteRow, note) == {
        "stance": "supports",
        "seen": WHEN,
        "tags": ["a", "b"],
        "added_later": "new",
    }
    with Session(engine) as session:
        session.add(to_row(_NoteRow, note))
        session.commit()
    with Session(engine) as session:
        row = session.scalars(select(_NoteRow)).one()
        assert _Note.model_validate(row, from_attributes=True) == note
    engine.dispose()
