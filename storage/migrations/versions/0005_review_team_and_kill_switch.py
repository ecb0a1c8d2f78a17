"""review team work (claims, escalation as a gate) and the posting kill switch

Requests gain who claimed them and who escalated them (an escalated item awaiting review
before this revision gets its escalation from the reason it was labelled with); posting pauses
per platform; and the log of every admin change to an override or a pause.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('requests', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claimed_by', sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('escalated_by', sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column('escalated_at', sa.DateTime(timezone=True), nullable=True))

    op.create_table('posting_pauses',
    sa.Column('platform', sa.String(length=32), nullable=False),
    sa.Column('paused_by', sa.String(length=128), nullable=False),
    sa.Column('note', sa.Text(), server_default='', nullable=False),
    sa.Column('paused_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('platform')
    )
    op.create_table('setting_changes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=128), nullable=False),
    sa.Column('old_value', sa.JSON(), nullable=True),
    sa.Column('new_value', sa.JSON(), nullable=True),
    sa.Column('actor', sa.String(length=128), nullable=False),
    sa.Column('note', sa.Text(), server_default='', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('setting_changes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_setting_changes_key'), ['key'], unique=False)
        batch_op.create_index(batch_op.f('ix_setting_changes_created_at'), ['created_at'], unique=False)

    # Items escalated before this revision carried it only in their reason: "escalated by NAME"
    # or "escalated by NAME: note". They keep it, as a real escalation now.
    requests = sa.table(
        'requests',
        sa.column('id', sa.Integer()),
        sa.column('state', sa.String()),
        sa.column('reason', sa.Text()),
        sa.column('updated_at', sa.DateTime(timezone=True)),
        sa.column('escalated_by', sa.String()),
        sa.column('escalated_at', sa.DateTime(timezone=True)),
    )
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(requests.c.id, requests.c.reason, requests.c.updated_at).where(
            requests.c.state == 'awaiting_review', requests.c.reason.like('escalated by %')
        )
    ).all()
    for request_id, reason, updated_at in rows:
        who = reason[len('escalated by '):].split(':', 1)[0].strip()[:128] or 'unknown'
        bind.execute(
            requests.update()
            .where(requests.c.id == request_id)
            .values(escalated_by=who, escalated_at=updated_at)
        )


def downgrade() -> None:
    with op.batch_alter_table('setting_changes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_setting_changes_created_at'))
        batch_op.drop_index(batch_op.f('ix_setting_changes_key'))

    op.drop_table('setting_changes')
    op.drop_table('posting_pauses')
    with op.batch_alter_table('requests', schema=None) as batch_op:
        batch_op.drop_column('escalated_at')
        batch_op.drop_column('escalated_by')
        batch_op.drop_column('claimed_at')
        batch_op.drop_column('claimed_by')
