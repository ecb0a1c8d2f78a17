"""The reply guard: hard, LLM-free rules a draft must pass before it can become a public reply.

Every broken rule is a `Problem` with a stable `ProblemCode` (written "code: detail"), so
reports can count failures by rule: `empty`, `too_long`, `invalid_characters`, `no_source`,
`notes_need_url`, `notes_hashtag`, `notes_boilerplate`, `notes_url_only` (notes only),
`url_hidden_characters`, `url_not_normalised`, `url_credentials`, `url_not_evidence`,
`url_downgrade`, `mentions_user`, `abusive`, `copies_post`, and, for whole decisions,
`no_reply_verdict`, `thin_evidence`, `low_confidence`. The rules are the same on every
platform; only the length counting differs, and notes need an http(s) source and plain note
wording: those come from the platform's `ReplyFormat` (`pipeline/reply/formats.py`), where lengths
are counted.

Every reply cites: a draft with no URL fails `no_source` on X, Bluesky and Community Notes
alike, and the writer is asked again as for the other rewritable problems. No decision is
exempt, because none needs to be: only a voiced verdict (refuted, misleading, supported)
becomes a reply, and it always has evidence; an abstention ("not enough evidence", "not
checkable", a guard refusal) and an opt-out ("stop") are recorded, never posted.

URLs are found, and judged by the URL rules, in `pipeline/web/links.py` (the one URL finder; its
names are re-exported here).

Wording rules (mentions, insults, copying) read the text as a reader sees it: hidden
characters dropped, NFKC, and Cyrillic/Greek letters that pass for Latin ones folded to those.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Sequence
from urllib.parse import urlsplit

import regex

from pipeline.config import GuardConfig
from pipeline.records import (
    Evidence,
    EvidenceSource,
    GuardReport,
    Platform,
    Problem,
    ProblemCode,
    Stance,
    Tier,
    Verdict,
)
from pipeline.reply.formats import bluesky_lengths as bluesky_lengths
from pipeline.reply.formats import notes_length as notes_length
from pipeline.reply.formats import notes_lengths as notes_lengths
from pipeline.reply.formats import reply_format
from pipeline.reply.formats import x_weighted_length as x_weighted_length
from pipeline.web.links import HIDDEN_RE, INVALID_RE, find_urls
from pipeline.web.links import FoundUrl as FoundUrl
from pipeline.web.links import approved_urls as approved_urls
from pipeline.web.links import show as show
from pipeline.web.links import url_problems as url_problems
from pipeline.web.links import urls_in as urls_in
from pipeline.web.urls import canonical_url

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
    return unicodedata.normalize("NFKC", HIDDEN_RE.sub("", text)).translate(_CONFUSABLES)


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
    """The characters no reply may carry on any platform (`INVALID_RE`, and tag characters
    outside an emoji tag sequence), distinct, as "U+202E"."""
    bad = [m.group() for m in INVALID_RE.finditer(text)]
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
    mentions, no insults, no copied run of the post, and at least one URL (`no_source`). The
    same rules on every platform, except length and note wording, which come from the
    platform's `ReplyFormat`.

    `GuardReport.urls` lists the URLs (as written) that passed every URL rule; only those may
    become links."""
    form = reply_format(platform)
    length, limit = form.measure(text, cfg)
    if is_blank(text):
        return GuardReport(
            valid=False,
            platform=platform,
            length=length,
            limit=limit,
            problems=[Problem(code=ProblemCode.EMPTY)],
        )

    problems = form.length_problems(text, cfg)
    invalid = invalid_characters(text)
    if invalid:
        problems.append(Problem(code=ProblemCode.INVALID_CHARACTERS, detail=", ".join(invalid)))
    found = find_urls(text)
    if form.url_required and not found:
        problems.append(Problem(code=ProblemCode.NO_SOURCE))
    elif form.note_wording:
        problems += note_url_problems(found)  # a source X accepts: written with http(s)://
    problems += url_problems(found, evidence_urls)

    wording = _mask(text, ((u.start, u.end) for u in found))
    handles = mentions(wording)
    if handles:
        problems.append(Problem(code=ProblemCode.MENTIONS_USER, detail=", ".join(handles)))
    if form.note_wording:
        problems += note_wording_problems(wording)
    insults = abusive_words(wording, cfg.blocked_words)
    if insults:
        problems.append(Problem(code=ProblemCode.ABUSIVE, detail=", ".join(insults)))
    if post_text:
        copied = copied_run(text, post_text, cfg.copy_run_words)
        if copied is not None:
            words = copied.split()
            excerpt = " ".join(words[:_EXCERPT_WORDS]) + (
                " …" if len(words) > _EXCERPT_WORDS else ""
            )
            problems.append(Problem(code=ProblemCode.COPIES_POST, detail=f'"{excerpt}"'))
    return GuardReport(
        valid=not problems,
        platform=platform,
        length=length,
        limit=limit,
        problems=problems,
        urls=approved_urls(found, evidence_urls),
    )


