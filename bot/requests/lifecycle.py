"""The request lifecycle: which state may follow which, one door to change a state, the event
log every change writes, and the one retry schedule.

A request's state used to be assigned from many places; each assignment is now a call to
`transition` (one request loaded in the session) or `transition_where` (a guarded bulk update,
for claims and expiry that must not race another worker). Both refuse a move the table does
not allow, write one `RequestEvent` row in the same transaction as the state change (so the log
and the state can never disagree; a Core insert, not an ORM object: half the cost on the hot
path), note the requests made claimable for the queue, and log one line
(`bot.logs.log_transition`) once the change is committed (both in the transaction's notes,
`storage.db.TransactionNotes`, which the database's sessions run or drop at its end). The web
app's item history and the audit report read the log through `history`.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import cast

from bot.logs import log_transition
from pipeline.records import utcnow
from storage import request_moves as moves
from storage.db import Database, Session, notes
from storage.models import Request, RequestState
from storage.request_moves import Condition, Guard, guarded_move

log = logging.getLogger(__name__)
S = RequestState

# state -> the states it may move to. A terminal state moves nowhere: a later answer to the
# same post is a new request. `None` is a request being created.
TRANSITIONS: dict[RequestState | None, frozenset[RequestState]] = {
    None: frozenset({S.RECEIVED, S.SKIPPED}),
    S.RECEIVED: frozenset({S.QUEUED, S.SKIPPED, S.FAILED}),
    S.QUEUED: frozenset({S.PROCESSING}),
    S.RETRY: frozenset({S.PROCESSING}),
    # Back to QUEUED: the worker holding it died or lost its lease; the pipeline has no side
    # effects, so running it again is safe.
    S.PROCESSING: frozenset(
        {
            S.QUEUED,
            S.RETRY,
            S.FAILED,
            S.NEEDS_LLM,
            S.ABSTAINED,
            S.POSTING,
            S.AWAITING_REVIEW,
            S.DRY_RUN,
        }
    ),
    S.AWAITING_REVIEW: frozenset({S.POSTING, S.REJECTED, S.EXPIRED}),
    S.POSTING: frozenset({S.POSTED, S.FAILED}),
    S.POSTED: frozenset(),
    S.DRY_RUN: frozenset(),
    S.ABSTAINED: frozenset(),
    S.NEEDS_LLM: frozenset(),
    S.SKIPPED: frozenset(),
    S.REJECTED: frozenset(),
    S.EXPIRED: frozenset(),
    S.FAILED: frozenset(),
}


class ActorKind(StrEnum):
    INTAKE = "intake"  # a poll taking a summons in
    TRIAGE = "triage"
    WORKER = "worker"
    POSTER = "poster"
    CLI = "cli"  # `factnote check`: a one-off check recorded with its outcome, never posted
    MODERATOR = "moderator"
    SCHEDULER = "scheduler"  # timed jobs: expiry, recovery at start


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    name: str = ""  # a worker id, a moderator's user name

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.name}" if self.name else self.kind.value


class TransitionRefused(Exception):
    """A state change the lifecycle does not allow: a bug or a race, never silently applied."""


@dataclass(frozen=True)
class Event:
    """One line of a request's history, as the web app and the audit report show it."""

    at: datetime
    from_state: str | None
    to_state: str
    reason: str
    actor: str


def allowed(from_state: RequestState | None, to_state: RequestState) -> bool:
    return to_state in TRANSITIONS[from_state]


def _check(request_id: int | None, from_state: RequestState | None, to: RequestState) -> None:
    if not allowed(from_state, to):
        was = from_state.value if from_state else "(new)"
        raise TransitionRefused(f"request #{request_id}: {was} -> {to.value} is not allowed")


@dataclass(frozen=True)
class Outcome:
    """What a transition line says beyond the move itself (the worker's decision)."""

    verdict: str | None = None
    error: str | None = None
    timings: Mapping[str, float] | None = None


def _write_events(session: Session, values: Sequence[dict[str, object]]) -> None:
    """Event rows in one Core insert (an ORM object each cost twice as much; issue 12). The
    requests they make claimable are noted in the transaction's notes for the queue."""
    if not values:
        return
    moves.insert_events(session, values)
    _note_woken(session, values)


