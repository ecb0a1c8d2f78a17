"""Importers of published fact-checks into `ClaimRecord`s.

Two shapes are read:

* schema.org `ClaimReview` JSON-LD, as publishers embed it in their pages
  (`<script type="application/ld+json">`): a single object, a list, an `@graph`, or nested
  inside another node (`mainEntity`, `review`, ...). The claim is `claimReviewed` or the nested
  `itemReviewed` (a `Claim` with `author` = claimant, `datePublished`, `appearance`,
  `firstAppearance`); the verdict is `reviewRating` (`alternateName` or `name`, else
  `ratingValue` on its `worstRating`..`bestRating` scale); the publisher is `author`
  (an Organization) or `publisher`; the review's headline is its `headline`, else its `name`.
* the JSON of the Google Fact Check Tools `claims:search` API: `claims[]` with `text`,
  `claimant`, `claimDate` and `claimReview[]` (`publisher{name,site}`, `url`, `title`,
  `reviewDate`, `textualRating`, `languageCode`; `title` is the review's headline). A claim
  with several reviews gives one record per review.

A review without a usable rating is kept as `unrated` (it still tells moderators a
fact-checker looked at the claim). Pages are fetched through `pipeline.web.fetch.Fetcher`, so the
SSRF guard and size and time caps apply.

Everything read here is written by strangers. A file is read up to a size cap, its JSON parsed
with an explicit nesting limit (`pipeline.safejson`), and each review checked on its own: one
without claim text or an http(s) review URL, with an unreadable or future date, or with claim
text too long to be a claim, is left out and named in `ImportResult.failures`, and the other
reviews of the file are still imported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import lxml.html

from pipeline import safejson
from pipeline.capped_read import CappedReadError, ReadProblem, read_capped
from pipeline.claims.index import ClaimRecord, ClaimSource
from pipeline.claims.ratings import Rating, RatingTable, known_rating_text, normalise_rating
from pipeline.web.domains import registrable_domain
from pipeline.web.fetch import Fetcher, FetchFailure
from pipeline.web.html_text import decode_body, parse_content_type, parse_date
from pipeline.web.urls import canonical_url

_MAX_DEPTH = 12  # JSON-LD nesting deeper than this is not a publisher's markup
_MAX_VALUE_DEPTH = 6  # a name or URL nested deeper than this inside a node is not one
MAX_FILE_BYTES = 20_000_000  # default cap on one imported file (`claims.import_max_bytes`)
MAX_CLAIM_CHARS = 2000  # a claim is a sentence or two; longer text is not one
MAX_URL_CHARS = 2048
MAX_LABEL_CHARS = 200  # publisher, claimant, rating text: names, cut to this
MAX_LANGUAGE_CHARS = 35  # the longest BCP 47 tag in practical use
_FUTURE_SLACK = timedelta(days=1)  # time zones and clock skew


class ClaimImportError(ValueError):
    """A file or page could not be read as ClaimReview or Fact Check API data. The message
    says why, without the file name or URL (the caller names the source)."""


@dataclass
class ImportResult:
    """What one file or page gave: the records read, and one line per review left out."""

    records: list[ClaimRecord] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    reviews: int = 0  # ClaimReview objects found, numbered across a page's JSON-LD blocks
    # The images a review carries (`image_urls`), by `ClaimRecord.key`: fetched and stored
    # only when asked (`factnote claims import --images`), so a repost is a known claim.
    images: dict[str, list[str]] = field(default_factory=dict)
    # The video files a review carries (`video_urls`), by `ClaimRecord.key`: decoded into
    # keyframes and stored only when asked (`claims import --videos`).
    videos: dict[str, list[str]] = field(default_factory=dict)


def _show(value: str, limit: int = 80) -> str:
    """Untrusted text for a message: cut, and quoted so that control characters are escaped."""
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


MAX_TITLE_CHARS = 300  # a review headline longer than this is cut (a headline, not a page)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _now() -> datetime:
    return datetime.now(UTC)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a review URL (stored, matched on, cited in a reply), or None."""
    if not url:
        return "no review URL"
    if len(url) > MAX_URL_CHARS:
        return f"review URL over {MAX_URL_CHARS} characters"
    if any(c.isspace() or not c.isprintable() for c in url):
        return f"review URL {_show(url)} contains spaces or control characters"
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"review URL {_show(url)} is malformed"
    if parts.scheme.lower() not in ("http", "https"):
        return f"review URL {_show(url)} is not an http(s) URL"
    try:
        host, _port = parts.hostname, parts.port
        canonical_url(url)  # what the claim index keys the review by
    except ValueError:
        return f"review URL {_show(url)} is malformed"
    if not host:
        return f"review URL {_show(url)} has no host"
    if "@" in parts.netloc:  # https://who.int@evil.example/ opens evil.example
        return f"review URL {_show(url)} carries credentials"
    return None


