"""Engine and session factory, bringing the schema up to date with Alembic, and riding out a
database lock held by another process.

Opening a database that is already at the head revision, as every process but the first finds
it, reads `alembic_version` with SQLAlchemy and never imports Alembic (0.18-0.32 s of a
command's start-up); any other state, or a chain this module cannot read plainly, is Alembic's.
"""

from __future__ import annotations

import ast
import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.exc import (
    ArgumentError,
    InvalidatePoolError,
    NoSuchModuleError,
    OperationalError,
)
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential

from storage.dialect import SQLITE, backend, sqlite_file

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
DEFAULT_BUSY_TIMEOUT_S = 30.0
# A pooled PostgreSQL connection idle this long is pinged before use (`ping_when_idle`).
PING_AFTER_IDLE_S = 5.0
_LAST_USED = "factnote.last_used"  # a pool entry's info key: when it was last checked in

log = logging.getLogger(__name__)
T = TypeVar("T")

# SQLSTATEs of a lock that may clear: lock_not_available, serialization_failure,
# deadlock_detected (PostgreSQL).
_LOCK_SQLSTATES = frozenset({"55P03", "40001", "40P01"})


class DatabaseBusy(Exception):
    """The database stayed locked by someone else through every retry. One line to report;
    nothing is wrong with the data, and running again later is safe."""


def is_url_error(exc: BaseException) -> bool:
    """Whether `exc` is SQLAlchemy refusing a database URL (no such dialect or driver, or a
    URL it cannot parse) rather than a database's own error."""
    return isinstance(exc, NoSuchModuleError | ArgumentError)


def driver_error(exc: BaseException) -> BaseException | None:
    """The driver's own error inside an operational failure (a connection refused, a file
    that cannot be opened); None when `exc` is not one."""
    if not isinstance(exc, OperationalError):
        return None
    return exc.orig or exc


def is_lock_error(exc: BaseException) -> bool:
    """Whether `exc` is another connection holding a lock past our busy timeout."""
    if not isinstance(exc, OperationalError):
        return False
    orig = exc.orig
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if code in _LOCK_SQLSTATES:
        return True
    message = str(orig).lower()
    return "database is locked" in message or "database table is locked" in message


