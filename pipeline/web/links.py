"""The one URL finder, and the URL rules a reply must pass (`pipeline.reply.guard` applies them).

Adapters link only what these rules approved (`GuardReport.urls`). The text is read as a browser
would read it: each character through NFKC, ideographic full stops in hosts as dots, hidden
characters (zero-width, soft hyphen, bidi controls) dropped, then hosts through IDNA/UTS 46.
URLs are found there with twitter-text's own extractor (so the guard and X agree) and a
stricter backstop that also catches what twitter-text skips (unknown TLDs, IP hosts, ports, IDN
hosts, look-alike hosts such as `who.int.evil.example`, bare hosts under newer public suffixes
such as `evil.music`): the guard must see every link a reader
could follow, not only the ones X would turn into t.co links. A URL passes only when it is
written as it reads, with nothing hidden in or beside it, without credentials, naming an
evidence page, with the evidence's https kept.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import regex

from pipeline.records import Problem, ProblemCode
from pipeline.web.urls import browser_url, has_credentials, same_page
from pipeline.web.x_links import x_url_spans

# A URL a reader could follow must have come from fetched evidence; only web schemes qualify.
_WEB_SCHEMES = frozenset({"http", "https"})
# Characters a URL may contain (RFC 3986, ASCII); used to widen twitter-text's matches.
_URL_CHAR = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%"
_URL_CHARS_RE = regex.compile(rf"[{_URL_CHAR}]")
# Letters a host written without a scheme may use: the scripts whose letters pass for Latin
# ones (so `whо.int/x` with a Cyrillic о is a link to judge), not CJK text that runs into an
# ASCII link without a space (`请看who.int/x`). twitter-text also needs ASCII hosts there.
_HOST_LETTER = r"\p{Latin}\p{Greek}\p{Cyrillic}\p{M}0-9"
_HOST_CHARS_RE = regex.compile(rf"[{_HOST_LETTER}.\-]")
_TRAILING_PUNCT = ".,;:!?'*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_LABEL = rf"[{_HOST_LETTER}](?:[{_HOST_LETTER}\-]{{0,61}}[{_HOST_LETTER}])?"
_TLD = r"[\p{Latin}\p{Greek}\p{Cyrillic}]{2,63}"
# Backstops for links twitter-text does not extract: any scheme://... (whose host may be in any
# script: browsers open IDN hosts), bare host/path with a TLD twitter-text may not know (also
# after "user@", which twitter-text skips), "www." hosts, and IPv4 or localhost with a port or
# path. Paths are ASCII: a browser is only handed the text a link facet or X's autolinker
# covers, and twitter-text's own matches (which may run into other scripts) are added apart.
_BACKSTOP_RE = regex.compile(
    rf"""
    (?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[\p{{L}}\p{{N}}\[]
        [\p{{L}}\p{{M}}\p{{N}}\-._~%!$&'()*+,;=:@\[\]]*(?:[/?\#][{_URL_CHAR}]*)?
    | (?<![{_HOST_LETTER}._%+\-/])(?:{_LABEL}\.)+{_TLD}(?::\d{{1,5}})?/[{_URL_CHAR}]*
    | (?<![{_HOST_LETTER}@._%+\-/])www\.(?:{_LABEL}\.)*{_LABEL}[{_URL_CHAR}]*
    | (?<![A-Za-z0-9@._%+\-/])(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?::\d{{1,5}}|(?=/))[{_URL_CHAR}]*
    | (?<![A-Za-z0-9@._%+\-/])localhost(?::\d{{1,5}}|(?=/))[{_URL_CHAR}]*
    """,
    regex.VERBOSE | regex.IGNORECASE,
)
# A host written bare, with no scheme and no path ("evil.music"): twitter-text finds it only
# when its TLD is in twitter-text's own (2017) list; it is a link when its suffix is a public
# one (tldextract's bundled list, read offline), so "index.html" or "e.g" are not.
_BARE_HOST_RE = regex.compile(
    rf"(?<![{_HOST_LETTER}@._%+\-/])(?:{_LABEL}\.)+{_TLD}(?::\d{{1,5}})?(?![{_HOST_LETTER}\-@])",
    regex.IGNORECASE,
)
# Characters no reader sees: format controls (zero-width space and joiners, soft hyphen, bidi
# marks and overrides, tags, BOM) and the other default-ignorable code points (variation
# selectors, Hangul fillers, ...). UTS 46 deletes several of them from hosts, so a browser opens
# `who\u200b.int.evil.example` as `who.int.evil.example`.
HIDDEN_RE = regex.compile(r"[\p{Cf}\p{Default_Ignorable_Code_Point}]")
# UTS 46 reads the ideographic full stop (also what NFKC makes of the half-width one) as a dot.
_DOTS = {"\u3002": "."}
# Characters no platform should carry: bidi embeddings, overrides and isolates (they reorder
# what follows, so a reader sees other text than was checked; X rejects the first five), the
# BOM, interlinear annotation controls, surrogates, noncharacters (X rejects U+FFFE/U+FFFF)
# and control codes other than tab and newlines.
INVALID_RE = regex.compile(
    r"[\u202a-\u202e\u2066-\u2069\ufeff\ufff9-\ufffb\p{Cs}\p{Noncharacter_Code_Point}"
    r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)


def _trim_end(text: str, start: int, end: int, floor: int) -> int:
    """Drops sentence punctuation and unbalanced closing brackets after a URL (not below floor)."""
    while end > max(start, floor):
        last = text[end - 1]
        unbalanced = last in _CLOSERS and text.count(_CLOSERS[last], start, end) < text.count(
            last, start, end
        )
        if last not in _TRAILING_PUNCT and not unbalanced:
            break
        end -= 1
    return end


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Extends a twitter-text match to the whole URL-like token around it.

    twitter-text stops at the last TLD it knows, so "https://who.int.evil.example/x" yields
    "https://who.int"; judging that prefix alone would pass a look-alike host as evidence.
    """
    floor = end
    while end < len(text) and _URL_CHARS_RE.match(text[end]):
        end += 1
    if "://" not in text[start:floor]:
        while start > 0 and _HOST_CHARS_RE.match(text[start - 1]):
            start -= 1
    return start, _trim_end(text, start, end, floor)


def _with_userinfo(text: str, start: int) -> int:
    """Moves a bare link's start back over a "name@" before it: `evil.com@www.who.int/x` is
    read whole (a credentials URL), not as `www.who.int/x` with text in front."""
    if start == 0 or text[start - 1] != "@" or "://" in text[start : start + 12]:
        return start
    begin = start - 1
    while begin > 0 and _URL_CHARS_RE.match(text[begin - 1]):
        begin -= 1
    return begin if begin < start - 1 else start


def _url_spans(text: str) -> list[tuple[int, int]]:
    """Spans of every URL in `text` (the normal view), in order, overlapping matches merged."""
    spans = [_widen(text, s, e) for s, e in x_url_spans(text)]
    for match in _BACKSTOP_RE.finditer(text):
        end = _trim_end(text, match.start(), match.end(), match.start())
        if end > match.start():
            spans.append((match.start(), end))
    spans.extend(_bare_hosts(text))
    spans = [(_with_userinfo(text, s), e) for s, e in spans]
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _bare_hosts(text: str) -> list[tuple[int, int]]:
    """Spans of bare hosts under a public suffix, the new TLDs twitter-text does not know
    included (issue 33: `evil.music`)."""
    candidates = list(_BARE_HOST_RE.finditer(text))
    if not candidates:
        return []
    # Imported here: the suffix list is loaded only for text that has something host-like.
    from pipeline.web.domains import suffix_extractor

    extract = suffix_extractor()
    spans: list[tuple[int, int]] = []
    for match in candidates:
        host = match.group().rsplit(":", 1)[0].lower()
        try:
            parts = extract(host)
        except ValueError:
            continue
        if parts.suffix and parts.domain:
            spans.append((match.start(), _trim_end(text, match.start(), match.end(), 0)))
    return spans


def _normal_view(text: str) -> tuple[str, list[int]]:
    """The text as a browser's URL parser reads it, and where each of its characters came from.

    Each character goes through NFKC on its own (full-width "ｅ" and "．" become "e" and "."),
    the ideographic full stop becomes a dot where a host may be, and hidden characters are
    dropped, as UTS 46 drops them from hosts. Per character, so every normal character maps
    back to one in `text`.
    """
    chars: list[str] = []
    origin: list[int] = []
    token = ""  # the normal text since the last space, to tell a host from a path
    for i, ch in enumerate(text):
        if HIDDEN_RE.match(ch):
            continue
        for normal in unicodedata.normalize("NFKC", ch):
            if normal in _DOTS and _in_host(token):
                normal = _DOTS[normal]
            token = "" if normal.isspace() else token + normal
            chars.append(normal)
            origin.append(i)
    return "".join(chars), origin


def _in_host(token: str) -> bool:
    """Whether the next character of a space-free token would be in a URL's host (UTS 46 reads
    an ideographic full stop as a dot there only; in a path or prose it ends the URL)."""
    after_scheme = token.split("://", 1)[1] if "://" in token else token
    return "/" not in after_scheme


@dataclass(frozen=True)
class FoundUrl:
    """One link in a reply: where it is in the text as written, and what a browser reads."""

    start: int
    end: int
    raw: str  # text[start:end], as written (the string a link facet must cover)
    normal: str  # the normal view of it: NFKC, ideographic dots as dots, hidden chars dropped
    hidden: bool  # a hidden character inside it or right next to it


def find_urls(text: str) -> list[FoundUrl]:
    """Every URL in `text`, in text order (repeats kept): the one URL finder.

    URLs are found in the normal view (so `https://ｅvil．com/login`, `who.int。evil.example` and
    `who\u200b.int.evil.example` are read whole, as a browser would open them) with
    twitter-text's extractor (the URLs X itself links), each widened to the whole URL-like
    token, and a backstop for links it skips (unknown TLDs, IPs, other schemes, IDN hosts).
    """
    normal, origin = _normal_view(text)
    found: list[FoundUrl] = []
    for start, end in _url_spans(normal):
        raw_start, raw_end = origin[start], origin[end - 1] + 1
        around = text[max(raw_start - 1, 0) : raw_end + 1]
        found.append(
            FoundUrl(
                start=raw_start,
                end=raw_end,
                raw=text[raw_start:raw_end],
                normal=normal[start:end],
                hidden=HIDDEN_RE.search(around) is not None,
            )
        )
    return found


def urls_in(text: str) -> list[str]:
    """Every URL in `text` as written, with or without scheme, in text order (repeats kept)."""
    return [url.raw for url in find_urls(text)]


def show(text: str) -> str:
    """`text` with hidden characters and controls spelled `<U+200B>`, for reports and logs."""
    return "".join(
        f"<U+{ord(ch):04X}>"
        if HIDDEN_RE.match(ch) or INVALID_RE.match(ch) or not ch.isprintable()
        else ch
        for ch in text
    )


def _scheme(url: str) -> str:
    """The URL's scheme in lower case; "" for a bare host (what a browser is not told)."""
    return url.split("://", 1)[0].lower() if "://" in url else ""


def _evidence_schemes(url: str, evidence_urls: Collection[str]) -> set[str]:
    """The schemes of the evidence URLs naming the page `url` opens (empty: not evidence).

    Both sides are compared as a browser reads them (NFKC, IDNA/UTS 46 hosts), so a
    homograph host (`whо.int`, Cyrillic о) is another host, not the evidence's.
    """
    scheme = _scheme(url)
    if scheme and scheme not in _WEB_SCHEMES:
        return set()
    try:
        opened = browser_url(url)
    except ValueError:  # unparseable (e.g. a bad port): cannot be shown to be evidence
        return set()
    schemes: set[str] = set()
    for known in evidence_urls:
        try:
            if same_page(opened, browser_url(known)):
                schemes.add(_scheme(known) or "https")
        except ValueError:
            continue
    return schemes


def _punycode_note(url: str) -> str:
    """' (opens https://xn--...)' for a host not in ASCII: a homograph looks like the evidence
    host in a report too, its ASCII form shows it is not."""
    if url.isascii():
        return ""
    try:
        return f" (opens {browser_url(url)})"
    except ValueError:
        return ""


# The URL rules, in the order their problems are reported.
_URL_RULES = (
    ProblemCode.URL_HIDDEN_CHARACTERS,
    ProblemCode.URL_NOT_NORMALISED,
    ProblemCode.URL_CREDENTIALS,
    ProblemCode.URL_NOT_EVIDENCE,
    ProblemCode.URL_DOWNGRADE,
)


def _broken_url_rules(
    url: FoundUrl, evidence_urls: Collection[str]
) -> list[tuple[ProblemCode, str]]:
    """(rule, how the report names the URL) for each URL rule `url` breaks; empty: approved."""
    shown = show(url.raw)
    broken: list[tuple[ProblemCode, str]] = []
    if url.hidden:
        broken.append((ProblemCode.URL_HIDDEN_CHARACTERS, shown))
    if HIDDEN_RE.sub("", url.raw) != url.normal:
        broken.append((ProblemCode.URL_NOT_NORMALISED, f"{shown} (reads as {url.normal})"))
    try:
        if has_credentials(url.normal):
            broken.append((ProblemCode.URL_CREDENTIALS, shown))
    except ValueError:
        pass  # unparseable: url_not_evidence says so below
    schemes = _evidence_schemes(url.normal, evidence_urls)
    if not schemes:
        broken.append((ProblemCode.URL_NOT_EVIDENCE, shown + _punycode_note(url.normal)))
    elif _scheme(url.normal) == "http" and "http" not in schemes:
        broken.append((ProblemCode.URL_DOWNGRADE, f"{shown} (evidence is https)"))
    return broken


def url_problems(found: Sequence[FoundUrl], evidence_urls: Collection[str]) -> list[Problem]:
    """The URL rules, each listing its URLs once, in text order; a URL may break several.

    - `url_hidden_characters`: a hidden character in the URL or right next to it;
    - `url_not_normalised`: the URL is not written as it reads (full-width letters or dots,
      ideographic full stop, other NFKC variants), so a reader cannot see where it leads;
    - `url_credentials`: a user name before "@" (`https://evil.com@who.int/`);
    - `url_not_evidence`: the page it opens is not an evidence page (or not a web scheme);
    - `url_downgrade`: `http://` for a page the evidence cites as https.
    """
    named: dict[ProblemCode, dict[str, None]] = {rule: {} for rule in _URL_RULES}
    for url in found:
        for rule, entry in _broken_url_rules(url, evidence_urls):
            named[rule][entry] = None
    return [
        Problem(code=rule, detail=", ".join(entries)) for rule, entries in named.items() if entries
    ]


def approved_urls(found: Sequence[FoundUrl], evidence_urls: Collection[str]) -> list[str]:
    """The found URLs (as written, distinct, in order) that break no URL rule: the only strings
    a platform may turn into links (`GuardReport.urls`, then `Decision.urls`)."""
    return list(dict.fromkeys(u.raw for u in found if not _broken_url_rules(u, evidence_urls)))
