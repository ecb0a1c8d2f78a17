"""Importers of published fact-checks into `ClaimRecord`s.

Two shapes are read:

* schema.org `ClaimReview` JSON-LD, as publishers embed it in their pages
  (`<script type="application/ld+json">`): a single object, a list, an `@graph`, or nested
  inside another node (`mainEntity`, `review`, ...). The claim is `claimReviewed` or the nested
  `itemReviewed` (a `Claim` with `author` = claimant, `datePublished`, `appearance`,
  `firstAppearance`); the verdict is `reviewRating` (`alternateName` or `name`, else
  `ratingValue` on its `worstRating`..`bestRating` scale); the publisher is `author`
  (an Organization) or `publisher`.
* the JSON of the Google Fact Check Tools `claims:search` API: `claims[]` with `text`,
  `claimant`, `claimDate` and `claimReview[]` (`publisher{name,site}`, `url`, `title`,
  `reviewDate`, `textualRating`, `languageCode`). A claim with several reviews gives one record
  per review.

A review without a usable rating is kept as `unrated` (it still tells moderators a
fact-checker looked at the claim). Pages are fetched through `pipeline.fetch.Fetcher`, so the
SSRF guard and size and time caps apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import lxml.html

from pipeline.claims import ClaimRecord, ClaimSource, normalise_rating
from pipeline.credibility import registrable_domain
from pipeline.extract import decode_body, parse_content_type, parse_date
from pipeline.fetch import Fetcher, FetchFailure

_MAX_DEPTH = 12  # JSON-LD nesting deeper than this is not a publisher's markup


class ClaimImportError(ValueError):
    """A file or page could not be read as ClaimReview or Fact Check API data."""


# --- JSON-LD ---------------------------------------------------------------------------------


def _types(node: dict[str, Any]) -> list[str]:
    raw = node.get("@type", [])
    kinds = raw if isinstance(raw, list) else [raw]
    # "ClaimReview", "schema:ClaimReview", "http://schema.org/ClaimReview"
    return [k.rsplit("/", 1)[-1].rsplit(":", 1)[-1] for k in kinds if isinstance(k, str)]


def _claim_reviews(node: object, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every ClaimReview object in a JSON-LD tree, in document order."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            yield from _claim_reviews(item, depth + 1)
        return
    if not isinstance(node, dict):
        return
    if "ClaimReview" in _types(node):
        yield node
        return
    for value in node.values():
        if isinstance(value, dict | list):
            yield from _claim_reviews(value, depth + 1)


def _text(value: object) -> str:
    """A plain string from a JSON-LD value that may be a string, a node with a name, or a list."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        for key in ("name", "alternateName", "@value", "text"):
            found = _text(value.get(key))
            if found:
                return found
        return ""
    if isinstance(value, list):
        for item in value:
            found = _text(item)
            if found:
                return found
    return ""


