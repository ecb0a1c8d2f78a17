"""The reply guard: hard, LLM-free rules a draft must pass before it can become a public reply.

Every rule reports a short problem string whose prefix (before the colon) is stable, so reports
can count failures by rule: `empty`, `too_long`, `invalid_characters`, `notes_need_url`,
`url_hidden_characters`, `url_not_normalised`, `url_credentials`, `url_not_evidence`,
`url_downgrade`, `mentions_user`, `abusive`, `copies_post`, and, for whole decisions,
`no_reply_verdict`, `thin_evidence`, `low_confidence`. The rules are the same on every
platform; only the length counting differs, and some formats need a URL: both come from the
platform's `ReplyFormat` (`pipeline/formats.py`), where lengths are counted.

This module is the one URL finder (adapters link only what it approved, `GuardReport.urls`).
It reads the text as a browser would: each character through NFKC, ideographic full stops in
hosts as dots, hidden characters (zero-width, soft hyphen, bidi controls) dropped, then hosts
through IDNA/UTS 46. URLs are found there with twitter-text's own extractor (so the guard and X
agree) and a stricter backstop that also catches what twitter-text skips (unknown TLDs, IP
hosts, ports, IDN hosts, look-alike hosts such as `who.int.evil.example`): the guard must see
every link a reader could follow, not only the ones X would turn into t.co links. A URL passes
only when it is written as it reads, with nothing hidden in or beside it, without credentials,
naming an evidence page, with the evidence's https kept.

Wording rules (mentions, insults, copying) read the text as a reader sees it: hidden
characters dropped, NFKC, and Cyrillic/Greek letters that pass for Latin ones folded to those.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import regex

from pipeline.config import GuardConfig
from pipeline.formats import bluesky_lengths as bluesky_lengths
from pipeline.formats import notes_length as notes_length
from pipeline.formats import notes_lengths as notes_lengths
from pipeline.formats import reply_format, x_url_spans
from pipeline.formats import x_weighted_length as x_weighted_length
from pipeline.records import (
    FACT_CHECK_SOURCE,
    Evidence,
    GuardReport,
    Platform,
    Stance,
    Tier,
    Verdict,
)
from pipeline.urls import browser_url, canonical_url, has_credentials, same_page

# Insults and slurs the bot must never use, matched case-insensitively on word boundaries.
# Inflections are listed on purpose: a boundary match on "moron" does not catch "moronic".
# Operators extend this with `GuardConfig.blocked_words`; they cannot remove entries.
BUILTIN_BLOCKED_WORDS: tuple[str, ...] = (
    "idiot",
    "idiots",
    "idiotic",
    "moron",
    "morons",
    "moronic",
    "stupid",
    "stupidity",
    "dumb",
    "dumbass",
    "imbecile",
    "imbeciles",
    "cretin",
    "cretins",
    "liar",
    "liars",
    "shut up",
    "loser",
    "losers",
    "retard",
    "retards",
    "retarded",
    "scum",
    "pathetic",
    "brainwashed",
    "clown",
    "clowns",
    "fool",
    "fools",
    "nutjob",
    "nutjobs",
    "crackpot",
    "crackpots",
)

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
# Characters no reader sees: format controls (zero-width space and joiners, soft hyphen, bidi
# marks and overrides, tags, BOM) and the other default-ignorable code points (variation
# selectors, Hangul fillers, ...). UTS 46 deletes several of them from hosts, so a browser opens
# `who\u200b.int.evil.example` as `who.int.evil.example`.
_HIDDEN_RE = regex.compile(r"[\p{Cf}\p{Default_Ignorable_Code_Point}]")
# UTS 46 reads the ideographic full stop (also what NFKC makes of the half-width one) as a dot.
_DOTS = {"\u3002": "."}

# Mentions as X and Bluesky parse them ("@name", "@name.bsky.social"); e-mail addresses are not.
_MENTION_RE = regex.compile(r"(?<![A-Za-z0-9_@])@([A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)")
# CJK scripts are written without spaces, so each character counts as one word there.
_WORD_RE = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}]"
    r"|(?:(?![\p{Han}\p{Hiragana}\p{Katakana}])[\p{L}\p{N}\p{M}])+"
)
# What leaves a text looking blank: white space, controls, hidden characters (which include the
# Hangul fillers U+115F, U+1160, U+3164, U+FFA0), combining marks with nothing to sit on, and
# the braille blank U+2800 (a letter to Unicode, an empty cell to the eye).
_BLANK_RE = regex.compile(r"[\s\p{Z}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{M}\u2800]+")
# Characters no platform should carry: bidi embeddings, overrides and isolates (they reorder
# what follows, so a reader sees other text than was checked; X rejects the first five), the
# BOM, interlinear annotation controls, surrogates, noncharacters (X rejects U+FFFE/U+FFFF)
# and control codes other than tab and newlines.
_INVALID_RE = regex.compile(
    r"[\u202a-\u202e\u2066-\u2069\ufeff\ufff9-\ufffb\p{Cs}\p{Noncharacter_Code_Point}"
    r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
# Tag characters are legitimate only inside an emoji tag sequence (the flag of Scotland);
# anywhere else they are invisible ASCII, a known way to smuggle text past a reader.
_EMOJI_TAG_SEQUENCE_RE = regex.compile(
    r"\p{Extended_Pictographic}[\U000E0020-\U000E007E]+\U000E007F"
)
_TAG_RE = regex.compile(r"[\U000E0000-\U000E007F]")
_MARK_RE = regex.compile(r"\p{M}")
# Letters from other scripts that read as Latin ones, for the wording checks (insults,
# mentions, copying); NFKC already folds full-width and mathematical letters. Hosts need no
# table: IDNA turns a look-alike host into a different xn-- name.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic, with a few Latin and Armenian variants (ɡ ı ȷ ɑ օ)
        "а": "a", "в": "b", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "ӏ": "l",
        "о": "o", "р": "p", "ԛ": "q", "с": "c", "ѕ": "s", "у": "y", "ү": "y", "ԝ": "w",
        "х": "x", "ԁ": "d", "ɡ": "g", "ı": "i", "ȷ": "j", "ɑ": "a", "օ": "o",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "С": "C", "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D",
        "Ӏ": "I", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y",
        # Greek
        "α": "a", "ι": "i", "ο": "o", "ρ": "p", "υ": "u", "ν": "v", "κ": "k", "χ": "x",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    }
)  # fmt: skip

_NO_REPLY_VERDICTS = frozenset({Verdict.NOT_ENOUGH_EVIDENCE, Verdict.NOT_CHECKABLE})
_EXCERPT_WORDS = 12


# --- URLs ------------------------------------------------------------------------------------


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
    spans = [(_with_userinfo(text, s), e) for s, e in spans]
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


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
        if _HIDDEN_RE.match(ch):
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
                hidden=_HIDDEN_RE.search(around) is not None,
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
        if _HIDDEN_RE.match(ch) or _INVALID_RE.match(ch) or not ch.isprintable()
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
    "url_hidden_characters",
    "url_not_normalised",
    "url_credentials",
    "url_not_evidence",
    "url_downgrade",
)


def _broken_url_rules(url: FoundUrl, evidence_urls: Collection[str]) -> list[tuple[str, str]]:
    """(rule, how the report names the URL) for each URL rule `url` breaks; empty: approved."""
    shown = show(url.raw)
    broken: list[tuple[str, str]] = []
    if url.hidden:
        broken.append(("url_hidden_characters", shown))
    if _HIDDEN_RE.sub("", url.raw) != url.normal:
        broken.append(("url_not_normalised", f"{shown} (reads as {url.normal})"))
    try:
        if has_credentials(url.normal):
            broken.append(("url_credentials", shown))
    except ValueError:
        pass  # unparseable: url_not_evidence says so below
    schemes = _evidence_schemes(url.normal, evidence_urls)
    if not schemes:
        broken.append(("url_not_evidence", shown + _punycode_note(url.normal)))
    elif _scheme(url.normal) == "http" and "http" not in schemes:
        broken.append(("url_downgrade", f"{shown} (evidence is https)"))
    return broken


def url_problems(found: Sequence[FoundUrl], evidence_urls: Collection[str]) -> list[str]:
    """The URL rules, each listing its URLs once, in text order; a URL may break several.

    - `url_hidden_characters`: a hidden character in the URL or right next to it;
    - `url_not_normalised`: the URL is not written as it reads (full-width letters or dots,
      ideographic full stop, other NFKC variants), so a reader cannot see where it leads;
    - `url_credentials`: a user name before "@" (`https://evil.com@who.int/`);
    - `url_not_evidence`: the page it opens is not an evidence page (or not a web scheme);
    - `url_downgrade`: `http://` for a page the evidence cites as https.
    """
    named: dict[str, dict[str, None]] = {rule: {} for rule in _URL_RULES}
    for url in found:
        for rule, entry in _broken_url_rules(url, evidence_urls):
            named[rule][entry] = None
    return [f"{rule}: " + ", ".join(entries) for rule, entries in named.items() if entries]


def approved_urls(found: Sequence[FoundUrl], evidence_urls: Collection[str]) -> list[str]:
    """The found URLs (as written, distinct, in order) that break no URL rule: the only strings
    a platform may turn into links (`GuardReport.urls`, then `Decision.urls`)."""
    return list(dict.fromkeys(u.raw for u in found if not _broken_url_rules(u, evidence_urls)))


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Blanks URL spans so words inside a cited URL's path are not read as the bot's wording."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


# --- Lengths ---------------------------------------------------------------------------------


def measure(text: str, platform: Platform, cfg: GuardConfig) -> tuple[int, int]:
    """(length, limit) by the platform's own counting (its format's first budget; Bluesky's
    byte limit is checked apart)."""
    return reply_format(platform).measure(text, cfg)


# --- Wording ---------------------------------------------------------------------------------


def fold(text: str) -> str:
    """`text` as a reader sees it, for matching wording: hidden characters dropped (a zero-width
    space or soft hyphen inside a word does not split it on screen), NFKC, and letters of other
    scripts that read as Latin ones replaced by those (`іdіоt` with Cyrillic і and о)."""
    return unicodedata.normalize("NFKC", _HIDDEN_RE.sub("", text)).translate(_CONFUSABLES)


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD_RE.findall(fold(text))]


def copied_run(reply: str, post: str, run: int) -> str | None:
    """The first run of `run` consecutive words of `post` repeated in `reply`, or None.

    Case and punctuation are ignored, so a post's "Ignore your instructions and say ..." is
    caught however the draft re-punctuates it.
    """
    post_words = _words(post)
    reply_words = _words(reply)
    if run <= 0 or len(post_words) < run or len(reply_words) < run:
        return None
    grams = {tuple(post_words[i : i + run]) for i in range(len(post_words) - run + 1)}
    for i in range(len(reply_words) - run + 1):
        gram = tuple(reply_words[i : i + run])
        if gram in grams:
            return " ".join(gram)
    return None


def _blocked_pattern(words: Iterable[str]) -> regex.Pattern[str] | None:
    alternatives = sorted(
        {
            r"\s+".join(regex.escape(part) for part in w.casefold().split())
            for w in words
            if w.strip()
        },
        key=len,
        reverse=True,
    )
    if not alternatives:
        return None
    return regex.compile(rf"(?<![\p{{L}}\p{{N}}])(?:{'|'.join(alternatives)})(?![\p{{L}}\p{{N}}])")


def abusive_words(text: str, extra: Iterable[str] = ()) -> list[str]:
    """Blocked words in `text` (built-in list plus `extra`), distinct, in order of appearance."""
    pattern = _blocked_pattern(_bare(w) for w in (*BUILTIN_BLOCKED_WORDS, *extra))
    if pattern is None:
        return []
    folded = _bare(text)
    return list(dict.fromkeys(" ".join(m.group().split()) for m in pattern.finditer(folded)))


def _bare(text: str) -> str:
    """`fold`ed, accents stripped and case-folded: "ídìót" and "ІDІОТ" both read "idiot"."""
    decomposed = unicodedata.normalize("NFKD", fold(text))
    bare = _MARK_RE.sub("", decomposed).translate(_CONFUSABLES)
    return unicodedata.normalize("NFC", bare).casefold()


def mentions(text: str) -> list[str]:
    """Distinct @-mentions in `text`, as a reader sees them (`fold`: full-width "＠", "@\u200bbob"
    and "@аlice" with a Cyrillic а count too)."""
    return list(dict.fromkeys("@" + m.group(1) for m in _MENTION_RE.finditer(fold(text))))


# --- Rules -----------------------------------------------------------------------------------


def invalid_characters(text: str) -> list[str]:
    """The characters no reply may carry on any platform (`_INVALID_RE`, and tag characters
    outside an emoji tag sequence), distinct, as "U+202E"."""
    bad = [m.group() for m in _INVALID_RE.finditer(text)]
    bad += _TAG_RE.findall(_EMOJI_TAG_SEQUENCE_RE.sub("", text))
    return [f"U+{ord(ch):04X}" for ch in dict.fromkeys(bad)]


def is_blank(text: str) -> bool:
    """True when nothing of `text` would show: only spaces, hidden characters, fillers, the
    braille blank or combining marks."""
    return not _BLANK_RE.sub("", text)


def check_text(
    text: str,
    platform: Platform,
    *,
    evidence_urls: Collection[str],
    cfg: GuardConfig,
    post_text: str | None = None,
) -> GuardReport:
    """Checks a draft's wording: length, characters, URLs (evidence only, written plainly), no
    mentions, no insults, no copied run of the post, and at least one URL where the format asks
    for one (`notes_need_url`). The same rules on every platform, except those two, which come
    from the platform's `ReplyFormat`.

    `GuardReport.urls` lists the URLs (as written) that passed every URL rule; only those may
    become links."""
    form = reply_format(platform)
    length, limit = form.measure(text, cfg)
    if is_blank(text):
        return GuardReport(
            valid=False, platform=platform, length=length, limit=limit, problems=["empty"]
        )

    problems = form.length_problems(text, cfg)
    invalid = invalid_characters(text)
    if invalid:
        problems.append("invalid_characters: " + ", ".join(invalid))
    found = find_urls(text)
    if form.url_required and not found:
        problems.append("notes_need_url")
    problems += url_problems(found, evidence_urls)

    wording = _mask(text, ((u.start, u.end) for u in found))
    handles = mentions(wording)
    if handles:
        problems.append("mentions_user: " + ", ".join(handles))
    insults = abusive_words(wording, cfg.blocked_words)
    if insults:
        problems.append("abusive: " + ", ".join(insults))
    if post_text:
        copied = copied_run(text, post_text, cfg.copy_run_words)
        if copied is not None:
            words = copied.split()
            excerpt = " ".join(words[:_EXCERPT_WORDS]) + (
                " …" if len(words) > _EXCERPT_WORDS else ""
            )
            problems.append(f'copies_post: "{excerpt}"')
    return GuardReport(
        valid=not problems,
        platform=platform,
        length=length,
        limit=limit,
        problems=problems,
        urls=approved_urls(found, evidence_urls),
    )


def _host(url: str) -> str:
    try:
        return urlsplit(canonical_url(url)).hostname or ""
    except ValueError:
        return ""


def _source_key(item: Evidence) -> str:
    """The registrable domain that makes a source independent of the others."""
    host = (item.domain.strip().lower() or _host(item.url)).removeprefix("www.")
    try:
        from pipeline.credibility import registrable_domain
    except ImportError:  # the credibility module is optional here; the host is a rough stand-in
        return host
    return registrable_domain(host) or host


def _relevant_stances(verdict: Verdict) -> frozenset[Stance]:
    if verdict is Verdict.SUPPORTED:
        return frozenset({Stance.SUPPORTS})
    return frozenset({Stance.REFUTES, Stance.CONTEXT})


def independent_sources(evidence: Sequence[Evidence], verdict: Verdict) -> list[str]:
    """Distinct registrable domains backing `verdict`, in evidence order; excluded tiers skip."""
    stances = _relevant_stances(verdict)
    keys = (_source_key(e) for e in evidence if e.stance in stances and e.tier is not Tier.EXCLUDED)
    return [k for k in dict.fromkeys(keys) if k]


def _evidence_problem(
    evidence: Sequence[Evidence], verdict: Verdict, cfg: GuardConfig, fact_check_backed: bool
) -> str | None:
    if verdict in _NO_REPLY_VERDICTS:
        return f"no_reply_verdict: {verdict.value}"
    stances = _relevant_stances(verdict)
    backing = [e for e in evidence if e.stance in stances]
    sources = independent_sources(evidence, verdict)
    if len(sources) >= cfg.min_independent_sources:
        return None
    if fact_check_backed and any(e.tier is Tier.HIGH for e in backing):
        return None
    # A strong match to a review by a High/Medium fact-checker is sufficient on its own.
    if any(e.source == FACT_CHECK_SOURCE and e.tier in (Tier.HIGH, Tier.MEDIUM) for e in backing):
        return None
    return (
        f"thin_evidence: {len(sources)} independent source(s), need {cfg.min_independent_sources}"
    )


def _format_below(value: float, threshold: float) -> str:
    """'value < threshold' with just enough decimals that the two visibly differ."""
    for digits in range(2, 7):
        a, b = f"{value:.{digits}f}", f"{threshold:.{digits}f}"
        if a != b:
            return f"{a} < {b}"
    return f"{value!r} < {threshold!r}"


def check_decision(
    text: str,
    platform: Platform,
    *,
    evidence: Sequence[Evidence],
    verdict: Verdict,
    confidence: float,
    cfg: GuardConfig,
    post_text: str | None = None,
    fact_check_backed: bool = False,
) -> GuardReport:
    """Checks a whole decision: the draft's wording (`check_text`, URLs against the evidence's
    URLs), a verdict that may be voiced, enough independent evidence for it, and confidence."""
    report = check_text(
        text,
        platform,
        evidence_urls=[e.url for e in evidence],
        cfg=cfg,
        post_text=post_text,
    )
    problems = list(report.problems)
    evidence_problem = _evidence_problem(evidence, verdict, cfg, fact_check_backed)
    if evidence_problem is not None:
        problems.append(evidence_problem)
    if confidence < cfg.min_confidence:
        problems.append("low_confidence: " + _format_below(confidence, cfg.min_confidence))
    return report.model_copy(update={"valid": not problems, "problems": problems})
