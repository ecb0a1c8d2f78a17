"""`factnote claims`: import published fact-checks into the claim index and match text to them.

`import` reads ClaimReview JSON-LD (an HTML page or a JSON-LD file), Google Fact Check Tools
`claims:search` JSON, or a URL (fetched with the SSRF-guarded fetcher, its JSON-LD read).
`match` shows what the pipeline would find for a claim: strong matches (used as evidence),
weak ones (suggested to moderators), flagged when possibly outdated. The claim index is a table
of the main database unless `--index` names a standalone one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot import progress
from bot.commands.claims_sync import sync
from bot.commands.db_open import INDEX_HELP, index_store, require_file
from bot.commands.output import error, fail, print_urls, say
from bot.commands.settings import loaded, section
from pipeline.config import ClaimsConfig, CredibilityConfig, FetchConfig, RelevanceConfig

IMAGES_HELP = (
    "Also fetch the images reviews carry (SSRF-guarded) and remember them in the main "
    "database, so that a repost of one is a known claim."
)
VIDEOS_HELP = (
    "Also fetch the video files reviews carry (VideoObject contentUrl, SSRF-guarded), decode "
    "their keyframes in a budgeted child and remember them in the main database, so that a "
    "re-upload of a debunked clip is a known claim."
)

app = typer.Typer(
    help="Known claims: imported fact-checks and approved answers", no_args_is_help=True
)
app.command("sync")(sync)


@contextmanager
def _open(ctx: typer.Context, option: str | None) -> Iterator[Any]:
    from pipeline.claims.index import ClaimIndex
    from pipeline.relevance.scoring import get_embedder  # loads torch: only when a command runs
    from pipeline.sources.credibility import PublisherTable
    from storage.indexes import open_claim_rows

    with index_store(ctx, option) as target:
        index = ClaimIndex(
            open_claim_rows(target),
            get_embedder(section(ctx, "relevance", RelevanceConfig)),
            cfg=section(ctx, "claims", ClaimsConfig),
            publishers=PublisherTable.from_config(section(ctx, "credibility", CredibilityConfig)),
        )
        with index:
            yield index


def _is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


@app.command("import")
def import_(
    ctx: typer.Context,
    sources: list[str] = typer.Argument(
        ..., help="Files (HTML, JSON-LD, Fact Check API JSON) or URLs."
    ),
    index: str | None = typer.Option(None, "--index", help=INDEX_HELP),
    images: bool = typer.Option(False, "--images", help=IMAGES_HELP),
    videos: bool = typer.Option(False, "--videos", help=VIDEOS_HELP),
) -> None:
    """Add fact-checks to the claim index; one record per review of a claim. A file or review
    that cannot be imported gets a `failed:` line and the rest are still imported; the exit
    status is 1 when anything failed."""
    from pipeline.claims.claimreview import (
        ClaimImportError,
        apply_rating_map,
        read_file,
        read_url,
        unknown_rating_texts,
    )
    from pipeline.claims.index import ClaimIndexError
    from pipeline.web.fetch import Fetcher

    claims_cfg = section(ctx, "claims", ClaimsConfig)
    max_bytes = claims_cfg.import_max_bytes
    failures = 0
    unknown: Counter[str] = Counter()

    def failed(source: str, reason: str) -> None:
        nonlocal failures
        failures += 1
        error(f"failed: {source}: {reason}")

    with (
        _open(ctx, index) as claims_index,
        Fetcher(section(ctx, "fetch", FetchConfig)) as fetcher,
        progress.bars(ctx) as bars,
        _image_store(ctx, images or videos) as image_store,
    ):
        media = (fetcher, image_store)
        sources_bar = bars.add("sources", len(sources))
        for source in sources_bar.track(sources):
            try:
                result = (
                    read_url(source, fetcher)
                    if _is_url(source)
                    else read_file(source, max_bytes=max_bytes)
                )
            except ClaimImportError as exc:
                failed(source, str(exc))
                continue
            except Exception as exc:  # one unreadable source must not stop the others
                failed(source, f"{type(exc).__name__}: {exc}")
                continue
            for reason in result.failures:
                failed(source, reason)
            records = apply_rating_map(result.records, claims_cfg.rating_map)
            unknown.update(unknown_rating_texts(records, claims_cfg.rating_map))
            if not records:
                if not result.failures:
                    failed(source, "no ClaimReview or Fact Check API claims")
                continue
            try:
                added = _add_in_batches(claims_index, records, bars)
            except (ClaimIndexError, ValueError) as exc:
                failed(source, f"cannot store its reviews: {exc}")
                continue
            unrated = sum(1 for r in records if r.rating.value == "unrated")
            say(f"{source}: {len(records)} review(s), {added} new or changed, {unrated} unrated")
            _import_media(ctx, source, records, result, (images, videos), media, failed)
        total = len(claims_index)
    say(f"claim index holds {total} review(s)")
    if unknown:
        # A deployer maps these under [claims.rating_map]; until then they stay unrated.
        say("unknown rating texts (left unrated; map them in [claims.rating_map]):")
        for text, count in unknown.most_common():
            say(f"  {json.dumps(text, ensure_ascii=False)}: {count}")
    if failures:
        raise typer.Exit(1)


@contextmanager
def _image_store(ctx: typer.Context, wanted: bool) -> Iterator[Any]:
    """The main database's image store when `--images` is given, else None."""
    if not wanted:
        yield None
        return
    from storage.db import Database
    from storage.images import SqlImageStore

    settings = loaded(ctx)
    db = Database(settings.database_url, busy_timeout_s=settings.database_busy_timeout_s)
    try:
        yield SqlImageStore(db)
    finally:
        db.dispose()


