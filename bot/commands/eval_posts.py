"""`factnote eval posts`: run the whole pipeline on a labelled JSONL file (replay mode) and
report verdict accuracy, macro-F1, abstention and risk-coverage, length compliance, URL
grounding, cost and time, and with `--judge` the judge's gates, modes and pairwise wins
(`evaluation.posts`). The pipeline, the judge and memory are imported only when it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from bot import progress
from bot.commands.output import fail, say, warn
from bot.commands.settings import loaded

if TYPE_CHECKING:
    from pipeline.config import MemoryConfig
    from pipeline.learning.memory import MemoryIndex

MemoryMode = Literal["off", "frozen", "learn"]


def posts(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help="JSONL: one post a line, optional gold."),
    platform: str = typer.Option("x", "--platform", help="x, bluesky or notes."),
    judge: bool = typer.Option(False, "--judge", help="Judge every decision ([judge] model)."),
    memory: str = typer.Option(
        "off", "--memory", help="off, frozen (the stored memory) or learn (a copy, in memory)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Write the JSON report here."),
    html: Path | None = typer.Option(None, "--html", help="Write the HTML report here."),
) -> None:
    """Evaluate the bot end to end on labelled posts (replay mode); JSON and HTML reports."""
    from evaluation.posts import DataError, EvalRun, read_posts, report_json, summarise
    from pipeline.check import Checker
    from pipeline.learning.judge import Judge
    from pipeline.llm.client import LLMClient
    from pipeline.records import Platform
    from pipeline.shared_parts import SharedParts

    if memory not in ("off", "frozen", "learn"):
        raise typer.BadParameter("--memory must be off, frozen or learn")
    if memory == "learn" and not judge:
        warn("--memory learn learns from the judge's feedback: add --judge, or nothing is learned")
    try:
        items = read_posts(data)
        target = Platform(platform)
    except (OSError, DataError, ValueError) as exc:
        fail(f"cannot read the data: {exc}", 2)
    settings = loaded(ctx)
    # "learn" measures what unreviewed learning does within the run, on a copy never stored:
    # what it learns is proposed, so the copy shows proposals; "frozen" shows what checks do.
    memory_cfg = settings.memory.model_copy(
        update={"mode": memory, "use_proposed": settings.memory.use_proposed or memory == "learn"}
    )
    from bot.ops.runtime import index_rows
    from storage.db import Database

    # The deployment's indexes (local, claims, authority) are tables of its database.
    index_db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    shared = SharedParts.build(settings.pipeline(), rows=index_rows(index_db.engine))
    judge_llm = LLMClient(settings.judge.llm_config(settings.llm)) if judge else None
    run = EvalRun(
        checker=Checker(shared, deadline_s=settings.runtime.check_deadline_s),
        guard_cfg=settings.guard,
        platform=target,
        judge=Judge(judge_llm, settings.guard, seed=settings.judge.seed) if judge_llm else None,
        memory_cfg=memory_cfg,
        distiller=judge_llm,
    )
    if memory != "off":
        run.memory = _memory_copy(settings.database_url, memory_cfg)
        shared.memory = run.memory
    shared.cfg.memory = memory_cfg
    try:
        with progress.bar(ctx, f"checking {len(items)} posts", len(items)) as bar:
            results = run.run(items, on_post=lambda _r: bar.advance())
    finally:
        shared.close()
        index_db.dispose()
    text = report_json(
        results,
        {"data": str(data), "platform": target.value, "judge": judge, "memory": memory},
    )
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    if html is not None:
        from bot.reports.eval_posts import render

        html.write_text(render(json.loads(text)), encoding="utf-8")
    summary = summarise(results)
    say(
        f"posts {summary['posts']}  accuracy {summary['accuracy']}  "
        f"macro-F1 {summary['macro_f1']}  abstention {summary['abstention_rate']}"
    )
    if out is None:
        say(text)


def _memory_copy(database_url: str, cfg: MemoryConfig) -> MemoryIndex:
    """The deployment's memory items, copied into an in-memory index the run may change."""
    from bot.memory.store import StoredMemory
    from pipeline.learning.memory import MemoryIndex
    from storage.db import Database

    db = Database(database_url)
    try:
        items = [i.model_copy(deep=True) for i in StoredMemory(db, cfg).index.items]
    finally:
        db.dispose()
    return MemoryIndex(cfg, items)
