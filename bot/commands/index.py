"""`factnote index`: put documents into the local search index and query it.

Files are added under the URL they stand for (given with `--url`, or in a `<file>.meta.json`
sidecar), so that search results and evidence cite that URL, not a path on this machine. The
index is a table of the main database unless `--index` names a standalone one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot import progress
from bot.commands.db_open import INDEX_HELP, index_store, require_file
from bot.commands.output import error, fail, print_urls, say
from bot.commands.settings import section
from bot.dates import parse_when
from pipeline import safejson
from pipeline.capped_read import CappedReadError, read_capped
from pipeline.config import FetchConfig, RelevanceConfig
from pipeline.records import Document
from pipeline.search.local_index import LocalIndex
from pipeline.web.urls import canonical_url

app = typer.Typer(help="The local search index", no_args_is_help=True)

SIDECAR_SUFFIX = ".meta.json"
# Files picked up when a directory is given; a file named explicitly is read whatever its name.
INDEXABLE_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".txt", ".text", ".md"})
MAX_FILE_BYTES = 20_000_000  # a file is read up to this (its text is cut far below it anyway)
MAX_SIDECAR_BYTES = 100_000


class _FileError(Exception):
    """One file could not be added; the others still are."""


@dataclass(frozen=True)
class _Meta:
    url: str
    published: datetime | None
    title: str | None


@contextmanager
def _open(ctx: typer.Context, option: str | None) -> Iterator[LocalIndex]:
    from pipeline.relevance.scoring import get_embedder  # loads torch: only when a command runs
    from storage.indexes import open_document_rows

    with index_store(ctx, option) as target:
        embedder = get_embedder(section(ctx, "relevance", RelevanceConfig))
        with LocalIndex(open_document_rows(target), embedder=embedder) as local:
            yield local


def _parse_date(value: str, where: str) -> datetime:
    try:
        return parse_when(value)  # the one date reading of every command (bot/dates.py)
    except ValueError as exc:
        raise _FileError(f"{where}: {exc}") from exc


def _files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                if found.is_file() and found.suffix.lower() in INDEXABLE_SUFFIXES:
                    yield found
        else:
            yield path


def _read_capped(path: Path, limit: int) -> bytes:
    try:
        return read_capped(path, limit)
    except CappedReadError as exc:
        raise _FileError(f"{path}: {exc}") from exc


def _check_url(url: str, where: str) -> str:
    """`url` when it can stand for a page (an http(s) URL with a host), else `_FileError`."""
    shown = repr(url if len(url) <= 80 else url[:79] + "…")
    try:
        parts = urlsplit(url.strip())
        usable = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
        _port = parts.port
        canonical_url(url)
    except ValueError:
        usable = False
    if not usable or any(c.isspace() or not c.isprintable() for c in url.strip()):
        raise _FileError(f"{where}: {shown} is not an http(s) URL a page can stand for")
    return url.strip()


def _sidecar(path: Path) -> _Meta:
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    if not sidecar.is_file():
        raise _FileError(f"{path}: no --url and no {sidecar.name} beside it")
    try:
        raw = _read_capped(sidecar, MAX_SIDECAR_BYTES)
        data = safejson.loads(raw.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON, nested too deep
        raise _FileError(f"{sidecar}: unreadable: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("url"), str) or not data["url"]:
        raise _FileError(f'{sidecar}: must be a JSON object with a "url" string')
    data["url"] = _check_url(data["url"], str(sidecar))
    published = data.get("published")
    title = data.get("title")
    return _Meta(
        url=data["url"],
        published=_parse_date(published, str(sidecar)) if isinstance(published, str) else None,
        title=title if isinstance(title, str) else None,
    )


def _content_type(path: Path) -> str:
    return "text/html" if path.suffix.lower() in {".html", ".htm", ".xhtml"} else "text/plain"


def _document(path: Path, meta: _Meta) -> Document:
    from pipeline.web.html_text import MAX_TITLE_CHARS, extract_document

    body = _read_capped(path, MAX_FILE_BYTES)
    _check_url(meta.url, str(path))
    try:
        doc = extract_document(meta.url, body, _content_type(path), published=meta.published)
    except Exception as exc:  # one unparsable file must not stop the others
        raise _FileError(f"{path}: extraction failed: {type(exc).__name__}: {exc}") from exc
    if meta.title:
        doc = doc.model_copy(update={"title": meta.title[:MAX_TITLE_CHARS]})
    if not doc.text.strip():
        raise _FileError(f"{path}: no text extracted")
    return doc


def add_files(local: LocalIndex, paths: list[Path]) -> tuple[list[Document], list[str]]:
    """Add files described by their `<file>.meta.json` sidecars; one bad file does not stop
    the others. Returns the documents added or unchanged, and one error line per failure."""
    docs: list[Document] = []
    errors: list[str] = []
    for path in _files(paths):
        try:
            doc = _document(path, _sidecar(path))
            local.add(doc)
        except Exception as exc:  # reported per file; the rest still go in
            errors.append(str(exc))
            continue
        docs.append(doc)
    return docs, errors


@app.command("add")
def add(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(..., help="HTML or text files, or directories of them."),
    url: str | None = typer.Option(None, "--url", help="The URL a single file stands for."),
    published: str | None = typer.Option(
        None,
        "--published",
        metavar="DATE",
        help="Publication date (YYYY-MM-DD is 00:00 UTC); overrides the page's own.",
    ),
    title: str | None = typer.Option(None, "--title", help="Title; overrides the page's own."),
    index: str | None = typer.Option(None, "--index", help=INDEX_HELP),
) -> None:
    """Add files to the index. Without --url, each file needs a `<file>.meta.json` beside it:
    {"url": ..., "published": ..., "title": ...} (published and title optional)."""
    if url is not None and (len(paths) != 1 or paths[0].is_dir()):
        raise typer.BadParameter("--url needs exactly one file", param_hint="--url")
    try:
        published_at = _parse_date(published, "--published") if published else None
    except _FileError as exc:
        raise typer.BadParameter(str(exc), param_hint="--published") from exc

    files = list(_files(paths))
    if not files:
        fail("no files to add")
    failures = 0
    with (
        _open(ctx, index) as local,
        progress.bar(ctx, "indexing", len(files)) as bar,
    ):
        for path in bar.track(files):
            try:
                if not path.exists():  # before the sidecar: the file itself is what is missing
                    raise _FileError(f"{path}: no such file")
                meta = _Meta(url, None, None) if url is not None else _sidecar(path)
                meta = _Meta(meta.url, published_at or meta.published, title or meta.title)
                doc = _document(path, meta)
                added = local.add(doc)
            except Exception as exc:  # reported per file; the rest still go in
                failures += 1
                error(f"failed: {exc}")
                continue
            state = "added" if added else "unchanged"
            say(f"{state} {doc.url} ({doc.word_count} words)")
        total = len(local)
    say(f"{len(files) - failures} of {len(files)} files ok; index holds {total} documents")
    if failures:
        raise typer.Exit(1)


@app.command("add-url")
def add_url(
    ctx: typer.Context,
    urls: list[str] = typer.Argument(..., help="Pages to fetch and add."),
    index: str | None = typer.Option(None, "--index", help=INDEX_HELP),
) -> None:
    """Fetch pages from the web and add the ones that could be read."""
    from pipeline.web.fetch import Fetcher

    failures = 0
    with (
        _open(ctx, index) as local,
        Fetcher(section(ctx, "fetch", FetchConfig)) as fetcher,
        progress.bar(ctx, "fetching", len(urls)) as bar,
    ):
        for url in bar.track(urls):
            doc = fetcher.fetch(url)
            if not doc.ok:
                failures += 1
                error(f"failed {url}: {doc.error}")
                continue
            try:
                added = local.add(doc)
            except Exception as exc:
                failures += 1
                error(f"failed {url}: {exc}")
                continue
            say(f"{'added' if added else 'unchanged'} {doc.url}")
    if failures:
        raise typer.Exit(1)


@app.command("search")
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="Free-text query."),
    limit: int = typer.Option(10, "--limit", min=1, help="Most results to show."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    index: str | None = typer.Option(None, "--index", help=INDEX_HELP),
) -> None:
    """Search the index as the pipeline does (lexical and dense, fused)."""
    require_file(index, "index", "add documents with `factnote index add`")
    with _open(ctx, index) as local:
        results = local.search(query, limit=limit)
    if as_json:
        payload = [r.model_dump(mode="json") for r in results]
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    if not results:
        say("no results")
        return
    table = Table(title=Text(f"Local index: {query}"))
    for name in ("#", "title", "published", "snippet"):
        table.add_column(name, overflow="fold")
    for r in results:
        date = r.published.date().isoformat() if r.published else ""
        # Text cells, not strings: a page title like "[bold]..." is data, not rich markup.
        table.add_row(str(r.rank), Text(r.title), date, Text(r.snippet))
    console = Console()
    console.print(table)
    for r in results:  # numbered by rank, a line each: never cut or wrapped by the table
        print_urls(console, [r.url], first=r.rank)
