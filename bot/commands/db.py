"""`factnote db`: the main database's schema, moving a deployment to another database, and
bringing in the index side files of a deployment from before the indexes moved into it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from bot import progress
from bot.commands.output import error, fail, say, warn
from bot.commands.settings import loaded
from bot.config import check_database_url
from storage.dialect import same_database, shown

app = typer.Typer(
    help="The main database: migrations, moving to another database, old side files.",
    no_args_is_help=True,
)


@app.command("upgrade")
def upgrade_command(ctx: typer.Context) -> None:
    """Bring the database to the latest schema (every other command does this on opening)."""
    from storage.db import Database

    settings = loaded(ctx)
    Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s).dispose()
    say(f"{shown(settings.database_url)} is at the latest schema")


@app.command("migrate-to")
def migrate_to(
    ctx: typer.Context,
    url: str = typer.Argument(..., help="The target database URL (postgresql+psycopg://...)."),
    force: bool = typer.Option(
        False, "--force", help="Empty a target that already holds rows, then copy."
    ),
) -> None:
    """Copy every table of the configured database into URL (migrated first) and check the
    row counts. Stop the bot first: rows written during the copy may be missed. Afterwards,
    point `database_url` at URL."""
    from bot.commands.db_copy import TargetNotEmpty, copy_database, uncopied_tables
    from storage.db import Database, make_engine, upgrade

    settings = loaded(ctx)
    check_database_url(url, "the target")
    if same_database(url, settings.database_url):
        fail("the target is the configured database itself", 2)
    source = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    upgrade(url)
    target = make_engine(url)
    try:
        with progress.bars(ctx) as bars:

            def on_table(name: str, total: int) -> Callable[[int], None]:
                return bars.add(name, total).advance

            counts = copy_database(source.engine, target, force=force, progress=on_table)
        left = uncopied_tables(source.engine)
    except TargetNotEmpty as exc:
        fail(f"{exc}; add --force to replace them")
    finally:
        target.dispose()
        source.dispose()
    table = Table(title=f"copied to {shown(url)}")
    for column in ("table", "source rows", "target rows", ""):
        table.add_column(column)
    for count in counts:
        mark = "ok" if count.ok else "MISMATCH"
        table.add_row(count.table, str(count.source), str(count.target), mark)
    Console().print(table)
    for name in left:
        warn(f"not copied (unknown to factnote): {name}")
    bad = [c.table for c in counts if not c.ok]
    if bad:
        fail(f"row counts differ in: {', '.join(bad)}")
    rows = sum(c.source for c in counts)
    say(f"{rows} rows in {len(counts)} tables copied; counts match")


@app.command("import-side-files")
def import_side_files(
    ctx: typer.Context,
    claims: Path | None = typer.Option(None, "--claims", help="Claim index file [claims.path]."),
    authority: Path | None = typer.Option(
        None, "--authority", help="Authority index file [authority.path]."
    ),
    index: Path | None = typer.Option(None, "--index", help="Local index file [index_path]."),
) -> None:
    """Add the claim, authority and local index files of a deployment from before they moved
    into the database (the configured paths by default; a missing file is skipped). Rows the
    database holds already are skipped, so running it twice adds nothing."""
    from bot.commands.db_side_files import SideFileError, import_side_file
    from storage.db import Database

    settings = loaded(ctx)
    files = {
        "claims": claims or Path(settings.claims.path),
        "authority": authority or Path(settings.authority.path),
        "local": index or Path(settings.index_path),
    }
    found = {store: path for store, path in files.items() if path.is_file()}
    for store, path in files.items():
        if store not in found:
            say(f"{store}: no file at {path}, skipped")
    if not found:
        return
    db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    failed = False
    try:
        with progress.bar(ctx, "side files", len(found)) as bar:
            for store, path in bar.track(found.items()):
                try:
                    done = import_side_file(db.engine, store, path)
                except SideFileError as exc:
                    error(f"failed: {store}: {exc}")
                    failed = True
                    continue
                say(
                    f"{store}: {done.rows} row(s) in {path}: {done.added} added, "
                    f"{done.skipped} already in the database"
                )
    finally:
        db.dispose()
    if failed:
        raise typer.Exit(1)
