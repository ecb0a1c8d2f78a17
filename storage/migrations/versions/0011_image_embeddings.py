"""images: the learned embedding of each image (float32 bytes) and the embedder that made it,
our own clean copy of the picture, which the review app shows instead of hot-linking the
original URL, and the text OCR read in it (two pictures alike but saying different things are
not the same picture)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 21:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("images") as batch:
        batch.add_column(sa.Column("embedding", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("embedder", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("content", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("ocr_text", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("images") as batch:
        batch.drop_column("ocr_text")
        batch.drop_column("content")
        batch.drop_column("embedder")
        batch.drop_column("embedding")
