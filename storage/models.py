"""SQLAlchemy 2.0 models: every request, the decision taken on it, and the full trace.

A request's whole state lives in these rows (workers stay stateless), so any process can pick a
request up, and an auditor can reconstruct why the bot said what it said.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
    true,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from pipeline.records import utcnow


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware datetimes on every backend. SQLite has no time zones and hands back
    naive values; comparing those with aware ones raises, so store UTC and re-attach it."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class RequestState(StrEnum):
    """Where a request is in its life. Terminal states end in a final outcome."""

    RECEIVED = "received"  # row committed, not yet triaged
    QUEUED = "queued"  # triaged, waiting for a worker
    PROCESSING = "processing"  # a worker holds it
    RETRY = "retry"  # a technical failure; will be retried at next_attempt_at
    AWAITING_REVIEW = "awaiting_review"  # review mode: a moderator decides
    POSTING = "posting"  # claimed for posting; the platform call may or may not have happened
    POSTED = "posted"  # the reply is on the platform (reply_id set)
    DRY_RUN = "dry_run"  # decided, nothing posted by design
    ABSTAINED = "abstained"  # decided not to speak
    NEEDS_LLM = "needs_llm"  # would need an LLM endpoint; none configured
    SKIPPED = "skipped"  # triage: own post, bot, opted out, rate limit, target unavailable
    REJECTED = "rejected"  # a moderator rejected the draft
    EXPIRED = "expired"  # review deadline passed
    FAILED = "failed"  # gave up after N attempts; reason recorded


TERMINAL_STATES = frozenset(
    {
        RequestState.POSTED,
        RequestState.DRY_RUN,
        RequestState.ABSTAINED,
        RequestState.NEEDS_LLM,
        RequestState.SKIPPED,
        RequestState.REJECTED,
        RequestState.EXPIRED,
        RequestState.FAILED,
    }
)


class Request(Base):
    __tablename__ = "requests"
    __table_args__ = (
        UniqueConstraint("platform", "summons_id", name="uq_request_summons"),
        Index("ix_requests_state_next", "state", "next_attempt_at"),
        # Every post's repeat check (bot/requests/no_repeats.py) and every triage batch's last-hour
        # counts (bot/requests/triage.py): lookups, not scans of every request ever taken in. The
        # reply text by hash on PostgreSQL: a B-tree entry may not exceed about 2.7 kB, and a
        # moderator's edit or a long draft must never fail to save for an index's sake.
        Index("ix_requests_reply_text", "reply_text", postgresql_using="hash"),
        Index("ix_requests_created", "created_at"),
        Index("ix_requests_requester_created", "requester", "created_at"),
        # The review queue's order (storage/review_queue.py) and `/metrics`' posting errors: a
        # few rows each, read without scanning every request ever taken in.
        Index("ix_requests_state_created", "state", "created_at", "id"),
        # The queue's filters and counts from the index alone (a request row carries its
        # posts' JSON): the state, the verdict and the queue's order (a verdict's page is read
        # in order), then every other filter column.
        Index(
            "ix_requests_queue_filters",
            "state",
            "latest_verdict",
            "created_at",
            "id",
            "latest_tier_rank",
            "escalated_by",
            "claimed_by",
            "platform",
            "requester",
        ),
        # The decisions log, newest first: all of it (a deep page walks the index, where
        # PostgreSQL sorted every request without it), and by verdict.
        Index("ix_requests_created_id", "created_at", "id"),
        Index("ix_requests_verdict_created", "latest_verdict", "created_at", "id"),
        Index(
            "ix_requests_post_errors",
            "platform",
            sqlite_where=text("post_attempts > 0 AND last_error IS NOT NULL"),
            postgresql_where=text("post_attempts > 0 AND last_error IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(32))
    summons_id: Mapped[str] = mapped_column(String(128))
    requester: Mapped[str] = mapped_column(String(256), default="")
    summons: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # the summoning post
    target: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # post checked
    state: Mapped[str] = mapped_column(String(32), default=RequestState.RECEIVED.value)
    mode: Mapped[str] = mapped_column(String(16), default="dry-run")
    reason: Mapped[str] = mapped_column(Text, default="")  # skip/abstain/failure reason
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    reply_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    reply_text: Mapped[str | None] = mapped_column(Text, nullable=True)  # the final text posted
    posted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    review_deadline: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reused_from_id: Mapped[int | None] = mapped_column(ForeignKey("requests.id"), nullable=True)
    # Normalised hash of the checked post's text: the same claim asked about again is reused.
    target_key: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    post_attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Review: who has the item (a claim or an assignment; others see it and may take it over)
    # and who escalated it (then only a senior moderator or an admin decides it).
    claimed_by: Mapped[str | None] = mapped_column(String(128), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    escalated_by: Mapped[str | None] = mapped_column(String(128), nullable=True)
    escalated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The worker holding a `processing` request, and until when: it renews the lease while it
    # works (a heartbeat); a lease that runs out means the worker died and the request is
    # requeued (bot/requests/lifecycle.py). A live slow request keeps its lease and never runs
    # twice.
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The latest decision's verdict and the best (lowest) tier rank among its evidence (NULL:
    # no decision, or no evidence), written with each decision (storage/repositories.py) so
    # the queue's and the log's filters and counts read an index, not every decision.
    latest_verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    latest_tier_rank: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

    decisions: Mapped[list[DecisionRow]] = relationship(
        back_populates="request", order_by="DecisionRow.id", cascade="all, delete-orphan"
    )


class DecisionRow(Base):
    """One run of the pipeline on a request. A retried request may have several."""

    __tablename__ = "decisions"

    # A request's latest decision and its verdict, read from the index alone (the review
    # queue's and the decisions log's verdict filters): a decision row carries its trace.
    __table_args__ = (Index("ix_decisions_request_latest", "request_id", "id", "verdict"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("requests.id"), index=True)
    status: Mapped[str] = mapped_column(String(16))
    verdict: Mapped[str | None] = mapped_column(String(32), nullable=True)
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    platform: Mapped[str] = mapped_column(String(16))
    reply: Mapped[str | None] = mapped_column(Text, nullable=True)
    urls: Mapped[list[Any]] = mapped_column(JSON, default=list)
    reasons: Mapped[list[Any]] = mapped_column(JSON, default=list)
    lang: Mapped[str | None] = mapped_column(String(16), nullable=True)
    as_of: Mapped[datetime] = mapped_column(UTCDateTime())
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    timings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    trace: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # queries, results, uses
    llm_calls_count: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    request: Mapped[Request] = relationship(back_populates="decisions")
    evidence: Mapped[list[EvidenceRow]] = relationship(
        back_populates="decision", order_by="EvidenceRow.position", cascade="all, delete-orphan"
    )
    llm_calls: Mapped[list[LLMCallRow]] = relationship(
        back_populates="decision", order_by="LLMCallRow.id", cascade="all, delete-orphan"
    )


class EvidenceRow(Base):
    __tablename__ = "evidence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    decision_id: Mapped[int] = mapped_column(ForeignKey("decisions.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)  # order matters: tier, then relevance
    url: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text, default="")
    domain: Mapped[str] = mapped_column(String(255), default="")
    tier: Mapped[str] = mapped_column(String(16))
    stance: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float] = mapped_column(Float)
    quote: Mapped[str] = mapped_column(Text)
    relevance: Mapped[float] = mapped_column(Float, default=0.0)
    published: Mapped[datetime | None] = mapped_column(UTCDateTime())
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    round: Mapped[int] = mapped_column(Integer, default=1)
    source: Mapped[str] = mapped_column(String(16), default="web")

    decision: Mapped[DecisionRow] = relationship(back_populates="evidence")


class LLMCallRow(Base):
    __tablename__ = "llm_calls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    decision_id: Mapped[int] = mapped_column(ForeignKey("decisions.id"), index=True)
    step: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(128))
    ok: Mapped[bool] = mapped_column(Boolean)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    decision: Mapped[DecisionRow] = relationship(back_populates="llm_calls")


class DocumentRow(Base):
    """A fetched page's snapshot. One row per (canonical URL, content hash): history is kept,
    so the text an old decision quoted stays retrievable after the page changes."""

    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("canonical_url", "content_hash", name="uq_document_snapshot"),
        Index("ix_documents_url_fetched", "canonical_url", "fetched_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    canonical_url: Mapped[str] = mapped_column(String(2048))
    url: Mapped[str] = mapped_column(Text)
    final_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    ok: Mapped[bool] = mapped_column(Boolean)
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    content_type: Mapped[str | None] = mapped_column(String(128), nullable=True)
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text, default="")
    published: Mapped[datetime | None] = mapped_column(UTCDateTime())
    date_source: Mapped[str | None] = mapped_column(String(64), nullable=True)
    word_count: Mapped[int] = mapped_column(Integer, default=0)
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    fetched_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)


class Cursor(Base):
    """Per adapter: where polling resumes, and how the last poll went."""

    __tablename__ = "cursors"

    adapter: Mapped[str] = mapped_column(String(32), primary_key=True)
    cursor: Mapped[str | None] = mapped_column(String(256), nullable=True)
    last_poll_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_poll_count: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    next_poll_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # rate-limit reset


class OptOut(Base):
    """Users who told the bot "stop". A later "start" clears it."""

    __tablename__ = "opt_outs"

    platform: Mapped[str] = mapped_column(String(32), primary_key=True)
    user: Mapped[str] = mapped_column(String(256), primary_key=True)
    opted_out: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RateBudgetRow(Base):
    """The last rate-limit state an adapter reported, per endpoint."""

    __tablename__ = "rate_budgets"

    adapter: Mapped[str] = mapped_column(String(32), primary_key=True)
    endpoint: Mapped[str] = mapped_column(String(128), primary_key=True)
    limit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    remaining: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reset_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ReviewAction(Base):
    """Who did what to a request, when, and what changed: the item's history."""

    __tablename__ = "review_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("requests.id"), index=True)
    actor: Mapped[str] = mapped_column(String(128))
    action: Mapped[str] = mapped_column(String(32))  # approve, edit, reject, escalate, expire
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class User(Base):
    """A person who may use the review app. Passwords are stored as argon2 hashes only."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(128), unique=True)
    password_hash: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(
        String(16), default="moderator", server_default="moderator"
    )  # admin | moderator
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # Bumped on logout, disable and password change: signed session cookies carry the
    # version they were issued under, so an old cookie stops working even though it is valid.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class SettingOverride(Base):
    """A setting an admin changed in the review app; applied over the loaded settings."""

    __tablename__ = "setting_overrides"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)  # e.g. "guard.min_confidence"
    value: Mapped[Any] = mapped_column(JSON)
    updated_by: Mapped[str] = mapped_column(String(128), default="", server_default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class PostingPause(Base):
    """The kill switch: while a row exists, nothing is posted to its platform ("*": to any).
    Read right before every platform call, so a running bot stops within one post."""

    __tablename__ = "posting_pauses"

    platform: Mapped[str] = mapped_column(String(32), primary_key=True)
    paused_by: Mapped[str] = mapped_column(String(128))
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
    paused_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SettingChange(Base):
    """Every change an admin made to an override or a posting pause: who, when, from, to."""

    __tablename__ = "setting_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(128), index=True)  # "mode", "x.mode", "pause.x"
    old_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    new_value: Mapped[Any] = mapped_column(JSON, nullable=True)
    actor: Mapped[str] = mapped_column(String(128))
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class LoginThrottle(Base):
    """Failed review-app logins per account name or per client address, and the lockout they
    earned. In the database so a lockout survives restarts and holds across web processes.
    Unknown names get rows too, so a lockout does not reveal which accounts exist."""

    __tablename__ = "login_throttle"

    scope: Mapped[str] = mapped_column(String(16), primary_key=True)  # account | address
    key: Mapped[str] = mapped_column(String(256), primary_key=True)  # login name or IP address
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # this window
    window_start: Mapped[datetime] = mapped_column(UTCDateTime())
    lockouts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # in a row
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_failure_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class RequestEvent(Base):
    """One state change of a request (`bot/requests/lifecycle.py` writes it in the same transaction
    as the change): the request's history, for moderators, auditors and debugging."""

    __tablename__ = "request_events"
    __table_args__ = (Index("ix_request_events_request", "request_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("requests.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    from_state: Mapped[str | None] = mapped_column(String(32), nullable=True)  # None: created
    to_state: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    actor: Mapped[str] = mapped_column(String(128))  # "worker:w1", "moderator:alice", ...


class ImageRow(Base):
    """An image seen in a post or carried by a fact-check: stored once by the sha256 of its
    bytes (its hashes, embedding, where it came from, and our own reduced, EXIF-free copy for
    the review app, never the bytes as received), for near-duplicate lookups
    (`storage.images.SqlImageStore`)."""

    __tablename__ = "images"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    phash: Mapped[str] = mapped_column(String(16), index=True)
    # The pHash's four 16-bit bands (bits 0-15, 16-31, 32-47, 48-63), each indexed: two hashes
    # within distance d agree within d // 4 bits on one band at least, so a near-duplicate
    # lookup reads only the rows one band lets through (`storage.images`).
    phash_b0: Mapped[int] = mapped_column(Integer, index=True)
    phash_b1: Mapped[int] = mapped_column(Integer, index=True)
    phash_b2: Mapped[int] = mapped_column(Integer, index=True)
    phash_b3: Mapped[int] = mapped_column(Integer, index=True)
    source: Mapped[str] = mapped_column(Text)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The fact-check that carries this image (a ClaimRecord as JSON), if any.
    fact_check: Mapped[Any] = mapped_column(JSON, nullable=True)
    # The learned embedding (float32 bytes, `pipeline.images.embedding`) and its model's name:
    # vectors of different embedders are never compared.
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    embedder: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Our clean copy (re-encoded, EXIF-free, reduced) that the review app serves.
    content: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    # The text OCR read in it, if any (matches between pictures saying different things are
    # only possible ones).
    ocr_text: Mapped[str | None] = mapped_column(Text, nullable=True)


class XNote(Base):
    """A Community Note on one post (the `x_notes` adapter): what was prepared from the
    decision, the submission intent (committed before `POST /2/notes`), X's note id, and the
    status and evaluator buckets synced from `notes_written`. test_mode is on every row."""

    __tablename__ = "x_notes"
    __table_args__ = (UniqueConstraint("post_id", "test_mode", name="uq_x_notes_post"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    post_id: Mapped[str] = mapped_column(String(64))
    test_mode: Mapped[bool] = mapped_column(Boolean)
    request_id: Mapped[int | None] = mapped_column(
        ForeignKey("requests.id", ondelete="SET NULL"), nullable=True
    )
    # prepared | intent | submitted
    state: Mapped[str] = mapped_column(String(16), default="prepared")
    classification: Mapped[str] = mapped_column(String(64))
    misleading_tags: Mapped[list[Any]] = mapped_column(JSON, default=list)
    trustworthy_sources: Mapped[bool] = mapped_column(Boolean, default=False)
    text: Mapped[str] = mapped_column(Text, default="")
    drafted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    intent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)
    note_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str | None] = mapped_column(String(64), nullable=True)  # X's note status
    buckets: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # evaluator: bucket
    synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class XNoteEvaluation(Base):
    """One `evaluate` answer: the claim_opinion_score of the exact text hashed, or the error."""

    __tablename__ = "x_note_evaluations"
    __table_args__ = (UniqueConstraint("post_id", "text_sha256", name="uq_x_note_eval"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    post_id: Mapped[str] = mapped_column(String(64))
    text_sha256: Mapped[str] = mapped_column(String(64))
    test_mode: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    evaluated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class XNoteCap(Base):
    """The daily writing cap learned from a "daily limit" answer: what we had submitted in the
    24 h before it. The latest row is the cap in force."""

    __tablename__ = "x_note_caps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    test_mode: Mapped[bool] = mapped_column(Boolean)
    cap: Mapped[int] = mapped_column(Integer)
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Judgment(Base):
    """The hierarchical judge's grading of one decision (pipeline.learning.judge)."""

    __tablename__ = "judgments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    decision_id: Mapped[int] = mapped_column(
        ForeignKey("decisions.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))  # reply | abstention
    mode: Mapped[str] = mapped_column(String(16))  # unsatisfactory | satisfactory | excellent
    helpful: Mapped[bool] = mapped_column(Boolean)
    failed_gate: Mapped[str | None] = mapped_column(String(32), nullable=True)
    model: Mapped[str] = mapped_column(String(128), default="")
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # gates, qualities, ...
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class MemoryItemRow(Base):
    """One experience-memory strategy (pipeline.learning.memory.MemoryItem) of this deployment."""

    __tablename__ = "memory_items"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    phase: Mapped[str] = mapped_column(String(16), index=True)
    trigger: Mapped[str] = mapped_column(Text)
    strategy: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))  # avoid | improve | reuse
    sources: Mapped[list[Any]] = mapped_column(JSON, default=list)  # "decision:12", "review:40"
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_useful_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    # proposed | approved | rejected | refused (pipeline.learning.memory.Status); only approved
    # items reach a prompt unless `memory.use_proposed` is on.
    status: Mapped[str] = mapped_column(String(16), default="proposed", index=True)
    origin: Mapped[str] = mapped_column(String(16), default="judge")  # judge|approve|edit|...
    decided_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")


class MemorySource(Base):
    """An episode (a decision's judgment, a review action) already distilled into memory."""

    __tablename__ = "memory_sources"

    source: Mapped[str] = mapped_column(String(64), primary_key=True)
    items: Mapped[int] = mapped_column(Integer, default=0)  # how many items it gave
    distilled_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ClaimSyncSource(Base):
    """One fact-check source of `factnote claims sync` (a Fact Check API search, a feed dump):
    where its next sync resumes, and how the last one went."""

    __tablename__ = "claim_sync_sources"

    source: Mapped[str] = mapped_column(String(255), primary_key=True)
    # API searches: the start of the last sync that read every page; the next one asks only
    # for what is newer (maxAgeDays), with a day's overlap.
    synced_from: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    newest_review: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Feed dumps: the sha256 of the dump last imported; the same dump is not read again.
    digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    imported: Mapped[int] = mapped_column(Integer, default=0)  # reviews new or updated, ever
    last_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


class MetricTotal(Base):
    """A running total behind `/metrics` (storage/metric_totals.py): added to in the
    transaction that writes each decision, so a scrape reads a few dozen rows instead of every
    decision's timings and trace."""

    __tablename__ = "metric_totals"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    label: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[float] = mapped_column(Float, default=0.0)
