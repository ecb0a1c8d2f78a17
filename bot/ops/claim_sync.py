"""Keeping the claim index fed: `factnote claims sync` and the leader's periodic job.

Each configured source is synced on its own (`[claim_sync]`): every Fact Check API search
(one per query and per publisher site) and every feed dump. A source's reviews go through the
same readers and the same `ClaimIndex.add` as `factnote claims import`, after the deployer's
rating map; each review is counted as new (its review URL and claim text were not stored),
updated (stored, but something changed: a new rating, a corrected date) or unchanged. Reviews
the readers leave out are counted as skipped, each with its reason.

Incremental: an API search remembers when its last complete sync began and asks the next time
only for what is newer (`maxAgeDays`, with a day's overlap); a feed dump remembers its digest
and is not read again until it changes. Re-reading a window imports nothing twice, because a
review stored unchanged is recognised as such. A technical failure (HTTP error, timeout, a body
that is not the expected data, a store that cannot be written) ends that source's run as
failed, with its cursor where it was; the other sources go on.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx
from apscheduler.job import Job
from apscheduler.schedulers.base import BaseScheduler

from bot.config import ClaimSyncConfig, Settings
from bot.progress import Bars
from pipeline.claims.claimreview import apply_rating_map
from pipeline.claims.feeds import (
    ApiSearch,
    FactCheckSearch,
    SourceFailure,
    read_feed,
)
from pipeline.claims.index import ClaimIndex, ClaimIndexError, ClaimRecord
from pipeline.records import utcnow
from storage.claim_sync import record_failure, record_success, sync_state
from storage.db import Database

log = logging.getLogger(__name__)

JOB_ID = "claim-sync"
STORE_BATCH = 256  # reviews embedded and stored at once
_OVERLAP = timedelta(days=1)  # a review dated just before the last run began is read again
_NAME_CHARS = 255  # `claim_sync_sources.source`


@dataclass
class SourceReport:
    """What one source's sync did."""

    source: str
    fetched: int = 0  # reviews read, skipped ones included
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # one reason per review left out
    failure: str | None = None
    note: str = ""  # "dump unchanged", "stopped after N pages"
    newest_review: datetime | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def line(self) -> str:
        counts = (
            f"{self.source}: fetched {self.fetched}, new {self.new}, updated {self.updated}, "
            f"unchanged {self.unchanged}, skipped {len(self.skipped)}"
        )
        if self.failure:
            counts += f"; FAILED: {self.failure}"
        return counts + (f" ({self.note})" if self.note else "")


def api_searches(cfg: ClaimSyncConfig) -> list[ApiSearch]:
    searches = [ApiSearch(query=q.strip(), language=cfg.language) for q in cfg.queries]
    searches += [ApiSearch(publisher=p.strip(), language=cfg.language) for p in cfg.publishers]
    return [s for s in searches if s.query or s.publisher]


def configured(cfg: ClaimSyncConfig) -> bool:
    return bool(api_searches(cfg) or cfg.feeds)


def source_name(name: str) -> str:
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 1] + "…"


def feed_name(location: str) -> str:
    return source_name(f"feed:{location}")


