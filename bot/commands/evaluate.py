"""`factnote eval`: measure the authority retriever (CLEF 2024 Task 5) and claim matching.

`eval authority` indexes each rumor's own timeline in a throw-away authority index, retrieves
the top 5 statements with the embedded models only (BM25 + the bundled embedding model, fused
as `AuthorityConfig` says), writes the run in TREC format when asked, and prints `MAP 0.xxx`
and `R@5 0.xxx` on lines of their own (scored by `pipeline.taskfive`). With an LLM endpoint
configured it also judges the stance of each retrieved statement, aggregates them with the
signed vote, and prints Macro-F1 and Strict Macro-F1 of the verdicts.

`eval claims` indexes the rumors as claim records and matches hand-written paraphrases and
negatives against them (`bench/data/claim_paraphrases.jsonl`), printing precision and recall
at the configured strong and weak thresholds and a threshold sweep.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bot.commands.output import say, warn
from bot.commands.settings import section
from pipeline import safejson
from pipeline.config import AuthorityConfig, ClaimsConfig, LLMConfig, RelevanceConfig
from pipeline.taskfive import (
    Rumor,
    TaskFiveFormatError,
    read_qrels,
    read_rumors,
    retrieval_scores,
    snowflake_time,
    verdict_scores,
    write_run,
)

app = typer.Typer(help="Evaluate retrieval and matching on labelled data", no_args_is_help=True)

STANCE_TO_LABEL = {
    "supports": "SUPPORTS",
    "refutes": "REFUTES",
    "not_enough_info": "NOT ENOUGH INFO",
}


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


# --- authority ----------------------------------------------------------------------------------


@dataclass
class RumorResult:
    rumor_id: str
    ranked: list[tuple[str, float]]  # (tweet id, fused score), best first
    label: str | None = None  # predicted verdict, with an LLM
    vote: float | None = None


def statements_of(rumor: Rumor) -> list[Any]:
    """The rumor's timeline as authority statements (time from the tweet id)."""
    from pipeline.authority import Statement, permalink

    out: list[Statement] = []
    for entry in rumor.timeline:
        created = snowflake_time(entry.post_id)
        if created is None:
            raise TaskFiveFormatError(f"{rumor.id}: tweet id {entry.post_id!r} is not a snowflake")
        out.append(
            Statement(
                platform="x",
                account=entry.handle,
                post_id=entry.post_id,
                text=entry.text,
                created_at=created,
                url=permalink("x", entry.handle, entry.post_id),
            )
        )
    return out


def run_authority(
    rumors: list[Rumor],
    cfg: AuthorityConfig,
    relevance: RelevanceConfig,
    llm_cfg: LLMConfig | None,
    *,
    k: int = 5,
    on_rumor: Callable[[Rumor], None] | None = None,
) -> list[RumorResult]:
    """Retrieve (and, with `llm_cfg`, judge) each rumor against its own timeline."""
    from pipeline.authority import AuthorityIndex, aggregate, judge_stances
    from pipeline.llm import CallLedger, LLMClient
    from pipeline.relevance import get_embedder

    embedder = get_embedder(relevance)
    llm = LLMClient(llm_cfg) if llm_cfg is not None and llm_cfg.configured else None
    ledger = CallLedger()
    results: list[RumorResult] = []
    for rumor in rumors:
        with AuthorityIndex(":memory:", embedder, cfg=cfg) as index:
            index.add_statements(statements_of(rumor))
            retrieved = index.retrieve(rumor.text, k=k)
        result = RumorResult(rumor.id, [(r.statement.post_id, r.score) for r in retrieved])
        if llm is not None:
            assert llm_cfg is not None
            judgements = judge_stances(
                rumor.text, retrieved, llm, ledger, max_chars=llm_cfg.max_post_chars
            )
            verdict = aggregate(judgements, cfg.vote_threshold)
            result.label = STANCE_TO_LABEL[verdict.stance.value]
            result.vote = verdict.score
        results.append(result)
        if on_rumor is not None:
            on_rumor(rumor)
    return results


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
    try:
        rumors = read_rumors(data)
        gold = read_qrels(qrels)
    except (OSError, TaskFiveFormatError) as exc:
        warn(f"cannot read the data: {exc}")
        raise typer.Exit(2) from exc
    cfg = section(ctx, "authority", AuthorityConfig)
    llm_cfg = section(ctx, "llm", LLMConfig)
    with _progress() as progress:
        task = progress.add_task("retrieving", total=len(rumors))
        try:
            results = run_authority(
                rumors,
                cfg,
                section(ctx, "relevance", RelevanceConfig),
                llm_cfg,
                k=k,
                on_rumor=lambda _r: progress.advance(task),
            )
        except TaskFiveFormatError as exc:
            warn(str(exc))
            raise typer.Exit(2) from exc
    run = {r.rumor_id: r.ranked for r in results}
    if run_out is not None:
        with open(run_out, "w", encoding="utf-8") as out:
            write_run(out, run, tag)
    ids = {rumor_id: [doc for doc, _s in ranked] for rumor_id, ranked in run.items()}
    scores = retrieval_scores(ids, gold, k=5)
    payload: dict[str, Any] = {
        "map": round(scores.map, 4),
        "recall_at_5": round(scores.recall_at_5, 4),
        "rumors_scored": scores.rumors,
        "rumors_retrieved": len(results),
        "config": {
            "fusion": cfg.fusion,
            "dense_weight": cfg.dense_weight,
            "rrf_k": cfg.rrf_k,
            "bm25_k1": cfg.bm25_k1,
            "bm25_b": cfg.bm25_b,
            "k": k,
        },
        "per_rumor": {
            q: {"ap": round(a, 4), "r@5": round(r, 4)} for q, (a, r) in scores.per_rumor.items()
        },
    }
    lines = [f"MAP {scores.map:.3f}", f"R@5 {scores.recall_at_5:.3f}"]
    if llm_cfg.configured:
        predicted = {r.rumor_id: r.label or "NOT ENOUGH INFO" for r in results}
        verdicts = verdict_scores(rumors, predicted, ids)
        payload["macro_f1"] = round(verdicts.macro_f1, 4)
        payload["strict_macro_f1"] = round(verdicts.strict_macro_f1, 4)
        payload["predictions"] = {r.rumor_id: {"label": r.label, "vote": r.vote} for r in results}
        lines += [
            f"Macro-F1 {verdicts.macro_f1:.3f}",
            f"Strict-Macro-F1 {verdicts.strict_macro_f1:.3f}",
        ]
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    for line in lines:
        say(line)


