"""`insert_decision`, the worker's Core write of a decision (issue 12), stores what
`add_decision` stores: read back, it is the same decision, on both databases."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from storage import metric_totals
from storage.db import Database
from storage.models import DecisionRow, EvidenceRow
from storage.repositories import (
    SqlDocumentStore,
    create_cli_request,
    insert_decision,
    insert_decisions,
    latest_decision,
)
from testing.builders import assert_no_defaults, full_decision, post

A_POST = post("A claim.", id="1", author="someone")


def test_a_decision_inserted_without_orm_rows_reads_back_as_the_same_decision(
    main_db: Database,
) -> None:
    decision = full_decision()
    assert_no_defaults(decision)
    with main_db.transaction() as session:
        request_id = create_cli_request(session, A_POST).id
        decision_id = insert_decision(session, request_id, decision)
    with main_db.session() as session:
        assert session.scalars(select(DecisionRow.id)).one() == decision_id
        again = latest_decision(session, request_id)
        positions = list(session.scalars(select(EvidenceRow.position).order_by(EvidenceRow.id)))
        assert session.scalar(select(func.count()).select_from(DecisionRow)) == 1
    # The page snapshots are stored apart from the decision, and found by URL.
    assert again == decision.model_copy(update={"documents": []})
    assert positions == [0, 1]
    assert (
        SqlDocumentStore(main_db).get(decision.documents[0].canonical_url)
        == (decision.documents[0])
    )


def test_decisions_inserted_many_at_a_time_read_back_as_each_one_and_add_to_the_totals(
    main_db: Database,
) -> None:
    decision = full_decision()
    with main_db.transaction() as session:
        one = create_cli_request(session, A_POST).id
        request_ids = [create_cli_request(session, A_POST).id for _ in range(3)]
        insert_decision(session, one, decision)
    with main_db.session() as session:
        alone = metric_totals.read(session)
    with main_db.transaction() as session:
        insert_decisions(session, [(rid, "cli", decision) for rid in request_ids])
    with main_db.session() as session:
        for request_id in request_ids:
            assert latest_decision(session, request_id) == decision.model_copy(
                update={"documents": []}
            )
        totals = metric_totals.read(session)
    assert totals.keys() == alone.keys()  # the LLM totals: a check run's calls count too
    for name, labels in alone.items():
        assert totals[name] == pytest.approx({k: 4 * v for k, v in labels.items()})
