"""metric totals and queue indexes: `/metrics` reads running totals kept as each decision is
written (storage/metric_totals.py) instead of every decision's timings and trace; the review
queue's order and the posting-error count get indexes. The totals are filled from the
decisions already stored, once, here.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 13:30:00.000000
"""

from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

from storage import metric_totals

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WHERE = sa.text("post_attempts > 0 AND last_error IS NOT NULL")


def upgrade() -> None:
    op.create_table(
        "metric_totals",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("label", sa.String(length=255), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name", "label"),
    )
    op.create_index("ix_requests_state_created", "requests", ["state", "created_at", "id"])
    op.create_index(
        "ix_decisions_request_latest", "decisions", ["request_id", "id", "verdict"]
    )
    op.create_index(
        "ix_requests_post_errors",
        "requests",
        ["platform"],
        sqlite_where=_WHERE,
        postgresql_where=_WHERE,
    )
    _backfill()


def _backfill() -> None:
    """The totals of the decisions stored before this revision, read in batches."""
    session = Session(bind=op.get_bind())
    meta = sa.MetaData()
    decisions = sa.Table("decisions", meta, autoload_with=session.get_bind())
    requests = sa.Table("requests", meta, autoload_with=session.get_bind())
    calls = sa.Table("llm_calls", meta, autoload_with=session.get_bind())
    by_decision: dict[int, list[dict[str, object]]] = {}
    for row in session.execute(sa.select(calls)).mappings():
        by_decision.setdefault(int(row["decision_id"]), []).append(dict(row))
    totals: defaultdict[metric_totals.Key, float] = defaultdict(float)
    rows = session.execute(
        sa.select(
            decisions.c.id,
            decisions.c.status,
            decisions.c.timings,
            decisions.c.trace,
            requests.c.platform,
        )
        .join(requests, requests.c.id == decisions.c.request_id)
        .execution_options(yield_per=500)
    )
    for decision_id, status, timings, trace, platform in rows:
        one = metric_totals.decision_totals(
            platform=platform,
            status=status,
            timings=timings,
            trace=trace,
            calls=by_decision.get(decision_id, []),
        )
        for key, value in one.items():
            totals[key] += value
    metric_totals.add(session, totals)
    session.flush()


def downgrade() -> None:
    op.drop_index("ix_requests_post_errors", table_name="requests")
    op.drop_index("ix_decisions_request_latest", table_name="decisions")
    op.drop_index("ix_requests_state_created", table_name="requests")
    op.drop_table("metric_totals")
