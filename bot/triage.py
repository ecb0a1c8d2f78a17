"""Triage: decide, for each new request, whether the bot should work on it at all.

In order: opt-out commands ("stop"/"start"), our own posts and replies to our replies (no
loops), other bots, opted-out users, unreadable targets, summons older than
`runtime.max_summons_age_s`, thread gates, hourly limits per user and overall, and claims
answered recently (answered again with the same reply, linked). A platform's `TriagePolicy`
(`bot/platforms.py`) says whether its opt-out commands and per-user limit apply.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from adapters.base import Summons, TargetStatus
from bot import lifecycle
from bot.config import RuntimeConfig
from bot.convert import command_word
from bot.platforms import triage_policy
from pipeline.records import utcnow
from storage.db import Database, is_lock_error
from storage.models import OptOut, Request, RequestState

log = logging.getLogger(__name__)
_TRIAGE = lifecycle.Actor(lifecycle.ActorKind.TRIAGE)

STOP_WORDS = frozenset({"stop", "unsubscribe", "opt out", "optout"})
START_WORDS = frozenset({"start", "opt in", "optin"})
REUSABLE_STATES = (RequestState.POSTED.value, RequestState.DRY_RUN.value)
# Requests that count against hourly limits: everything the bot took on.
ACCEPTED_STATES = tuple(
    s.value for s in RequestState if s not in (RequestState.SKIPPED, RequestState.RECEIVED)
)


@dataclass(frozen=True)
class TriageOutcome:
    state: RequestState
    reason: str = ""
    reused_from: int | None = None


def triage_pending(db: Database, cfg: RuntimeConfig, bot_handles: dict[str, str]) -> int:
    """Triage every request still in `received`; returns how many were triaged."""
    done = 0
    with db.session() as session:
        ids = session.scalars(
            select(Request.id)
            .where(Request.state == RequestState.RECEIVED.value)
            .order_by(Request.id)
        ).all()
    for request_id in ids:
        try:
            with db.transaction() as session:
                request = session.get(Request, request_id)
                if request is None or request.state != RequestState.RECEIVED.value:
                    continue
                outcome = decide(session, request, cfg, bot_handles.get(request.platform, ""))
                request.reason = outcome.reason
                request.reused_from_id = outcome.reused_from
                lifecycle.transition(session, request, outcome.state, outcome.reason, _TRIAGE)
        except Exception as exc:
            # One request that cannot be triaged (a bug, a row the code no longer reads)
            # must not hold every later one in `received`.
            if is_lock_error(exc):
                raise
            log.exception("request %s: triage failed", request_id)
            _fail(db, request_id, f"triage failed: {type(exc).__name__}: {exc}")
        done += 1
    return done


def _fail(db: Database, request_id: int, error: str) -> None:
    with db.transaction() as session:
        request = session.get(Request, request_id)
        if request is None or request.state != RequestState.RECEIVED.value:
            return
        request.reason = error[:1000]
        request.last_error = error[:1000]
        lifecycle.transition(
            session, request, RequestState.FAILED, error, _TRIAGE, lifecycle.Outcome(error=error)
        )


def decide(
    session: Session, request: Request, cfg: RuntimeConfig, bot_handle: str
) -> TriageOutcome:
    summons = Summons.model_validate(request.summons)
    policy = triage_policy(request.platform)  # which rules apply on this platform
    word = command_word(summons.text)
    if policy.commands and (word in STOP_WORDS or word in START_WORDS):
        opted_out = word in STOP_WORDS
        row = session.get(OptOut, (summons.platform, summons.author)) or OptOut(
            platform=summons.platform, user=summons.author
        )
        row.opted_out = opted_out
        row.updated_at = utcnow()
        session.add(row)
        return TriageOutcome(
            RequestState.SKIPPED, "opt-out recorded" if opted_out else "opt-in recorded"
        )
    if bot_handle and summons.author.lower() == bot_handle.lower():
        return TriageOutcome(RequestState.SKIPPED, "our own post")
    if summons.replies_to_bot:
        return TriageOutcome(RequestState.SKIPPED, "reply to our own reply (no loops)")
    if cfg.ignore_bots and (
        summons.author_is_bot or summons.author.lower() in {b.lower() for b in cfg.known_bots}
    ):
        return TriageOutcome(RequestState.SKIPPED, "summoned by another bot")
    opt = session.get(OptOut, (summons.platform, summons.author))
    if opt is not None and opt.opted_out:
        return TriageOutcome(RequestState.SKIPPED, "user opted out")
    if summons.target_status not in (TargetStatus.OK, TargetStatus.SELF) or summons.target is None:
        detail = f": {summons.target_reason}" if summons.target_reason else ""
        return TriageOutcome(RequestState.SKIPPED, f"target {summons.target_status.value}{detail}")
    too_old = _too_old(summons, request, cfg)
    if too_old:
        return TriageOutcome(RequestState.SKIPPED, too_old)
    if not summons.reply_allowed:
        return TriageOutcome(RequestState.SKIPPED, "replies are disabled on this thread")
    hour_ago = utcnow() - timedelta(hours=1)
    recent = select(func.count(Request.id)).where(
        Request.created_at >= hour_ago,
        Request.state.in_(ACCEPTED_STATES),
        Request.id != request.id,
    )
    user_count = session.scalar(
        recent.where(Request.platform == request.platform, Request.requester == request.requester)
    )
    if policy.per_user_limit and (user_count or 0) >= cfg.per_user_hourly:
        return TriageOutcome(RequestState.SKIPPED, f"rate limit: {cfg.per_user_hourly}/h per user")
    if (session.scalar(recent) or 0) >= cfg.global_hourly:
        return TriageOutcome(RequestState.SKIPPED, f"rate limit: {cfg.global_hourly}/h overall")
    earlier = _answered_before(session, request, cfg)
    if earlier is not None:
        return TriageOutcome(
            RequestState.QUEUED, f"claim answered by request #{earlier}", reused_from=earlier
        )
    return TriageOutcome(RequestState.QUEUED)


def _too_old(summons: Summons, request: Request, cfg: RuntimeConfig) -> str | None:
    """Why a summons is too old to answer, or None. Its age is counted up to when intake took
    it in, so a triage that runs late does not age it: a first run or a backlog after downtime
    records old mentions as skipped instead of answering them hours later."""
    limit = cfg.max_summons_age_s
    if not limit:
        return None
    taken_in = request.created_at or utcnow()
    created = summons.created_at
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    if taken_in - created <= timedelta(seconds=limit):
        return None
    return (
        f"summons older than {_duration(limit)} "
        f"(created {created.astimezone(UTC):%Y-%m-%d %H:%M} UTC)"
    )


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def _answered_before(session: Session, request: Request, cfg: RuntimeConfig) -> int | None:
    if not request.target_key:
        return None
    since = utcnow() - timedelta(days=cfg.reuse_days)
    return session.scalars(
        select(Request.id)
        .where(
            Request.target_key == request.target_key,
            Request.platform == request.platform,
            Request.state.in_(REUSABLE_STATES),
            Request.reply_text.is_not(None),
            Request.created_at >= since,
            Request.id != request.id,
        )
        .order_by(Request.id.desc())
        .limit(1)
    ).first()