def _note_woken(session: Session, values: Sequence[dict[str, object]]) -> None:
    woken = notes(session).woken
    for v in values:
        if v["to_state"] in _CLAIMABLE_VALUES:
            woken.add(cast(int, v["request_id"]))


def _event_values(
    session: Session,
    request_id: int,
    platform: str,
    from_state: RequestState | None,
    to: RequestState,
    reason: str,
    actor: Actor,
    outcome: Outcome | None = None,
) -> dict[str, object]:
    """One event row's columns; its log line is noted to be written once the change is
    committed."""
    said = outcome or Outcome()
    trouble = bool(said.error) or to in (S.RETRY, S.FAILED)
    # Logged once the change is committed: a rolled-back change was never a transition.
    notes(session).after_commit.append(
        partial(
            log_transition,
            request_id,
            platform,
            to,
            previous=from_state,
            verdict=said.verdict,
            reason=reason or None,
            error=said.error,
            timings=said.timings,
            actor=str(actor),
            level=logging.WARNING if trouble else logging.INFO,
        )
    )
    return _event_row(request_id, from_state, to, reason, actor)


def _event_row(
    request_id: int, from_state: RequestState | None, to: RequestState, reason: str, actor: Actor
) -> dict[str, object]:
    return {
        "request_id": request_id,
        "at": utcnow(),
        "from_state": from_state.value if from_state else None,
        "to_state": to.value,
        "reason": reason[:1000],
        "actor": str(actor)[:128],
    }


# What a one-off `factnote check` records: its outcome, straight away, never a way to post.
CLI_OUTCOMES = frozenset({S.DRY_RUN, S.NEEDS_LLM, S.ABSTAINED, S.FAILED})


def created(session: Session, request: Request, actor: Actor, reason: str = "") -> None:
    """Log the birth of a request already added to the session (its id is assigned here)."""
    created_all(session, [(request, actor, reason)])


def created_all(session: Session, born: Sequence[tuple[Request, Actor, str]]) -> None:
    """`created` for many requests (added to the session) at once: one flush assigns every
    id, so intake writes a poll's rows as one batch."""
    for request, actor, _ in born:
        if not (actor.kind is ActorKind.CLI and RequestState(request.state) in CLI_OUTCOMES):
            _check(request.id, None, RequestState(request.state))
    session.flush()
    _write_events(
        session,
        [
            _event_values(session, r.id, r.platform, None, RequestState(r.state), reason, actor)
            for r, actor, reason in born
        ],
    )


@dataclass(frozen=True)
class Born:
    """A request row just inserted (by a Core insert: no ORM object), for `created_rows`."""

    id: int
    platform: str
    state: RequestState
    actor: Actor
    reason: str = ""


def created_rows(session: Session, born: Sequence[Born]) -> None:
    """`created_all` for rows inserted without the ORM (intake's batch, issue 12)."""
    for row in born:
        _check(row.id, None, row.state)
    _write_events(
        session,
        [_event_values(session, r.id, r.platform, None, r.state, r.reason, r.actor) for r in born],
    )


def transition(
    session: Session,
    request: Request,
    to: RequestState,
    reason: str,
    actor: Actor,
    outcome: Outcome | None = None,
) -> None:
    """Move `request` (loaded in `session`) to `to`, or raise `TransitionRefused`."""
    from_state = RequestState(request.state)
    _check(request.id, from_state, to)
    request.state = to.value
    _write_events(
        session,
        [
            _event_values(
                session, request.id, request.platform, from_state, to, reason, actor, outcome
            )
        ],
    )


def transition_all(
    session: Session, moves: Sequence[tuple[Request, RequestState, str]], actor: Actor
) -> None:
    """`transition` for many requests loaded in `session` (a triage batch): their states are
    flushed as one executemany and their events written in one insert."""
    values = []
    for request, to, reason in moves:
        from_state = RequestState(request.state)
        _check(request.id, from_state, to)
        request.state = to.value
        values.append(
            _event_values(session, request.id, request.platform, from_state, to, reason, actor)
        )
    _write_events(session, values)


