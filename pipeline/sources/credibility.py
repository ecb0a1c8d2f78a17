"""Publisher credibility: which tier a domain or URL belongs to, and why.

The table maps keys (a registrable domain `bbc.co.uk`, a full host `news.example.co.uk`, or a
host plus path prefix `science.org/doi`) to tiers. A lookup tries, most specific first:
path entries of the exact host (longest prefix on segment boundaries), the host itself, its
parent hosts down to the registrable domain, then class rules
(`pipeline/sources/publisher_rules.py`: government, intergovernmental, academic, encyclopedia,
preprint, user-generated content, link redirector), else UNKNOWN. MUSE's reference code only
compared registrable domains, so its path-style entries never matched; here they do. Links that
carry their target (archive copies, DOIs of known registrants, publishers' own shorteners;
`pipeline/web/redirectors.py`) are rated as that target.

The bundled default table (`pipeline/data/publishers.csv`) is this project's own judgement.
Other tables (MUSE's three lists, an MBFC-style CSV, a score CSV, config overrides) are layered
over it in that order, later layers replacing earlier entries for the same key.

Hosts and registrable domains are read by `pipeline/web/domains.py`.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from pipeline.config import CredibilityConfig
from pipeline.records import Tier
from pipeline.sources.publisher_rules import (
    ACADEMIC_SUFFIXES,
    CLASS_RULES,
    GOVERNMENT_SUFFIXES,
    PREPRINT_DOMAINS,
    SOCIAL_DOMAINS,
    USER_CONTENT_DOMAINS,
    ClassRule,
    class_rule,
)
from pipeline.web.domains import ParsedHost, parse_host, registrable_host
from pipeline.web.redirectors import MAX_UNWRAP, offline_target

# Rule names and lists are part of this module's interface (the CLI and tests read them here).
__all__ = [
    "ACADEMIC_SUFFIXES",
    "CLASS_RULES",
    "GOVERNMENT_SUFFIXES",
    "PREPRINT_DOMAINS",
    "SOCIAL_DOMAINS",
    "TABLE_TIERS",
    "USER_CONTENT_DOMAINS",
    "ClassRule",
    "CredibilityDataError",
    "PublisherRating",
    "PublisherTable",
    "TableEntry",
    "load_table_csv",
]

# A publisher table holds only these; AUTHORITY rates an account's own statement, not a site.
TABLE_TIERS: tuple[Tier, ...] = (Tier.HIGH, Tier.MEDIUM, Tier.LOW, Tier.EXCLUDED, Tier.UNKNOWN)

SOURCE_DEFAULT = "default table"
SOURCE_MUSE = "muse"
SOURCE_MBFC = "mbfc"
SOURCE_SCORE = "score"
SOURCE_OVERRIDE = "override"
SOURCE_UNLISTED = "unlisted"

MUSE_FILES: tuple[tuple[str, Tier], ...] = (
    ("publisher_priority_high.txt", Tier.HIGH),
    ("publisher_priority_medium.txt", Tier.MEDIUM),
    ("publisher_priority_low.txt", Tier.LOW),
)


class CredibilityDataError(ValueError):
    """A publisher table file is missing or malformed; the message names file and line."""


@dataclass(frozen=True)
class PublisherRating:
    query: str  # what was asked (domain or URL)
    domain: str  # registrable domain (eTLD+1), or the bare host/IP when there is none
    tier: Tier
    reason: str  # one human line: why this tier
    source: str  # "default table", "rule:<class>", "muse", "mbfc", "score", "override", ...
    matched: str  # the table key or rule pattern that matched; "" when unlisted
    reference: bool  # public body / intergovernmental / academic / encyclopedia


@dataclass(frozen=True)
class TableEntry:
    key: str  # "example.org", "news.example.org" or "example.org/path/prefix"
    tier: Tier
    reason: str
    source: str
    # None: the entry does not say; the host's class rule (or a parent entry) decides.
    reference: bool | None = None


def _normalise_key(key: str) -> str:
    parsed = parse_host(key)
    if not parsed.host:
        raise ValueError(f"not a domain or domain/path: {key!r}")
    if parsed.ip:
        raise ValueError(f"{key!r} is an IP address, which names no publisher")
    if not registrable_host(parsed.host):
        raise ValueError(f"{key!r} is not under a known public suffix")
    return "/".join((parsed.host, *parsed.segments))


def _parse_tier(value: str, where: str) -> Tier:
    try:
        tier = Tier(value.strip().lower())
    except ValueError:
        raise CredibilityDataError(f"{where}: {value!r} is not a tier") from None
    if tier not in TABLE_TIERS:
        raise CredibilityDataError(f"{where}: tier {tier.value!r} cannot be given to a publisher")
    return tier


def _parse_flag(value: str, where: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("yes", "true", "1"):
        return True
    if lowered in ("", "no", "false", "0"):
        return False
    raise CredibilityDataError(f"{where}: reference must be yes or empty, got {value!r}")


def _norm_label(value: str) -> str:
    # MBFC labels come as "Left-Center", "left center", "LEFT_CENTER": compare one form.
    return " ".join(value.strip().lower().replace("-", " ").replace("_", " ").split())


# MUSE's rule for MBFC ratings: only these are usable at all.
MBFC_USABLE_FACTUALITY = frozenset({"very high", "high", "mostly factual"})
MBFC_USABLE_BIAS = frozenset({"least biased", "left center", "right center", "pro science"})


def mbfc_tier(factuality: str, bias: str) -> Tier:
    """MUSE's tiering of an MBFC rating (labels compared case- and hyphen-insensitively)."""
    fact, lean = _norm_label(factuality), _norm_label(bias)
    if fact not in MBFC_USABLE_FACTUALITY or lean not in MBFC_USABLE_BIAS:
        return Tier.EXCLUDED
    if fact == "very high" and lean in ("least biased", "pro science"):
        return Tier.HIGH
    if fact in ("very high", "high"):
        return Tier.MEDIUM
    return Tier.LOW


