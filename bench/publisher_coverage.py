"""Publisher table coverage and ordering, measured against MUSE's tier lists.

The bundled table (`pipeline/data/publishers.csv`) and the class rules were written without
MUSE's lists, so those lists are an outside reference: every domain (or domain/path) on them is
rated by the default table alone, with no MUSE layer, and we report

* coverage: the share that gets any rating (High, Medium, Low or Excluded, not Unknown),
  overall and per MUSE list;
* ordering: ROC AUC of our tier (High 3 > Medium 2 > Low 1 > Excluded 0) as a score for
  "on MUSE's High list" against "on MUSE's Low list", and for High or Medium against Low, over
  the keys both rate; ties count half;
* agreement: the share of keys both rate where our tier is MUSE's.

MUSE's lists are read from `FACTNOTE_MUSE_DIR` or `../shared/data/muse_publisher_tiers` next to
the repository; they are evaluation data and never copied into the repository.

It also measures the links helpful Community Notes cite (`FACTNOTE_NOTES_TSV`, else
`../shared/data/community_notes_helpful/helpful_notes_dev.tsv`, when present): the share of the
cited links, and of the distinct domains, that the table rates, leaving out what no publisher
rating can cover: wikis (the encyclopedia rule's user-edited references), user-generated
platforms, link shorteners and archives (an archived copy counts as the page it copies). The
notes are split in two halves by a hash of the note id: class rules are designed on "tune" and
reported on "report". Measured (issue 29): tune 0.518 -> 0.529 of links (0.360 -> 0.372 of
domains), report 0.551 -> 0.555 (0.402 -> 0.405), with the standards, intergovernmental,
registered-organisation, museum and any-country `edu.`/`ac.` rules and Google redirect, AMP and
image-result links read as their targets; MUSE AUC High vs Low 0.881 -> 0.883. Then (item 8)
Wikimedia's other wikis, copy archives (`perma.cc` ...) and wiki farms classified as what they
are, and 168 table rows for cited publishers and their peers: tune 0.529 -> 0.611 (0.372 ->
0.474), report 0.555 -> 0.587 (0.405 -> 0.441), AUC 0.8831 -> 0.8825 (docs/sources_coverage.md).
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from sklearn.metrics import roc_auc_score

from pipeline.records import Tier
from pipeline.sources.credibility import MUSE_FILES, PublisherRating, PublisherTable
from pipeline.sources.publisher_rules import WIKI_REFERENCE_DOMAINS
from pipeline.web.domains import parse_host, registrable_domain
from pipeline.web.links import urls_in
from pipeline.web.redirectors import ARCHIVE_COPY_HOSTS, ARCHIVE_HOSTS, ARCHIVE_TODAY_HOSTS

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_MUSE_DIR = SHARED / "muse_publisher_tiers"
DEFAULT_NOTES = SHARED / "community_notes_helpful" / "helpful_notes_dev.tsv"
# Sites no publisher rating covers: user content, shorteners, and archives that hold no
# readable copy of a page (a Wayback or archive.today copy is rated as the page it copies).
LEFT_OUT_SOURCES = ("rule:user-generated", "rule:redirector")
ARCHIVES = {
    registrable_domain(h) or h for h in (*ARCHIVE_HOSTS, *ARCHIVE_TODAY_HOSTS, *ARCHIVE_COPY_HOSTS)
}
SCORE = {Tier.HIGH: 3, Tier.MEDIUM: 2, Tier.LOW: 1, Tier.EXCLUDED: 0}


def muse_lists(folder: Path) -> dict[Tier, list[str]]:
    """MUSE's keys per tier, as written (lines naming no host are left out, as on import)."""
    lists: dict[Tier, list[str]] = {}
    for name, tier in MUSE_FILES:
        lines = (folder / name).read_text(encoding="utf-8-sig").splitlines()
        keys = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        lists[tier] = [k for k in keys if parse_host(k).host and "." in parse_host(k).host]
    return lists


def _auc(table: PublisherTable, positives: list[str], negatives: list[str]) -> float:
    scores: list[int] = []
    labels: list[int] = []
    for label, keys in ((1, positives), (0, negatives)):
        for key in keys:
            tier = table.lookup(key).tier
            if tier in SCORE:
                scores.append(SCORE[tier])
                labels.append(label)
    if len(set(labels)) < 2:
        return float("nan")
    return float(roc_auc_score(labels, scores))


