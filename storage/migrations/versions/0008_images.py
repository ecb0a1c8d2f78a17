"""images seen (near-duplicate lookups): each once by the sha256 of its bytes

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 19:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "images",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("phash", sa.String(length=16), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fact_check", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("sha256"),
    )
    op.create_index("ix_images_phash", "images", ["phash"])


def downgrade() -> None:
    op.drop_index("ix_images_phash", table_name="images")
    op.drop_table("images")
