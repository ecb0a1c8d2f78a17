"""Procrastinate's connection pool as bot/ops/queue.py configures it, on a real PostgreSQL: its
connections run in autocommit (no BEGIN and COMMIT round trips around a job's fetch and
finish), and the liveness check before a checkout runs only for a connection idle past the
threshold (issue 12): a dead idle connection is replaced unseen, while one used a moment ago
is handed out unchecked, so a server-side kill shows up as one failed query."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from bot.ops.queue import _QueuePool
from storage.dialect import conninfo
from tests.postgres import terminate_backend

pytestmark = pytest.mark.postgres


async def _after_a_kill(url: str, idle_s: float) -> tuple[int, bool, int | None]:
    """The killed backend's pid, whether its connection was in autocommit, and the pid the
    next checkout's query ran on (None: that query failed)."""
    liveness = _QueuePool(idle_s)
    pool = liveness.make(
        conninfo=conninfo(url), min_size=1, max_size=1, open=False, configure=liveness.configure
    )
    await pool.open(wait=True)
    try:
        async with pool.connection() as conn:
            killed = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone() or [0])[0]
            autocommit = conn.autocommit
        await asyncio.to_thread(terminate_backend, url, killed)
        try:
            async with pool.connection() as conn:
                row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
        except psycopg.OperationalError:
            return killed, autocommit, None
        return killed, autocommit, row[0] if row else None
    finally:
        await pool.close()


def test_an_idle_queue_connection_killed_by_the_server_is_replaced_before_use(
    postgres_url: str,
) -> None:
    killed, autocommit, next_pid = asyncio.run(_after_a_kill(postgres_url, idle_s=0.0))
    assert autocommit
    assert next_pid is not None and next_pid != killed


def test_a_queue_connection_used_a_moment_ago_is_handed_out_unchecked(
    postgres_url: str,
) -> None:
    _, autocommit, next_pid = asyncio.run(_after_a_kill(postgres_url, idle_s=3600.0))
    assert autocommit
    assert next_pid is None  # no check: the dead connection's query failed
