"""X Community Notes: notes with their intents and statuses, evaluate scores, learned caps

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 19:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "x_notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("post_id", sa.String(length=64), nullable=False),
        sa.Column("test_mode", sa.Boolean(), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("classification", sa.String(length=64), nullable=False),
        sa.Column("misleading_tags", sa.JSON(), nullable=False),
        sa.Column("trustworthy_sources", sa.Boolean(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("drafted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("intent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note_id", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=64), nullable=True),
        sa.Column("buckets", sa.JSON(), nullable=False),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["request_id"], ["requests.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("post_id", "test_mode", name="uq_x_notes_post"),
    )
    op.create_index("ix_x_notes_submitted_at", "x_notes", ["submitted_at"])
    op.create_table(
        "x_note_evaluations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("post_id", sa.String(length=64), nullable=False),
        sa.Column("text_sha256", sa.String(length=64), nullable=False),
        sa.Column("test_mode", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("post_id", "text_sha256", name="uq_x_note_eval"),
    )
    op.create_table(
        "x_note_caps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("test_mode", sa.Boolean(), nullable=False),
        sa.Column("cap", sa.Integer(), nullable=False),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("x_note_caps")
    op.drop_table("x_note_evaluations")
    op.drop_index("ix_x_notes_submitted_at", table_name="x_notes")
    op.drop_table("x_notes")
