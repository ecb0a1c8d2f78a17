"""`factnote demo` (what `make run` runs): the bot on the bundled, fictional demo.

It starts from a clean `data/demo/`, fills the local index from `examples/docs/`, then runs
the bot once over `examples/inbox/` with the local adapter, in dry-run mode: SQLite, no keys,
no network. Without an LLM endpoint the posts that need one are reported as such.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from bot import platforms
from bot.commands.index import add_files
from bot.commands.run import print_cycle
from bot.commands.status import print_overview
from bot.config import Settings, load_settings
from bot.ops.runtime import Runtime, open_runtime
from bot.ops.service import Bot, build_adapters
from bot.ops.summary import overview
from pipeline.claims.claimreview import load_file
from pipeline.claims.index import ClaimIndex
from storage.repositories import latest_decision
from storage.requests import all_requests

DEMO_DIR = Path("data/demo")


def command(
    ctx: typer.Context,
    examples: Path = typer.Option(
        Path("examples"),
        "--examples",
        envvar="FACTNOTE_EXAMPLES",
        help="The demo's folder (the Docker image sets FACTNOTE_EXAMPLES=/app/examples).",
    ),
) -> None:
    """Run the bot once on the bundled demo (dry-run, local adapter, local index)."""
    # The demo's own settings (publisher tiers of its fictional sites, no age limit on its
    # fixed posts), whatever config is in force (the Docker image has one of its own); only
    # the LLM endpoint comes from the config in force (and the environment), if one is set.
    settings: Settings = ctx.obj
    demo_config = examples / "demo.toml"
    if demo_config.is_file():
        llm = settings.llm
        settings = load_settings(demo_config)
        settings.llm = llm
    console = Console(highlight=False, soft_wrap=True)
    # The demo owns data/demo/ and nothing else: whatever the config says, it writes there.
    shutil.rmtree(DEMO_DIR, ignore_errors=True)
    DEMO_DIR.mkdir(parents=True)
    paths = demo_paths()
    settings.database_url = paths["database_url"]
    # The indexes are tables of that database; the side-file paths only matter to
    # `factnote db import-side-files`, and are kept inside data/demo/ all the same.
    settings.index_path = paths["index_path"]
    settings.claims.path = paths["claims.path"]
    settings.authority.path = paths["authority.path"]
    settings.local.inbox = str(examples / "inbox")
    settings.local.outbox = paths["local.outbox"]
    settings.mode = "dry-run"
    for spec in platforms.specs():  # the local adapter only
        section = spec.section(settings)
        section.mode = None
        section.enabled = spec.name == "local"

    with open_runtime(settings) as runtime:
        assert runtime.shared.claim_index is not None and runtime.shared.local_index is not None
        reviews = _import_claims(runtime.shared.claim_index, examples / "claims")
        console.print(
            Text(f"claim index: {reviews} fictional fact-check(s) from {examples / 'claims'}")
        )
        docs, errors = add_files(runtime.shared.local_index, [examples / "docs"])
        console.print(Text(f"local index: {len(docs)} demo document(s) from {examples / 'docs'}"))
        for error in errors:
            console.print(Text(f"  could not index: {error}"))
        if not runtime.shared.llm.configured:
            console.print(Text("no LLM endpoint configured: posts that need one are reported"))
        bot = Bot(runtime, build_adapters(settings))
        report = bot.run_once()
        print_cycle(report)
        print_overview(overview(runtime.db), settings)
        _print_findings(runtime, console)
    console.print(Text(f"dry-run: nothing was posted. Audit data: {DEMO_DIR / 'factnote.db'}"))
    console.print(Text(AFTERWARDS.format(examples=examples.as_posix())))


def demo_paths() -> dict[str, str]:
    """Where the demo writes, by setting name. `examples/demo.toml` names the same paths (a
    test keeps them equal), so every command run with it sees the demo's data afterwards."""
    return {
        "database_url": f"sqlite:///{(DEMO_DIR / 'factnote.db').as_posix()}",
        "index_path": (DEMO_DIR / "index.sqlite").as_posix(),
        "claims.path": (DEMO_DIR / "claims.sqlite").as_posix(),
        "authority.path": (DEMO_DIR / "authority.sqlite").as_posix(),
        "local.outbox": (DEMO_DIR / "outbox.jsonl").as_posix(),
    }


AFTERWARDS = """\
The demo's data stays in data/demo/; with the demo's config every command sees it:
  factnote --config {examples}/demo.toml claims match "5G masts are killing birds in Northvale"
  factnote --config {examples}/demo.toml index search "lemon water flu"
  factnote --config {examples}/demo.toml check --post-json {examples}/inbox/1004.json
  factnote --config {examples}/demo.toml report --out data/demo/report"""


def _import_claims(index: ClaimIndex, folder: Path) -> int:
    """Fill the claim index (a table of the demo's database) before the bot runs."""
    records = [r for path in sorted(folder.glob("*.jsonld")) for r in load_file(path)]
    index.add(records)
    return len(records)


def _print_findings(runtime: Runtime, console: Console) -> None:
    """What each request came to, and for those that needed an LLM, the best passage that
    retrieval found on its own."""
    with runtime.db.session() as session:
        for request in all_requests(session):
            decision = latest_decision(session, request.id)
            text = str((request.target or {}).get("text", ""))[:70]
            line = f"#{request.id} {request.state:<10} {text}"
            if request.reply_text:
                line += f"\n    reply: {request.reply_text}"
            elif decision is not None and decision.candidates:
                best = decision.candidates[0]
                line += f"\n    best passage ({best.score:.2f}) {best.url}"
            elif request.reason:
                line += f"\n    {request.reason}"
            console.print(Text(line))
