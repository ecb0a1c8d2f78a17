"""images: the pHash's four 16-bit bands as indexed integer columns, so that a near-duplicate
lookup reads the rows one band lets through instead of every row (multi-index hashing,
`storage.images`); the bands of the rows already stored are filled in from their pHash

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 00:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BANDS = ("phash_b0", "phash_b1", "phash_b2", "phash_b3")


def _bands(phash: str) -> dict[str, int]:
    value = int(phash, 16)
    return {f"new_{name}": (value >> (16 * i)) & 0xFFFF for i, name in enumerate(BANDS)}


def upgrade() -> None:
    with op.batch_alter_table("images") as batch:
        for name in BANDS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))
    images = sa.table(
        "images",
        sa.column("sha256", sa.String()),
        sa.column("phash", sa.String()),
        *(sa.column(name, sa.Integer()) for name in BANDS),
    )
    bind = op.get_bind()
    stored = bind.execute(sa.select(images.c.sha256, images.c.phash)).all()
    if stored:
        fill = (
            images.update()
            .where(images.c.sha256 == sa.bindparam("key"))
            .values({name: sa.bindparam(f"new_{name}") for name in BANDS})
        )
        bind.execute(fill, [{"key": sha, **_bands(phash)} for sha, phash in stored])
    with op.batch_alter_table("images") as batch:
        for name in BANDS:
            batch.alter_column(name, existing_type=sa.Integer(), nullable=False)
    for name in BANDS:
        op.create_index(f"ix_images_{name}", "images", [name])


def downgrade() -> None:
    for name in reversed(BANDS):
        op.drop_index(f"ix_images_{name}", table_name="images")
    with op.batch_alter_table("images") as batch:
        for name in reversed(BANDS):
            batch.drop_column(name)
