"""memory_items: status and provenance (issue 33): an item learned from the bot's own episodes
is proposed and reaches no prompt until a person approves it; who decided, when and why

Existing items are sorted by where they came from: those learned only from moderators' edits
and rejections stay in use (approved, as the moderator's), every other one becomes proposed.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03 13:30:00.000000
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CONFIRMED = ("edit", "reject")


def _origin(sources: list[str], actions: dict[int, str]) -> str:
    """The episode kind an item's first source names ("judge" for a judged decision)."""
    for source in sources:
        kind, _, number = str(source).partition(":")
        if kind == "review" and number.isdigit():
            return actions.get(int(number), "approve")
        if kind == "import":
            return "import"
    return "judge"


def upgrade() -> None:
    op.add_column(
        "memory_items",
        sa.Column("status", sa.String(length=16), nullable=False, server_default="proposed"),
    )
    op.add_column(
        "memory_items",
        sa.Column("origin", sa.String(length=16), nullable=False, server_default="judge"),
    )
    op.add_column("memory_items", sa.Column("decided_by", sa.String(length=64), nullable=True))
    op.add_column(
        "memory_items", sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column("memory_items", sa.Column("reason", sa.Text(), nullable=False, server_default=""))
    op.create_index("ix_memory_items_status", "memory_items", ["status"])
    bind = op.get_bind()
    actions = {
        row.id: row.action for row in bind.execute(sa.text("SELECT id, action FROM review_actions"))
    }
    for row in bind.execute(sa.text("SELECT id, sources FROM memory_items")).all():
        sources = json.loads(row.sources) if isinstance(row.sources, str) else row.sources
        sources = [str(s) for s in sources or []]
        status = (
            "approved" if sources and all(_confirmed(s, actions) for s in sources) else "proposed"
        )
        bind.execute(
            sa.text("UPDATE memory_items SET status = :status, origin = :origin WHERE id = :id"),
            {"status": status, "origin": _origin(sources, actions), "id": row.id},
        )


def _confirmed(source: str, actions: dict[int, str]) -> bool:
    kind, _, number = source.partition(":")
    return kind == "review" and number.isdigit() and actions.get(int(number)) in _CONFIRMED


def downgrade() -> None:
    op.drop_index("ix_memory_items_status", table_name="memory_items")
    with op.batch_alter_table("memory_items") as batch:
        for column in ("reason", "decided_at", "decided_by", "origin", "status"):
            batch.drop_column(column)