def retry_when_locked(
    fn: Callable[[], T],
    *,
    what: str,
    attempts: int = 5,
    backoff_s: float = 1.0,
    max_backoff_s: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `fn`, again after an exponential backoff each time it meets a lock another
    connection held past the busy timeout; after `attempts` runs, `DatabaseBusy`.

    `fn` must be safe to run again after a lock error: one transaction (rolled back whole by
    the error), or steps that each commit and are idempotent."""

    def warn(state: RetryCallState) -> None:
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s: the database is locked by another connection (attempt %d of %d); "
            "retrying in %.1fs",
            what,
            state.attempt_number,
            attempts,
            wait,
        )

    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_exponential(multiplier=backoff_s, max=max_backoff_s),
        retry=retry_if_exception(is_lock_error),
        before_sleep=warn,
        sleep=sleep,
        reraise=True,
    )
    try:
        return retrying(fn)
    except OperationalError as exc:
        if not is_lock_error(exc):
            raise
        raise DatabaseBusy(
            f"{what}: the database stayed locked by another connection through "
            f"{max(1, attempts)} attempt(s); nothing was lost, run again later"
        ) from exc


def _sqlite_pragmas(busy_timeout_s: float) -> Callable[[Any, Any], None]:
    def pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        # WAL lets the review app read while the worker writes; busy_timeout makes concurrent
        # writers wait instead of failing with "database is locked".
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        cursor.close()

    return pragmas


def make_engine(url: str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> Engine:
    if backend(url) == SQLITE:
        database = sqlite_file(url)
        if database is not None:
            database.expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": busy_timeout_s}
        )
        event.listen(engine, "connect", _sqlite_pragmas(busy_timeout_s))
        return engine
    engine = create_engine(url)
    ping_when_idle(engine, PING_AFTER_IDLE_S)
    return engine


def ping_when_idle(engine: Engine, idle_s: float) -> None:
    """Check a pooled connection before use only when it has sat idle `idle_s` or longer:
    `pool_pre_ping`'s round trip on every checkout cost a worker three per request on
    PostgreSQL (issue 12), while a connection used a moment ago is as good as checked. One
    that died meanwhile (the server restarted) fails its transaction instead, and the
    disconnect error makes SQLAlchemy replace every pooled connection from before it; the
    claim's transient-error retry and the lease cover that one transaction. A failed ping
    does what `pool_pre_ping`'s does: the pool is invalidated and a new connection taken
    (https://docs.sqlalchemy.org/en/20/core/pooling.html#disconnect-handling-pessimistic)."""
    dialect = engine.dialect

    def stamp(_dbapi_connection: Any, record: ConnectionPoolEntry | None) -> None:
        if record is not None:  # None: an invalidated connection, never checked out again
            record.info[_LAST_USED] = time.monotonic()

    def check(dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: Any) -> None:
        if time.monotonic() - record.info.get(_LAST_USED, 0.0) < idle_s:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as err:
            if dialect.is_disconnect(err, dbapi_connection, None):
                raise InvalidatePoolError() from err
            raise

    event.listen(engine, "connect", stamp)
    event.listen(engine, "checkin", stamp)
    event.listen(engine, "checkout", check)


def alembic_config(url: str) -> AlembicConfig:
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    # ConfigParser interpolation would choke on '%' in passwords.
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(
    url: str, revision: str = "head", *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
) -> None:
    """Bring the database at `url` to `revision` (creates it if missing)."""
    from alembic import command

    cfg = alembic_config(url)
    cfg.attributes["busy_timeout_s"] = busy_timeout_s
    command.upgrade(cfg, revision)


def _assigned_strings(path: Path, names: frozenset[str]) -> dict[str, object]:
    """Module-level `name = <literal>` assignments of a migration file, by name."""
    found: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets: list[ast.expr]
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names:
                found[target.id] = ast.literal_eval(value)
    return found


@functools.cache
def head_revision() -> str | None:
    """The migration chain's single head revision id, read from the version files as text;
    None when any file does not name its revisions as plain literals or the chain has several
    heads (then only Alembic can say what "head" is)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        if path.name == "__init__.py":
            continue
        try:
            found = _assigned_strings(path, frozenset({"revision", "down_revision"}))
        except (SyntaxError, ValueError):
            return None
        revision, down = found.get("revision"), found.get("down_revision")
        if not isinstance(revision, str):
            return None
        revisions.add(revision)
        if isinstance(down, str):
            parents.add(down)
        elif isinstance(down, tuple) and all(isinstance(d, str) for d in down):
            parents.update(down)
        elif down is not None:
            return None
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def at_head(engine: Engine) -> bool:
    """Whether the database already stands at the chain's head revision, so that upgrading
    would do nothing."""
    head = head_revision()
    if head is None:
        return False
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return False
        stamped = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        return list(stamped) == [head]


def ping(session: Session) -> None:
    """Asks the database the cheapest question; raises when it cannot answer (a health
    probe)."""
    session.execute(text("SELECT 1"))


@dataclass
class TransactionNotes:
    """What a transaction noted for its end, kept on its session until it commits or rolls
    back (then dropped, done or not): work to run once the change is committed (the
    lifecycle's log lines: a rolled-back change was never a transition), and the requests it
    made claimable, whose jobs a queue writes before the commit (bot/ops/queue.py)."""

    after_commit: list[Callable[[], None]] = field(default_factory=list)
    woken: set[int] = field(default_factory=set)


class AppSession(Session):
    """The sessions a `Database` makes: a session with its transaction's notes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes = TransactionNotes()


def notes(session: Session) -> TransactionNotes:
    """The notes of `session`'s transaction; a session not made by a `Database` has none to
    keep (its end would run no listener), which is a bug."""
    if not isinstance(session, AppSession):
        raise TypeError("a session not made by storage.db.Database keeps no transaction notes")
    return session.notes


def _committed(session: Session) -> None:
    if isinstance(session, AppSession):
        done, session.notes = session.notes, TransactionNotes()
        for step in done.after_commit:
            step()


def _rolled_back(session: Session) -> None:
    if isinstance(session, AppSession):
        session.notes = TransactionNotes()


SessionHook = Callable[[Session], None]


class Database:
    """One engine and session factory per process, schema migrated on open.

    Its sessions' listeners are attached to its own session factory here (never to
    SQLAlchemy's global `Session` class, and never at import): the transaction notes are run
    after a commit and dropped after a rollback, and `add_before_commit` hooks (the queue's
    job writer) run before each commit."""

    def __init__(
        self, url: str, *, migrate: bool = True, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
    ) -> None:
        self.url = url
        self.engine = make_engine(url, busy_timeout_s=busy_timeout_s)
        if migrate and not at_head(self.engine):
            upgrade(url, busy_timeout_s=busy_timeout_s)
        self._sessions = sessionmaker(self.engine, class_=AppSession, expire_on_commit=False)
        event.listen(self._sessions, "after_commit", _committed)
        event.listen(self._sessions, "after_rollback", _rolled_back)
        self._before_commit: list[SessionHook] = []

    def add_before_commit(self, hook: SessionHook) -> None:
        """Run `hook` on every session of this database just before it commits."""
        event.listen(self._sessions, "before_commit", hook)
        self._before_commit.append(hook)

    def remove_before_commit(self, hook: SessionHook) -> None:
        event.remove(self._sessions, "before_commit", hook)
        self._before_commit.remove(hook)

    def before_commit_hooks(self) -> tuple[SessionHook, ...]:
        return tuple(self._before_commit)

    def session(self) -> Session:
        return self._sessions()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work is committed on success and rolled back on any error."""
        with self._sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
