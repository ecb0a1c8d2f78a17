"""`factnote eval`: the command line of the evaluation package (`evaluation/`).

`eval authority` scores the authority retriever on CLEF 2024 Task 5 and prints `MAP 0.xxx` and
`R@5 0.xxx` on lines of their own, plus Macro-F1 and Strict Macro-F1 of the verdicts when an LLM
endpoint is configured (`evaluation.authority`). `eval claims` matches hand-written paraphrases
and negatives against the rumors indexed as claim records and prints precision and recall at the
configured strong and weak thresholds and a threshold sweep (`evaluation.claim_matching`). This
module only parses options and prints; the evaluation modules load their models when a command
runs, not when the CLI starts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from bot import progress
from bot.commands import eval_posts
from bot.commands.output import fail, say
from bot.commands.settings import section
from evaluation.taskfive import TaskFiveFormatError, read_qrels, read_rumors, write_run
from pipeline.config import AuthorityConfig, ClaimsConfig, LLMConfig, RelevanceConfig

app = typer.Typer(help="Evaluate retrieval and matching on labelled data", no_args_is_help=True)


@contextmanager
def _reading_data(*errors: type[Exception]) -> Iterator[None]:
    """Data that cannot be read (one of `errors`) ends the command in one line, exit code 2."""
    try:
        yield
    except errors as exc:
        fail(f"cannot read the data: {exc}", 2)


@app.command("authority")
def authority(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help="Task 5 JSONL (id, rumor, timeline, ...)."),
    qrels: Path = typer.Option(..., "--qrels", help="TREC qrels: rumor_id 0 tweet_id rel."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    run_out: Path | None = typer.Option(None, "--run-out", help="Write the TREC run here."),
    k: int = typer.Option(5, "--k", min=1, help="Statements retrieved per rumor."),
    tag: str = typer.Option("factnote", "--tag", help="Run tag in the TREC file."),
) -> None:
    """Score the authority retriever (MAP, R@5), and the verdicts when an LLM is configured."""
    with _reading_data(OSError, TaskFiveFormatError):
        rumors = read_rumors(data)
        gold = read_qrels(qrels)
    cfg = section(ctx, "authority", AuthorityConfig)
    llm_cfg = section(ctx, "llm", LLMConfig)
    from evaluation.authority import authority_report, run_authority

    with progress.bar(ctx, "retrieving", len(rumors)) as bar:
        try:
            results = run_authority(
                rumors,
                cfg,
                section(ctx, "relevance", RelevanceConfig),
                llm_cfg,
                k=k,
                on_rumor=lambda _r: bar.advance(),
            )
        except TaskFiveFormatError as exc:
            fail(str(exc), 2)
    run = {r.rumor_id: r.ranked for r in results}
    if run_out is not None:
        with open(run_out, "w", encoding="utf-8") as out:
            write_run(out, run, tag)
    report = authority_report(rumors, gold, results, cfg, k=k, judged=llm_cfg.configured)
    if as_json:
        print(json.dumps(report.payload, ensure_ascii=False, indent=2))
        return
    for line in report.lines:
        say(line)


# --- claims -------------------------------------------------------------------------------------

DEFAULT_PARAPHRASES = Path("bench/data/claim_paraphrases.jsonl")


@app.command("claims")
def claims(
    ctx: typer.Context,
    rumors_file: Path = typer.Option(..., "--rumors", help="Task 5 JSONL whose rumors to index."),
    data: Path = typer.Option(DEFAULT_PARAPHRASES, "--data", help="Paraphrases JSONL."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Precision and recall of claim matching at the strong and weak thresholds."""
    from evaluation.claim_matching import evaluate_claims, read_cases

    with _reading_data(OSError, ValueError):
        rumors = read_rumors(rumors_file)
        cases = read_cases(data)
    with progress.bar(ctx, f"matching {len(cases)} cases against {len(rumors)} rumors", None):
        report = evaluate_claims(
            rumors,
            cases,
            section(ctx, "claims", ClaimsConfig),
            section(ctx, "relevance", RelevanceConfig),
        )
    if as_json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        return
    say(f"{report.positives} paraphrases, {report.negatives} negatives")
    for name, cell in (("strong", report.strong), ("weak", report.weak)):
        say(
            f"{name} >= {cell['threshold']:.3f}: precision {cell['precision']:.3f} "
            f"recall {cell['recall']:.3f}"
        )
    table = Table(title="threshold sweep")
    for column in ("threshold", "precision", "recall", "predicted", "correct"):
        table.add_column(column, justify="right")
    for cell in report.sweep:
        table.add_row(
            f"{cell['threshold']:.3f}",
            f"{cell['precision']:.3f}",
            f"{cell['recall']:.3f}",
            str(int(cell["predicted"])),
            str(int(cell["correct"])),
        )
    Console().print(table)


# `eval posts` lives in its own module (the whole bot on labelled posts).
app.command("posts")(eval_posts.posts)
