"""Processing one request: claim it, run the pipeline, log the decision, then act on it.

The decision, its evidence and the final text are committed before any platform call
(`posting`), and the platform's reply id after it (bot/posting.py). Technical failures leave
the request in `retry` with the error recorded, and `failed` after `max_attempts`; the worker
moves on to the next request either way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TypeVar

from sqlalchemy import select, update

from adapters.base import Adapter, Summons
from bot.config import Settings
from bot.convert import reply_rules, target_post
from bot.posting import post_one
from bot.repeats import unrepeated
from pipeline.check import Checker
from pipeline.records import Decision, DecisionStatus, utcnow
from storage.db import Database, retry_when_locked
from storage.models import Request, RequestState
from storage.repositories import add_decision, latest_decision

log = logging.getLogger(__name__)
T = TypeVar("T")

CLAIMABLE = (RequestState.QUEUED.value, RequestState.RETRY.value)


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

    def recover(self) -> int:
        """Requests a dead process left in `processing` go back to the queue. The pipeline has
        no side effects, so running it again is safe. (One runner per database; see design.)"""
        with self.db.transaction() as session:
            result = session.execute(
                update(Request)
                .where(Request.state == RequestState.PROCESSING.value)
                .values(state=RequestState.QUEUED.value)
                .execution_options(synchronize_session=False)
            )
            return int(result.rowcount)  # type: ignore[attr-defined]

    def claim_next(self) -> int | None:
        now = utcnow()
        with self.db.transaction() as session:
            candidates = session.scalars(
                select(Request.id)
                .where(
                    Request.state.in_(CLAIMABLE),
                    (Request.next_attempt_at.is_(None)) | (Request.next_attempt_at <= now),
                )
                .order_by(Request.id)
                .limit(8)
            ).all()
            for request_id in candidates:
                claimed = session.execute(
                    update(Request)
                    .where(Request.id == request_id, Request.state.in_(CLAIMABLE))
                    .values(
                        state=RequestState.PROCESSING.value,
                        attempts=Request.attempts + 1,
                        next_attempt_at=None,
                    )
                    .execution_options(synchronize_session=False)
                )
                if claimed.rowcount == 1:  # type: ignore[attr-defined]
                    return request_id
        return None

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
        with self.db.session() as session:
            request = session.get(Request, request_id)
            assert request is not None
            stored = request.summons
            platform = request.platform
            reused_from = request.reused_from_id
            attempts = request.attempts
        mode = self.settings.adapter_mode(platform)
        try:
            summons = Summons.model_validate(stored)  # a row it cannot read is this one's fault
            if reused_from is not None:
                decision = self._reuse(reused_from)
            else:
                post = target_post(summons)
                if post is None:
                    raise ValueError("queued request has no target post")
                decision = self.checker.check(post, reply_rules(summons.platform))
        except Exception as exc:  # a bug must not stop the bot serving other requests
            log.exception("request %s: internal error", request_id)
            error = f"internal error: {exc!r}"
            self._locked_retry(
                f"request {request_id}: recording the failure",
                lambda: self._technical_failure(request_id, attempts, error),
            )
            return
        decision = self._locked_retry(
            f"request {request_id}: comparing with earlier replies",
            lambda: unrepeated(self.db, request_id, platform, decision, self.settings.guard),
        )
        # The pipeline's work (and its LLM spend) is not lost to a lock: only this one
        # transaction is run again.
        state = self._locked_retry(
            f"request {request_id}: recording the decision",
            lambda: self._record(request_id, decision, mode, attempts),
        )
        if state is RequestState.POSTING:
            adapter = self.adapters.get(summons.platform)
            if adapter is not None:
                post_one(self.db, adapter, request_id, self.settings.runtime)

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

    def _record(
        self, request_id: int, decision: Decision, mode: str, attempts: int
    ) -> RequestState:
        runtime = self.settings.runtime
        with self.db.transaction() as session:
            request = session.get(Request, request_id)
            assert request is not None
            add_decision(session, request, decision)
            request.mode = mode
            request.last_error = decision.error
            if decision.status is DecisionStatus.FAILED:
                if attempts >= runtime.max_attempts:
                    state = RequestState.FAILED
                    request.reason = f"failed after {attempts} attempt(s): {decision.error}"
                else:
                    state = RequestState.RETRY
                    delay = runtime.retry_backoff_s * 2 ** (attempts - 1)
                    request.next_attempt_at = utcnow() + timedelta(seconds=delay)
                    request.reason = f"attempt {attempts} failed: {decision.error}"
            elif decision.status is DecisionStatus.NEEDS_LLM:
                state = RequestState.NEEDS_LLM
                request.reason = "needs an LLM endpoint"
            elif decision.status is DecisionStatus.ABSTAIN:
                state = RequestState.ABSTAINED
                request.reason = "; ".join(decision.reasons)[:1000]
            else:
                request.reply_text = decision.reply
                request.reason = ""
                if mode == "live":
                    state = RequestState.POSTING
                elif mode == "review":
                    state = RequestState.AWAITING_REVIEW
                    request.review_deadline = utcnow() + timedelta(hours=runtime.review_ttl_h)
                else:
                    state = RequestState.DRY_RUN
            request.state = state.value
        return state

    def _technical_failure(self, request_id: int, attempts: int, error: str) -> None:
        runtime = self.settings.runtime
        with self.db.transaction() as session:
            request = session.get(Request, request_id)
            assert request is not None
            request.last_error = error[:1000]
            if attempts >= runtime.max_attempts:
                request.state = RequestState.FAILED.value
                request.reason = f"failed after {attempts} attempt(s): {error}"[:1000]
            else:
                request.state = RequestState.RETRY.value
                delay = runtime.retry_backoff_s * 2 ** (attempts - 1)
                request.next_attempt_at = utcnow() + timedelta(seconds=delay)
