"""Turn a page body (HTML or plain text) into a `Document`: main text, title, publication date.

Pure and offline: the fetcher calls it on downloaded bodies and the local index on files.

Main text and title come from trafilatura with its default balance (on the fixture pages the
default, `favor_precision` and `favor_recall` gave identical text with no boilerplate; the
relevance stage selects passages later, so recall is the safer default). Comments are excluded:
they are not the publisher's words.

The publication date is read only from explicit page metadata, never guessed from body text:
htmldate (trafilatura's date engine) falls back to any date-looking string in the text even with
`extensive_search=False`, and a date quoted in an article ("the treaty was signed on 1 January
1989") is no evidence of when the page was written, which is what the as-of rule needs.
Sources, in order: publication-date <meta> tags, JSON-LD `datePublished`, microdata
`datePublished`, a `<time datetime>` element, a /YYYY/MM/DD/ URL path, and last a
*modification* date (`article:modified_time`, JSON-LD `dateModified`): a page modified before
as-of was necessarily published before it, so it is a safe stand-in. `Document.date_source` names
the source used, or is None when the page is dateless. Dates are timezone-aware UTC; a bare date is
midnight UTC.
"""

from __future__ import annotations

import codecs
import email.utils
import hashlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import charset_normalizer
import lxml.etree
import lxml.html
import regex

from pipeline import safejson
from pipeline.records import Document
from pipeline.web.urls import canonical_url

MAX_TEXT_CHARS = 200_000
MAX_TITLE_CHARS = 300  # a page's title goes into prompts; a <title> of a megabyte is not one
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain"})
SUPPORTED_TYPES = HTML_TYPES | TEXT_TYPES

# Meta names/properties that state when a page was first published, most specific first.
_PUBLISHED_META = (
    "article:published_time",
    "og:article:published_time",
    "og:published_time",
    "article:published",
    "datepublished",
    "citation_publication_date",
    "citation_online_date",
    "dcterms.issued",
    "dc.date.issued",
    "dcterms.created",
    "dc.date.created",
    "parsely-pub-date",
    "sailthru.date",
    "pubdate",
    "publishdate",
    "publish_date",
    "publish-date",
    "published_time",
    "article.published",
    "date",
    "dc.date",
    "dcterms.date",
    "citation_date",
)
# Modification dates: an upper bound on the publication date (see module docstring).
_MODIFIED_META = (
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "dcterms.modified",
    "dc.date.modified",
    "last-modified",
)
_ARTICLE_TYPE_HINTS = ("article", "posting", "report", "webpage", "claimreview")
_URL_DATE = re.compile(r"/((?:19|20)\d{2})/(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01])(?:/|$)")
# The ISO 8601 part at the start of a longer string ("2024-03-05T14:30:00+0100 (CET)").
_ISO_PREFIX = re.compile(
    r"^\s*(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)"
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
# A word is a run of letters/digits, except that each Han or kana character counts as one word,
# since those scripts do not separate words with spaces.
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}"
_WORD = regex.compile(rf"[{_CJK}]|[^\W{_CJK}]+(?:['’-][^\W{_CJK}]+)*")


class UnsupportedContentType(ValueError):
    """The body is neither HTML nor plain text."""


