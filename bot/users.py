"""Review-app accounts: creating, disabling and authenticating moderators and admins.

Passwords are stored as argon2id hashes (argon2-cffi) and never logged. Authentication takes
the same work whether the user exists, is disabled, or gave a wrong password: an unknown name
is verified against a dummy hash, so response times do not reveal which accounts exist.

Logins are throttled (`attempt_login`): failures are counted per login name and per client
address in the database (so the count survives restarts and is shared by every web process);
too many within the window lock that name or address out, for longer after each lockout. An
unknown name is counted and locked like a real one, so a lockout reveals nothing either. An
admin lifts a lockout with `unlock_user` / `unlock_address`.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from bot.config import WebConfig
from pipeline.records import utcnow
from storage.db import Database
from storage.models import LoginThrottle, User

log = logging.getLogger(__name__)

# A senior moderator decides escalated items (so does an admin); a moderator decides the rest.
ROLES = ("admin", "senior", "moderator")
SENIOR_ROLES = frozenset({"admin", "senior"})
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

    @property
    def is_senior(self) -> bool:
        """May decide escalated review items: a senior moderator or an admin."""
        return self.role in SENIOR_ROLES


def _account(row: User) -> Account:
    """The row's columns of the account's field names (a field added to both needs nothing here;
    `password_hash` has no field, so it stays behind)."""
    return Account(**{f.name: getattr(row, f.name) for f in fields(Account)})


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


def set_role(db: Database, username: str, role: str) -> Account:
    if role not in ROLES:
        raise UserError(f"role must be one of: {', '.join(ROLES)}")
    with db.transaction() as session:
        row = session.scalars(select(User).where(User.username == username)).first()
        if row is None:
            raise UserError(f"no user {username!r}")
        row.role = role
        session.flush()
        return _account(row)


def find_user(db: Database, username: str) -> Account | None:
    with db.session() as session:
        row = session.scalars(select(User).where(User.username == username)).first()
        return _account(row) if row else None


def reviewer(db: Database, username: str) -> Account:
    """The active account a review action is done as (`factnote review ... --as NAME`);
    UserError, in one line that says how to fix it, for an unknown or disabled name."""
    account = find_user(db, username)
    if account is None:
        raise UserError(
            f"no user {username!r}: review actions are done as a review-app account "
            f"(list them with `factnote users list`, add one with "
            f"`factnote users add NAME --role moderator`)"
        )
    if not account.active:
        raise UserError(f"user {username!r} is disabled: review actions need an active account")
    return account


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


# --- login throttling --------------------------------------------------------------------------

# Three counters (issue 33): per name (any name, so a lockout reveals nothing); per client
# address for failures on names that are no account (ADDRESS); per client address for failures
# on real accounts (SPRAY: one password tried on many accounts). A SPRAY lockout or a name's
# own lockout refuses every attempt unchecked. An ADDRESS lockout only answers every failure
# from that address as locked: the password of a real account is still checked, so strangers
# guessing made-up names cannot lock the moderators out of a shared address (an office, a
# proxy), and a real account's wrong password is answered the same as an unknown name's.
ACCOUNT = "account"
ADDRESS = "address"
SPRAY = "address_known"
_KEY_LENGTH = 256  # LoginThrottle.key


@dataclass(frozen=True)
class LoginPolicy:
    """How many failures, within which window, lock a name or an address out, and for how long:
    `lockout` the first time, doubled for each lockout in a row, at most `lockout_max`."""

    max_failures: int = 5
    address_max_failures: int = 20
    window: timedelta = timedelta(minutes=15)
    lockout: timedelta = timedelta(minutes=5)
    lockout_max: timedelta = timedelta(hours=1)

    @classmethod
    def from_config(cls, web: WebConfig) -> LoginPolicy:
        return cls(
            max_failures=web.login_max_failures,
            address_max_failures=web.login_address_max_failures,
            window=timedelta(seconds=web.login_window_s),
            lockout=timedelta(seconds=web.login_lockout_s),
            lockout_max=timedelta(seconds=web.login_lockout_max_s),
        )

    def lockout_for(self, lockouts: int) -> timedelta:
        """The length of the `lockouts`-th lockout in a row (1-based)."""
        doubled = self.lockout * (2 ** min(max(lockouts - 1, 0), 20))
        return min(doubled, self.lockout_max)


@dataclass(frozen=True)
class LoginResult:
    """An attempt's outcome: the account when the credentials were right and nothing is
    locked; otherwise None and, when a lockout applies (now or from before), when it ends."""

    account: Account | None
    locked_until: datetime | None = None


@dataclass(frozen=True)
class Lockout:
    scope: str  # account | address
    key: str
    until: datetime


def address_key(address: str) -> str:
    """The key a client address is counted under: the IPv4 address, or the IPv6 /64 it is in
    (one subscriber usually holds a whole /64, so counting single IPv6 addresses would let
    one client rotate through them). A network given as such is kept as it is."""
    text = address.strip()
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        try:
            return str(ipaddress.ip_network(text, strict=False))
        except ValueError:
            return text[:_KEY_LENGTH]  # not an IP (e.g. a test client's name)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _throttle_keys(username: str, address: str | None, known: bool) -> list[tuple[str, str]]:
    keys = [(ACCOUNT, username[:_KEY_LENGTH])]
    if address:
        keys.append((SPRAY if known else ADDRESS, address_key(address)))
    return keys


def _account_exists(db: Database, username: str) -> bool:
    with db.session() as session:
        return session.scalars(select(User.id).where(User.username == username)).first() is not None


def _locked_until(db: Database, keys: list[tuple[str, str]], now: datetime) -> datetime | None:
    until: datetime | None = None
    with db.session() as session:
        for scope, key in keys:
            row = session.get(LoginThrottle, (scope, key))
            if row is not None and row.locked_until is not None and row.locked_until > now:
                until = row.locked_until if until is None else max(until, row.locked_until)
    return until


def login_locked_until(
    db: Database, username: str, address: str | None, now: datetime
) -> datetime | None:
    """When the lockout that refuses this name from this address unchecked ends, or None: the
    name's own, or the address's for failures on real accounts (SPRAY)."""
    keys = [(ACCOUNT, username[:_KEY_LENGTH])]
    if address:
        keys.append((SPRAY, address_key(address)))
    return _locked_until(db, keys, now)


def _count_failure(
    db: Database,
    username: str,
    address: str | None,
    known: bool,
    now: datetime,
    policy: LoginPolicy,
) -> datetime | None:
    """Count one failed login against the name and the address; returns when a lockout that
    now applies ends, or None."""
    limits = {
        ACCOUNT: policy.max_failures,
        ADDRESS: policy.address_max_failures,
        SPRAY: policy.address_max_failures,
    }
    keys = _throttle_keys(username, address, known)
    for attempt in range(2):
        try:
            return _count_failure_once(db, keys, now, policy, limits)
        except IntegrityError:  # another process created the same row first: count again
            if attempt:
                raise
    return None  # pragma: no cover


def _count_failure_once(
    db: Database,
    keys: list[tuple[str, str]],
    now: datetime,
    policy: LoginPolicy,
    limits: dict[str, int],
) -> datetime | None:
    until: datetime | None = None
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
            elif now - row.window_start >= policy.window:
                row.failures = 0
                row.window_start = now
                if row.locked_until is None or now - row.locked_until >= policy.window:
                    row.lockouts = 0  # quiet for a whole window: start the doubling again
            row.failures += 1
            row.last_failure_at = now
            if row.failures >= limits[scope]:
                row.lockouts += 1
                row.locked_until = now + policy.lockout_for(row.lockouts)
                row.failures = 0
                row.window_start = now
                log.warning(
                    "login locked for %s %r until %s after %d failed attempts",
                    scope,
                    key[:64],
                    row.locked_until.isoformat(timespec="seconds"),
                    limits[scope],
                )
                until = row.locked_until if until is None else max(until, row.locked_until)
        # Rows nobody failed on for a window plus the longest lockout hold nothing any more.
        cutoff = now - policy.window - policy.lockout_max
        session.execute(delete(LoginThrottle).where(LoginThrottle.last_failure_at < cutoff))
    return until


def attempt_login(
    db: Database,
    username: str,
    password: str,
    address: str | None,
    *,
    now: datetime,
    policy: LoginPolicy,
) -> LoginResult:
    """A throttled `authenticate`. While the name is locked out, or the address for failures on
    real accounts, the password is not even checked, for a real account and an unknown name
    alike. While the address is locked for failures on unknown names, the password is checked
    and every failure answered as locked (see SPRAY above). A failure is counted and logged
    (name and address, never the password); a success clears the name's failures."""
    locked = login_locked_until(db, username, address, now)
    if locked is not None:
        log.warning(
            "login refused for %r from %s: locked out until %s",
            username[:64],
            address or "?",
            locked.isoformat(timespec="seconds"),
        )
        return LoginResult(None, locked)
    strangers = _locked_until(db, [(ADDRESS, address_key(address))], now) if address else None
    account = authenticate(db, username, password)
    if account is None:
        log.warning("failed login for %r from %s", username[:64], address or "?")
        known = _account_exists(db, username)
        until = _count_failure(db, username, address, known, now, policy)
        return LoginResult(None, until or strangers)
    with db.transaction() as session:
        session.execute(
            delete(LoginThrottle).where(
                LoginThrottle.scope == ACCOUNT, LoginThrottle.key == username[:_KEY_LENGTH]
            )
        )
    return LoginResult(account)