class _Checks:
    """The problems of one review, found while its fields are read."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.problems: list[str] = []

    def claim(self, text: str) -> str:
        if not text:
            self.problems.append("no claim text")
        elif len(text) > MAX_CLAIM_CHARS:
            self.problems.append(
                f"claim text is {len(text)} characters (a claim has at most {MAX_CLAIM_CHARS})"
            )
        return text

    def url(self, url: str) -> str:
        problem = url_problem(url)
        if problem:
            self.problems.append(problem)
        return url

    def date(self, value: object, name: str) -> datetime | None:
        """A date the record rests on: absent is fine, unreadable or future is a problem."""
        text = _text(value)
        if not text:
            return None
        parsed = parse_date(text)
        if parsed is None:
            self.problems.append(f"unreadable {name} {_show(text)}")
        elif parsed > _now() + _FUTURE_SLACK:
            self.problems.append(f"{name} {_show(text)} is in the future")
            return None
        return parsed

    def failed(self, result: ImportResult) -> bool:
        """True (and one failure line in `result`) when the review has any problem."""
        if self.problems:
            result.failures.append(f"{self.label}: {'; '.join(self.problems)}")
        return bool(self.problems)


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


def _text(value: object, depth: int = 0) -> str:
    """A plain string from a JSON-LD value that may be a string, a node with a name, or a list."""
    if isinstance(value, str):
        return " ".join(value.split())
    if depth >= _MAX_VALUE_DEPTH:
        return ""
    if isinstance(value, dict):
        for key in ("name", "alternateName", "@value", "text"):
            found = _text(value.get(key), depth + 1)
            if found:
                return found
        return ""
    if isinstance(value, list):
        for item in value:
            found = _text(item, depth + 1)
            if found:
                return found
    return ""


def _url(value: object, depth: int = 0) -> str:
    if isinstance(value, str):
        return value.strip()
    if depth >= _MAX_VALUE_DEPTH:
        return ""
    if isinstance(value, dict):
        return _url(value.get("url") or value.get("@id") or value.get("sameAs"), depth + 1)
    if isinstance(value, list):
        for item in value:
            found = _url(item, depth + 1)
            if found:
                return found
    return ""


def _date(value: object) -> datetime | None:
    """A date that only helps (a claim's appearances): None when absent, unreadable or in the
    future. The dates a record rests on go through `_Checks.date`."""
    text = _text(value)
    parsed = parse_date(text) if text else None
    return parsed if parsed is not None and parsed <= _now() + _FUTURE_SLACK else None


def _language(value: object) -> str | None:
    return _text(value).lower()[:MAX_LANGUAGE_CHARS] or None


def _label(value: object) -> str:
    return _clip(_text(value), MAX_LABEL_CHARS)


def _site(url: str) -> str:
    if not url or len(url) > MAX_URL_CHARS:
        return ""
    try:
        return registrable_domain(url) or ""
    except Exception:  # a malformed URL in third-party markup only loses the site
        return ""


def _claim_date(item: dict[str, Any], checks: _Checks) -> datetime | None:
    """When the claim was made: the Claim's own date, else its first appearance's, else the
    earliest dated appearance."""
    found = checks.date(item.get("datePublished"), "claim datePublished")
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


def _read_jsonld(data: object, page_url: str | None, result: ImportResult) -> None:
    for review in _claim_reviews(data):
        result.reviews += 1
        item = review.get("itemReviewed")
        item = item if isinstance(item, dict) else {}
        review_url = _url(review.get("url")) or (page_url or "")
        checks = _Checks(f"ClaimReview {result.reviews}")
        claim_text = _text(review.get("claimReviewed")) or _text(item.get("text"))
        claim_text = checks.claim(claim_text or _text(item.get("name")))
        checks.url(review_url)
        claim_date = _claim_date(item, checks)
        review_date = checks.date(review.get("datePublished"), "datePublished")
        if checks.failed(result):
            continue
        publisher = review.get("author") or review.get("publisher")
        publisher_url = _url(publisher)
        images = image_urls(review, item)
        videos = video_urls(review, item)
        # schema.org CreativeWork: `headline`, else the review's `name` (not the item's).
        headline = _text(review.get("headline")) or _text(review.get("name"))
        for rating in _ratings(review):
            rating_text = _label(rating.get("alternateName")) or _label(rating.get("name"))
            result.records.append(
                ClaimRecord(
                    claim_text=claim_text,
                    claimant=_label(item.get("author")),
                    claim_date=claim_date,
                    review_date=review_date,
                    rating_text=rating_text,
                    rating=normalise_rating(
                        rating_text,
                        rating.get("ratingValue"),
                        rating.get("bestRating"),
                        rating.get("worstRating"),
                    ),
                    publisher_name=_label(publisher),
                    publisher_site=_site(publisher_url) or _site(review_url),
                    review_url=review_url,
                    language=_language(review.get("inLanguage")),
                    source=ClaimSource.CLAIMREVIEW,
                    review_title=_clip(headline, MAX_TITLE_CHARS),
                )
            )
            if images:
                result.images[result.records[-1].key] = images
            if videos:
                result.videos[result.records[-1].key] = videos


MAX_IMAGES = 4  # image URLs kept per review


def _image_nodes(value: object) -> list[object]:
    return value if isinstance(value, list) else [value]


def image_urls(review: dict[str, Any], item: dict[str, Any]) -> list[str]:
    """The http(s) URLs of the images a ClaimReview carries, at most `MAX_IMAGES`: the claim's
    own `image` (schema.org Thing.image: a URL or an ImageObject), its `appearance` and
    `firstAppearance` when they are ImageObjects (`contentUrl`, else `url`), then the review's
    `image`, which publishers often fill with the very picture they debunk."""
    found: list[object] = [*_image_nodes(item.get("image"))]
    for key in ("firstAppearance", "appearance"):
        for node in _image_nodes(item.get(key)):
            if isinstance(node, dict) and "ImageObject" in _types(node):
                found.append(node.get("contentUrl") or node.get("url"))
    found.extend(_image_nodes(review.get("image")))
    urls: list[str] = []
    for node in found:
        if isinstance(node, dict):
            node = node.get("contentUrl") or node.get("url")
        url = _url(node)
        if url and url not in urls and url_problem(url) is None:
            urls.append(url)
    return urls[:MAX_IMAGES]


MAX_VIDEOS = 2  # video files kept per review: each is decoded in a child process


def video_urls(review: dict[str, Any], item: dict[str, Any]) -> list[str]:
    """The http(s) URLs of the video files a ClaimReview carries, at most `MAX_VIDEOS`: the
    `contentUrl` of the claim's `video` (schema.org CreativeWork.video), of its
    `firstAppearance` and `appearance` when they are VideoObjects, then of the review's
    `video`. Only `contentUrl`: a VideoObject's `url` or `embedUrl` is most often a player
    page, not the file."""
    found: list[object] = [*_image_nodes(item.get("video"))]
    for key in ("firstAppearance", "appearance"):
        found.extend(
            node
            for node in _image_nodes(item.get(key))
            if isinstance(node, dict) and "VideoObject" in _types(node)
        )
    found.extend(_image_nodes(review.get("video")))
    urls: list[str] = []
    for node in found:
        url = _url(node.get("contentUrl")) if isinstance(node, dict) else None
        if url and url not in urls and url_problem(url) is None:
            urls.append(url)
    return urls[:MAX_VIDEOS]


def read_jsonld(data: object, page_url: str | None = None) -> ImportResult:
    """Records for every usable ClaimReview in a parsed JSON-LD value (object, list or @graph),
    and one failure line per ClaimReview left out."""
    result = ImportResult()
    _read_jsonld(data, page_url, result)
    return result


def records_from_jsonld(data: object, page_url: str | None = None) -> list[ClaimRecord]:
    return read_jsonld(data, page_url).records


def _script_json(text: str) -> object | None:
    body = text.strip()
    # Some CMSs wrap the JSON in an HTML comment or CDATA section.
    for opener, closer in (("<!--", "-->"), ("<![CDATA[", "]]>")):
        if body.startswith(opener) and body.endswith(closer):
            body = body[len(opener) : -len(closer)].strip()
    try:
        return safejson.loads(body)
    except safejson.UntrustedJSONError:
        return None


def read_html(html: str, page_url: str | None = None) -> ImportResult:
    """Records from the ClaimReview JSON-LD embedded in an HTML page. Blocks that cannot be
    read (not JSON, nested too deep) are skipped: broken blocks are common and say nothing."""
    result = ImportResult()
    try:
        tree = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return result
    for script in tree.xpath('//script[@type="application/ld+json"]'):
        data = _script_json(script.text or "")
        if data is not None:
            _read_jsonld(data, page_url, result)
    return result


def records_from_html(html: str, page_url: str | None = None) -> list[ClaimRecord]:
    return read_html(html, page_url).records


# --- Fact Check Tools API ----------------------------------------------------------------------


def read_factcheck_api(data: object) -> ImportResult:
    """Records from a `claims:search` response (or its `claims` list), one per review, and one
    failure line per claim or review left out."""
    claims = data.get("claims", []) if isinstance(data, dict) else data
    if not isinstance(claims, list):
        raise ClaimImportError("Fact Check API data must have a 'claims' list")
    result = ImportResult()
    for n, claim in enumerate(claims):
        if not isinstance(claim, dict):
            result.failures.append(f"claims[{n}]: not an object")
            continue
        reviews = claim.get("claimReview") or []  # a claim nobody reviewed has nothing to add
        if not isinstance(reviews, list):
            result.failures.append(f"claims[{n}]: claimReview is not a list")
            continue
        for m, review in enumerate(reviews):
            checks = _Checks(f"claims[{n}].claimReview[{m}]")
            if not isinstance(review, dict):
                checks.problems.append("not an object")
                checks.failed(result)
                continue
            url = _url(review.get("url"))
            claim_text = checks.claim(_text(claim.get("text")))
            checks.url(url)
            claim_date = checks.date(claim.get("claimDate"), "claimDate")
            review_date = checks.date(review.get("reviewDate"), "reviewDate")
            if checks.failed(result):
                continue
            publisher = review.get("publisher")
            publisher = publisher if isinstance(publisher, dict) else {}
            rating_text = _label(review.get("textualRating"))
            result.records.append(
                ClaimRecord(
                    claim_text=claim_text,
                    claimant=_label(claim.get("claimant")),
                    claim_date=claim_date,
                    review_date=review_date,
                    rating_text=rating_text,
                    rating=normalise_rating(rating_text),
                    publisher_name=_label(publisher.get("name")),
                    publisher_site=_site(_text(publisher.get("site"))) or _site(url),
                    review_url=url,
                    language=_language(review.get("languageCode")),
                    source=ClaimSource.FACTCHECK_API,
                    review_title=_clip(_text(review.get("title")), MAX_TITLE_CHARS),
                )
            )
    return result


def records_from_factcheck_api(data: object) -> list[ClaimRecord]:
    return read_factcheck_api(data).records


# --- files and pages ---------------------------------------------------------------------------


def read_json(data: object, page_url: str | None = None) -> ImportResult:
    """Fact Check API JSON when it has a `claims` list of API claims, else JSON-LD."""
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        return read_factcheck_api(data)
    return read_jsonld(data, page_url)


def _parse_json(text: str) -> object:
    try:
        return safejson.loads(text)
    except safejson.UntrustedJSONError as exc:
        raise ClaimImportError(str(exc)) from exc


def read_file(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> ImportResult:
    """Records from an HTML page (its JSON-LD), a JSON-LD file, or Fact Check API JSON, and one
    failure line per review left out. Raises `ClaimImportError` when the file as a whole cannot
    be read: missing, not a regular file, over `max_bytes`, binary, invalid or too deep JSON,
    neither JSON nor HTML."""
    file = Path(path)
    try:
        if not file.exists():
            raise ClaimImportError("no such file")
        raw = read_capped(file, max_bytes)
    except OSError as exc:
        raise ClaimImportError(f"cannot read: {exc.strerror or exc}") from exc
    except CappedReadError as exc:
        wording = {
            ReadProblem.NOT_FILE: "not a regular file",
            ReadProblem.UNREADABLE: f"cannot read: {exc.detail}",
        }
        raise ClaimImportError(wording.get(exc.problem, str(exc))) from exc
    text = decode_body(raw, None, html=False)
    if "\x00" in text:
        raise ClaimImportError("a binary file, neither JSON nor HTML")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return read_json(_parse_json(stripped))
    if "<" in stripped[:1024]:
        return read_html(text)
    raise ClaimImportError("neither JSON nor HTML")


def load_file(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> list[ClaimRecord]:
    """The records `read_file` finds (reviews left out are dropped silently)."""
    return read_file(path, max_bytes=max_bytes).records


def read_url(url: str, fetcher: Fetcher) -> ImportResult:
    """Fetch a fact-check page (or JSON) and read its ClaimReview markup. Raises
    `ClaimImportError` when it cannot be fetched (with the fetcher's reason) or read."""
    try:
        # `fetch` returns extracted main text, and JSON-LD lives in <script> tags that
        # extraction drops, so the raw body is needed here.
        body = fetcher.fetch_raw(url)
    except FetchFailure as exc:
        raise ClaimImportError(f"cannot fetch: {exc}") from exc
    media, charset = parse_content_type(body.content_type)
    text = decode_body(body.data, charset, html=media != "text/plain")
    if media == "application/json" or text.lstrip().startswith(("{", "[")):
        return read_json(_parse_json(text), body.final_url)
    return read_html(text, body.final_url)


def fetch_records(url: str, fetcher: Fetcher) -> list[ClaimRecord]:
    """The records `read_url` finds (reviews left out are dropped silently)."""
    return read_url(url, fetcher).records


# --- rating texts nobody mapped --------------------------------------------------------------


def apply_rating_map(records: list[ClaimRecord], mapping: Mapping[str, str]) -> list[ClaimRecord]:
    """The records with a deployer's own rating texts (`claims.rating_map`) read their way;
    records whose text the map does not name are returned as they are."""
    if not mapping:
        return records
    table = RatingTable({"deployer": {k: Rating(v) for k, v in mapping.items()}})
    out: list[ClaimRecord] = []
    for record in records:
        found = table.lookup(record.rating_text) if record.rating_text else None
        out.append(record if found is None else record.model_copy(update={"rating": found}))
    return out


def unknown_rating_texts(
    records: list[ClaimRecord], mapping: Mapping[str, str] | None = None
) -> Counter[str]:
    """How often each rating text that neither the table, the patterns nor `mapping` know
    occurs: those reviews stay unrated until a deployer maps the text."""
    extra = {k: Rating(v) for k, v in (mapping or {}).items()}
    return Counter(r.rating_text for r in records if not known_rating_text(r.rating_text, extra))
