"""The PostgreSQL pool's liveness check (`storage.db.ping_when_idle`) on a real server: a
connection idle past the threshold is pinged and replaced when dead; one used a moment ago is
not pinged (no round trip per checkout, issue 12), so a server-side kill shows up as one failed
transaction, after which the pool holds only new connections."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

from storage.db import ping_when_idle
from tests.postgres import terminate_backend

pytestmark = pytest.mark.postgres


def _engine(url: str, idle_s: float) -> Engine:
    engine = create_engine(url, pool_size=1, max_overflow=0)
    ping_when_idle(engine, idle_s)
    return engine


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def test_an_idle_connection_killed_by_the_server_is_replaced_before_use(
    postgres_url: str,
) -> None:
    engine = _engine(postgres_url, idle_s=0.0)  # every checkout counts as idle: pinged
    try:
        killed = _backend_pid(engine)
        terminate_backend(postgres_url, killed)
        assert _backend_pid(engine) != killed  # the ping found it dead; no error reached us
    finally:
        engine.dispose()


def test_a_connection_used_a_moment_ago_is_not_pinged(postgres_url: str) -> None:
    engine = _engine(postgres_url, idle_s=3600.0)
    try:
        killed = _backend_pid(engine)
        terminate_backend(postgres_url, killed)
        # No ping: the dead connection is used, and its transaction fails...
        with pytest.raises(OperationalError), engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        # ...and the disconnect made the pool replace it.
        assert _backend_pid(engine) != killed
    finally:
        engine.dispose()
