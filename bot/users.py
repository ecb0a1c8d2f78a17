"""Review-app accounts: creating, disabling and authenticating moderators and admins.

Passwords are stored as argon2id hashes (argon2-cffi) and never logged. Authentication takes
the same work whether the user exists, is disabled, or gave a wrong password: an unknown name
is verified against a dummy hash, so response times do not reveal which accounts exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select

from pipeline.records import utcnow
from storage.db import Database
from storage.models import User

ROLES = ("admin", "moderator")
MIN_PASSWORD_LENGTH = 10
_USERNAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")

# Module-level so tests may swap in cheaper parameters; production uses argon2-cffi's defaults
# (RFC 9106 "low memory" profile).
HASHER = PasswordHasher()
_dummy_hash: str | None = None


class UserError(Exception):
    """A refused account operation (bad name, weak password, unknown user, ...)."""


@dataclass(frozen=True)
class Account:
    """A user as the app sees it: no password hash leaves this module."""

    id: int
    username: str
    role: str
    active: bool
    session_version: int
    created_at: datetime
    last_login_at: datetime | None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def _account(row: User) -> Account:
    return Account(
        id=row.id,
        username=row.username,
        role=row.role,
        active=row.active,
        session_version=row.session_version,
        created_at=row.created_at,
        last_login_at=row.last_login_at,
    )


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"password must be at least {MIN_PASSWORD_LENGTH} characters")


def add_user(db: Database, username: str, password: str, role: str) -> Account:
    if not _USERNAME_RE.match(username):
        raise UserError("username: 1-64 letters, digits, '_', '.' or '-'")
    if role not in ROLES:
        raise UserError(f"role must be one of: {', '.join(ROLES)}")
    _check_password(password)
    with db.transaction() as session:
        if session.scalars(select(User.id).where(User.username == username)).first():
            raise UserError(f"user {username!r} already exists")
        row = User(username=username, password_hash=HASHER.hash(password), role=role)
        session.add(row)
        session.flush()
        return _account(row)


def _set_active(db: Database, username: str, active: bool) -> Account:
    with db.transaction() as session:
        row = session.scalars(select(User).where(User.username == username)).first()
        if row is None:
            raise UserError(f"no user {username!r}")
        row.active = active
        row.session_version += 1  # a disabled user's open sessions end now
        session.flush()
        return _account(row)


def disable_user(db: Database, username: str) -> Account:
    return _set_active(db, username, False)


def enable_user(db: Database, username: str) -> Account:
    return _set_active(db, username, True)


def set_password(db: Database, username: str, password: str) -> None:
    _check_password(password)
    with db.transaction() as session:
        row = session.scalars(select(User).where(User.username == username)).first()
        if row is None:
            raise UserError(f"no user {username!r}")
        row.password_hash = HASHER.hash(password)
        row.session_version += 1


def end_sessions(db: Database, user_id: int) -> None:
    """Invalidate every session cookie issued to this user (logout)."""
    with db.transaction() as session:
        row = session.get(User, user_id)
        if row is not None:
            row.session_version += 1


def list_users(db: Database) -> list[Account]:
    with db.session() as session:
        return [_account(r) for r in session.scalars(select(User).order_by(User.username))]


def get_user(db: Database, user_id: int) -> Account | None:
    with db.session() as session:
        row = session.get(User, user_id)
        return _account(row) if row else None


def _dummy() -> str:
    global _dummy_hash
    if _dummy_hash is None:
        _dummy_hash = HASHER.hash("not a password of anyone")
    return _dummy_hash


def authenticate(db: Database, username: str, password: str) -> Account | None:
    """The active account these credentials belong to, or None. Always does one argon2
    verification, so an unknown or disabled account costs as much as a wrong password."""
    with db.session() as session:
        row = session.scalars(select(User).where(User.username == username)).first()
        stored = row.password_hash if row is not None else _dummy()
        ok: bool
        try:
            ok = HASHER.verify(stored, password)
        except (VerificationError, InvalidHashError):
            ok = False
        if row is None or not ok or not row.active:
            return None
    with db.transaction() as session:
        row = session.get(User, row.id)
        assert row is not None
        row.last_login_at = utcnow()
        if HASHER.check_needs_rehash(row.password_hash):
            row.password_hash = HASHER.hash(password)
        session.flush()
        return _account(row)
