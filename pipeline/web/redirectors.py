"""Links that name another page, and what can be read from them offline.

Three kinds, from `pipeline/data/redirectors.csv` and `pipeline/data/doi_prefixes.csv` (this
project's own lists):

* DOI links (`doi.org/10.1038/...`): the DOI's prefix names the registrant, the publisher that
  registered it with Crossref or DataCite, so a known prefix is rated as that publisher without
  any network access. Unknown prefixes need resolving (`pipeline.web.resolve`).
* Link shorteners: a generic one (`bit.ly`, `t.co`) hides its target, which only resolving
  reveals; a publisher's own shortener (`nyti.ms`, `reut.rs`) only points at that publisher.
* Wrappers that carry the target in the URL itself: archive snapshots (`web.archive.org/web/
  <time>/<url>`, `archive.ph/<time>/<url>`), redirect endpoints (`google.com/url?q=<url>`,
  `l.facebook.com/l.php?u=<url>`), the AMP cache (`<x>.cdn.ampproject.org/c/s/<host>/...`) and
  Google's AMP viewer (`google.com/amp/s/<host>/...`).
  An archive copy is rated as the page it copies: the archive is faithful to it.
"""

from __future__ import annotations

import csv
import functools
import html
from dataclasses import dataclass
from importlib import resources
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pipeline.web.domains import as_url, has_scheme, parse_host

RedirectorKind = Literal["doi", "shortener", "publisher"]

ARCHIVE_HOSTS = ("web.archive.org", "wayback.archive.org")
ARCHIVE_TODAY_HOSTS = (
    "archive.ph", "archive.today", "archive.is", "archive.li", "archive.md", "archive.vn",
    "archive.fo",
)  # fmt: skip
# Archives whose links name only the copy (an ID, not the page copied): like an archive.today
# short link, the publisher is the copied page's, which only opening the copy shows.
ARCHIVE_COPY_HOSTS = ("perma.cc", "ghostarchive.org", "megalodon.jp")
GOOGLE_HOSTS = tuple(
    f"google.{tld}"
    for tld in ("com", "co.jp", "co.uk", "de", "fr", "es", "it", "com.br", "co.in", "ca", "nl")
)
# Redirect endpoints: host -> (path, query parameters that may hold the target, in order).
# Google's result links carry the target in `q` or, from the mobile results page, in `url`.
REDIRECT_ENDPOINTS: dict[str, tuple[str, tuple[str, ...]]] = {
    **{host: ("/url", ("q", "url")) for host in GOOGLE_HOSTS},
    "l.facebook.com": ("/l.php", ("u",)),
    "lm.facebook.com": ("/l.php", ("u",)),
    "l.instagram.com": ("/", ("u",)),
    "out.reddit.com": ("/", ("url",)),
}
GOOGLE_AMP_PREFIX = "/amp/s/"  # google.com/amp/s/<host>/<path>: Google's AMP viewer
# An image result (google.com/imgres?imgurl=<image>&imgrefurl=<page>): the page is the source.
GOOGLE_IMAGE_RESULT = ("/imgres", "imgrefurl")
AMP_CACHE_SUFFIX = ".cdn.ampproject.org"
MAX_UNWRAP = 3  # an archive of a Google redirect of a DOI is as deep as real links go


@dataclass(frozen=True)
class Redirector:
    host: str
    kind: RedirectorKind
    publisher: str  # for kind "publisher": the domain its links lead to; else ""


@dataclass(frozen=True)
class DoiRegistrant:
    prefix: str  # "10.1038", or a narrower "10.1002/14651858"
    domain: str  # the publisher's domain, as the publisher table keys it
    name: str


@dataclass(frozen=True)
class LinkTarget:
    """What a link leads to, read offline: a URL or domain to rate, and how it was found."""

    url: str
    via: str  # e.g. "DOI 10.1038/x registered by Springer Nature", "archived copy"


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("pipeline.data").joinpath(name).read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines())
    return [{k: (v or "").strip() for k, v in row.items()} for row in reader]


@functools.cache
def redirectors() -> dict[str, Redirector]:
    found: dict[str, Redirector] = {}
    for row in _rows("redirectors.csv"):
        kind = row["kind"]
        if kind not in ("doi", "shortener", "publisher"):
            raise ValueError(f"redirectors.csv: {row['host']}: unknown kind {kind!r}")
        found[row["host"].lower()] = Redirector(row["host"].lower(), kind, row["publisher"])  # type: ignore[arg-type]
    return found


def redirector_hosts() -> tuple[str, ...]:
    return tuple(redirectors())


def redirector_for(host: str) -> Redirector | None:
    """The redirector serving `host` (exact host or a parent domain), if any."""
    table = redirectors()
    labels = host.lower().split(".")
    for i in range(len(labels) - 1):
        found = table.get(".".join(labels[i:]))
        if found is not None:
            return found
    return None


