"""Triage: decide, for each new request, whether the bot should work on it at all.

In order: opt-out commands ("stop"/"start"), our own posts and replies to our replies (no
loops), other bots, opted-out users, unreadable targets, summons older than
`runtime.max_summons_age_s`, thread gates, hourly limits per user and overall, and claims
answered recently (answered again with the same reply, linked). A platform's `TriagePolicy`
(`bot/platforms.py`) says whether its opt-out commands and per-user limit apply.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, timedelta

from adapters.base import Summons, TargetStatus
from bot.config import RuntimeConfig
from bot.platforms import triage_policy
from bot.requests import lifecycle
from bot.requests.to_pipeline import command_word
from pipeline.records import utcnow
from storage import triage as triage_rows
from storage.db import Database, Session, is_lock_error
from storage.models import Request, RequestState
from storage.requests import get as get_request

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


# Requests triaged in one transaction: one commit per batch instead of per request, and the
# hourly counts read once per batch (issue 12: intake + triage at >= 1,000 summons/s).
BATCH = 200


@dataclass
class TriageBatch:
    """What triage's rules read from the database, for a batch of requests at once: requests
    taken on in the last hour (overall and per platform and requester), opt-outs, and the
    latest reusable answer per claim. Kept current as the batch decides (only triage moves a
    request out of `received`, and one leader triages, so nothing else changes them
    meanwhile). One read per batch instead of four queries per request (issue 12)."""

    overall: int
    per_user: dict[tuple[str, str], int]
    opted_out: dict[tuple[str, str], bool]
    answered: dict[tuple[str, str], int]  # (platform, claim key) -> latest answering request

    @classmethod
    def load(cls, session: Session, requests: Sequence[Request], cfg: RuntimeConfig) -> TriageBatch:
        users = {r.requester for r in requests}
        keys = {r.target_key for r in requests if r.target_key}
        now = utcnow()
        read = triage_rows.batch_reads(
            session,
            users,
            keys,
            accepted=ACCEPTED_STATES,
            accepted_since=now - timedelta(hours=1),
            reusable=REUSABLE_STATES,
            answered_since=now - timedelta(days=cfg.reuse_days),
        )
        return cls(read.overall, read.per_user, read.opted_out, read.answered)

    def user(self, request: Request) -> int:
        return self.per_user.get((request.platform, request.requester), 0)

    def accepted(self, request: Request) -> None:
        self.overall += 1
        key = (request.platform, request.requester)
        self.per_user[key] = self.per_user.get(key, 0) + 1

    def answered_before(self, request: Request) -> int | None:
        if not request.target_key:
            return None
        return self.answered.get((request.platform, request.target_key))


def triage_pending(db: Database, cfg: RuntimeConfig, bot_handles: dict[str, str]) -> int:
    """Triage every request still in `received`; returns how many were triaged."""
    with db.session() as session:
        ids = triage_rows.received_ids(session)
    done = 0
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        try:
            done += _triage_batch(db, batch, cfg, bot_handles)
        except Exception as exc:
            if is_lock_error(exc):
                raise
            # The batch could not be written (a row the database refused): triage its
            # requests one by one, so that only the culprit fails.
            log.warning("triage batch failed (%r); triaging its requests one by one", exc)
            done += sum(_triage_one(db, request_id, cfg, bot_handles) for request_id in batch)
    return done


def _triage_batch(
    db: Database, ids: Sequence[int], cfg: RuntimeConfig, bot_handles: dict[str, str]
) -> int:
    with db.transaction() as session:
        requests = triage_rows.received(session, ids)
        batch = TriageBatch.load(session, requests, cfg)
        moves: list[tuple[Request, RequestState, str]] = []
        for request in requests:
            try:
                outcome = decide(
                    session, request, cfg, bot_handles.get(request.platform, ""), batch
                )
            except Exception as exc:
                # A request that cannot be triaged (a bug, a row the code no longer reads)
                # must not hold every later one in `received`.
                if is_lock_error(exc):
                    raise
                log.exception("request %s: triage failed", request.id)
                _fail_in(session, request, f"triage failed: {type(exc).__name__}: {exc}")
                batch.accepted(request)
                continue
            request.reason = outcome.reason
            request.reused_from_id = outcome.reused_from
            moves.append((request, outcome.state, outcome.reason))
            if outcome.state.value in ACCEPTED_STATES:
                batch.accepted(request)
        lifecycle.transition_all(session, moves, _TRIAGE)
    return len(ids)


def _apply(session: Session, request: Request, outcome: TriageOutcome) -> None:
    request.reason = outcome.reason
    request.reused_from_id = outcome.reused_from
    lifecycle.transition(session, request, outcome.state, outcome.reason, _TRIAGE)


def _triage_one(
    db: Database, request_id: int, cfg: RuntimeConfig, bot_handles: dict[str, str]
) -> int:
    """Triage one request in its own transaction (the batch's fallback)."""
    try:
        with db.transaction() as session:
            request = get_request(session, request_id)
            if request is None or request.state != RequestState.RECEIVED.value:
                return 1
            _apply(
                session,
                request,
                decide(session, request, cfg, bot_handles.get(request.platform, "")),
            )
    except Exception as exc:
        if is_lock_error(exc):
            raise
        log.exception("request %s: triage failed", request_id)
        _fail(db, request_id, f"triage failed: {type(exc).__name__}: {exc}")
    return 1


def _fail(db: Database, request_id: int, error: str) -> None:
    with db.transaction() as session:
        request = get_request(session, request_id)
        if request is None or request.state != RequestState.RECEIVED.value:
            return
        _fail_in(session, request, error)


def _fail_in(session: Session, request: Request, error: str) -> None:
    request.reason = error[:1000]
    request.last_error = error[:1000]
    lifecycle.transition(
        session, request, RequestState.FAILED, error, _TRIAGE, lifecycle.Outcome(error=error)
    )


def decide(
    session: Session,
    request: Request,
    cfg: RuntimeConfig,
    bot_handle: str,
    batch: TriageBatch | None = None,
) -> TriageOutcome:
    summons = Summons.model_validate(request.summons)
    batch = batch or TriageBatch.load(session, [request], cfg)
    policy = triage_policy(request.platform)  # which rules apply on this platform
    word = command_word(summons.text)
    if policy.commands and (word in STOP_WORDS or word in START_WORDS):
        opted_out = word in STOP_WORDS
        row = triage_rows.opt_out_to_write(session, summons.platform, summons.author)
        row.opted_out = opted_out
        row.updated_at = utcnow()
        batch.opted_out[(summons.platform, summons.author)] = opted_out
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
    if batch.opted_out.get((summons.platform, summons.author), False):
        return TriageOutcome(RequestState.SKIPPED, "user opted out")
    if summons.target_status not in (TargetStatus.OK, TargetStatus.SELF) or summons.target is None:
        detail = f": {summons.target_reason}" if summons.target_reason else ""
        return TriageOutcome(RequestState.SKIPPED, f"target {summons.target_status.value}{detail}")
    too_old = _too_old(summons, request, cfg)
    if too_old:
        return TriageOutcome(RequestState.SKIPPED, too_old)
    if not summons.reply_allowed:
        return TriageOutcome(RequestState.SKIPPED, "replies are disabled on this thread")
    if policy.per_user_limit and batch.user(request) >= cfg.per_user_hourly:
        return TriageOutcome(RequestState.SKIPPED, f"rate limit: {cfg.per_user_hourly}/h per user")
    if batch.overall >= cfg.global_hourly:
        return TriageOutcome(RequestState.SKIPPED, f"rate limit: {cfg.global_hourly}/h overall")
    earlier = batch.answered_before(request)
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
