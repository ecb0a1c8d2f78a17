"""Hosts and registrable domains, read offline.

A host is read as a browser's address bar would (lower case, ASCII/punycode, no "www.", no
port); its registrable domain (eTLD+1) comes from `tldextract` with its bundled public-suffix
snapshot only: the extractor is built once with no suffix-list URLs and no cache directory, so
it never touches the network or the disk.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import tldextract

_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")

RESERVED_TEST_SUFFIXES = ("example", "test", "invalid")


@functools.cache
def suffix_extractor() -> tldextract.TLDExtract:
    """The one extractor: bundled suffix list, no URLs to fetch, no cache on disk.

    The TLDs RFC 2606 reserves for documentation and tests are added as suffixes, so demo and
    fixture publishers (`health-ministry.example`) are rated like real ones; no real site can
    live under them, so this cannot misrate anything real.
    """
    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, extra_suffixes=RESERVED_TEST_SUFFIXES
    )


@dataclass(frozen=True)
class ParsedHost:
    host: str  # lower-case, ASCII (punycode), no "www.", no port; "" when unparseable
    segments: tuple[str, ...]  # lower-case path segments
    ip: bool


def parse_host(domain_or_url: str) -> ParsedHost:
    raw = domain_or_url.strip()
    if not raw:
        return ParsedHost("", (), False)
    if not has_scheme(raw):
        # A bare IPv6 address would otherwise be read as host "2001" with a port.
        try:
            return ParsedHost(str(ipaddress.ip_address(raw.strip("[]"))), (), True)
        except ValueError:
            raw = "//" + raw.lstrip("/")
    try:
        parts = urlsplit(raw)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return ParsedHost("", (), False)
    segments = tuple(s for s in parts.path.lower().split("/") if s)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return ParsedHost(host, segments, True)
    if host.startswith("www."):
        host = host[4:]
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return ParsedHost("", (), False)
    host = host.lower()
    if not all(_LABEL.match(label) for label in host.split(".")):
        return ParsedHost("", (), False)
    return ParsedHost(host, segments, False)


def has_scheme(text: str) -> bool:
    """True when `text` starts with `scheme://`; a scheme later on (an archive URL's target,
    `web.archive.org/web/2020/https://...`) does not count."""
    return _SCHEME.match(text) is not None


def as_url(text: str) -> str:
    """`text` with a scheme-relative `//` prefix when it has no scheme, ready for urlsplit."""
    return text if has_scheme(text) else "//" + text.lstrip("/")


@functools.lru_cache(maxsize=65536)
def registrable_host(host: str) -> str:
    parts = suffix_extractor()(host)
    top = parts.top_domain_under_public_suffix
    if top:
        return top
    if parts.suffix and not parts.domain:
        # The host is itself a public suffix that serves a site (www.gov.uk -> gov.uk).
        return host
    return ""


def registrable_domain(domain_or_url: str) -> str:
    """The registrable domain (eTLD+1) of a domain or URL, ASCII (punycode) and lower-case.

    "" for IP addresses, hosts under no known public suffix (`localhost`) and unparseable input.
    """
    parsed = parse_host(domain_or_url)
    if not parsed.host or parsed.ip:
        return ""
    return registrable_host(parsed.host)
