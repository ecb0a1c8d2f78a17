"""judgments of decisions, experience memory items, episodes distilled into memory

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("helpful", sa.Boolean(), nullable=False),
        sa.Column("failed_gate", sa.String(length=32), nullable=True),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["decision_id"], ["decisions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_judgments_decision_id", "judgments", ["decision_id"])
    op.create_table(
        "memory_items",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("trigger", sa.Text(), nullable=False),
        sa.Column("strategy", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_useful_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_memory_items_phase", "memory_items", ["phase"])
    op.create_table(
        "memory_sources",
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("distilled_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("source"),
    )


def downgrade() -> None:
    op.drop_table("memory_sources")
    op.drop_index("ix_memory_items_phase", table_name="memory_items")
    op.drop_table("memory_items")
    op.drop_index("ix_judgments_decision_id", table_name="judgments")
    op.drop_table("judgments")
