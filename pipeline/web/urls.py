"""URL normalisation shared by fetching, caching, search results and the guard's URL rule."""

from __future__ import annotations

import unicodedata
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import idna

# Tracking parameters never change what a page says, so they must not make two URLs differ.
_TRACKING_PREFIXES = ("utm_",)
_TRACKING_NAMES = frozenset(
    {"fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "ref_src"}
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_url(url: str) -> str:
    """A stable key for a web page: lower-case scheme and host, no default port, no fragment,
    no tracking parameters, remaining parameters sorted, no trailing slash except the root.

    A URL without a scheme (as people type them in posts) is taken as https.
    """
    raw = url.strip()
    if "://" not in raw:
        raw = "https://" + raw
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    port = parts.port
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if ":" in host and not host.startswith("["):  # IPv6 literal
        netloc = f"[{host}]" if port is None else f"[{host}]:{port}"
    path = parts.path or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith(_TRACKING_PREFIXES) and k.lower() not in _TRACKING_NAMES
    ]
    query.sort()
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def same_page(a: str, b: str) -> bool:
    """True when two URLs name the same page, ignoring scheme (http/https) and the above noise."""
    ca, cb = canonical_url(a), canonical_url(b)
    return ca.split("://", 1)[1] == cb.split("://", 1)[1]


def _with_scheme(url: str) -> str:
    return url if "://" in url else "https://" + url


def has_credentials(url: str) -> bool:
    """True when the URL carries a user name or password (`https://who.int@evil.example/`).

    A browser opens the host after the "@"; the part before it only makes the link look like
    another site, so no reply may cite such a URL whichever side names the evidence.
    """
    return "@" in urlsplit(_with_scheme(unicodedata.normalize("NFKC", url.strip()))).netloc


def browser_url(url: str) -> str:
    """The URL a browser would open: NFKC, then the host through IDNA/UTS 46 (ASCII, lower case).

    Full-width letters, ideographic dots, soft hyphens and zero-width characters in the host
    all disappear here exactly as they do in a browser, so `https://ｗｈｏ．int` reads as
    `https://who.int` and `https://whо.int` (Cyrillic о) as `https://xn--wh-gmc.int`.
    Credentials are dropped (see `has_credentials`); a URL without a scheme is taken as https.
    Raises ValueError when the host cannot be encoded or the port is not a number.
    """
    parts = urlsplit(_with_scheme(unicodedata.normalize("NFKC", url.strip())))
    host = parts.hostname or ""
    if ":" not in host and not host.isascii():  # IPv6 literals and ASCII hosts need no IDNA
        try:
            host = idna.encode(host, uts46=True, transitional=False).decode("ascii")
        except idna.IDNAError as exc:
            raise ValueError(f"host cannot be encoded: {exc}") from exc
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:  # .port raises ValueError for a port that is not a number
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment))
