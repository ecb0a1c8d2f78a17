"""The CLEF CheckThat! 2022 Task 2A formats: a collection of verified claims, queries, qrels.

* collection (`vclaims.jsonl`): one fact-check a line, `vclaim_id`, `vclaim` (the claim as the
  fact-checker states it), `title`, `date` ("26 May 2015"), optionally `page_url`. Each line is
  read as the ClaimReview a fact-check page carries and goes through the project's own importer
  (`pipeline.claims.claimreview.read_jsonld`), so the evaluation indexes what `factnote claims
  import` would. A line without a `page_url` gets the review URL its id names (`vclaim-sno-SLUG` is
  the Snopes page `https://www.snopes.com/fact-check/SLUG/`).
* queries (`*_queries.tsv`): `query_id <TAB> text`.
* qrels (`*_qrels.tsv`): `query_id 0 vclaim_id relevance` (whitespace separated).

A line that cannot be read is a `CheckThatFormatError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pipeline.claims.claimreview import read_jsonld
from pipeline.claims.index import ClaimRecord

SNOPES = {"@type": "Organization", "name": "Snopes", "url": "https://www.snopes.com/"}
_PREFIXES = {"vclaim-sno-": "https://www.snopes.com/fact-check/"}


class CheckThatFormatError(ValueError):
    """A collection, query or qrels line that is not in the CheckThat format."""


@dataclass(frozen=True)
class Collection:
    records: list[ClaimRecord]
    url_of: dict[str, str]  # vclaim_id -> the review URL of its record
    failures: list[str]  # vclaims the importer left out, one line each


def review_url(vclaim_id: str, page_url: str | None) -> str:
    """The review URL of a verified claim: its page URL, else the one its id names."""
    if page_url:
        return page_url
    for prefix, base in _PREFIXES.items():
        if vclaim_id.startswith(prefix):
            return f"{base}{vclaim_id[len(prefix) :]}/"
    return f"https://checkthat.invalid/{vclaim_id}"


def iso_date(text: str) -> str:
    """ "26 May 2015" as the ISO date a page's JSON-LD carries; any other text unchanged (for
    the importer to judge)."""
    try:
        return datetime.strptime(text.strip(), "%d %B %Y").date().isoformat()
    except ValueError:
        return text


def claim_review(vclaim: dict[str, object]) -> dict[str, object]:
    """A verified claim as the schema.org ClaimReview its page would embed (no rating: the
    collection has none, so the importer keeps it unrated)."""
    vclaim_id = str(vclaim.get("vclaim_id") or "")
    page = vclaim.get("page_url")
    node: dict[str, object] = {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "claimReviewed": vclaim.get("vclaim") or "",
        "url": review_url(vclaim_id, page if isinstance(page, str) else None),
        "author": SNOPES if vclaim_id.startswith("vclaim-sno-") else {"@type": "Organization"},
        "inLanguage": "en",
    }
    if vclaim.get("date"):
        node["datePublished"] = iso_date(str(vclaim["date"]))
    if vclaim.get("title"):
        node["name"] = vclaim["title"]
    return node


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line.rstrip("\n")


def read_collection(path: Path) -> Collection:
    """The verified claims of `path` as claim records, through the ClaimReview importer."""
    records: list[ClaimRecord] = []
    url_of: dict[str, str] = {}
    failures: list[str] = []
    for number, line in _lines(path):
        try:
            vclaim = json.loads(line)
        except ValueError as exc:
            raise CheckThatFormatError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(vclaim, dict) or not isinstance(vclaim.get("vclaim_id"), str):
            raise CheckThatFormatError(f"{path}:{number}: expected an object with a vclaim_id")
        result = read_jsonld(claim_review(vclaim))
        failures += [f"{vclaim['vclaim_id']}: {reason}" for reason in result.failures]
        if result.records:
            records += result.records
            url_of[vclaim["vclaim_id"]] = result.records[0].review_url
    return Collection(records, url_of, failures)


def read_queries(path: Path) -> list[tuple[str, str]]:
    """(query id, text) pairs in file order."""
    queries: list[tuple[str, str]] = []
    for number, line in _lines(path):
        query_id, tab, text = line.partition("\t")
        if not tab or not query_id.strip() or not text.strip():
            raise CheckThatFormatError(f"{path}:{number}: expected 'query_id<TAB>text'")
        queries.append((query_id.strip(), text.strip()))
    return queries


def read_qrels(path: Path) -> dict[str, set[str]]:
    """query id -> the vclaim ids judged relevant."""
    gold: dict[str, set[str]] = {}
    for number, line in _lines(path):
        fields = line.split()
        if len(fields) != 4:
            raise CheckThatFormatError(f"{path}:{number}: expected 'query_id 0 vclaim_id rel'")
        query_id, _, vclaim_id, relevance = fields
        if relevance not in ("0", "1"):
            raise CheckThatFormatError(f"{path}:{number}: relevance {relevance!r} is not 0 or 1")
        if relevance == "1":
            gold.setdefault(query_id, set()).add(vclaim_id)
    return gold