def measure(table: PublisherTable, lists: dict[Tier, list[str]]) -> dict[str, float]:
    numbers: dict[str, float] = {}
    rated_all = total = agree = 0
    for tier, keys in lists.items():
        tiers = [table.lookup(key).tier for key in keys]
        rated = [t for t in tiers if t is not Tier.UNKNOWN]
        numbers[f"coverage_muse_{tier.value}"] = len(rated) / len(keys) if keys else 0.0
        rated_all += len(rated)
        total += len(keys)
        agree += sum(1 for t in rated if t is tier)
    numbers["coverage_muse_all"] = rated_all / total if total else 0.0
    numbers["agreement_where_rated"] = agree / rated_all if rated_all else 0.0
    high, medium, low = lists[Tier.HIGH], lists[Tier.MEDIUM], lists[Tier.LOW]
    numbers["auc_high_vs_low"] = _auc(table, high, low)
    numbers["auc_high_medium_vs_low"] = _auc(table, high + medium, low)
    numbers["keys"] = float(total)
    return numbers


def left_out(rating: PublisherRating) -> bool:
    """A wiki, a user-generated platform, a shortener or an archive: not a publisher."""
    return (
        rating.source in LEFT_OUT_SOURCES
        or rating.matched in WIKI_REFERENCE_DOMAINS
        or rating.domain in ARCHIVES
    )


def note_half(note_id: str) -> str:
    """ "tune" or "report": a fixed half of the notes, by a hash of the note id."""
    return "tune" if hashlib.sha256(note_id.encode()).digest()[0] % 2 == 0 else "report"


def read_notes(path: Path) -> list[tuple[str, str]]:
    """(note id, note text) of a Community Notes TSV (`noteId`, `summary`)."""
    limit = csv.field_size_limit(10_000_000)
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = csv.DictReader(handle, delimiter="\t")
            return [(row["noteId"], row.get("summary") or "") for row in rows]
    finally:
        csv.field_size_limit(limit)


def notes_coverage(table: PublisherTable, notes: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Shares of cited links and of distinct domains the table rates, left-out sites aside."""
    links = rated_links = 0
    domains: dict[str, bool] = {}
    for _note_id, text in notes:
        for url in urls_in(text):
            rating = table.lookup(url)
            if left_out(rating):
                continue
            rated = rating.tier is not Tier.UNKNOWN
            links += 1
            rated_links += rated
            domains[rating.domain] = rated
    return {
        "links": float(links),
        "link_coverage": rated_links / links if links else 0.0,
        "domains": float(len(domains)),
        "domain_coverage": sum(domains.values()) / len(domains) if domains else 0.0,
    }


def notes_by_half(table: PublisherTable, path: Path) -> dict[str, float]:
    notes = read_notes(path)
    numbers: dict[str, float] = {}
    for half in ("tune", "report"):
        part = [n for n in notes if note_half(n[0]) == half]
        for key, value in notes_coverage(table, part).items():
            numbers[f"notes_{half}_{key}"] = value
    return numbers


def run(log: Callable[[str], None] = print, muse_dir: Path | None = None) -> dict[str, float]:
    folder = muse_dir or Path(os.environ.get("FACTNOTE_MUSE_DIR", DEFAULT_MUSE_DIR))
    if not folder.is_dir():
        raise FileNotFoundError(f"MUSE tier lists not found at {folder} (set FACTNOTE_MUSE_DIR)")
    lists = muse_lists(folder)
    log(f"MUSE lists from {folder}: " + ", ".join(f"{t.value} {len(k)}" for t, k in lists.items()))
    table = PublisherTable.default()
    numbers = measure(table, lists)
    notes = Path(os.environ.get("FACTNOTE_NOTES_TSV", DEFAULT_NOTES))
    if notes.is_file():
        numbers.update(notes_by_half(table, notes))
    else:
        log(f"no Community Notes at {notes} (set FACTNOTE_NOTES_TSV): notes coverage skipped")
    for key, value in numbers.items():
        log(f"{key}: {value:.4f}")
    return numbers


if __name__ == "__main__":
    run()