def _url(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return _url(value.get("url") or value.get("@id") or value.get("sameAs"))
    if isinstance(value, list):
        for item in value:
            found = _url(item)
            if found:
                return found
    return ""


def _date(value: object) -> datetime | None:
    text = _text(value)
    return parse_date(text) if text else None


def _language(value: object) -> str | None:
    text = _text(value)
    return text.lower() or None


def _site(url: str) -> str:
    if not url:
        return ""
    try:
        return registrable_domain(url) or ""
    except Exception:  # a malformed URL in third-party markup only loses the site
        return ""


def _claim_date(item: dict[str, Any]) -> datetime | None:
    """When the claim was made: the Claim's own date, else its first appearance's, else the
    earliest dated appearance."""
    found = _date(item.get("datePublished"))
    first = item.get("firstAppearance")
    if found is None and isinstance(first, dict):
        found = _date(first.get("datePublished"))
    if found is None:
        raw = item.get("appearance")
        appearances = raw if isinstance(raw, list) else [raw]
        dates = [
            d
            for a in appearances
            if isinstance(a, dict) and (d := _date(a.get("datePublished"))) is not None
        ]
        found = min(dates) if dates else None
    return found


def _ratings(review: dict[str, Any]) -> list[dict[str, Any]]:
    raw = review.get("reviewRating")
    items = raw if isinstance(raw, list) else [raw]
    return [r for r in items if isinstance(r, dict)] or [{}]


def records_from_jsonld(data: object, page_url: str | None = None) -> list[ClaimRecord]:
    """Records for every ClaimReview in a parsed JSON-LD value (object, list or @graph)."""
    records: list[ClaimRecord] = []
    for review in _claim_reviews(data):
        item = review.get("itemReviewed")
        item = item if isinstance(item, dict) else {}
        claim_text = _text(review.get("claimReviewed")) or _text(item.get("text"))
        claim_text = claim_text or _text(item.get("name"))
        review_url = _url(review.get("url")) or (page_url or "")
        if not claim_text or not review_url:
            continue
        publisher = review.get("author") or review.get("publisher")
        publisher_url = _url(publisher)
        for rating in _ratings(review):
            rating_text = _text(rating.get("alternateName")) or _text(rating.get("name"))
            records.append(
                ClaimRecord(
                    claim_text=claim_text,
                    claimant=_text(item.get("author")),
                    claim_date=_claim_date(item),
                    review_date=_date(review.get("datePublished")),
                    rating_text=rating_text,
                    rating=normalise_rating(
                        rating_text,
                        rating.get("ratingValue"),
                        rating.get("bestRating"),
                        rating.get("worstRating"),
                    ),
                    publisher_name=_text(publisher),
                    publisher_site=_site(publisher_url) or _site(review_url),
                    review_url=review_url,
                    language=_language(review.get("inLanguage")),
                    source=ClaimSource.CLAIMREVIEW,
                )
            )
    return records


def _script_json(text: str) -> object | None:
    body = text.strip()
    # Some CMSs wrap the JSON in an HTML comment or CDATA section.
    for opener, closer in (("<!--", "-->"), ("<![CDATA[", "]]>")):
        if body.startswith(opener) and body.endswith(closer):
            body = body[len(opener) : -len(closer)].strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return None


def records_from_html(html: str, page_url: str | None = None) -> list[ClaimRecord]:
    """Records from the ClaimReview JSON-LD embedded in an HTML page; broken blocks are
    skipped (they are common and say nothing)."""
    try:
        tree = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return []
    records: list[ClaimRecord] = []
    for script in tree.xpath('//script[@type="application/ld+json"]'):
        data = _script_json(script.text or "")
        if data is not None:
            records.extend(records_from_jsonld(data, page_url))
    return records


# --- Fact Check Tools API ----------------------------------------------------------------------


def records_from_factcheck_api(data: object) -> list[ClaimRecord]:
    """Records from a `claims:search` response (or its `claims` list): one per review."""
    claims = data.get("claims", []) if isinstance(data, dict) else data
    if not isinstance(claims, list):
        raise ClaimImportError("Fact Check API data must have a 'claims' list")
    records: list[ClaimRecord] = []
    for claim in claims:
        if not isinstance(claim, dict):
            continue
        claim_text = _text(claim.get("text"))
        reviews = claim.get("claimReview")
        if not claim_text or not isinstance(reviews, list):
            continue
        for review in reviews:
            if not isinstance(review, dict) or not _url(review.get("url")):
                continue
            publisher = review.get("publisher")
            publisher = publisher if isinstance(publisher, dict) else {}
            rating_text = _text(review.get("textualRating"))
            url = _url(review.get("url"))
            records.append(
                ClaimRecord(
                    claim_text=claim_text,
                    claimant=_text(claim.get("claimant")),
                    claim_date=_date(claim.get("claimDate")),
                    review_date=_date(review.get("reviewDate")),
                    rating_text=rating_text,
                    rating=normalise_rating(rating_text),
                    publisher_name=_text(publisher.get("name")),
                    publisher_site=_site(_text(publisher.get("site"))) or _site(url),
                    review_url=url,
                    language=_language(review.get("languageCode")),
                    source=ClaimSource.FACTCHECK_API,
                )
            )
    return records


# --- files and pages ---------------------------------------------------------------------------


def records_from_json(data: object, page_url: str | None = None) -> list[ClaimRecord]:
    """Fact Check API JSON when it has a `claims` list of API claims, else JSON-LD."""
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        return records_from_factcheck_api(data)
    return records_from_jsonld(data, page_url)


def load_file(path: str | Path) -> list[ClaimRecord]:
    """Records from an HTML page (its JSON-LD), a JSON-LD file, or Fact Check API JSON."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ClaimImportError(f"cannot read {file}: {exc}") from exc
    text = decode_body(raw, None, html=False)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ClaimImportError(f"{file}: invalid JSON: {exc}") from exc
        return records_from_json(data)
    if "<" in stripped[:1024]:
        return records_from_html(text)
    raise ClaimImportError(f"{file}: neither JSON nor HTML")


def fetch_records(url: str, fetcher: Fetcher) -> list[ClaimRecord]:
    """Fetch a fact-check page and read its ClaimReview markup. Raises `ClaimImportError`
    when the page cannot be fetched (with the fetcher's reason)."""
    try:
        # `fetch` returns extracted main text, and JSON-LD lives in <script> tags that
        # extraction drops, so the raw body is needed here.
        body = fetcher.fetch_raw(url)
    except FetchFailure as exc:
        raise ClaimImportError(f"cannot fetch {url}: {exc}") from exc
    media, charset = parse_content_type(body.content_type)
    text = decode_body(body.data, charset, html=media != "text/plain")
    if media == "application/json" or text.lstrip().startswith(("{", "[")):
        try:
            return records_from_json(json.loads(text), body.final_url)
        except json.JSONDecodeError as exc:
            raise ClaimImportError(f"{url}: invalid JSON: {exc}") from exc
    return records_from_html(text, body.final_url)
