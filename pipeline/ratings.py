"""Fact-check ratings: what a publisher's own words ("Pants on Fire", "Falso", "needs context",
a 1-5 scale) mean, normalised to false / misleading / true / mixed / unrated.

The patterns are ordered: the first match wins, so specific phrases come before the bare words
they contain.
"""

from __future__ import annotations

import math
import re
import unicodedata
from enum import StrEnum

from pipeline.records import Verdict


class Rating(StrEnum):
    FALSE = "false"
    MISLEADING = "misleading"
    TRUE = "true"
    MIXED = "mixed"
    UNRATED = "unrated"


# First match wins, so the specific phrases ("not true", "partly false", "mostly false",
# "incorrect") come before the bare words they contain.
_RATING_PATTERNS: tuple[tuple[str, Rating], ...] = (
    # misleading: true in part, or needs context
    (
        r"half[ -]?true|partly (?:false|true)|partially (?:false|true|correct)|mostly false"
        r"|misleading|missing context|lacks? context|needs? context|out of context"
        r"|exaggerat\w*|cherry[ -]?pick\w*|distort\w*|miscaptioned|misattributed|outdated"
        r"|one pinocchio|two pinocchios"
        r"|three pinocchios|1 pinocchio|[23] pinocchios|enganos[oa]|engañoso|enganoso"
        r"|sin contexto|fuera de contexto|sacado de contexto|descontextualizad[oa]"
        r"|parcialmente (?:falso|verdadero|cierto)|medio verdad\w*|impreciso"
        r"|trompeu(?:r|se)|en partie (?:faux|vrai)|partiellement (?:faux|vrai)|manque de contexte"
        r"|hors contexte|irrefuhrend|irreführend|teilweise (?:falsch|richtig)|fehlender kontext"
        r"|ohne kontext|fuorviante|parzialmente (?:falso|vero)|misleidend|deels onwaar",
        Rating.MISLEADING,
    ),
    (r"\bmixture\b|\bmixed\b|\bmixto\b|\bmixte\b|\bmisto\b|\bgemischt\b", Rating.MIXED),
    # false, including the negated forms of "true" and "correct"
    (
        r"\bnot true\b|\buntrue\b|\bincorrect\b|\bnot correct\b|\bfalse\b|\bfake\b"
        r"|pants on fire|four pinocchios|4 pinocchios|\bhoax\b|\bfabricated\b|\bbaseless\b"
        r"|\bwrong\b|\bscam\b|\bfaux\b|\bfausse\b|\bfalso\b|\bfalsa\b|\bfalsch\b|\bbulo\b"
        r"|\bonwaar\b|\bsahte\b|\bfałsz\b|\bnieprawda\b|\bnepravda\b|\bfalsk\b",
        Rating.FALSE,
    ),
    (
        r"\btrue\b|\bcorrect\b|\baccurate\b|\bverdadero\b|\bverdadeiro\b|\bcierto\b|\bvrai\b"
        r"|\bwahr\b|\brichtig\b|\bvero\b|\bcorrecto\b|\bjuist\b|\bwaar\b|\bdoğru\b"
        r"|geppetto checkmark",
        Rating.TRUE,
    ),
)
_RATING_RES = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _RATING_PATTERNS)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().replace("-", " ").split())


def rating_from_text(text: str) -> Rating:
    """The normalised rating a textual verdict names, in English, Spanish, Portuguese, French,
    German, Italian, Dutch and a few others; UNRATED when none is recognised."""
    folded = _fold(text)
    if not folded:
        return Rating.UNRATED
    for pattern, rating in _RATING_RES:
        if pattern.search(folded):
            return rating
    return Rating.UNRATED


def _number(value: object) -> float | None:
    """A finite number from markup, else None (an integer too big for a float, "nan",
    "1e999" and such are no rating)."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str) and len(value) <= 64:
            number = float(value.strip())
        else:
            return None
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def rating_from_scale(value: object, best: object, worst: object) -> Rating:
    """A numeric rating placed on its scale: the bottom fifth is false, up to 45% misleading,
    the middle mixed, the upper half true (1–5: 1 false, 2 misleading, 3 mixed, 4–5 true).
    UNRATED unless value, best and worst are all numbers and the value lies on the scale."""
    v, b, w = _number(value), _number(best), _number(worst)
    if v is None or b is None or w is None or b == w:
        return Rating.UNRATED
    position = (v - w) / (b - w)
    if not 0.0 <= position <= 1.0:
        return Rating.UNRATED  # e.g. -1, which some publishers use for "no rating"
    if position < 0.2:
        return Rating.FALSE
    if position < 0.45:
        return Rating.MISLEADING
    if position <= 0.55:
        return Rating.MIXED
    return Rating.TRUE


def normalise_rating(
    text: str | None, value: object = None, best: object = None, worst: object = None
) -> Rating:
    """The text decides when it names a verdict (it is what the publisher wrote for readers);
    otherwise the number on its scale; otherwise UNRATED."""
    from_text = rating_from_text(text or "")
    if from_text is not Rating.UNRATED:
        return from_text
    return rating_from_scale(value, best, worst)


def rating_for_verdict(verdict: Verdict) -> Rating:
    return {
        Verdict.REFUTED: Rating.FALSE,
        Verdict.MISLEADING: Rating.MISLEADING,
        Verdict.SUPPORTED: Rating.TRUE,
    }.get(verdict, Rating.UNRATED)
