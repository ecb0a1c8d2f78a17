"""`factnote eval`: the command line of the evaluation package (`evaluation/`).

`eval authority` scores the authority retriever on CLEF 2024 Task 5 and prints `MAP 0.xxx` and
`R@5 0.xxx` on lines of their own, plus Macro-F1 and Strict Macro-F1 of the verdicts when an LLM
endpoint is configured (`evaluation.authority`). `eval claims` matches hand-written paraphrases
and negatives against the rumors indexed as claim records and prints precision and recall at the
configured strong and weak thresholds and a threshold sweep (`evaluation.claim_matching`), or, with
`--collection --queries --qrels`, ranks a CheckThat! fact-check collection for each query and prints
MAP@5, top-1, R@5, the share of queries whose best match is strong and its precision. This
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
from bot.commands.output import fail, say, warn
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
    rumors_file: Path | None = typer.Option(
        None, "--rumors", help="Task 5 JSONL whose rumors to index (the paraphrase set)."
    ),
    data: Path = typer.Option(DEFAULT_PARAPHRASES, "--data", help="Paraphrases JSONL."),
    collection: Path | None = typer.Option(
        None, "--collection", help="CheckThat vclaims JSONL to index (with --queries, --qrels)."
    ),
    queries: Path | None = typer.Option(None, "--queries", help="CheckThat queries TSV."),
    qrels: Path | None = typer.Option(None, "--qrels", help="CheckThat qrels TSV."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Claim matching measured: on a fact-check collection with queries and qrels (MAP@5,
    top-1, R@5, strong share, precision of strong), or on the paraphrase set (precision and
    recall at the strong and weak thresholds)."""
    if collection is not None or queries is not None or qrels is not None:
        if collection is None or queries is None or qrels is None:
            fail("--collection, --queries and --qrels go together", code=2)
        _claims_collection(ctx, collection, queries, qrels, as_json)
        return
    if rumors_file is None:
        fail("give --rumors (the paraphrase set) or --collection, --queries and --qrels", code=2)
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


def _claims_collection(
    ctx: typer.Context, collection: Path, queries: Path, qrels: Path, as_json: bool
) -> None:
    from evaluation.checkthat import (
        CheckThatFormatError,
        read_collection,
        read_qrels,
        read_queries,
    )
    from evaluation.claim_matching import evaluate_collection
    from pipeline.web.urls import canonical_url

    with _reading_data(OSError, CheckThatFormatError):
        stored = read_collection(collection)
        asked = read_queries(queries)
        judged = read_qrels(qrels)
    for line in stored.failures:
        warn(f"not imported: {line}")
    gold = {
        q: frozenset(canonical_url(stored.url_of[v]) for v in ids if v in stored.url_of)
        for q, ids in judged.items()
    }
    wanted = sum(1 for q, _ in asked if q in gold)
    with progress.bar(ctx, f"matching {wanted} queries", wanted) as bar:
        report, _ = evaluate_collection(
            stored.records,
            asked,
            gold,
            section(ctx, "claims", ClaimsConfig),
            section(ctx, "relevance", RelevanceConfig),
            on_query=bar.advance,
        )
    if as_json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        return
    say(f"{report.queries} queries against {len(stored.records)} fact-checks")
    say(f"MAP@5 {report.map_at_5:.3f}")
    say(f"top-1 {report.top1:.3f}")
    say(f"R@5 {report.recall_at_5:.3f}")
    say(f"strong share {report.strong_share:.3f} ({report.strong} of {report.queries})")
    say(f"precision of strong {report.strong_precision:.3f} ({report.strong_right} right)")


# `eval posts` lives in its own module (the whole bot on labelled posts).
app.command("posts")(eval_posts.posts)
