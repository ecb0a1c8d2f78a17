"""The request lifecycle: the transition table, the one door, the event log, the retry schedule."""

from __future__ import annotations

import logging
import subprocess
import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.requests import lifecycle
from bot.requests.lifecycle import Actor, ActorKind, TransitionRefused
from storage.db import Database
from storage.models import TERMINAL_STATES, Request, RequestEvent, RequestState

WORKER = Actor(ActorKind.WORKER, "w1")
S = RequestState


def _new_request(db: Database, state: RequestState = S.RECEIVED) -> int:
    with db.transaction() as session:
        request = Request(platform="local", summons_id=f"s-{state.value}", state=state.value)
        session.add(request)
        lifecycle.created(session, request, Actor(ActorKind.INTAKE, "local"), "polled")
        return request.id


def test_every_state_has_a_row_and_terminal_states_move_nowhere() -> None:
    assert set(lifecycle.TRANSITIONS) == {None, *RequestState}
    for terminal in TERMINAL_STATES:
        assert lifecycle.TRANSITIONS[terminal] == frozenset()
    for state, targets in lifecycle.TRANSITIONS.items():
        if state is not None and state not in TERMINAL_STATES:
            assert targets, f"{state} is not terminal but has no way out"


def test_every_non_terminal_state_can_reach_a_terminal_state() -> None:
    reachable: set[RequestState] = set()
    frontier = [S.RECEIVED]
    while frontier:
        state = frontier.pop()
        for nxt in lifecycle.TRANSITIONS[state]:
            if nxt not in reachable:
                reachable.add(nxt)
                frontier.append(nxt)
    assert reachable >= TERMINAL_STATES


@pytest.mark.parametrize(
    ("start", "to"),
    [
        (S.POSTED, S.POSTING),  # a posted reply is never re-posted
        (S.FAILED, S.QUEUED),  # a failure is final; a new request asks again
        (S.AWAITING_REVIEW, S.POSTED),  # approval goes through posting, never straight out
        (S.QUEUED, S.POSTING),  # nothing posts without being checked
        (S.DRY_RUN, S.POSTING),  # dry-run records only
    ],
)
def test_a_move_the_table_does_not_allow_is_refused_and_changes_nothing(
    db: Database, start: RequestState, to: RequestState
) -> None:
    request_id = _new_request(db, S.RECEIVED)
    with db.transaction() as session:
        session.get(Request, request_id).state = start.value  # type: ignore[union-attr]
    refused = pytest.raises(TransitionRefused, match=f"{start.value} -> {to.value}")
    with refused, db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        lifecycle.transition(session, request, to, "bug", WORKER)
    with db.session() as session:
        assert session.get(Request, request_id).state == start.value  # type: ignore[union-attr]
        events = lifecycle.history(session, request_id)
    assert [e.to_state for e in events] == ["received"]