def _import_media(
    ctx: typer.Context,
    source: str,
    records: list[Any],
    result: Any,
    wanted: tuple[bool, bool],
    fetcher_and_store: tuple[Any, Any],
    failed: Callable[[str, str], None],
) -> None:
    """The images (`wanted[0]`) and videos (`wanted[1]`) `source`'s reviews carry, remembered
    in the main database's image store."""
    if fetcher_and_store[1] is None:
        return
    if wanted[0] and result.images:
        _import_images(ctx, source, records, result.images, fetcher_and_store, failed)
    if wanted[1] and result.videos:
        _import_videos(ctx, source, records, result.videos, fetcher_and_store, failed)


def _import_images(
    ctx: typer.Context,
    source: str,
    records: list[Any],
    urls: dict[str, list[str]],
    fetcher_and_store: tuple[Any, Any],
    failed: Callable[[str, str], None],
) -> None:
    """Fetch and remember the images `source`'s reviews carry; a failure line per image not
    taken in."""
    from pipeline.config import ImagesConfig
    from pipeline.images.embedding import embedder_for
    from pipeline.images.factchecks import store_fact_check_images
    from pipeline.images.ocr import get_ocr

    cfg = section(ctx, "images", ImagesConfig)
    embedder = embedder_for(cfg)
    fetcher, store = fetcher_and_store
    taken = store_fact_check_images(
        records, urls, fetcher, cfg, store, embedder=embedder, ocr=get_ocr(cfg) if cfg.ocr else None
    )
    for reason in taken.failures:
        failed(source, reason)
    say(f"{source}: {taken.stored} image(s) of its reviews remembered")


def _import_videos(
    ctx: typer.Context,
    source: str,
    records: list[Any],
    urls: dict[str, list[str]],
    fetcher_and_store: tuple[Any, Any],
    failed: Callable[[str, str], None],
) -> None:
    """Fetch, decode and remember the keyframes of the videos `source`'s reviews carry; a
    failure line per video not taken in."""
    from pipeline.config import ImagesConfig, VideoConfig
    from pipeline.images.embedding import embedder_for
    from pipeline.images.ocr import get_ocr
    from pipeline.video.factchecks import store_fact_check_videos

    cfg = section(ctx, "images", ImagesConfig)
    fetcher, store = fetcher_and_store
    taken = store_fact_check_videos(
        records,
        urls,
        fetcher,
        section(ctx, "video", VideoConfig),
        cfg,
        store,
        embedder=embedder_for(cfg),
        ocr=get_ocr(cfg) if cfg.ocr else None,
    )
    for reason in taken.failures:
        failed(source, reason)
    say(f"{source}: {taken.videos} video(s) of its reviews remembered, {taken.keyframes} keyframes")


IMPORT_BATCH = 256  # records embedded and stored at once when a source holds many


