"""`factnote sources`: explain publisher ratings, export the effective publisher table, and
measure how many of a community's cited links the table rates (`coverage`).

The table is the bundled default with the configured layers (MUSE lists, MBFC CSV, score CSV,
overrides) on top; `--muse-dir`, `--mbfc-csv` and `--score-csv` replace the configured files.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.commands.output import fail, warn
from pipeline.config import CredibilityConfig, FetchConfig
from pipeline.sources.citations import (
    TIER_ORDER,
    CitationFileError,
    CoverageReport,
    read_cited_urls,
)
from pipeline.sources.citations import measure as measure_coverage
from pipeline.sources.credibility import (
    CredibilityDataError,
    PublisherRating,
    PublisherTable,
    TableEntry,
)
from pipeline.web.resolve import LinkResolver

app = typer.Typer(help="Publisher credibility table", no_args_is_help=True)


class ExportFormat(StrEnum):
    CSV = "csv"
    JSON = "json"


ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="TOML config file; its [credibility] section is used."),
]
MuseOpt = Annotated[
    Path | None,
    typer.Option("--muse-dir", help="Folder with MUSE's publisher_priority_*.txt lists."),
]
MbfcOpt = Annotated[
    Path | None, typer.Option("--mbfc-csv", help="MBFC-style CSV: domain,factuality,bias.")
]
ScoreOpt = Annotated[Path | None, typer.Option("--score-csv", help="CSV: domain,score in [0,1].")]


def _base_config(ctx: typer.Context, config: Path | None) -> CredibilityConfig:
    if config is not None:
        # Imported here so the command module stays importable without the settings machinery.
        from bot.config import ConfigError, load_settings

        try:
            return load_settings(config).credibility
        except ConfigError as exc:
            raise typer.BadParameter(str(exc), param_hint="--config") from exc
    # The root command puts loaded settings in ctx.obj; use their section when present.
    root = ctx.find_root().obj
    section = getattr(root, "credibility", None)
    return section if isinstance(section, CredibilityConfig) else CredibilityConfig()


def _build_table(
    ctx: typer.Context,
    config: Path | None,
    muse_dir: Path | None,
    mbfc_csv: Path | None,
    score_csv: Path | None,
) -> PublisherTable:
    cfg = _base_config(ctx, config).model_copy()
    if muse_dir is not None:
        cfg.muse_dir = str(muse_dir)
    if mbfc_csv is not None:
        cfg.mbfc_csv = str(mbfc_csv)
    if score_csv is not None:
        cfg.score_csv = str(score_csv)
    try:
        table = PublisherTable.from_config(cfg)
    except (CredibilityDataError, ValueError) as exc:
        fail(str(exc), 2)
    for problem in table.skipped:
        warn(f"skipped {problem}")
    return table


def _rating_dict(rating: PublisherRating) -> dict[str, Any]:
    payload = asdict(rating)
    payload["tier"] = rating.tier.value
    return payload


def _entry_dict(entry: TableEntry) -> dict[str, Any]:
    return {
        "domain": entry.key,
        "tier": entry.tier.value,
        "reason": entry.reason,
        "source": entry.source,
        "reference": entry.reference,
    }


@app.command("lookup")
def lookup(
    ctx: typer.Context,
    domains: Annotated[list[str], typer.Argument(help="Domains or URLs to rate.")],
    json_: Annotated[bool, typer.Option("--json", help="Print the ratings as JSON.")] = False,
    config: ConfigOpt = None,
    muse_dir: MuseOpt = None,
    mbfc_csv: MbfcOpt = None,
    score_csv: ScoreOpt = None,
) -> None:
    """Explain the tier of one or more domains or URLs: which entry or rule decided, and why."""
    table = _build_table(ctx, config, muse_dir, mbfc_csv, score_csv)
    ratings = [table.lookup(domain) for domain in domains]
    if json_:
        typer.echo(json.dumps([_rating_dict(r) for r in ratings], ensure_ascii=False, indent=2))
        return
    view = Table("query", "domain", "tier", "source", "matched", "reason", show_lines=False)
    for r in ratings:
        # Queries are user input: Text, never markup.
        view.add_row(
            Text(r.query), Text(r.domain), Text(r.tier.value), Text(r.source), Text(r.matched),
            Text(r.reason),
        )  # fmt: skip
    Console(highlight=False, width=200).print(view)


@app.command("export")
def export(
    ctx: typer.Context,
    format_: Annotated[
        ExportFormat, typer.Option("--format", help="Output format.")
    ] = ExportFormat.CSV,
    out: Annotated[
        Path | None, typer.Option("--out", help="File to write; stdout if absent.")
    ] = None,
    config: ConfigOpt = None,
    muse_dir: MuseOpt = None,
    mbfc_csv: MbfcOpt = None,
    score_csv: ScoreOpt = None,
) -> None:
    """Write the effective table (default plus layers), one row per entry, in table order."""
    table = _build_table(ctx, config, muse_dir, mbfc_csv, score_csv)
    rows = [_entry_dict(e) for e in table.entries()]
    if format_ is ExportFormat.JSON:
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(
            buffer,
            fieldnames=["domain", "tier", "reason", "source", "reference"],
            lineterminator="\n",
        )
        writer.writeheader()
        for row in rows:
            flag = row["reference"]
            writer.writerow({**row, "reference": "" if flag is None else ("yes" if flag else "no")})
        text = buffer.getvalue()
    if out is None:
        typer.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {len(rows)} entries to {out}", err=True)


def _fetch_config(ctx: typer.Context, config: Path | None) -> FetchConfig:
    if config is not None:
        from bot.config import load_settings

        return load_settings(config).fetch
    section = getattr(ctx.find_root().obj, "fetch", None)
    return section if isinstance(section, FetchConfig) else FetchConfig()


def make_resolver(cfg: CredibilityConfig, fetch: FetchConfig) -> LinkResolver:
    """The resolver `coverage --resolve` uses (a seam for tests, which point it at a local
    server)."""
    return LinkResolver(cfg, fetch)


def _print_coverage(path: Path, report: CoverageReport, top: int, resolved: bool) -> None:
    console = Console(highlight=False, width=160)
    console.print(
        Text(f"{path}: {report.citations} cited links, {report.rated} rated "
             f"({report.rated_share:.1%})")
    )  # fmt: skip
    tiers = Table("tier", "links", "share", title="by tier")
    for tier in TIER_ORDER:
        tiers.add_row(tier.value, str(report.by_tier[tier.value]), f"{report.share(tier):.1%}")
    console.print(tiers)
    sources = Table("decided by", "links", title="by entry or rule")
    for source, count in report.by_source.most_common():
        sources.add_row(Text(source), str(count))
    console.print(sources)
    if report.unrated_domains:
        unrated = Table("domain", "links", "why unrated", title=f"top {top} unrated")
        for domain, count in report.unrated_domains.most_common(top):
            unrated.add_row(Text(domain), str(count), Text(report.unrated_reasons[domain]))
        console.print(unrated)
    if resolved:
        failures = ", ".join(f"{r}: {n}" for r, n in report.unresolved.most_common()) or "none"
        console.print(Text(f"resolved {report.resolved} links; unresolved: {failures}"))


@app.command("coverage")
def coverage(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="Cited links: one per line (or text with links), or a CSV/TSV with a link column."
        ),
    ],
    column: Annotated[
        str | None,
        typer.Option("--column", help="CSV/TSV column holding the links (default: url, link, …)."),
    ] = None,
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve/--no-resolve",
            help="Resolve DOI and shortener links over the network (SSRF-guarded) and rate "
            "their targets. Off by default: DOIs of known registrants are rated offline anyway.",
        ),
    ] = False,
    top: Annotated[int, typer.Option("--top", help="How many unrated domains to list.")] = 20,
    json_: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    config: ConfigOpt = None,
    muse_dir: MuseOpt = None,
    mbfc_csv: MbfcOpt = None,
    score_csv: ScoreOpt = None,
) -> None:
    """Share of a community's cited links that the publisher table rates, by tier."""
    table = _build_table(ctx, config, muse_dir, mbfc_csv, score_csv)
    try:
        urls = read_cited_urls(file, column)
    except CitationFileError as exc:
        fail(str(exc), 2)
    resolver = None
    if resolve:
        resolver = make_resolver(_base_config(ctx, config), _fetch_config(ctx, config))
    try:
        report = measure_coverage(urls, table, resolver)
    finally:
        if resolver is not None:
            resolver.close()
    if json_:
        payload = {"file": str(file), **report.as_dict(top)}
        if not resolve:
            payload["resolution"] = None
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    _print_coverage(file, report, top, resolve)
