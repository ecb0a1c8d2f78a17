"""claim_sync_sources: where `factnote claims sync` resumes each fact-check source (issue 29)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 13:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "claim_sync_sources",
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("synced_from", sa.DateTime(timezone=True), nullable=True),
        sa.Column("newest_review", sa.DateTime(timezone=True), nullable=True),
        sa.Column("digest", sa.String(length=64), nullable=True),
        sa.Column("imported", sa.Integer(), nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("source"),
    )


def downgrade() -> None:
    op.drop_table("claim_sync_sources")