def _add_in_batches(claims_index: Any, records: list[Any], bars: progress.Bars) -> int:
    """`claims_index.add(records)`, a batch at a time when there are many, so that a large
    import shows its progress (a batch stored stays stored if a later one fails)."""
    if len(records) <= IMPORT_BATCH:
        return int(claims_index.add(records))
    bar = bars.add("records", len(records))
    added = 0
    for start in range(0, len(records), IMPORT_BATCH):
        batch = records[start : start + IMPORT_BATCH]
        added += claims_index.add(batch)
        bar.advance(len(batch))
    bar.done()
    return added


def _read_queries(path: Path) -> list[tuple[str, str]]:
    """(id, text) per non-blank line: 'id<TAB>text', else the line number is the id."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {path}: {exc}", code=2)
    queries: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        query_id, tab, rest = line.partition("\t")
        query_id, query = (query_id.strip(), rest.strip()) if tab else (str(number), line.strip())
        if query:
            queries.append((query_id or str(number), query))
    return queries


def batch_line(query_id: str, found: list[Any]) -> dict[str, Any]:
    """One query's JSON line: the matches as scored; whether the age rule holds a reply back
    is `possibly_outdated`, apart from `strength`."""
    return {
        "id": query_id,
        "matches": [
            {
                "url": m.record.review_url,
                "score": m.score,
                "strength": m.strength.value,
                "demoted": m.demoted,
                # The review title's part in the score (`pipeline.claims.review_titles`).
                "title_cosine": m.title_cosine,
                "possibly_outdated": m.possibly_outdated,
                "age_days": m.age_days,
                "rating": m.record.rating.value,
                "claim": m.record.claim_text,
            }
            for m in found
        ],
    }


@app.command("match")
def match(
    ctx: typer.Context,
    text: str | None = typer.Argument(None, help="The claim to look up."),
    file: Path | None = typer.Option(
        None, "--file", help="Match every line of FILE: a query a line, or 'id<TAB>query'."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    show_all: bool = typer.Option(
        False, "--all", help="Also show candidates below the weak threshold."
    ),
    limit: int = typer.Option(5, "--limit", min=1, help="Most matches to show."),
    index: str | None = typer.Option(None, "--index", help=INDEX_HELP),
) -> None:
    """Fact-checks matching TEXT: strong (evidence), weak (suggestion), possibly outdated.
    With --file, one JSON line per query: {"id", "matches": [{"url", "score", "strength",
    "demoted", "title_cosine", "possibly_outdated", ...}]}, all matched in one process."""
    if (text is None) == (file is None):
        fail("give the claim to look up, or --file with one query a line", code=2)
    queries = _read_queries(file) if file is not None else []
    require_file(index, "claim index", "add fact-checks with `factnote claims import`")
    with _open(ctx, index) as claims_index:
        if len(claims_index) == 0:
            fail("the claim index is empty (add fact-checks with `factnote claims import`)")
        floor = 0.0 if show_all else None
        if file is not None:
            for query_id, query in queries:
                found = claims_index.match(query, limit=limit, min_score=floor)
                print(json.dumps(batch_line(query_id, found), ensure_ascii=False), flush=True)
            return
        assert text is not None
        found = claims_index.match(text, limit=limit, min_score=floor)
    if as_json:
        print(json.dumps([m.model_dump(mode="json") for m in found], ensure_ascii=False, indent=2))
        return
    if not found:
        say("no matching fact-check")
        return
    table = Table(title=f"fact-checks matching: {text[:80]}")
    for column in ("#", "strength", "score", "rating", "publisher", "claim", "note"):
        table.add_column(column, overflow="fold")
    for number, item in enumerate(found, start=1):
        record = item.record
        cells = (
            str(number),
            item.strength.value,
            f"{item.score:.3f}",
            record.rating.value + (f" ({record.rating_text})" if record.rating_text else ""),
            record.publisher_name or record.publisher_site,
            record.claim_text,
            "possibly outdated" if item.possibly_outdated else "",
        )
        # Text cells: fact-check wording is data and must not be read as rich markup.
        table.add_row(*(Text(c) for c in cells))
    console = Console()
    console.print(table)
    print_urls(console, [item.record.review_url for item in found])  # the reviews, uncut