# --- claims -------------------------------------------------------------------------------------

DEFAULT_PARAPHRASES = Path("bench/data/claim_paraphrases.jsonl")
SWEEP = tuple(round(0.30 + 0.025 * i, 3) for i in range(25))  # 0.30 .. 0.90


@dataclass(frozen=True)
class ClaimsReport:
    strong: dict[str, float]
    weak: dict[str, float]
    sweep: list[dict[str, float]]
    positives: int
    negatives: int


def rumor_review_url(rumor_id: str) -> str:
    """A stand-in review URL for a rumor indexed as a claim record (never fetched)."""
    return f"https://task5.invalid/rumor/{rumor_id}"


def read_cases(path: Path) -> list[Any]:
    """Paraphrase cases: {"text": ..., "rumor_id": ID} positives, {"text": ...} negatives."""
    from pipeline.claims import MatchingCase

    cases: list[MatchingCase] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            obj = safejson.loads(line)  # a ValueError for anything unreadable, nesting included
            if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                raise ValueError(f"{path}:{number}: expected an object with a 'text' string")
            rumor_id = obj.get("rumor_id")
            expected = rumor_review_url(str(rumor_id)) if rumor_id else None
            cases.append(MatchingCase(obj["text"], expected))
    return cases


def evaluate_claims(
    rumors: list[Rumor], cases: list[Any], cfg: ClaimsConfig, relevance: RelevanceConfig
) -> ClaimsReport:
    from pipeline.claims import ClaimIndex, ClaimRecord, sweep
    from pipeline.relevance import get_embedder

    with ClaimIndex(":memory:", get_embedder(relevance), cfg=cfg) as index:
        index.add(
            ClaimRecord(claim_text=r.text, review_url=rumor_review_url(r.id), language="en")
            for r in rumors
        )
        thresholds = sorted({*SWEEP, cfg.strong_threshold, cfg.weak_threshold})
        rows = {row.threshold: row for row in sweep(index, cases, thresholds)}

    def cell(threshold: float) -> dict[str, float]:
        row = rows[threshold]
        return {
            "threshold": threshold,
            "precision": round(row.precision, 4),
            "recall": round(row.recall, 4),
            "predicted": row.predicted,
            "correct": row.correct,
        }

    positives = sum(1 for c in cases if c.expected_url is not None)
    return ClaimsReport(
        strong=cell(cfg.strong_threshold),
        weak=cell(cfg.weak_threshold),
        sweep=[cell(t) for t in SWEEP],
        positives=positives,
        negatives=len(cases) - positives,
    )


@app.command("claims")
def claims(
    ctx: typer.Context,
    rumors_file: Path = typer.Option(..., "--rumors", help="Task 5 JSONL whose rumors to index."),
    data: Path = typer.Option(DEFAULT_PARAPHRASES, "--data", help="Paraphrases JSONL."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Precision and recall of claim matching at the strong and weak thresholds."""
    try:
        rumors = read_rumors(rumors_file)
        cases = read_cases(data)
    except (OSError, ValueError) as exc:
        warn(f"cannot read the data: {exc}")
        raise typer.Exit(2) from exc
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