def extract_document(
    url: str,
    body: str | bytes,
    content_type: str = "text/html",
    *,
    final_url: str | None = None,
    published: datetime | None = None,
) -> Document:
    """Extract the main text, title and publication date of a page body.

    `content_type` may carry a charset parameter, used to decode bytes. `published`, when given
    by the caller (e.g. a local file whose date is known), overrides anything in the page.
    """
    media, charset = parse_content_type(content_type)
    if media not in SUPPORTED_TYPES:
        raise UnsupportedContentType(f"unsupported content type: {media or '(none)'}")
    is_html = media in HTML_TYPES
    text_body = body if isinstance(body, str) else decode_body(body, charset, html=is_html)
    page_url = final_url or url
    if is_html:
        title, text, found, source = _extract_html(text_body, page_url)
    else:
        text = _normalise_plain(text_body)
        title, found, source = _first_line_title(text), None, None
    if published is not None:
        found, source = _to_utc(published), "given"
    text = text[:MAX_TEXT_CHARS]
    title = title[:MAX_TITLE_CHARS]
    return Document(
        url=url,
        canonical_url=canonical_url(page_url),
        final_url=final_url,
        ok=True,
        content_type=media,
        title=title,
        text=text,
        published=found,
        date_source=source,
        word_count=count_words(text),
        content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def parse_content_type(content_type: str | None) -> tuple[str, str | None]:
    """("text/html", "utf-8") from "text/html; charset=UTF-8"; the charset may be None."""
    if not content_type:
        return "", None
    media, _, params = content_type.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'").lower()
    return media.strip().lower(), charset


def decode_body(body: bytes, charset: str | None = None, *, html: bool = True) -> str:
    """Decode a body: byte-order mark, then declared charset, then <meta charset>, then UTF-8,
    then detection. Invalid bytes never raise; they become U+FFFD."""
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if body.startswith(bom):
            return body.decode(name, errors="replace")
    candidates: list[str] = []
    if charset:
        candidates.append(charset)
    if html:
        match = _META_CHARSET.search(body[:4096])
        if match:
            candidates.append(match.group(1).decode("ascii", "ignore").lower())
    for name in candidates:
        try:
            codecs.lookup(name)
        except LookupError:
            continue
        return body.decode(name, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    best = charset_normalizer.from_bytes(body).best()
    if best is not None:
        return str(best)
    return body.decode("cp1252", errors="replace")


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def parse_date(value: str) -> datetime | None:
    """A timezone-aware UTC datetime from an ISO 8601 or RFC 2822 string, else None."""
    raw = value.strip()
    if not raw:
        return None
    parsed: datetime | None
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        parsed = None
    if parsed is None:
        try:
            parsed = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            parsed = None
    if parsed is None:
        match = _ISO_PREFIX.match(raw)
        if match:
            try:
                parsed = datetime.fromisoformat(match[1])
            except ValueError:
                parsed = None
    if parsed is None or parsed.year < 1900:
        return None
    try:
        return _to_utc(parsed)
    except OverflowError:  # 9999-12-31T23:00-05:00 is past the last datetime in UTC
        return None


def _to_utc(value: datetime) -> datetime:
    # A date without offset is taken as UTC: a stated calendar day is the best we know.
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _normalise_plain(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _first_line_title(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= 150 else ""
    return ""


def _parse_html(text: str) -> lxml.html.HtmlElement | None:
    # lxml refuses str input that carries an XML encoding declaration; the text is decoded already.
    cleaned = _XML_DECL.sub("", text, count=1)
    if not cleaned.strip():
        return None
    try:
        return lxml.html.document_fromstring(cleaned)
    except (lxml.etree.ParserError, ValueError):
        return None


def _extract_html(html: str, url: str) -> tuple[str, str, datetime | None, str | None]:
    tree = _parse_html(html)
    if tree is None:
        return "", "", None, None
    # Imported with the first page read: a tenth of a second (its metadata and date engines)
    # that a process extracting no page, as `factnote check` before its first fetch, need not pay.
    import trafilatura

    # Read the dates before trafilatura runs: it prunes the tree it is given.
    published, source = find_published(tree, url)
    result = trafilatura.bare_extraction(
        tree,
        url=url,
        with_metadata=True,
        include_comments=False,
        include_tables=True,
        # Its own date is not used (see module docstring); keep its search cheap.
        date_extraction_params={"original_date": True, "extensive_search": False},
    )
    title = ""
    text = ""
    if result is not None and not isinstance(result, dict):
        title = (result.title or "").strip()
        text = (result.text or "").strip()
    if not text:
        # Pages too short or too unusual for trafilatura's main-text detection still have text;
        # the usability rules (word count) decide what to do with it.
        text = (trafilatura.html2txt(html) or "").strip()
    if not title:
        title = _html_title(html)
    return title, text, published, source


def _html_title(html: str) -> str:
    tree = _parse_html(html)
    if tree is None:
        return ""
    node = tree.find(".//title")
    return " ".join((node.text_content() if node is not None else "").split())


def find_published(tree: lxml.html.HtmlElement, url: str) -> tuple[datetime | None, str | None]:
    """The publication date stated by page metadata, and where it was found."""
    meta = _meta_values(tree)
    for name in _PUBLISHED_META:
        found = parse_date(meta.get(name, ""))
        if found is not None:
            return found, f"meta:{name}"
    json_ld = list(_json_ld_objects(tree))
    found = _json_ld_date(json_ld, "datePublished")
    if found is not None:
        return found, "json-ld:datePublished"
    for node in tree.xpath('//*[@itemprop="datePublished"]'):
        value = node.get("content") or node.get("datetime") or node.text_content()
        found = parse_date(value or "")
        if found is not None:
            return found, "microdata:datePublished"
    times = tree.xpath("//time[@pubdate and @datetime]") + tree.xpath("//time[@datetime]")
    for node in times:
        found = parse_date(node.get("datetime") or "")
        if found is not None:
            return found, "time-element"
    match = _URL_DATE.search(url)
    if match:
        found = parse_date(f"{match[1]}-{match[2]}-{match[3]}")
        if found is not None:
            return found, "url"
    for name in _MODIFIED_META:
        found = parse_date(meta.get(name, ""))
        if found is not None:
            return found, f"meta:{name}"
    found = _json_ld_date(json_ld, "dateModified")
    if found is not None:
        return found, "json-ld:dateModified"
    return None, None


def _meta_values(tree: lxml.html.HtmlElement) -> dict[str, str]:
    values: dict[str, str] = {}
    for node in tree.iter("meta"):
        key = node.get("property") or node.get("name") or node.get("itemprop") or ""
        content = node.get("content")
        key = key.strip().lower()
        if key and content and key not in values:
            values[key] = content
    return values


def _json_ld_objects(tree: lxml.html.HtmlElement) -> Iterator[dict[str, Any]]:
    """Top-level JSON-LD objects and members of their @graph, in document order. Nested objects
    (related articles in an ItemList, say) are not the page and are skipped."""
    for script in tree.xpath('//script[@type="application/ld+json"]'):
        try:
            data = safejson.loads(script.text or "")
        except safejson.UntrustedJSONError:
            continue  # broken (or hostile, too deep) JSON-LD is common; it just gives no date
        items = data if isinstance(data, list) else [data]
        for item in items:
            if not isinstance(item, dict):
                continue
            yield item
            graph = item.get("@graph")
            if isinstance(graph, list):
                yield from (g for g in graph if isinstance(g, dict))
            main = item.get("mainEntity")
            if isinstance(main, dict):
                yield main


def _json_ld_date(objects: list[dict[str, Any]], key: str) -> datetime | None:
    def is_article(obj: dict[str, Any]) -> bool:
        kinds = obj.get("@type", [])
        kinds = [kinds] if isinstance(kinds, str) else kinds
        return any(
            isinstance(k, str) and any(h in k.lower() for h in _ARTICLE_TYPE_HINTS) for k in kinds
        )

    ordered = [o for o in objects if is_article(o)] + [o for o in objects if not is_article(o)]
    for obj in ordered:
        value = obj.get(key)
        values = value if isinstance(value, list) else [value]
        for candidate in values:
            if isinstance(candidate, str):
                found = parse_date(candidate)
                if found is not None:
                    return found
    return None
