"""Publisher coverage of a list of cited links: how many get a rating, by tier and by rule.

A deployer measures their own community's citations with it (`factnote sources coverage FILE`):
the file is plain text (one link, or a note's text with links in it, per line) or a CSV/TSV
with the links in one column. Links are found with the one URL finder (`pipeline.web.links`), so a
Community Notes export's `summary` column works as it is.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.records import Tier
from pipeline.sources.credibility import PublisherTable
from pipeline.web.links import urls_in
from pipeline.web.resolve import LinkRating, LinkResolver, rate_link

TIER_ORDER: tuple[Tier, ...] = (Tier.HIGH, Tier.MEDIUM, Tier.LOW, Tier.EXCLUDED, Tier.UNKNOWN)
URL_COLUMNS = ("url", "urls", "link", "links", "source", "source_url", "citation", "summary")


class CitationFileError(ValueError):
    """The file cannot be read, or its CSV has no column to read links from."""


@dataclass
class CoverageReport:
    citations: int = 0
    by_tier: Counter[str] = field(default_factory=Counter)
    by_source: Counter[str] = field(default_factory=Counter)
    unrated_domains: Counter[str] = field(default_factory=Counter)
    unrated_reasons: dict[str, str] = field(default_factory=dict)  # domain -> first reason seen
    resolved: int = 0
    unresolved: Counter[str] = field(default_factory=Counter)  # reason -> links

    @property
    def rated(self) -> int:
        return self.citations - self.by_tier[Tier.UNKNOWN.value]

    @property
    def rated_share(self) -> float:
        return self.rated / self.citations if self.citations else 0.0

    def share(self, tier: Tier) -> float:
        return self.by_tier[tier.value] / self.citations if self.citations else 0.0

    def add(self, linked: LinkRating) -> None:
        rating = linked.rating
        self.citations += 1
        self.by_tier[rating.tier.value] += 1
        self.by_source[rating.source] += 1
        if rating.tier is Tier.UNKNOWN:
            key = rating.domain or rating.query
            self.unrated_domains[key] += 1
            self.unrated_reasons.setdefault(key, rating.reason)
        if linked.resolution is not None:
            if linked.resolution.status == "resolved":
                self.resolved += 1
            else:
                self.unresolved[linked.resolution.reason] += 1

    def as_dict(self, top: int = 20) -> dict[str, object]:
        return {
            "citations": self.citations,
            "rated": self.rated,
            "rated_share": round(self.rated_share, 4),
            "by_tier": {
                t.value: {"count": self.by_tier[t.value], "share": round(self.share(t), 4)}
                for t in TIER_ORDER
            },
            "by_source": dict(self.by_source.most_common()),
            "top_unrated": [
                {"domain": d, "count": n, "reason": self.unrated_reasons[d]}
                for d, n in self.unrated_domains.most_common(top)
            ],
            "resolution": {"resolved": self.resolved, "unresolved": dict(self.unresolved)},
        }


def read_cited_urls(path: str | Path, column: str | None = None) -> list[str]:
    """Every link in the file, in order, repeats kept (each citation counts)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CitationFileError(f"{path}: cannot read: {exc}") from exc
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    if column is None and path.suffix.lower() not in (".csv", ".tsv"):
        lines = (line for line in text.splitlines() if not line.lstrip().startswith("#"))
        return [url for line in lines for url in urls_in(line)]
    # A note's text can be long and the file is the operator's own, so the field limit is
    # raised, for this read only: it is process-wide, and the publisher table relies on it.
    limit = csv.field_size_limit(10_000_000)
    try:
        return _links_in_rows(path, text, delimiter, column)
    finally:
        csv.field_size_limit(limit)


def _links_in_rows(path: Path, text: str, delimiter: str, column: str | None) -> list[str]:
    reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
    header = list(reader.fieldnames or [])
    chosen = column or next((h for h in header if h.strip().lower() in URL_COLUMNS), None)
    if chosen is None or chosen not in header:
        raise CitationFileError(
            f"{path}: no column {column!r}"
            if column
            else f"{path}: no link column found "
            f"(looked for {', '.join(URL_COLUMNS)}; pass --column), header: {', '.join(header)}"
        )
    try:
        return [url for row in reader for url in urls_in(row.get(chosen) or "")]
    except csv.Error as exc:
        raise CitationFileError(f"{path}: cannot read: {exc}") from exc


def measure(
    urls: Iterable[str],
    table: PublisherTable,
    resolver: LinkResolver | None = None,
    progress: Callable[[int], None] | None = None,
) -> CoverageReport:
    report = CoverageReport()
    for n, url in enumerate(urls, start=1):
        report.add(rate_link(table, url, resolver))
        if progress is not None:
            progress(n)
    return report
