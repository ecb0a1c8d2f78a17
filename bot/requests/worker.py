"""Processing one request: claim it, run the pipeline, log the decision, then act on it.

The decision, its evidence and the final text are committed before any platform call
(`posting`), and the platform's reply id after it (bot/requests/posting.py). Technical failures
leave the request in `retry` with the error recorded, and `failed` after `max_attempts`; the worker
moves on to the next request either way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from adapters.base import Adapter, Summons
from bot import overrides
from bot.config import Settings
from bot.platforms import finish_decision
from bot.requests import lifecycle
from bot.requests.lifecycle import ActorKind
from bot.requests.no_repeats import repeat_params, unrepeated_given
from bot.requests.posting import Attempt, claimed_attempt, first_attempt_values, post_claimed
from bot.requests.to_pipeline import reply_platform, target_post
from pipeline.check import Checker
from pipeline.records import Decision, DecisionStatus, utcnow
from storage import requests
from storage.db import Database, Session, retry_when_locked
from storage.models import Request, RequestState
from storage.repositories import insert_decision, latest_decision

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Claimed:
    """What processing a request reads of it, in the transaction that claimed it: its stored
    summons (validated when processed: a row it cannot read fails that request only), its
    platform, the request whose answer it reuses, its attempts counted with this one, and the
    mode its platform is in now (read then, not at start: an admin's switch, bot/overrides.py,
    applies to new decisions)."""

    summons: dict[str, Any]
    platform: str
    reused_from: int | None
    attempts: int
    mode: str


def _work(session: Session, settings: Settings, request_id: int) -> Claimed:
    found = requests.to_process(session, request_id)
    mode = overrides.live_mode_in(session, settings, found.platform)
    return Claimed(found.summons, found.platform, found.reused_from_id, found.attempts, mode)


_PROCESSING = RequestState.PROCESSING.value


@dataclass(frozen=True)
class _Result:
    """A request's checked result, to record: its decision and what recording it needs."""

    request_id: int
    platform: str
    decision: Decision
    mode: str
    attempts: int  # counted with this run's
    summons: Summons
    adapter: Adapter | None  # its platform's, to post through (None: not built here)


class _LeaseLost(Exception):
    """The request is no longer this worker's to record: its transaction is rolled back."""