class ClaimSync:
    """One run over every configured source (`run`), or one source (`sync_search`,
    `sync_feed`). `client` is the HTTP client for the API and feed URLs (made from the
    config's timeout when not given, and closed with `close`); `full` ignores the cursors."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        index: ClaimIndex,
        *,
        bars: Bars | None = None,
        client: httpx.Client | None = None,
        full: bool = False,
    ) -> None:
        self.cfg = settings.claim_sync
        # Read every source whole (the first sync's window, a feed even when unchanged): a
        # review whose rating changed without a newer date is seen only this way.
        self.full = full
        self.rating_map = settings.claims.rating_map
        self.db, self.index = db, index
        self.bars = bars or Bars(None)
        self._own_client = client is None
        self.client = client or httpx.Client(timeout=self.cfg.timeout_s, follow_redirects=True)

    def close(self) -> None:
        if self._own_client:
            self.client.close()

    def run(self, only: Callable[[str], bool] | None = None) -> list[SourceReport]:
        reports: list[SourceReport] = []
        for search in api_searches(self.cfg):
            if only is None or only(source_name(search.name)):
                reports.append(self.sync_search(search))
        for location in self.cfg.feeds:
            if only is None or only(feed_name(location)):
                reports.append(self.sync_feed(location))
        return reports

    # --- one source ---------------------------------------------------------------------------

    def sync_search(self, search: ApiSearch) -> SourceReport:
        report = SourceReport(source_name(search.name))
        state = sync_state(self.db, report.source)
        started = utcnow()
        max_age = self.cfg.max_age_days
        if state.synced_from is not None and not self.full:
            since = started - state.synced_from + _OVERLAP
            max_age = max(1, math.ceil(since / timedelta(days=1)))
        bar = self.bars.add(report.source)
        complete = False
        try:
            api = FactCheckSearch(
                self.client,
                self.cfg.api_key.get_secret_value() if self.cfg.api_key else "",
                url=self.cfg.api_url,
                page_size=self.cfg.page_size,
                max_pages=self.cfg.max_pages,
            )
            for page in api.pages(search, max_age):
                report.fetched += len(page.result.records) + len(page.result.failures)
                report.skipped += [f"page {page.number}: {f}" for f in page.result.failures]
                self._store(page.result.records, report)
                bar.update(completed=report.fetched, total=report.fetched)
                complete = not page.more
                if page.more and page.number == api.max_pages:
                    report.note = (
                        f"stopped after {api.max_pages} page(s) (claim_sync.max_pages); "
                        "the next run reads this window again"
                    )
        except (SourceFailure, ClaimIndexError) as exc:
            return self._failed(report, str(exc))
        finally:
            bar.done()
        if not report.note:
            report.note = f"last {max_age} day(s)"
        record_success(
            self.db,
            report.source,
            imported=report.new + report.updated,
            synced_from=started if complete else None,
            newest_review=report.newest_review,
        )
        return report

    def sync_feed(self, location: str) -> SourceReport:
        report = SourceReport(feed_name(location))
        state = sync_state(self.db, report.source)
        try:
            read = read_feed(
                location,
                self.client,
                max_bytes=self.cfg.feed_max_bytes,
                known_digest=None if self.full else state.digest,
            )
            if read is None:
                report.note = "dump unchanged since the last sync"
                record_success(self.db, report.source, imported=0)
                return report
            result = read.result
            report.fetched = len(result.records) + len(result.failures)
            report.skipped += result.failures
            bar = self.bars.add(report.source, len(result.records))
            for start in range(0, len(result.records), STORE_BATCH):
                batch = result.records[start : start + STORE_BATCH]
                self._store(batch, report)
                bar.advance(len(batch))
            bar.done()
        except (SourceFailure, ClaimIndexError) as exc:
            return self._failed(report, str(exc))
        record_success(
            self.db,
            report.source,
            imported=report.new + report.updated,
            digest=read.digest,
            newest_review=report.newest_review,
        )
        return report

    def _failed(self, report: SourceReport, reason: str) -> SourceReport:
        report.failure = reason
        record_failure(self.db, report.source, reason, imported=report.new + report.updated)
        return report

    def _store(self, records: list[ClaimRecord], report: SourceReport) -> None:
        """Count `records` as new, updated or unchanged, and store the new and updated."""
        by_key = {r.key: r for r in apply_rating_map(records, self.rating_map)}
        report.unchanged += len(records) - len(by_key)  # the same review twice in one page
        stored = self.index.stored_json(by_key)
        changed: list[ClaimRecord] = []
        for key, record in by_key.items():
            before = stored.get(key)
            if before == record.model_dump_json():
                report.unchanged += 1
                continue
            changed.append(record)
            if before is None:
                report.new += 1
            else:
                report.updated += 1
            date = record.date
            if date is not None and (report.newest_review is None or date > report.newest_review):
                report.newest_review = date
        if changed:
            try:
                self.index.add(changed)
            except ValueError as exc:
                raise ClaimIndexError(f"cannot store its reviews: {exc}") from exc


@contextmanager
def claim_sync(
    settings: Settings, db: Database, index: ClaimIndex, **kw: Any
) -> Iterator[ClaimSync]:
    sync = ClaimSync(settings, db, index, **kw)
    try:
        yield sync
    finally:
        sync.close()


def log_reports(reports: list[SourceReport]) -> None:
    for report in reports:
        log.log(logging.INFO if report.ok else logging.WARNING, "claim sync: %s", report.line())


def schedule_claim_sync(
    scheduler: BaseScheduler,
    settings: Settings,
    db: Database,
    index: ClaimIndex | None,
    *,
    wrap: Callable[[Callable[[], object]], Callable[[], None]] | None = None,
) -> Job | None:
    """Adds the periodic sync to the bot's scheduler (`wrap`ped like its other leader-only
    jobs); None, nothing added, when the interval is 0, no source is configured, or the bot
    has no claim index."""
    cfg = settings.claim_sync
    if cfg.interval_s <= 0 or index is None or not configured(cfg):
        return None

    def run() -> None:
        with claim_sync(settings, db, index) as sync:
            log_reports(sync.run())

    job = wrap(run) if wrap else run
    return scheduler.add_job(job, "interval", seconds=cfg.interval_s, id=JOB_ID, name=JOB_ID)
