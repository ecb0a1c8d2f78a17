"""The reply guard: hard, LLM-free rules a draft must pass before it can become a public reply.

Every rule reports a short problem string whose prefix (before the colon) is stable, so reports
can count failures by rule: `empty`, `too_long`, `invalid_characters`, `notes_need_url`,
`url_not_evidence`, `mentions_user`, `abusive`, `copies_post`, and, for whole decisions,
`no_reply_verdict`, `thin_evidence`, `low_confidence`.

Lengths are measured the way each platform counts:

- X: twitter-text v3 weighted length (`twitter_text.parse_tweet`), corrected so that every emoji
  sequence weighs 2 even when it is newer than the package's Unicode 12 emoji table.
- Bluesky: grapheme clusters (`regex` `\\X`) and UTF-8 bytes of the text as it will be sent.
- X Community Notes: code points after NFC with every URL counted as one character.

URLs are found with twitter-text's own extractor (so the guard and the X counter agree) and a
stricter backstop that also catches what twitter-text skips (unknown TLDs, IP hosts, ports,
look-alike hosts such as `who.int.evil.example`): the guard must see every link a reader could
follow, not only the ones X would turn into t.co links.
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Collection, Iterable, Sequence
from urllib.parse import urlsplit

import regex

from pipeline.config import GuardConfig
from pipeline.records import (
    FACT_CHECK_SOURCE,
    Evidence,
    GuardReport,
    Platform,
    Stance,
    Tier,
    Verdict,
)
from pipeline.urls import canonical_url, same_page

with warnings.catch_warnings():
    # twitter-text imports pkg_resources at import time; its deprecation warning is not ours.
    warnings.simplefilter("ignore", category=UserWarning)
    warnings.simplefilter("ignore", category=DeprecationWarning)
    from twitter_text import extract_urls_with_indices, parse_tweet
    from twitter_text.has_invalid_characters import has_invalid_characters

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
_HOST_CHARS_RE = regex.compile(r"[A-Za-z0-9.\-]")
_TRAILING_PUNCT = ".,;:!?'*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
# Backstops for links twitter-text does not extract: any scheme://..., bare host/path with an
# alphabetic TLD twitter-text may not know (also after "user@", which twitter-text skips), "www."
# hosts, and IPv4 or localhost with a port or path.
_BACKSTOP_RE = regex.compile(
    rf"""
    (?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[A-Za-z0-9\[][{_URL_CHAR}]*
    | (?<![A-Za-z0-9._%+\-/])(?:{_LABEL}\.)+[A-Za-z]{{2,63}}(?::\d{{1,5}})?/[{_URL_CHAR}]*
    | (?<![A-Za-z0-9@._%+\-/])www\.(?:{_LABEL}\.)*{_LABEL}[{_URL_CHAR}]*
    | (?<![A-Za-z0-9@._%+\-/])(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?::\d{{1,5}}|(?=/))[{_URL_CHAR}]*
    | (?<![A-Za-z0-9@._%+\-/])localhost(?::\d{{1,5}}|(?=/))[{_URL_CHAR}]*
    """,
    regex.VERBOSE | regex.IGNORECASE,
)

# One emoji sequence (UTS #51): flag pair, keycap, or pictograph with optional presentation
# selector / skin tone, tag sequence and ZWJ continuations. Each weighs 2 on X.
_EMOJI_SEQUENCE_RE = regex.compile(
    r"\p{Regional_Indicator}{2}"
    r"|[0-9#*]\uFE0F?\u20E3"
    r"|\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?"
    r"(?:[\U000E0020-\U000E007E]+\U000E007F)?"
    r"(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?)*"
)
# An emoji twitter-text's table knows and weighs 2; it stands in for newer sequences.
_KNOWN_EMOJI = "\U0001f637"

# Mentions as X and Bluesky parse them ("@name", "@name.bsky.social"); e-mail addresses are not.
_MENTION_RE = regex.compile(r"(?<![A-Za-z0-9_@])@([A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)")
# CJK scripts are written without spaces, so each character counts as one word there.
_WORD_RE = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}]"
    r"|(?:(?![\p{Han}\p{Hiragana}\p{Katakana}])[\p{L}\p{N}\p{M}])+"
)
_INVISIBLE_RE = regex.compile(r"[\s\p{Z}\p{Cc}\p{Cf}]+")

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


def _twitter_spans(text: str) -> list[tuple[int, int]]:
    return [(e["indices"][0], e["indices"][1]) for e in extract_urls_with_indices(text)]


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


def _url_spans(text: str) -> list[tuple[int, int]]:
    """Spans of every URL in `text` (already NFC), in text order, overlapping matches merged."""
    spans = [_widen(text, s, e) for s, e in _twitter_spans(text)]
    for match in _BACKSTOP_RE.finditer(text):
        end = _trim_end(text, match.start(), match.end(), match.start())
        if end > match.start():
            spans.append((match.start(), end))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def urls_in(text: str) -> list[str]:
    """Every URL in `text`, with or without scheme, in text order (repeats kept).

    twitter-text's extractor gives the URLs X itself links; each is widened to the whole
    URL-like token, and a backstop adds links it skips (unknown TLDs, IPs, other schemes).
    The text is NFC-normalised first, as the counters do.
    """
    nfc = unicodedata.normalize("NFC", text)
    return [nfc[s:e] for s, e in _url_spans(nfc)]


def _is_evidence(url: str, evidence_urls: Collection[str]) -> bool:
    if "://" in url and url.split("://", 1)[0].lower() not in _WEB_SCHEMES:
        return False
    for known in evidence_urls:
        try:
            if same_page(url, known):
                return True
        except ValueError:  # unparseable (e.g. a bad port): cannot be shown to be evidence
            continue
    return False


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Blanks URL spans so words inside a cited URL's path are not read as the bot's wording."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


# --- Lengths ---------------------------------------------------------------------------------


def x_weighted_length(text: str) -> int:
    """twitter-text v3 weighted length with every emoji sequence weighing 2.

    parse_tweet does the counting (NFC, URLs 23, CJK 2, Latin 1); its emoji table stops at
    Unicode 12, so newer sequences (e.g. "🐦‍🔥", "🫱🏻‍🫲🏿") would be weighed part by part.
    Each emoji sequence outside a URL is replaced by one emoji the table knows, which weighs 2.
    """
    nfc = unicodedata.normalize("NFC", text)
    url_spans = _twitter_spans(nfc)
    pieces: list[str] = []
    pos = 0
    for match in _EMOJI_SEQUENCE_RE.finditer(nfc):
        if any(s < match.end() and match.start() < e for s, e in url_spans):
            continue
        pieces.append(nfc[pos : match.start()])
        pieces.append(_KNOWN_EMOJI)
        pos = match.end()
    pieces.append(nfc[pos:])
    return int(parse_tweet("".join(pieces)).weightedLength)


def bluesky_lengths(text: str) -> tuple[int, int]:
    """(grapheme clusters, UTF-8 bytes) of the text exactly as it will be sent (no NFC)."""
    return len(regex.findall(r"\X", text)), len(text.encode("utf-8"))


def notes_length(text: str) -> int:
    """Community Notes length: code points after NFC, each URL (as X links it) counting one."""
    nfc = unicodedata.normalize("NFC", text)
    return len(nfc) - sum(e - s - 1 for s, e in _twitter_spans(nfc))


def notes_lengths(text: str) -> tuple[int, int]:
    """(URL-as-one length, twitter-weighted length) of a note, for reports.

    The documentation says a URL counts as one character; only that count decides validity,
    the twitter-weighted one (URL = 23) is reported so a mismatch on the platform is visible.
    """
    return notes_length(text), x_weighted_length(text)


def measure(text: str, platform: Platform, cfg: GuardConfig) -> tuple[int, int]:
    """(length, limit) by the platform's own counting; Bluesky's byte limit is checked apart."""
    if platform is Platform.X:
        return x_weighted_length(text), cfg.x_limit
    if platform is Platform.BLUESKY:
        return bluesky_lengths(text)[0], cfg.bluesky_graphemes
    return notes_length(text), cfg.notes_limit


# --- Wording ---------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD_RE.findall(unicodedata.normalize("NFKC", text))]


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
    pattern = _blocked_pattern((*BUILTIN_BLOCKED_WORDS, *extra))
    if pattern is None:
        return []
    folded = unicodedata.normalize("NFKC", text).casefold()
    return list(dict.fromkeys(" ".join(m.group().split()) for m in pattern.finditer(folded)))


def mentions(text: str) -> list[str]:
    """Distinct @-mentions in `text` (NFKC, so full-width "＠" counts too)."""
    folded = unicodedata.normalize("NFKC", text)
    return list(dict.fromkeys("@" + m.group(1) for m in _MENTION_RE.finditer(folded)))


# --- Rules -----------------------------------------------------------------------------------


def _length_problems(text: str, platform: Platform, cfg: GuardConfig) -> list[str]:
    if platform is Platform.BLUESKY:
        graphemes, size = bluesky_lengths(text)
        if graphemes > cfg.bluesky_graphemes or size > cfg.bluesky_bytes:
            return [
                f"too_long: {graphemes}/{cfg.bluesky_graphemes} graphemes, "
                f"{size}/{cfg.bluesky_bytes} bytes"
            ]
        return []
    length, limit = measure(text, platform, cfg)
    problems = [f"too_long: {length} > {limit}"] if length > limit else []
    if has_invalid_characters(unicodedata.normalize("NFC", text)):
        problems.append("invalid_characters: X rejects U+FFFE, U+FEFF, U+FFFF and bidi overrides")
    return problems


def check_text(
    text: str,
    platform: Platform,
    *,
    evidence_urls: Collection[str],
    cfg: GuardConfig,
    post_text: str | None = None,
) -> GuardReport:
    """Checks a draft's wording: length, URLs from evidence only, no mentions, no insults, no
    copied run of the post, and for notes at least one URL."""
    length, limit = measure(text, platform, cfg)
    if not _INVISIBLE_RE.sub("", text):
        return GuardReport(
            valid=False, platform=platform, length=length, limit=limit, problems=["empty"]
        )

    problems = _length_problems(text, platform, cfg)
    nfc = unicodedata.normalize("NFC", text)
    spans = _url_spans(nfc)
    urls = [nfc[s:e] for s, e in spans]
    if platform is Platform.NOTES and not urls:
        problems.append("notes_need_url")
    foreign = [u for u in dict.fromkeys(urls) if not _is_evidence(u, evidence_urls)]
    if foreign:
        problems.append("url_not_evidence: " + ", ".join(foreign))

    wording = _mask(nfc, spans)
    handles = mentions(wording)
    if handles:
        problems.append("mentions_user: " + ", ".join(handles))
    insults = abusive_words(wording, cfg.blocked_words)
    if insults:
        problems.append("abusive: " + ", ".join(insults))
    if post_text:
        copied = copied_run(nfc, post_text, cfg.copy_run_words)
        if copied is not None:
            words = copied.split()
            excerpt = " ".join(words[:_EXCERPT_WORDS]) + (
                " …" if len(words) > _EXCERPT_WORDS else ""
            )
            problems.append(f'copies_post: "{excerpt}"')
    return GuardReport(
        valid=not problems, platform=platform, length=length, limit=limit, problems=problems
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
