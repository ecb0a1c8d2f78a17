"""the pipeline's index stores in the main database: claim index, authority statements, local
search index, and the embedding size each was built with

Full text is the database's own: on SQLite an external-content FTS5 table per searched table,
kept in step by triggers (so any writer, `db migrate-to` included, updates it); on PostgreSQL a
GIN index over the same `to_tsvector` expression `storage.indexes.fulltext` queries with.

A later SQLite batch migration that recreates `claims` or `local_documents` must recreate
their triggers too (a table copy drops them).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 21:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"

_SQLITE_FTS = [
    f"CREATE VIRTUAL TABLE claims_fts USING fts5(claim_text, content='claims',"
    f" content_rowid='id', {_TOKENIZE})",
    "CREATE TRIGGER claims_fts_insert AFTER INSERT ON claims BEGIN"
    " INSERT INTO claims_fts (rowid, claim_text) VALUES (new.id, new.claim_text); END",
    "CREATE TRIGGER claims_fts_delete AFTER DELETE ON claims BEGIN"
    " INSERT INTO claims_fts (claims_fts, rowid, claim_text)"
    " VALUES ('delete', old.id, old.claim_text); END",
    "CREATE TRIGGER claims_fts_update AFTER UPDATE ON claims BEGIN"
    " INSERT INTO claims_fts (claims_fts, rowid, claim_text)"
    " VALUES ('delete', old.id, old.claim_text);"
    " INSERT INTO claims_fts (rowid, claim_text) VALUES (new.id, new.claim_text); END",
    f"CREATE VIRTUAL TABLE local_documents_fts USING fts5(title, text,"
    f" content='local_documents', content_rowid='id', {_TOKENIZE})",
    "CREATE TRIGGER local_documents_fts_insert AFTER INSERT ON local_documents BEGIN"
    " INSERT INTO local_documents_fts (rowid, title, text)"
    " VALUES (new.id, new.title, new.text); END",
    "CREATE TRIGGER local_documents_fts_delete AFTER DELETE ON local_documents BEGIN"
    " INSERT INTO local_documents_fts (local_documents_fts, rowid, title, text)"
    " VALUES ('delete', old.id, old.title, old.text); END",
    "CREATE TRIGGER local_documents_fts_update AFTER UPDATE ON local_documents BEGIN"
    " INSERT INTO local_documents_fts (local_documents_fts, rowid, title, text)"
    " VALUES ('delete', old.id, old.title, old.text);"
    " INSERT INTO local_documents_fts (rowid, title, text)"
    " VALUES (new.id, new.title, new.text); END",
]

# A stored, generated tsvector column rather than an expression index: ranking reads the
# stored vector instead of re-running to_tsvector on every matching row (PostgreSQL manual,
# "Creating Indexes" in the text search chapter; 3-4x faster at 10k-50k documents,
# bench/index_scale.py).
_POSTGRESQL_FTS = [
    "ALTER TABLE claims ADD COLUMN search_vector tsvector"
    " GENERATED ALWAYS AS (to_tsvector('english', claim_text)) STORED",
    "CREATE INDEX ix_claims_fts ON claims USING gin (search_vector)",
    "ALTER TABLE local_documents ADD COLUMN search_vector tsvector GENERATED ALWAYS AS"
    " (setweight(to_tsvector('english', title), 'A')"
    " || setweight(to_tsvector('english', text), 'B')) STORED",
    "CREATE INDEX ix_local_documents_fts ON local_documents USING gin (search_vector)",
]


def upgrade() -> None:
    # A pipeline store pointed at this database before it was migrated made these same tables
    # itself (`storage.indexes.tables.ensure_schema`, identical DDL): keep them.
    if sa.inspect(op.get_bind()).has_table("index_meta"):
        return
    op.create_table(
        "index_meta",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "claims",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("claim_text", sa.Text(), nullable=False),
        sa.Column("record_json", sa.Text(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key", name="uq_claims_key"),
    )
    op.create_table(
        "authority_statements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=32), nullable=False),
        sa.Column("account", sa.String(length=255), nullable=False),
        sa.Column("post_id", sa.String(length=255), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.Column("created_ts", sa.Float(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("terms", sa.Text(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("platform", "post_id", name="uq_authority_statements_post"),
    )
    op.create_index(
        "ix_authority_statements_account",
        "authority_statements",
        ["account", "created_ts"],
    )
    op.create_table(
        "local_documents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("canonical_url", sa.Text(), nullable=False),
        sa.Column("url_key", sa.Text(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("domain", sa.String(length=255), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("embedded", sa.Boolean(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("doc_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("canonical_url", name="uq_local_documents_canonical_url"),
    )
    op.create_index("ix_local_documents_host", "local_documents", ["host"])
    op.create_index("ix_local_documents_domain", "local_documents", ["domain"])
    op.create_table(
        "local_passages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(["doc_id"], ["local_documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_local_passages_doc", "local_passages", ["doc_id", "idx"])
    dialect = op.get_bind().dialect.name
    for statement in {"sqlite": _SQLITE_FTS, "postgresql": _POSTGRESQL_FTS}.get(dialect, []):
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        # Dropping a table drops its triggers; the FTS tables go first, by name.
        op.execute("DROP TABLE IF EXISTS local_documents_fts")
        op.execute("DROP TABLE IF EXISTS claims_fts")
    elif dialect == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_local_documents_fts")
        op.execute("DROP INDEX IF EXISTS ix_claims_fts")
    op.drop_index("ix_local_passages_doc", table_name="local_passages")
    op.drop_table("local_passages")
    op.drop_index("ix_local_documents_domain", table_name="local_documents")
    op.drop_index("ix_local_documents_host", table_name="local_documents")
    op.drop_table("local_documents")
    op.drop_index("ix_authority_statements_account", table_name="authority_statements")
    op.drop_table("authority_statements")
    op.drop_table("claims")
    op.drop_table("index_meta")