def score_tier(score: float, high: float, medium: float, low: float) -> Tier:
    if score >= high:
        return Tier.HIGH
    if score >= medium:
        return Tier.MEDIUM
    if score >= low:
        return Tier.LOW
    return Tier.EXCLUDED


def _read_csv(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a CSV keyed by lower-cased header, with their line numbers."""
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise CredibilityDataError(f"{path}: cannot read: {exc}") from exc
    with handle:
        reader = csv.reader(handle)
        try:
            try:
                header = [h.strip().lower() for h in next(reader)]
            except StopIteration:
                raise CredibilityDataError(f"{path}: empty file, expected a header") from None
            missing = [name for name in required if name not in header]
            if missing:
                raise CredibilityDataError(f"{path}: missing column(s) {', '.join(missing)}")
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) > len(header):
                    raise CredibilityDataError(f"{path}:{reader.line_num}: too many fields")
                cells = {
                    name: (row[i].strip() if i < len(row) else "") for i, name in enumerate(header)
                }
                yield reader.line_num, cells
        except (UnicodeDecodeError, csv.Error) as exc:  # not UTF-8, a field over csv's limit
            raise CredibilityDataError(f"{path}: cannot read: {exc}") from exc


@functools.cache
def _default_entries() -> tuple[TableEntry, ...]:
    resource = resources.files("pipeline.data").joinpath("publishers.csv")
    with resources.as_file(resource) as path:
        return tuple(load_table_csv(path))


def load_table_csv(path: str | Path) -> list[TableEntry]:
    """Read a table in the default format: `domain,tier,reason[,reference]`.

    `reference` is "yes" for public bodies, intergovernmental organisations, academic
    institutions and reference works, blank for the rest; without the column, the class rules
    decide. Duplicate keys, unknown tiers and empty reasons are errors, not silently merged.
    """
    path = Path(path)
    entries: list[TableEntry] = []
    seen: dict[str, int] = {}
    for line, row in _read_csv(path, ("domain", "tier", "reason")):
        where = f"{path}:{line}"
        try:
            key = _normalise_key(row["domain"])
        except ValueError as exc:
            raise CredibilityDataError(f"{where}: {exc}") from None
        if key in seen:
            raise CredibilityDataError(f"{where}: {key} already listed on line {seen[key]}")
        if not row["reason"]:
            raise CredibilityDataError(f"{where}: {key} has no reason")
        seen[key] = line
        entries.append(
            TableEntry(
                key=key,
                tier=_parse_tier(row["tier"], where),
                reason=row["reason"],
                source=SOURCE_DEFAULT,
                reference=_parse_flag(row["reference"], where) if "reference" in row else None,
            )
        )
    return entries


class PublisherTable:
    """A mutable publisher table plus the fixed class rules. Not shared across threads while
    being built; lookups afterwards only read."""

    def __init__(self, entries: Iterable[TableEntry] = ()) -> None:
        # Insertion-ordered: replacing a key keeps its place, so exports and `domains_for` keep
        # the default table's order.
        self._entries: dict[str, TableEntry] = {}
        # Import lines and rows left out, as "file:line: problem", for the operator to see.
        self.skipped: list[str] = []
        for entry in entries:
            self._put(entry)

    @classmethod
    def default(cls) -> PublisherTable:
        """The bundled table and the class rules."""
        return cls(_default_entries())

    @classmethod
    def from_config(cls, cfg: CredibilityConfig) -> PublisherTable:
        """The default table, then MUSE lists, MBFC CSV, score CSV and overrides, later wins."""
        table = cls.default()
        if cfg.muse_dir:
            table.import_muse_dir(cfg.muse_dir)
        if cfg.mbfc_csv:
            table.import_mbfc_csv(cfg.mbfc_csv)
        if cfg.score_csv:
            table.import_score_csv(cfg.score_csv, cfg.score_high, cfg.score_medium, cfg.score_low)
        for key, tier in cfg.overrides.items():
            where = f"credibility override for {key!r}"
            try:
                table.add_entry(key, _parse_tier(tier, where), "operator override", SOURCE_OVERRIDE)
            except ValueError as exc:
                raise CredibilityDataError(f"{where}: {exc}") from None
        return table

    # -- building -------------------------------------------------------------------------

    def _put(self, entry: TableEntry) -> None:
        previous = self._entries.get(entry.key)
        if entry.reference is None and previous is not None:
            # A tier from another list says nothing about what kind of body the publisher is.
            entry = replace(entry, reference=previous.reference)
        self._entries[entry.key] = entry

    def add_entry(
        self, key: str, tier: Tier, reason: str, source: str, reference: bool | None = None
    ) -> None:
        """Add or replace one entry. Raises ValueError for a bad key, tier or empty reason."""
        if tier not in TABLE_TIERS:
            raise ValueError(f"tier {tier.value!r} cannot be given to a publisher")
        if not reason.strip():
            raise ValueError(f"entry {key!r} needs a reason")
        self._put(TableEntry(_normalise_key(key), tier, reason.strip(), source, reference))

    def _skip(self, where: str, problem: str) -> None:
        self.skipped.append(f"{where}: {problem}")

    def import_muse_dir(self, path: str | Path) -> int:
        """Import MUSE's three lists (`publisher_priority_{high,medium,low}.txt`, one domain or
        domain/path per line). Returns how many lines were imported.

        Missing files are skipped, but a folder with none of them is an error. Lines that name
        no domain (MUSE's own lists hold a few, such as "bemidji pioneer") are left out and
        recorded in `skipped`. A key listed in more than one file keeps the higher tier, as
        MUSE searched the High list first.
        """
        folder = Path(path)
        present = [(folder / name, tier) for name, tier in MUSE_FILES if (folder / name).is_file()]
        if not present:
            names = ", ".join(name for name, _ in MUSE_FILES)
            raise CredibilityDataError(f"{folder}: no MUSE tier list found (expected {names})")
        staged: dict[str, TableEntry] = {}
        count = 0
        for file, tier in present:
            try:
                lines = file.read_text(encoding="utf-8-sig").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise CredibilityDataError(f"{file}: cannot read: {exc}") from exc
            for number, raw in enumerate(lines, start=1):
                text = raw.strip()
                if not text or text.startswith("#"):
                    continue
                try:
                    key = _normalise_key(text)
                except ValueError as exc:
                    self._skip(f"{file}:{number}", str(exc))
                    continue
                count += 1
                if key not in staged:
                    staged[key] = TableEntry(
                        key, tier, f"MUSE publisher list: {tier.value} priority", SOURCE_MUSE
                    )
        for entry in staged.values():
            self._put(entry)
        return count

    def import_mbfc_csv(self, path: str | Path) -> int:
        """Import an MBFC-style CSV (`domain,factuality,bias`) with MUSE's tiering rule.

        Returns how many rows were imported; rows without a usable domain go to `skipped`.
        """
        path = Path(path)
        count = 0
        for line, row in _read_csv(path, ("domain", "factuality", "bias")):
            tier = mbfc_tier(row["factuality"], row["bias"])
            reason = (
                f"MBFC rating: factuality {_norm_label(row['factuality']) or 'none'}, "
                f"bias {_norm_label(row['bias']) or 'none'}"
            )
            try:
                self.add_entry(row["domain"], tier, reason, SOURCE_MBFC)
            except ValueError as exc:
                self._skip(f"{path}:{line}", str(exc))
                continue
            count += 1
        return count

    def import_score_csv(self, path: str | Path, high: float, medium: float, low: float) -> int:
        """Import `domain,score` with score in [0, 1]; cut-offs give HIGH/MEDIUM/LOW/EXCLUDED.

        Returns how many rows were imported; rows with a bad domain or score go to `skipped`.
        """
        if not 0.0 <= low <= medium <= high <= 1.0:
            raise ValueError(
                f"score cut-offs must satisfy 0 <= low <= medium <= high <= 1, got "
                f"low={low} medium={medium} high={high}"
            )
        path = Path(path)
        count = 0
        for line, row in _read_csv(path, ("domain", "score")):
            where = f"{path}:{line}"
            try:
                score = float(row["score"])
            except ValueError:
                self._skip(where, f"score {row['score']!r} is not a number")
                continue
            if not 0.0 <= score <= 1.0:  # also refuses NaN
                self._skip(where, f"score {row['score']!r} is outside [0, 1]")
                continue
            tier = score_tier(score, high, medium, low)
            reason = f"credibility score {score:.2f} (cut-offs {high}/{medium}/{low})"
            try:
                self.add_entry(row["domain"], tier, reason, SOURCE_SCORE)
            except ValueError as exc:
                self._skip(where, str(exc))
                continue
            count += 1
        return count

    # -- reading --------------------------------------------------------------------------

    def entries(self) -> list[TableEntry]:
        """The effective table, in order (default table first, new keys after)."""
        return list(self._entries.values())

    def _candidates(self, parsed: ParsedHost) -> list[TableEntry]:
        """Table entries that cover `parsed`, most specific first."""
        found: list[TableEntry] = []
        host = parsed.host
        for n in range(len(parsed.segments), 0, -1):
            entry = self._entries.get("/".join((host, *parsed.segments[:n])))
            if entry is not None:
                found.append(entry)
        registrable = registrable_host(host)
        labels = host.split(".")
        for i in range(len(labels)):
            name = ".".join(labels[i:])
            entry = self._entries.get(name)
            if entry is not None:
                found.append(entry)
            if name == registrable or not registrable:
                # Never climb to a public suffix: "co.uk" rates no one.
                break
        return found

    def lookup(self, domain_or_url: str) -> PublisherRating:
        """Rate a domain or URL. Never raises: unparseable input and IPs are UNKNOWN.

        A link whose target can be read offline (an archive copy, a redirect endpoint, a DOI of
        a known registrant, a publisher's own shortener) is rated as its target, and the reason
        says how the target was found. Generic shorteners need `pipeline.web.resolve`.
        """
        query, via = domain_or_url, []
        for _ in range(MAX_UNWRAP):
            target = offline_target(query)
            if target is None:
                break
            query = target.url
            via.append(target.via)
        rating = self._rate(query)
        if not via:
            return rating
        return replace(rating, query=domain_or_url, reason=f"{'; '.join(via)}: {rating.reason}")

    def _rate(self, domain_or_url: str) -> PublisherRating:
        parsed = parse_host(domain_or_url)
        if not parsed.host or parsed.ip:
            why = "an IP address names no publisher" if parsed.ip else "no host name in the input"
            return _unlisted(domain_or_url, parsed.host, why)
        domain = registrable_host(parsed.host) or parsed.host
        rule, suffix = class_rule(parsed.host)
        candidates = self._candidates(parsed)
        if candidates:
            best = candidates[0]
            # The most specific entry that says what kind of body this is decides; else the rule.
            reference = next((c.reference for c in candidates if c.reference is not None), None)
            if reference is None:
                reference = rule is not None and rule.reference
            return _decided(domain_or_url, domain, best, best.key, reference)
        if rule is not None and suffix is not None:
            return _decided(domain_or_url, domain, rule, rule.pattern(suffix), rule.reference)
        return _unlisted(domain_or_url, domain, "publisher not in the table")

    def domains_for(self, tier: Tier) -> list[str]:
        """Keys in `tier` for search `site:` filters, in table order, then class-rule domains
        (encyclopedias, preprint servers) the table does not rate.

        A key whose parent host or shorter path prefix is already listed in the same tier is
        left out, since `site:` on the parent already covers it. A `site:` filter is only a
        hint: results must still be rated with `lookup` (a HIGH domain may have a LOW path).
        """
        keys = [e.key for e in self._entries.values() if e.tier == tier]
        for rule in CLASS_RULES:
            if rule.tier == tier and rule.by_domain:
                keys.extend(d for d in rule.suffixes if not self._candidates(parse_host(d)))
        chosen = set(keys)
        return [key for key in keys if not any(a in chosen for a in _ancestors(key))]

    def suffixes_for(self, tier: Tier) -> list[str]:
        """Public suffixes a class rule puts in `tier` (`gov`, `ac.uk`), for `site:` filters."""
        return [
            s
            for r in CLASS_RULES
            if r.tier == tier and not r.by_domain
            for s in r.suffixes
            if not s.endswith(".*")  # a pattern (any country's `edu.`), not a `site:` suffix
        ]


def _decided(
    query: str, domain: str, by: TableEntry | ClassRule, matched: str, reference: bool
) -> PublisherRating:
    """The rating a table entry or a class rule gives."""
    return PublisherRating(
        query=query,
        domain=domain,
        tier=by.tier,
        reason=by.reason,
        source=by.source,
        matched=matched,
        reference=reference,
    )


def _unlisted(query: str, domain: str, reason: str) -> PublisherRating:
    return PublisherRating(
        query=query,
        domain=domain,
        tier=Tier.UNKNOWN,
        reason=reason,
        source=SOURCE_UNLISTED,
        matched="",
        reference=False,
    )


def _ancestors(key: str) -> Iterator[str]:
    """Keys that cover `key`: shorter path prefixes, the host, then parent hosts above it."""
    host, _, path = key.partition("/")
    segments = path.split("/") if path else []
    for n in range(len(segments) - 1, 0, -1):
        yield "/".join((host, *segments[:n]))
    if segments:
        yield host
    registrable = registrable_host(host)
    labels = host.split(".")
    for i in range(1, len(labels)):
        parent = ".".join(labels[i:])
        if len(parent) < len(registrable):
            break
        yield parent
