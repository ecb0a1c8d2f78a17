"""requests: indexes for the reads every post and every triage batch make, so that their cost
does not grow with the table (issue 12's runtime overhead): the repeat check looks up a reply
text on its platform (`bot.requests.no_repeats`), triage counts the last hour's requests, overall and per
requester (`bot.requests.triage.TriageBatch`)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 03:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Hash on PostgreSQL: no B-tree size limit on a long reply text (storage/models.py).
    op.create_index(
        "ix_requests_reply_text", "requests", ["reply_text"], postgresql_using="hash"
    )
    op.create_index("ix_requests_created", "requests", ["created_at"])
    op.create_index("ix_requests_requester_created", "requests", ["requester", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_requests_requester_created", table_name="requests")
    op.drop_index("ix_requests_created", table_name="requests")
    op.drop_index("ix_requests_reply_text", table_name="requests")