def unlock_user(db: Database, username: str) -> bool:
    """Lift the lockout of an account and forget its failed logins. Returns whether it had
    any; raises UserError for an unknown user."""
    with db.transaction() as session:
        if session.scalars(select(User.id).where(User.username == username)).first() is None:
            raise UserError(f"no user {username!r}")
        result = session.execute(
            delete(LoginThrottle).where(
                LoginThrottle.scope == ACCOUNT, LoginThrottle.key == username[:_KEY_LENGTH]
            )
        )
    return bool(getattr(result, "rowcount", 0))


def unlock_address(db: Database, address: str) -> bool:
    """Lift the lockout of a client address (an IPv6 address: of its /64). Returns whether it
    had one (or any failures)."""
    with db.transaction() as session:
        result = session.execute(
            delete(LoginThrottle).where(
                LoginThrottle.scope.in_((ADDRESS, SPRAY)),
                LoginThrottle.key == address_key(address),
            )
        )
    return bool(getattr(result, "rowcount", 0))


def lockouts(db: Database, now: datetime) -> list[Lockout]:
    """Lockouts in force at `now`: accounts (existing ones only) and client addresses."""
    with db.session() as session:
        rows = session.scalars(
            select(LoginThrottle)
            .where(LoginThrottle.locked_until > now)
            .order_by(LoginThrottle.scope, LoginThrottle.key)
        ).all()
        names = set(session.scalars(select(User.username)))
    return [
        Lockout(r.scope, r.key, r.locked_until)
        for r in rows
        if r.locked_until is not None and (r.scope in (ADDRESS, SPRAY) or r.key in names)
    ]