# A hashtag: "#" then a word with at least one letter ("#1" is a number, not a tag).
_HASHTAG_RE = regex.compile(r"(?<![\w&/])#(?=\w*\p{L})\w+")
# The verdict-as-preamble notes are rated down for ("This post is false", "This tweet is
# misleading"): a note states the correct fact and its source instead. Matched on the folded
# text, with any run of spaces between the words.
_BOILERPLATE_RE = regex.compile(
    r"\bthis\s+(?:post|tweet)\s+(?:is|was)\s+"
    r"(?:false|fake|misleading|untrue|incorrect|wrong)\b",
    regex.IGNORECASE,
)
# What X takes as a note's source: its NoteInfo.text pattern `https?://\S+` (both published
# specs), case and all; a bare host or `HTTPS://` is refused there.
_NOTE_SOURCE_RE = regex.compile(r"https?://\S")
# Something a reader can read besides the links: a letter or a digit.
_READABLE_RE = regex.compile(r"[\p{L}\p{N}]")


def note_url_problems(found: Sequence[FoundUrl]) -> list[Problem]:
    """A note needs a source X accepts: at least one URL written with http:// or https://."""
    if any(_NOTE_SOURCE_RE.match(u.raw) for u in found):
        return []
    bare = ", ".join(u.raw for u in found)
    detail = f"no http(s):// URL; X refuses {bare}" if bare else ""
    return [Problem(code=ProblemCode.NOTES_NEED_URL, detail=detail)]


def note_wording_problems(wording: str) -> list[Problem]:
    """Community Notes wording rules, on the text with its URLs masked, read as a reader sees
    it (`fold`: NFKC, so a full-width "＃" is "#" and a no-break space a space; hidden
    characters dropped; Cyrillic and Greek look-alikes as Latin): no hashtags, no "this post is
    false" boilerplate, and some words besides the links (a note of only URLs explains
    nothing)."""
    problems: list[Problem] = []
    folded = fold(wording)
    tags = _HASHTAG_RE.findall(folded)
    if tags:
        problems.append(Problem(code=ProblemCode.NOTES_HASHTAG, detail=", ".join(tags)))
    boilerplate = _BOILERPLATE_RE.search(folded)
    if boilerplate:
        said = " ".join(boilerplate[0].split())
        problems.append(Problem(code=ProblemCode.NOTES_BOILERPLATE, detail=f'"{said}"'))
    if not _READABLE_RE.search(folded):
        problems.append(Problem(code=ProblemCode.NOTES_URL_ONLY))
    return problems


def _host(url: str) -> str:
    try:
        return urlsplit(canonical_url(url)).hostname or ""
    except ValueError:
        return ""


def _source_key(item: Evidence) -> str:
    """The registrable domain that makes a source independent of the others."""
    host = (item.domain.strip().lower() or _host(item.url)).removeprefix("www.")
    # Imported here: tldextract's suffix list is only needed for whole decisions, not for the
    # wording checks `factnote guard` runs.
    from pipeline.web.domains import registrable_domain

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
) -> Problem | None:
    if verdict in _NO_REPLY_VERDICTS:
        return Problem(code=ProblemCode.NO_REPLY_VERDICT, detail=verdict.value)
    stances = _relevant_stances(verdict)
    backing = [e for e in evidence if e.stance in stances]
    sources = independent_sources(evidence, verdict)
    if len(sources) >= cfg.min_independent_sources:
        return None
    if fact_check_backed and any(e.tier is Tier.HIGH for e in backing):
        return None
    # A strong match to a review by a High/Medium fact-checker is sufficient on its own.
    if any(
        e.source == EvidenceSource.FACT_CHECK and e.tier in (Tier.HIGH, Tier.MEDIUM)
        for e in backing
    ):
        return None
    return Problem(
        code=ProblemCode.THIN_EVIDENCE,
        detail=f"{len(sources)} independent source(s), need {cfg.min_independent_sources}",
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
        problems.append(
            Problem(
                code=ProblemCode.LOW_CONFIDENCE,
                detail=_format_below(confidence, cfg.min_confidence),
            )
        )
    return report.model_copy(update={"valid": not problems, "problems": problems})
