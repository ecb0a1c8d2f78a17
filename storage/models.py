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
    String,
    Text,
    UniqueConstraint,
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
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

    decisions: Mapped[list[DecisionRow]] = relationship(
        back_populates="request", order_by="DecisionRow.id", cascade="all, delete-orphan"
    )


class DecisionRow(Base):
    """One run of the pipeline on a request. A retried request may have several."""

    __tablename__ = "decisions"

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
