"""request latest verdict and tier: each request row keeps its latest decision's verdict and
the best tier rank among that decision's evidence, indexed with the queue's other filters, so
the review queue's and the decisions log's filters and counts read an index instead of every
decision (storage/review_queue.py); and the log's order, (created_at, id), gets an index of
its own, so a deep page walks it on PostgreSQL instead of sorting every request. The two
columns are filled here from the decisions already stored.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03 16:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# pipeline.records.TIER_RANK as of this revision (a migration must not change with the code);
# a tier it does not know ranks after all of them, as storage.review_queue ranks it.
_TIER_RANK = {"high": 0, "authority": 0, "medium": 1, "low": 2, "unknown": 3, "excluded": 4}
_NO_TIER = 99
_QUEUE_COLUMNS = [
    "state",
    "latest_verdict",
    "created_at",
    "id",
    "latest_tier_rank",
    "escalated_by",
    "claimed_by",
    "platform",
    "requester",
]


def upgrade() -> None:
    op.add_column("requests", sa.Column("latest_verdict", sa.String(length=32), nullable=True))
    op.add_column("requests", sa.Column("latest_tier_rank", sa.Integer(), nullable=True))
    _backfill()
    op.create_index("ix_requests_queue_filters", "requests", _QUEUE_COLUMNS)
    op.create_index(
        "ix_requests_verdict_created", "requests", ["latest_verdict", "created_at", "id"]
    )
    op.create_index("ix_requests_created_id", "requests", ["created_at", "id"])


def _backfill() -> None:
    """One UPDATE: the latest decision by id, as storage.review_queue always chose it."""
    meta = sa.MetaData()
    bind = op.get_bind()
    requests = sa.Table("requests", meta, autoload_with=bind)
    decisions = sa.Table("decisions", meta, autoload_with=bind)
    evidence = sa.Table("evidence", meta, autoload_with=bind)
    mine = decisions.alias("mine")
    latest = (
        sa.select(sa.func.max(mine.c.id))
        .where(mine.c.request_id == requests.c.id)
        .correlate(requests)
        .scalar_subquery()
    )
    verdict = (
        sa.select(decisions.c.verdict)
        .where(decisions.c.id == latest)
        .correlate(requests)
        .scalar_subquery()
    )
    rank = (
        sa.select(sa.func.min(sa.case(_TIER_RANK, value=evidence.c.tier, else_=_NO_TIER)))
        .where(evidence.c.decision_id == latest)
        .correlate(requests)
        .scalar_subquery()
    )
    op.execute(
        requests.update().values(
            latest_verdict=verdict, latest_tier_rank=rank, updated_at=requests.c.updated_at
        )
    )


def downgrade() -> None:
    op.drop_index("ix_requests_created_id", table_name="requests")
    op.drop_index("ix_requests_verdict_created", table_name="requests")
    op.drop_index("ix_requests_queue_filters", table_name="requests")
    # Not in a batch: on SQLite a batch copies the table, which rows of others refer to.
    op.drop_column("requests", "latest_tier_rank")
    op.drop_column("requests", "latest_verdict")