class Worker:
    def __init__(
        self,
        settings: Settings,
        db: Database,
        checker: Checker,
        adapters: dict[str, Adapter],
    ) -> None:
        self.settings = settings
        self.db = db
        self.checker = checker
        self.adapters = adapters
        self.name = lifecycle.worker_name()
        self._leases = lifecycle.LeaseKeeper(db, self.name, settings.runtime.lease_s)
        # What `process` reads of a request, read by the transaction that claimed it.
        self._claimed: dict[int, Claimed] = {}

    def recover(self) -> int:
        """Requests whose worker is gone go back to the queue: a lease that ran out, a lease
        held by a process of this host that no longer exists (a crash: no need to wait for
        its lease), and rows from before leases. The pipeline has no side effects, so running
        one again is safe; a live worker's request, here or on another machine, is left alone."""
        with self.db.transaction() as session:
            moved = lifecycle.requeue_expired(session)
            moved += lifecycle.requeue_dead_local(session, self.name)
        return len(moved)

    def stop(self) -> None:
        """Stop renewing leases (the process is shutting down)."""
        self._leases.stop()

    def hold(self, request_id: int) -> None:
        """Keep renewing the lease of a request claimed for this worker elsewhere (a queue
        job, bot/ops/queue.py) until `process` is done with it."""
        self._leases.hold(request_id)

    def claim_next(self) -> int | None:
        with self.db.transaction() as session:
            request_id = lifecycle.claim(session, self.name, self.settings.runtime.lease_s)
            if request_id is not None:
                self.claimed(session, request_id)
        if request_id is not None:
            self._leases.hold(request_id)
        return request_id

    def drain(self, workers: int | None = None, stop: threading.Event | None = None) -> int:
        """Process every claimable request, `workers` at a time, until none is left or `stop`
        is set (requests already started finish). Returns how many ran."""
        size = max(1, workers or self.settings.runtime.workers)
        processed = 0
        with ThreadPoolExecutor(max_workers=size, thread_name_prefix="worker") as pool:
            while stop is None or not stop.is_set():
                batch = []
                for _ in range(size):
                    request_id = self.claim_next()
                    if request_id is None:
                        break
                    batch.append(pool.submit(self.process, request_id))
                if not batch:
                    return processed
                for future in batch:
                    future.result()
                processed += len(batch)
        return processed

    def process(self, request_id: int) -> None:
        try:
            self._process(request_id)
        finally:
            # Whatever happened (a lock that outlasted every retry included), this worker no
            # longer works on it: an unrecorded request's lease runs out and it is run again.
            self._leases.release(request_id)

    def claimed(self, session: Session, request_id: int, row: Claimed | None = None) -> None:
        """Read, in the transaction that just claimed `request_id` for this worker, what
        `process` needs of it (`row`: what the claim's query read already): no session of
        its own per request (issue 12)."""
        self._claimed[request_id] = row or _work(session, self.settings, request_id)

    def _process(self, request_id: int) -> None:
        work = self._claimed.pop(request_id, None)
        if work is None:  # claimed elsewhere (a test, a caller of `process`)
            with self.db.session() as session:
                work = _work(session, self.settings, request_id)
        platform, attempts, mode = work.platform, work.attempts, work.mode
        try:
            # A row it cannot read is this one's fault.
            summons = Summons.model_validate(work.summons)
            if work.reused_from is not None:
                decision = self._reuse(work.reused_from)
            else:
                post = target_post(summons)
                if post is None:
                    raise ValueError("queued request has no target post")
                decision = self.checker.check(post, reply_platform(summons.platform))
            # The platform's own gates (Community Notes: tags, live URLs, evaluate score).
            finished = finish_decision(
                self.db, self.settings, self.adapters.get(platform), summons, decision
            )
            decision, mode = finished.decision, finished.mode or mode
        except Exception as exc:  # a bug must not stop the bot serving other requests
            log.exception("request %s: internal error", request_id)
            error = f"internal error: {exc!r}"
            self._locked_retry(
                f"request {request_id}: recording the failure",
                lambda: self._technical_failure(request_id, attempts, error),
            )
            return
        # The pipeline's work (and its LLM spend) is not lost to a lock: only this one
        # transaction is run again.
        adapter = self.adapters.get(summons.platform)
        attempt = self._locked_retry(
            f"request {request_id}: recording the decision",
            lambda: self._record(
                _Result(request_id, platform, decision, mode, attempts, summons, adapter)
            ),
        )
        if attempt is not None and adapter is not None:
            post_claimed(self.db, adapter, attempt, self.settings.runtime)

    def _locked_retry(self, what: str, fn: Callable[[], T]) -> T:
        runtime = self.settings.runtime
        return retry_when_locked(
            fn, what=what, attempts=runtime.db_lock_attempts, backoff_s=runtime.db_lock_backoff_s
        )

    def _reuse(self, earlier_id: int) -> Decision:
        with self.db.session() as session:
            earlier = latest_decision(session, earlier_id)
        if earlier is None:
            raise ValueError(f"request #{earlier_id} has no decision to reuse")
        earlier.reasons = [f"reused the answer of request #{earlier_id}", *earlier.reasons]
        earlier.trace.llm_calls = []
        return earlier

    def _record(self, result: _Result) -> Attempt | None:
        """Store the decision and move the request on. A reply to post live is committed
        with its first posting attempt claimed (the intent, before the platform call): that
        attempt is returned. None otherwise, and when this worker lost its lease meanwhile
        (another worker runs the request again, and its result will count).

        The request is not loaded as an ORM object: one read (its lease, its posting
        attempts, an earlier request with the same reply) and one UPDATE guarded by the
        lease, which rolls everything back if the lease went meanwhile (issue 12)."""
        try:
            with self.db.transaction() as session:
                return self._record_in(session, result)
        except _LeaseLost:
            log.warning("request %s: lease lost while checking; result dropped", result.request_id)
            return None

    def _record_in(self, session: Session, result: _Result) -> Attempt | None:
        request_id, platform, decision = result.request_id, result.platform, result.decision
        repeat = repeat_params(request_id, platform, decision)
        found = requests.to_record(session, request_id, repeat)
        if found is None or (found.state, found.lease_owner) != (_PROCESSING, self.name):
            raise _LeaseLost
        guard_cfg = self.settings.guard
        decision = unrepeated_given(found.earlier, request_id, platform, decision, guard_cfg)
        insert_decision(session, request_id, decision)
        state, reason, values = self._outcome(decision, result.mode, result.attempts)
        posts = state is RequestState.POSTING and result.adapter is not None
        if posts:
            values.update(first_attempt_values(found.post_attempts))
        # Done with processing: stop renewing now, not once posting is done too, or a beat
        # during a slow platform call would find the lease gone and warn of a lost lease.
        self._leases.release(request_id)
        moved = lifecycle.transition_where(
            session,
            [lifecycle.Held(request_id, _PROCESSING, platform)],
            [RequestState.PROCESSING],
            state,
            reason,
            lifecycle.Actor(ActorKind.WORKER, self.name),
            where=(),  # named, so that **values cannot be taken for them
            owned_by=self.name,
            increment=(),
            outcome=lifecycle.Outcome(decision.verdict, decision.error, decision.timings),
            **values,
        )
        if not moved:  # the lease ran out between the read and the update
            raise _LeaseLost
        if not posts:
            return None
        allowed = [e.url for e in decision.evidence] + [str(u) for u in decision.urls]
        number = found.post_attempts + 1
        reply = decision.reply or ""
        return claimed_attempt(session, request_id, result.summons, reply, number, allowed)

    def _outcome(
        self, decision: Decision, mode: str, attempts: int
    ) -> tuple[RequestState, str, dict[str, object]]:
        """The state a decision moves its request to, why, and the request's columns to set
        with it (the lease given up)."""
        runtime = self.settings.runtime
        values: dict[str, object] = {
            "mode": mode,
            "last_error": decision.error,
            "lease_owner": None,
            "lease_until": None,
        }
        reason = ""
        if decision.status is DecisionStatus.FAILED:
            if attempts >= runtime.max_attempts:
                state = RequestState.FAILED
                reason = f"failed after {attempts} attempt(s): {decision.error}"
            else:
                state = RequestState.RETRY
                values["next_attempt_at"] = lifecycle.retry_at(attempts, runtime.retry_backoff_s)
                reason = f"attempt {attempts} failed: {decision.error}"
        elif decision.status is DecisionStatus.NEEDS_LLM:
            state, reason = RequestState.NEEDS_LLM, "needs an LLM endpoint"
        elif decision.status is DecisionStatus.ABSTAIN:
            state, reason = RequestState.ABSTAINED, "; ".join(decision.reasons)[:1000]
        else:
            values["reply_text"] = decision.reply
            if mode == "live":
                state = RequestState.POSTING
            elif mode == "review":
                state = RequestState.AWAITING_REVIEW
                values["review_deadline"] = utcnow() + timedelta(hours=runtime.review_ttl_h)
            else:
                state = RequestState.DRY_RUN
        values["reason"] = reason
        return state, reason, values

    def _finish(
        self,
        session: Session,
        request: Request,
        state: RequestState,
        reason: str,
        decision: Decision | None = None,
        error: str | None = None,
    ) -> None:
        outcome = lifecycle.Outcome(
            verdict=decision.verdict if decision else None,
            error=error or (decision.error if decision else None),
            timings=decision.timings if decision else None,
        )
        request.lease_owner = None
        request.lease_until = None
        # Done with processing: stop renewing now, not once posting is done too, or a beat
        # during a slow platform call would find the lease gone and warn of a lost lease.
        self._leases.release(request.id)
        lifecycle.transition(
            session, request, state, reason, lifecycle.Actor(ActorKind.WORKER, self.name), outcome
        )

    def _technical_failure(self, request_id: int, attempts: int, error: str) -> None:
        runtime = self.settings.runtime
        with self.db.transaction() as session:
            request = requests.get(session, request_id)
            assert request is not None
            if not lifecycle.holds_lease(session, request, self.name):
                return
            request.last_error = error[:1000]
            if attempts >= runtime.max_attempts:
                request.reason = f"failed after {attempts} attempt(s): {error}"[:1000]
                self._finish(session, request, RequestState.FAILED, request.reason, error=error)
                return
            request.next_attempt_at = lifecycle.retry_at(attempts, runtime.retry_backoff_s)
            self._finish(session, request, RequestState.RETRY, "", error=error)