@dataclass(frozen=True)
class Held:
    """A request's id, state and platform as a caller has just read them (a claim's
    candidate query), so that `transition_where` need not read them again."""

    id: int
    state: str
    platform: str


def transition_where(
    session: Session,
    requests: Iterable[int | Held],
    from_states: Sequence[RequestState],
    to: RequestState,
    why: str,
    actor: Actor,
    *,
    where: Sequence[Condition] = (),
    owned_by: str | None = None,
    increment: tuple[str, ...] = (),
    outcome: Outcome | None = None,
    **values: object,
) -> list[int]:
    """Move each request still in one of `from_states` (and matching `where`, and still
    leased to `owned_by` when given) to `to`, with `values` set and the `increment` columns
    counted up, in one guarded UPDATE per request so that a request another worker moved
    first is left alone. A request is given by id (its state is read here) or as `Held` (the
    state the caller read: the UPDATE is guarded by it). `outcome`: what each move's log line
    says beyond the move. Returns the ids that moved."""
    given = list(requests)
    ids = [r for r in given if isinstance(r, int)]
    found = {row[0]: Held(*row) for row in moves.states_of(session, ids)}
    rows = [r if isinstance(r, Held) else found.get(r) for r in given]
    for state in from_states:
        _check(None, state, to)
    guard = Guard(where, owned_by, increment)
    moved: list[int] = []
    events: list[dict[str, object]] = []
    written: list[dict[str, object]] = []  # by the move's own statement (PostgreSQL)
    for row in rows:
        if row is None or RequestState(row.state) not in from_states:
            continue
        before = RequestState(row.state)
        event_row = _event_row(row.id, before, to, why, actor)
        done = guarded_move(session, row.id, row.state, to.value, guard, values, event_row)
        if done.moved:
            _event_values(session, row.id, row.platform, before, to, why, actor, outcome)
            (written if done.event_written else events).append(event_row)
            moved.append(row.id)
    _write_events(session, events)
    _note_woken(session, written)
    return moved


CLAIMABLE = (S.QUEUED, S.RETRY)
_CLAIMABLE_VALUES = frozenset(s.value for s in CLAIMABLE)


def claim(session: Session, worker: str, lease_s: float, now: datetime | None = None) -> int | None:
    """Take the oldest claimable request for `worker` with a lease of `lease_s`, or None
    (candidates locked where the database can: `request_moves.claimable`; the guarded update
    in `transition_where` settles a race on SQLite)."""
    moment = now or utcnow()
    candidates = moves.claimable(session, [s.value for s in CLAIMABLE], moment)
    moved = claim_rows(session, [Held(*row) for row in candidates], worker, lease_s, moment)
    return moved[0] if moved else None


def claim_rows(
    session: Session, rows: Sequence[Held], worker: str, lease_s: float, moment: datetime
) -> list[int]:
    """Move the claimable `rows` (just read, locked where the database can) to `processing`
    for `worker`, with a lease of `lease_s` from `moment`."""
    return transition_where(
        session,
        rows,
        CLAIMABLE,
        S.PROCESSING,
        "claimed",
        Actor(ActorKind.WORKER, worker),
        increment=("attempts",),
        next_attempt_at=None,
        lease_owner=worker,
        lease_until=moment + timedelta(seconds=lease_s),
    )


def heartbeat(
    session: Session, request_id: int, worker: str, lease_s: float, now: datetime | None = None
) -> bool:
    """Renew `worker`'s lease on a request it is still processing. False: the lease was lost
    (it ran out and the request went back to the queue); the worker must not record a result."""
    until = (now or utcnow()) + timedelta(seconds=lease_s)
    return moves.renew_lease(session, request_id, S.PROCESSING.value, worker, until)


def holds_lease(session: Session, request: Request, worker: str) -> bool:
    return request.state == S.PROCESSING.value and request.lease_owner == worker


def requeue_expired(session: Session, now: datetime | None = None) -> list[int]:
    """Requests whose worker stopped renewing its lease go back to the queue (the pipeline
    has no side effects, so running one again is safe). Rows from before leases existed
    (no lease at all) count as expired."""
    moment = now or utcnow()
    rows = moves.expired_leases(session, S.PROCESSING.value, moment)
    moved: list[int] = []
    for request_id, owner in rows:
        # A heartbeat that landed after the select keeps the request with its worker.
        reason = f"lease of {owner or 'an earlier process'} expired"
        moved += _requeue(session, request_id, reason, moves.lease_expired(moment))
    return moved