@functools.cache
def doi_registrants() -> tuple[DoiRegistrant, ...]:
    entries = [
        DoiRegistrant(r["prefix"], r["domain"], r["registrant"]) for r in _rows("doi_prefixes.csv")
    ]
    # Narrower prefixes first, so "10.1002/14651858" (Cochrane) wins over "10.1002" (Wiley).
    return tuple(sorted(entries, key=lambda e: -len(e.prefix)))


def doi_of(url: str) -> str | None:
    """The DOI a doi.org (or dx.doi.org) link names, lower-cased, or None."""
    try:
        parts = urlsplit(as_url(url.strip()))
    except ValueError:
        return None
    found = redirector_for((parts.hostname or "").removeprefix("www."))
    if found is None or found.kind != "doi":
        return None
    doi = unquote(parts.path).lstrip("/").lower()
    return doi if doi.startswith("10.") and "/" in doi else None


def doi_registrant(doi: str) -> DoiRegistrant | None:
    doi = doi.lower()
    for entry in doi_registrants():
        if doi.startswith(entry.prefix) and doi[len(entry.prefix) : len(entry.prefix) + 1] in "/.":
            return entry
    return None


def _archived(host: str, path: str, query: str) -> str | None:
    """The original URL inside an archive snapshot's path (and query), or None."""
    segments = path.lstrip("/").split("/", 2)
    inner: str | None = None
    if host in ARCHIVE_HOSTS:
        # /web/20200101000000[id_|if_|*]/https://example.org/page
        if len(segments) == 3 and segments[0] == "web":
            inner = segments[2]
    elif len(segments) == 3 and segments[0] == "o":
        inner = segments[2]  # archive.today: /o/ID/URL
    elif len(segments) >= 2 and segments[0]:
        inner = "/".join(segments[1:])  # archive.today: /2020.01.01-000000/URL, /newest/URL
    if not inner:
        return None
    return f"{inner}?{query}" if query else inner


def unwrap(url: str) -> LinkTarget | None:
    """The page a wrapper URL (archive copy, redirect endpoint, AMP cache) carries, or None."""
    raw = url.strip()
    try:
        parts = urlsplit(as_url(raw))
    except ValueError:
        return None
    host = (parts.hostname or "").lower().removeprefix("www.")
    if host in ARCHIVE_HOSTS or host in ARCHIVE_TODAY_HOSTS:
        inner = _archived(host, parts.path, parts.query)
        if inner and "." in parse_host(inner).host:
            return LinkTarget(
                inner if has_scheme(inner) else "https://" + inner, f"archived copy ({host})"
            )
        return None
    endpoint = REDIRECT_ENDPOINTS.get(host)
    if endpoint is not None and parts.path == endpoint[0]:
        # Links copied out of a page's HTML keep their escaped `&amp;` separators.
        query = parse_qs(html.unescape(parts.query))
        for name in endpoint[1]:
            values = query.get(name)
            if values and values[0].startswith(("http://", "https://")):
                return LinkTarget(values[0], f"redirect link ({host})")
        return None
    if host in GOOGLE_HOSTS and parts.path == GOOGLE_IMAGE_RESULT[0]:
        pages = parse_qs(html.unescape(parts.query)).get(GOOGLE_IMAGE_RESULT[1])
        if pages and pages[0].startswith(("http://", "https://")):
            return LinkTarget(pages[0], f"image result ({host}) on the page")
        return None
    if host in GOOGLE_HOSTS and parts.path.startswith(GOOGLE_AMP_PREFIX):
        inner = parts.path[len(GOOGLE_AMP_PREFIX) :]
        if "." in parse_host(inner).host:
            return LinkTarget("https://" + inner, f"AMP viewer copy ({host})")
        return None
    if host.endswith(AMP_CACHE_SUFFIX):
        # /c/s/example.org/path (s = https), /v/s/..., /i/s/...
        segments = parts.path.lstrip("/").split("/", 2)
        if len(segments) == 3 and segments[1] == "s":
            return LinkTarget("https://" + segments[2], "AMP cache copy")
        if len(segments) >= 2 and segments[0] in ("c", "v", "i"):
            return LinkTarget("http://" + "/".join(segments[1:]), "AMP cache copy")
    return None


def offline_target(url: str) -> LinkTarget | None:
    """Where `url` leads when that can be read without the network: a wrapper's page, a known
    DOI registrant, or a publisher's own shortener. None for ordinary links and for links that
    only resolving can follow (generic shorteners, DOIs of unknown registrants)."""
    wrapped = unwrap(url)
    if wrapped is not None:
        return wrapped
    doi = doi_of(url)
    if doi is not None:
        registrant = doi_registrant(doi)
        if registrant is None:
            return None
        return LinkTarget(registrant.domain, f"DOI {doi} registered by {registrant.name}")
    host = parse_host(url).host
    found = redirector_for(host) if host else None
    if found is not None and found.kind == "publisher":
        return LinkTarget(
            found.publisher, f"{found.host} is {found.publisher}'s own link shortener"
        )
    return None
