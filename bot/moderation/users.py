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

from bot.config import WebConfig
from pipeline.records import utcnow
from storage import users as accounts
from storage.db import Database
from storage.models import User

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
        if accounts.exists(session, username):
            raise UserError(f"user {username!r} already exists")
        return _account(accounts.add(session, username, HASHER.hash(password), role))


def _set_active(db: Database, username: str, active: bool) -> Account:
    with db.transaction() as session:
        row = accounts.by_name(session, username)
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
        row = accounts.by_name(session, username)
        if row is None:
            raise UserError(f"no user {username!r}")
        row.role = role
        session.flush()
        return _account(row)


def find_user(db: Database, username: str) -> Account | None:
    with db.session() as session:
        row = accounts.by_name(session, username)
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
        row = accounts.by_name(session, username)
        if row is None:
            raise UserError(f"no user {username!r}")
        row.password_hash = HASHER.hash(password)
        row.session_version += 1


def end_sessions(db: Database, user_id: int) -> None:
    """Invalidate every session cookie issued to this user (logout)."""
    with db.transaction() as session:
        row = accounts.by_id(session, user_id)
        if row is not None:
            row.session_version += 1


def list_users(db: Database) -> list[Account]:
    with db.session() as session:
        return [_account(r) for r in accounts.by_username(session)]


def get_user(db: Database, user_id: int) -> Account | None:
    with db.session() as session:
        row = accounts.by_id(session, user_id)
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
        row = accounts.by_name(session, username)
        stored = row.password_hash if row is not None else _dummy()
        ok: bool
        try:
            ok = HASHER.verify(stored, password)
        except (VerificationError, InvalidHashError):
            ok = False
        if row is None or not ok or not row.active:
            return None
    with db.transaction() as session:
        row = accounts.by_id(session, row.id)
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
        return accounts.exists(session, username)


def _locked_until(db: Database, keys: list[tuple[str, str]], now: datetime) -> datetime | None:
    with db.session() as session:
        return accounts.locked_until(session, keys, now)


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
    rule = accounts.FailureRule(
        limits={
            ACCOUNT: policy.max_failures,
            ADDRESS: policy.address_max_failures,
            SPRAY: policy.address_max_failures,
        },
        window=policy.window,
        lockout_max=policy.lockout_max,
        lockout_for=policy.lockout_for,
    )
    until, started = accounts.count_failure(db, _throttle_keys(username, address, known), now, rule)
    for lockout in started:
        log.warning(
            "login locked for %s %r until %s after %d failed attempts",
            lockout.scope,
            lockout.key[:64],
            lockout.until.isoformat(timespec="seconds"),
            lockout.failures,
        )
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
        accounts.forget(session, (ACCOUNT,), username[:_KEY_LENGTH])
    return LoginResult(account)


def unlock_user(db: Database, username: str) -> bool:
    """Lift the lockout of an account and forget its failed logins. Returns whether it had
    any; raises UserError for an unknown user."""
    with db.transaction() as session:
        if not accounts.exists(session, username):
            raise UserError(f"no user {username!r}")
        return accounts.forget(session, (ACCOUNT,), username[:_KEY_LENGTH])


def unlock_address(db: Database, address: str) -> bool:
    """Lift the lockout of a client address (an IPv6 address: of its /64). Returns whether it
    had one (or any failures)."""
    with db.transaction() as session:
        return accounts.forget(session, (ADDRESS, SPRAY), address_key(address))


def lockouts(db: Database, now: datetime) -> list[Lockout]:
    """Lockouts in force at `now`: accounts (existing ones only) and client addresses."""
    with db.session() as session:
        rows = accounts.locked_at(session, now)
        names = accounts.usernames(session)
    return [
        Lockout(r.scope, r.key, r.locked_until)
        for r in rows
        if r.locked_until is not None and (r.scope in (ADDRESS, SPRAY) or r.key in names)
    ]