_worker_numbers = itertools.count(1)


def process_name() -> str:
    """This process as a holder of claims, `host:pid`: a restart on the same host can tell a
    dead predecessor (its pid is gone) from a live process, here or elsewhere."""
    return f"{socket.gethostname()}:{os.getpid()}"


def worker_name() -> str:
    """A new worker's name as a lease holder, `host:pid:n`."""
    return f"{process_name()}:{next(_worker_numbers)}"


def _dead_local(owner: str | None, host: str) -> bool:
    parts = (owner or "").split(":")
    if len(parts) < 2 or parts[0] != host or not parts[1].isdigit():
        return False
    return not _pid_alive(int(parts[1]))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def requeue_dead_local(session: Session, me: str) -> list[int]:
    """Work held by a process of this host that no longer runs is freed now, without waiting
    for its lease to run out (the usual case: this bot restarting after a crash): a request it
    was checking goes back to the queue, a reply it was posting is due again (the poster asks
    the platform first, so a reply that did go out is not posted twice)."""
    host = me.split(":", 1)[0]
    rows = moves.leased_on_host(session, [S.PROCESSING.value, S.POSTING.value], host)
    moved: list[int] = []
    for request_id, state, owner in rows:
        if not _dead_local(owner, host):
            continue
        if state == S.POSTING.value:
            moves.release_posting(session, request_id, owner)
            continue
        moved += _requeue(session, request_id, f"worker {owner} is gone", moves.leased_to(owner))
    return moved


def _requeue(session: Session, request_id: int, reason: str, still: Condition) -> list[int]:
    """A request some worker was checking back in the queue, its lease dropped, if `still`
    holds when the update runs (the lease expired, or it is still that worker's)."""
    return transition_where(
        session,
        [request_id],
        [S.PROCESSING],
        S.QUEUED,
        reason,
        Actor(ActorKind.SCHEDULER, "leases"),
        where=[still],
        lease_owner=None,
        lease_until=None,
    )


class LeaseKeeper:
    """Renews a worker's leases in the background while it checks them (every third of the
    lease), so that a slow but live request is never taken over. A lease found lost (the
    database was unreachable past its expiry) is dropped; the worker's result for it will
    then be refused by `holds_lease`."""

    def __init__(self, db: Database, worker: str, lease_s: float) -> None:
        self.db, self.worker, self.lease_s = db, worker, lease_s
        self._held: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, request_id: int) -> None:
        with self._lock:
            self._held.add(request_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="lease-heartbeat", daemon=True
                )
                self._thread.start()

    def release(self, request_id: int) -> None:
        with self._lock:
            self._held.discard(request_id)

    def held(self) -> set[int]:
        with self._lock:
            return set(self._held)

    def renew(self) -> None:
        for request_id in self.held():
            try:
                with self.db.transaction() as session:
                    kept = heartbeat(session, request_id, self.worker, self.lease_s)
            except Exception:  # a database hiccup: the next beat tries again
                log.warning("request %s: lease heartbeat failed", request_id, exc_info=True)
                continue
            # A beat that waited on the worker's own commit of the result finds the request
            # moved on; released meanwhile, it was finished, not lost.
            if not kept and request_id in self.held():
                log.warning("request %s: lease lost to expiry", request_id)
                self.release(request_id)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            if not self.held():
                return
            self.renew()


def retry_at(attempt: int, backoff_s: float, now: datetime | None = None) -> datetime:
    """When to try again after failed attempt number `attempt` (1-based): `backoff_s` doubled
    per earlier attempt, capped at a day so a long-failing request still comes round."""
    delay = min(backoff_s * 2 ** max(attempt - 1, 0), 86_400.0)
    return (now or utcnow()) + timedelta(seconds=delay)


def history(session: Session, request_id: int) -> list[Event]:
    rows = moves.events_of(session, request_id)
    return [
        Event(at=r.at, from_state=r.from_state, to_state=r.to_state, reason=r.reason, actor=r.actor)
        for r in rows
    ]
