"""Queries about the review app's accounts and their login throttle: the rows `bot.moderation.users`
reads and writes. The bot keeps the rules (password hashing, roles, lockout lengths) and
writes no SQL of its own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import LoginThrottle, User


def is_active(session: Session, username: str) -> bool:
    """Whether an account of that name exists and is active."""
    found = session.scalars(
        select(User.id).where(User.username == username, User.active.is_(True))
    ).first()
    return found is not None


def exists(session: Session, username: str) -> bool:
    """Whether an account of that name exists (active or not)."""
    return session.scalars(select(User.id).where(User.username == username)).first() is not None


def by_name(session: Session, username: str) -> User | None:
    return session.scalars(select(User).where(User.username == username)).first()


def by_id(session: Session, user_id: int) -> User | None:
    return session.get(User, user_id)


def add(session: Session, username: str, password_hash: str, role: str) -> User:
    """A new account's row, flushed so it has its id and defaults."""
    row = User(username=username, password_hash=password_hash, role=role)
    session.add(row)
    session.flush()
    return row


def by_username(session: Session) -> list[User]:
    """Every account, by name."""
    return list(session.scalars(select(User).order_by(User.username)))


def usernames(session: Session) -> set[str]:
    return set(session.scalars(select(User.username)))


# --- login throttling --------------------------------------------------------------------------

Key = tuple[str, str]  # (scope, key) of a LoginThrottle row


@dataclass(frozen=True)
class FailureRule:
    """What counting a failure needs of the policy: the failures per scope that lock it, the
    window they are counted in, the longest lockout, and each lockout's length by its number
    in a row."""

    limits: Mapping[str, int]
    window: timedelta
    lockout_max: timedelta
    lockout_for: Callable[[int], timedelta]


@dataclass(frozen=True)
class NewLockout:
    scope: str
    key: str
    until: datetime
    failures: int


def locked_until(session: Session, keys: Sequence[Key], now: datetime) -> datetime | None:
    """When the latest lockout in force at `now` among these keys ends, or None."""
    until: datetime | None = None
    for scope, key in keys:
        row = session.get(LoginThrottle, (scope, key))
        if row is not None and row.locked_until is not None and row.locked_until > now:
            until = row.locked_until if until is None else max(until, row.locked_until)
    return until


def count_failure(
    db: Database, keys: Sequence[Key], now: datetime, rule: FailureRule
) -> tuple[datetime | None, list[NewLockout]]:
    """Count one failed login against each key: when a lockout that now applies ends (or
    None), and the lockouts this failure started."""
    for attempt in range(2):
        try:
            return _count_failure_once(db, keys, now, rule)
        except IntegrityError:  # another process created the same row first: count again
            if attempt:
                raise
    return None, []  # pragma: no cover


def _count_failure_once(
    db: Database, keys: Sequence[Key], now: datetime, rule: FailureRule
) -> tuple[datetime | None, list[NewLockout]]:
    until: datetime | None = None
    started: list[NewLockout] = []
    with db.transaction() as session:
        for scope, key in keys:
            where = (LoginThrottle.scope == scope, LoginThrottle.key == key)
            # Write first: that takes the row's (SQLite: the database's) write lock, so two
            # processes counting at once cannot both read the old count.
            session.execute(update(LoginThrottle).where(*where).values(last_failure_at=now))
            row = session.scalars(
                select(LoginThrottle).where(*where).with_for_update()
            ).one_or_none()
            if row is None:
                row = LoginThrottle(scope=scope, key=key, failures=0, window_start=now, lockouts=0)
                session.add(row)
            elif row.locked_until is not None and row.locked_until > now:
                until = row.locked_until if until is None else max(until, row.locked_until)
                row.last_failure_at = now
                continue  # already locked (another process got there first): no extra count
            elif now - row.window_start >= rule.window:
                row.failures = 0
                row.window_start = now
                if row.locked_until is None or now - row.locked_until >= rule.window:
                    row.lockouts = 0  # quiet for a whole window: start the doubling again
            row.failures += 1
            row.last_failure_at = now
            if row.failures >= rule.limits[scope]:
                row.lockouts += 1
                row.locked_until = now + rule.lockout_for(row.lockouts)
                row.failures = 0
                row.window_start = now
                started.append(NewLockout(scope, key, row.locked_until, rule.limits[scope]))
                until = row.locked_until if until is None else max(until, row.locked_until)
        # Rows nobody failed on for a window plus the longest lockout hold nothing any more.
        cutoff = now - rule.window - rule.lockout_max
        session.execute(delete(LoginThrottle).where(LoginThrottle.last_failure_at < cutoff))
    return until, started


def forget(session: Session, scopes: Sequence[str], key: str) -> bool:
    """Delete the throttle rows of this key in these scopes; whether there were any."""
    result = session.execute(
        delete(LoginThrottle).where(
            LoginThrottle.scope.in_(tuple(scopes)), LoginThrottle.key == key
        )
    )
    return bool(getattr(result, "rowcount", 0))


def locked_at(session: Session, now: datetime) -> list[LoginThrottle]:
    """Throttle rows locked at `now`, by scope and key."""
    return list(
        session.scalars(
            select(LoginThrottle)
            .where(LoginThrottle.locked_until > now)
            .order_by(LoginThrottle.scope, LoginThrottle.key)
        )
    )
