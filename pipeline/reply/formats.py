"""Reply formats: what a reply on each platform may look like, in one registry.

`REPLY_FORMATS` holds one `ReplyFormat` per `Platform`: how its length is measured and the
limits it is measured against (read from `GuardConfig`), whether it needs a URL, and the rules
the writer is given. The guard (`measure`, `check_text`), the writer (`writing_rules`) and the
claims templates (`templated_reply`) read it; none of them names a platform. A platform with
counting rules of its own adds a `Platform` member and one entry here.

Lengths are measured the way each platform counts:

- X: twitter-text v3 weighted length (`twitter_text.parse_tweet`), corrected so that every emoji
  sequence weighs 2 even when it is newer than the package's Unicode 12 emoji table.
- Bluesky: grapheme clusters (`regex` `\\X`) and UTF-8 bytes of the text as it will be sent.
- X Community Notes: code points after NFC with every URL counted as one character.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import regex

from pipeline.config import GuardConfig
from pipeline.records import Platform, Problem, ProblemCode
from pipeline.web.x_links import twitter_text_module, x_url_spans

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


# --- Counting --------------------------------------------------------------------------------


def x_weighted_length(text: str) -> int:
    """twitter-text v3 weighted length with every emoji sequence weighing 2.

    parse_tweet does the counting (NFC, URLs 23, CJK 2, Latin 1); its emoji table stops at
    Unicode 12, so newer sequences (e.g. "🐦‍🔥", "🫱🏻‍🫲🏿") would be weighed part by part.
    Each emoji sequence outside a URL is replaced by one emoji the table knows, which weighs 2.
    """
    nfc = unicodedata.normalize("NFC", text)
    url_spans = x_url_spans(nfc)
    pieces: list[str] = []
    pos = 0
    for match in _EMOJI_SEQUENCE_RE.finditer(nfc):
        if any(s < match.end() and match.start() < e for s, e in url_spans):
            continue
        pieces.append(nfc[pos : match.start()])
        pieces.append(_KNOWN_EMOJI)
        pos = match.end()
    pieces.append(nfc[pos:])
    return int(twitter_text_module().parse_tweet("".join(pieces)).weightedLength)


def graphemes(text: str) -> int:
    """Grapheme clusters of the text exactly as it will be sent (no NFC)."""
    return len(regex.findall(r"\X", text))


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def bluesky_lengths(text: str) -> tuple[int, int]:
    """(grapheme clusters, UTF-8 bytes) of the text exactly as it will be sent (no NFC)."""
    return graphemes(text), utf8_bytes(text)


def notes_length(text: str) -> int:
    """Community Notes length: code points after NFC, each URL (as X links it) counting one."""
    nfc = unicodedata.normalize("NFC", text)
    return len(nfc) - sum(e - s - 1 for s, e in x_url_spans(nfc))


def notes_lengths(text: str) -> tuple[int, int]:
    """(URL-as-one length, twitter-weighted length) of a note, for reports.

    The documentation says a URL counts as one character; only that count decides validity,
    the twitter-weighted one (URL = 23) is reported so a mismatch on the platform is visible.
    """
    return notes_length(text), x_weighted_length(text)


# --- Formats ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """One length limit: how the text is counted and where the limit is configured."""

    count: Callable[[str], int]
    limit: Callable[[GuardConfig], int]
    unit: str = "characters"  # named in the problem when a format has several budgets


@dataclass(frozen=True)
class ReplyFormat:
    """What a reply on one platform may look like.

    `budgets[0]` is the length shown to people (`measure`, the guard report, the review app's
    meter); every budget must hold for the text to fit."""

    platform: Platform
    name: str  # in words, for people
    budgets: tuple[Budget, ...]
    # A reply without a URL fails (`no_source`). True for every platform: replies are posted
    # only for a voiced verdict (refuted, misleading, supported), which always has evidence to
    # cite; abstentions and opt-out acknowledgements are recorded, never posted as replies.
    url_required: bool
    prompt_rules: str  # the budget as the writer is told it
    # Community Notes wording: no hashtags, no "this post is false" boilerplate.
    note_wording: bool = False

    def measure(self, text: str, cfg: GuardConfig) -> tuple[int, int]:
        """(length, limit) by the first budget."""
        first = self.budgets[0]
        return first.count(text), first.limit(cfg)

    def length_problems(self, text: str, cfg: GuardConfig) -> list[Problem]:
        """The guard's `too_long` problem, or nothing. With one budget it reads
        "too_long: LENGTH > LIMIT"; with several, every count against its limit."""
        counts = [(b.count(text), b.limit(cfg), b.unit) for b in self.budgets]
        if all(length <= limit for length, limit, _ in counts):
            return []
        if len(counts) == 1:
            length, limit, _ = counts[0]
            return [Problem(code=ProblemCode.TOO_LONG, detail=f"{length} > {limit}")]
        detail = ", ".join(f"{n}/{limit} {unit}" for n, limit, unit in counts)
        return [Problem(code=ProblemCode.TOO_LONG, detail=detail)]

    def fits(self, text: str, cfg: GuardConfig) -> bool:
        return all(b.count(text) <= b.limit(cfg) for b in self.budgets)


REPLY_FORMATS: dict[Platform, ReplyFormat] = {
    f.platform: f
    for f in (
        ReplyFormat(
            platform=Platform.X,
            name="an X reply",
            budgets=(Budget(x_weighted_length, lambda cfg: cfg.x_limit),),
            url_required=True,
            prompt_rules=(
                "Platform: an X reply. Budget: at most 280 characters, where each URL counts as "
                "23 characters and CJK characters and emoji count double. Aim for 250. It must "
                "contain at least one URL."
            ),
        ),
        ReplyFormat(
            platform=Platform.BLUESKY,
            name="a Bluesky reply",
            budgets=(
                Budget(graphemes, lambda cfg: cfg.bluesky_graphemes, "graphemes"),
                Budget(utf8_bytes, lambda cfg: cfg.bluesky_bytes, "bytes"),
            ),
            url_required=True,
            prompt_rules=(
                "Platform: a Bluesky reply. Budget: at most 300 characters including full URLs. "
                "Aim for 270. It must contain at least one URL."
            ),
        ),
        ReplyFormat(
            platform=Platform.NOTES,
            name="an X Community Note",
            budgets=(Budget(notes_length, lambda cfg: cfg.notes_limit),),
            url_required=True,
            prompt_rules=(
                "Platform: an X Community Note. Budget: at most 280 characters, where each URL "
                "counts as 1 character. It must contain at least one URL. Neutral encyclopedic "
                'tone; do not address the author. No hashtags; do not open with "this post is '
                'false": state the correct fact and its source.'
            ),
            note_wording=True,
        ),
    )
}


def reply_format(platform: Platform) -> ReplyFormat:
    return REPLY_FORMATS[platform]
