"""`factnote worker`: run queued checks as a Procrastinate worker (bot/ops/queue.py).

For a deployment with `[queue] backend = "procrastinate"` on PostgreSQL: start as many as the
work needs, on any machine that reaches the database; `factnote run` (one or more, one of them
the leader) polls and enqueues. The pipeline (the embedding model included) is loaded once per
process and shared by its `concurrency` jobs. SIGINT/SIGTERM: jobs in flight finish (up to
`[queue] shutdown_timeout_s`), then the process exits.
"""

from __future__ import annotations

import typer

from bot.commands.output import fail
from bot.config import Settings
from bot.ops.queue import build_app, ensure_schema, run_worker, uses_procrastinate
from bot.ops.runtime import open_runtime
from bot.ops.service import build_adapters
from bot.requests.worker import Worker

USAGE_EXIT = 2


def worker_command(
    ctx: typer.Context,
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, help="Requests run at once (default: [queue] concurrency)."
    ),
    init_only: bool = typer.Option(
        False, "--init-only", help="Install the queue's tables if missing, then exit."
    ),
) -> None:
    """Run queued checks as a Procrastinate worker (PostgreSQL deployments)."""
    settings: Settings = ctx.obj
    if not uses_procrastinate(settings):
        fail(
            'set [queue] backend = "procrastinate" (with a PostgreSQL database_url); the '
            "local backend checks requests inside `factnote run`",
            USAGE_EXIT,
        )
    if init_only:
        installed = ensure_schema(settings.database_url)
        typer.echo("queue tables installed" if installed else "queue tables already there")
        return
    if concurrency is not None:
        settings.queue.concurrency = concurrency
    adapters = build_adapters(settings)
    # Opening the runtime installs the queue's tables if missing, and makes requests that go
    # back to the queue here (an expired lease) get their jobs.
    with open_runtime(settings) as runtime:
        worker = Worker(runtime.settings, runtime.db, runtime.checker, adapters)
        # A restart after a crash frees what this host's dead processes held at once.
        worker.recover()
        try:
            run_worker(build_app(runtime.settings), worker, runtime.settings.queue)
        finally:
            worker.stop()