def test_each_transition_writes_one_event_with_actor_and_reason_in_order(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    request_id = _new_request(db)
    caplog.set_level(logging.INFO, logger="factnote.requests")
    for to, actor, reason in [
        (S.QUEUED, Actor(ActorKind.TRIAGE), ""),
        (S.PROCESSING, WORKER, "attempt 1"),
        (S.AWAITING_REVIEW, WORKER, "review mode"),
        (S.POSTING, Actor(ActorKind.MODERATOR, "alice"), "approved"),
        (S.POSTED, Actor(ActorKind.POSTER, "w2"), "reply 123"),
    ]:
        with db.transaction() as session:
            request = session.get(Request, request_id)
            assert request is not None
            lifecycle.transition(session, request, to, reason, actor)
    with db.session() as session:
        events = lifecycle.history(session, request_id)
    assert [(e.from_state, e.to_state) for e in events] == [
        (None, "received"),
        ("received", "queued"),
        ("queued", "processing"),
        ("processing", "awaiting_review"),
        ("awaiting_review", "posting"),
        ("posting", "posted"),
    ]
    assert events[4].actor == "moderator:alice" and events[4].reason == "approved"
    assert (
        f'request={request_id} platform=local posting -> posted by=poster:w2 reason="reply 123"'
        in caplog.text
    )


def test_a_rolled_back_transition_leaves_no_event_and_no_log_line(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    request_id = _new_request(db)
    caplog.set_level(logging.INFO, logger="factnote.requests")
    with pytest.raises(RuntimeError), db.transaction() as session:
        request = session.get(Request, request_id)
        assert request is not None
        lifecycle.transition(session, request, S.QUEUED, "", WORKER)
        raise RuntimeError("crash after the change, before commit")
    with db.session() as session:
        assert session.get(Request, request_id).state == "received"  # type: ignore[union-attr]
        assert session.query(RequestEvent).filter_by(request_id=request_id).count() == 1
    assert "-> queued" not in caplog.text


def test_a_guarded_bulk_move_skips_requests_another_worker_moved_first(db: Database) -> None:
    first, second = _new_request(db), _new_request(db, S.SKIPPED)
    with db.transaction() as session:
        moved = lifecycle.transition_where(
            session, [first, second], [S.RECEIVED], S.QUEUED, "triaged", WORKER
        )
    assert moved == [first]
    with db.session() as session:
        assert [e.to_state for e in lifecycle.history(session, second)] == ["skipped"]


def test_a_guarded_bulk_move_refuses_a_disallowed_edge_before_touching_rows(db: Database) -> None:
    request_id = _new_request(db)
    with pytest.raises(TransitionRefused), db.transaction() as session:
        lifecycle.transition_where(session, [request_id], [S.RECEIVED], S.POSTED, "", WORKER)


def test_retry_waits_double_per_attempt_and_are_capped_at_a_day() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    waits = [lifecycle.retry_at(n, 60.0, now) - now for n in (1, 2, 3, 4)]
    assert waits == [timedelta(seconds=s) for s in (60, 120, 240, 480)]
    assert lifecycle.retry_at(40, 60.0, now) - now == timedelta(days=1)


@pytest.mark.postgres
def test_the_event_log_works_on_postgresql(pg_db: Database) -> None:
    request_id = _new_request(pg_db)
    with pg_db.transaction() as session:
        moved = lifecycle.transition_where(
            session, [request_id], [S.RECEIVED], S.QUEUED, "triaged", WORKER
        )
    assert moved == [request_id]
    with pg_db.session() as session:
        assert [e.to_state for e in lifecycle.history(session, request_id)] == [
            "received",
            "queued",
        ]


def _queued(db: Database, n: int) -> list[int]:
    ids = []
    with db.transaction() as session:
        for i in range(n):
            request = Request(platform="local", summons_id=f"q{i}", state=S.QUEUED.value)
            session.add(request)
            session.flush()
            ids.append(request.id)
    return ids


def test_a_claim_takes_the_oldest_request_with_a_lease_and_counts_the_attempt(
    db: Database,
) -> None:
    first, second = _queued(db, 2)
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    with db.transaction() as session:
        assert lifecycle.claim(session, "w1", 30.0, now) == first
        assert lifecycle.claim(session, "w2", 30.0, now) == second
        assert lifecycle.claim(session, "w3", 30.0, now) is None
    with db.session() as session:
        request = session.get(Request, first)
        assert request is not None
        assert (request.state, request.lease_owner, request.attempts) == ("processing", "w1", 1)
        assert request.lease_until == now + timedelta(seconds=30)
        assert lifecycle.history(session, first)[-1].actor == "worker:w1"


def test_a_request_waiting_for_its_retry_time_is_not_claimed(db: Database) -> None:
    (request_id,) = _queued(db, 1)
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    with db.transaction() as session:
        session.get(Request, request_id).next_attempt_at = now + timedelta(minutes=1)  # type: ignore[union-attr]
    with db.transaction() as session:
        assert lifecycle.claim(session, "w1", 30.0, now) is None
        assert lifecycle.claim(session, "w1", 30.0, now + timedelta(minutes=2)) == request_id


def test_a_worker_that_stops_heartbeating_loses_the_request_and_cannot_record(
    db: Database,
) -> None:
    (request_id,) = _queued(db, 1)
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    with db.transaction() as session:
        lifecycle.claim(session, "dead", 30.0, start)
    with db.transaction() as session:
        assert lifecycle.requeue_expired(session, start + timedelta(seconds=29)) == []
        assert lifecycle.requeue_expired(session, start + timedelta(seconds=31)) == [request_id]
    with db.transaction() as session:
        assert not lifecycle.heartbeat(session, request_id, "dead", 30.0)
        assert lifecycle.claim(session, "w2", 30.0, start + timedelta(seconds=32)) == request_id
        request = session.get(Request, request_id)
        assert request is not None
        assert not lifecycle.holds_lease(session, request, "dead")
        assert lifecycle.holds_lease(session, request, "w2")
        assert request.attempts == 2
    with db.session() as session:
        events = lifecycle.history(session, request_id)
    assert [e.reason for e in events if e.to_state == "queued"] == ["lease of dead expired"]


def test_a_live_slow_worker_keeps_its_request_by_heartbeating(db: Database) -> None:
    (request_id,) = _queued(db, 1)
    start = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    with db.transaction() as session:
        lifecycle.claim(session, "slow", 30.0, start)
    for minute in range(1, 6):  # five minutes of work, a heartbeat every 20 s
        beat = start + timedelta(seconds=20 * minute)
        with db.transaction() as session:
            assert lifecycle.heartbeat(session, request_id, "slow", 30.0, beat)
            assert lifecycle.requeue_expired(session, beat + timedelta(seconds=15)) == []
    with db.session() as session:
        assert session.get(Request, request_id).lease_owner == "slow"  # type: ignore[union-attr]


@pytest.mark.postgres
def test_concurrent_workers_on_postgresql_claim_each_request_exactly_once(
    pg_db: Database,
) -> None:
    ids = set(_queued(pg_db, 40))
    claimed: list[int] = []
    lock = threading.Lock()
    # Every worker holds a claimed request before any takes a second, so the spread over
    # workers is certain rather than left to the scheduler.
    first_claims = threading.Barrier(6, timeout=60)

    def work(name: str) -> None:
        first = True
        while True:
            with pg_db.transaction() as session:
                got = lifecycle.claim(session, name, 60.0)
            if got is None:
                return
            with lock:
                claimed.append(got)
            if first:
                first = False
                first_claims.wait()

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(claimed) == sorted(ids)  # every request once, none twice
    with pg_db.session() as session:
        owners = session.scalars(select(Request.lease_owner)).all()
    assert len(set(owners)) == 6  # the work really was spread over workers


def _exited_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def test_a_restart_frees_what_a_dead_process_of_this_host_held_and_nothing_else(
    db: Database,
) -> None:
    checking, posting, alive, elsewhere = _queued(db, 4)
    me = lifecycle.worker_name()
    host = me.split(":", 1)[0]
    dead = f"{host}:{_exited_pid()}"
    future = datetime(2030, 1, 1, tzinfo=UTC)
    with db.transaction() as session:
        for request_id, state, owner in [
            (checking, S.PROCESSING, f"{dead}:1"),
            (posting, S.POSTING, dead),
            (alive, S.PROCESSING, f"{lifecycle.process_name()}:7"),  # this very process
            (elsewhere, S.PROCESSING, f"other-host:{_exited_pid()}:1"),  # cannot tell there
        ]:
            row = session.get(Request, request_id)
            assert row is not None
            row.state, row.lease_owner, row.lease_until = state.value, owner, future
            row.next_attempt_at = future
    with db.transaction() as session:
        assert lifecycle.requeue_dead_local(session, me) == [checking]
    with db.session() as session:
        states = {r.id: (r.state, r.next_attempt_at) for r in session.scalars(select(Request))}
    assert states[checking][0] == "queued"
    assert states[posting] == ("posting", None)  # due again: the poster asks the platform first
    assert states[alive][0] == states[elsewhere][0] == "processing"
