"""Fact-check ratings: what a publisher's own words ("Pants on Fire", "Falso", "needs context",
a 1-5 scale) mean, normalised to false / misleading / true / mixed / unrated.

A rating text is read in three steps: the publishers' scales in `pipeline/data/ratings.toml`
(the whole text, then its first clause), then the patterns below for free wording ("The claim
is misleading because ..."), then UNRATED. The patterns are ordered: the first match wins, so
specific phrases come before the bare words they contain. `known_rating_text` tells a text
the table or the patterns know from one nobody mapped, which `factnote claims import` lists.
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources

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
        r"half[ -]?true|barely true|partly (?:false|true)|partially (?:false|true|correct)"
        r"|mostly false"
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
        r"|pants on fire|\brefuted?\b|four pinocchios|4 pinocchios|\bhoax\b|\bfabricated\b"
        r"|\bbaseless\b"
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


_MARKS = {"Mn", "Mc", "Me"}
_CLAUSE_END = re.compile(r"[.:!;|(\[\u2013\u2014]| - ")


def table_key(text: str) -> str:
    """A rating text as the table keys it: case, accents and punctuation folded away."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    plain = "".join(c for c in decomposed if unicodedata.category(c) not in _MARKS)
    return " ".join(re.sub(r"[^\w]+|_", " ", plain).split())


@dataclass(frozen=True)
class RatingTable:
    """Publishers' rating scales: scale name → {folded rating text → rating}."""

    scales: Mapping[str, Mapping[str, Rating]]

    @property
    def entries(self) -> dict[str, Rating]:
        return {text: rating for scale in self.scales.values() for text, rating in scale.items()}

    def lookup(self, text: str, extra: Mapping[str, Rating] | None = None) -> Rating | None:
        """The rating of the whole text, else of its first clause; None when neither is in
        the table (nor in `extra`, a deployer's own mapping, which wins)."""
        entries = {**self.entries, **{table_key(k): v for k, v in (extra or {}).items()}}
        whole = table_key(text)
        if whole in entries:
            return entries[whole]
        head = table_key(_CLAUSE_END.split(text, maxsplit=1)[0])
        return entries.get(head) if head else None

    @classmethod
    def from_toml(cls, text: str) -> RatingTable:
        data = tomllib.loads(text)
        scales: dict[str, dict[str, Rating]] = {}
        for name, scale in data.items():
            ratings = scale.get("ratings") if isinstance(scale, dict) else None
            if not isinstance(ratings, dict):
                raise ValueError(f"rating scale {name!r} has no ratings table")
            scales[name] = {table_key(k): Rating(v) for k, v in ratings.items()}
        return cls(scales)


@cache
def default_table() -> RatingTable:
    """The bundled table, `pipeline/data/ratings.toml`."""
    source = resources.files("pipeline.data").joinpath("ratings.toml")
    return RatingTable.from_toml(source.read_text(encoding="utf-8"))


def _from_patterns(text: str) -> Rating | None:
    folded = _fold(text)
    for pattern, rating in _RATING_RES:
        if pattern.search(folded):
            return rating
    return None


def rating_from_text(text: str, extra: Mapping[str, Rating] | None = None) -> Rating:
    """The normalised rating a textual verdict names, in English, Spanish, Portuguese, French,
    German, Italian, Dutch and a few others; UNRATED when none is recognised. `extra` maps
    further texts (a deployer's `claims.rating_map`) and wins over the bundled table."""
    if not text.strip():
        return Rating.UNRATED
    found = default_table().lookup(text, extra)
    if found is None:
        found = _from_patterns(text)
    return Rating.UNRATED if found is None else found


def known_rating_text(text: str, extra: Mapping[str, Rating] | None = None) -> bool:
    """Whether the table, `extra` or the patterns know `text` (a known text may still mean
    UNRATED: "Satire", "Unproven"). An empty text is no rating text and counts as known."""
    if not text.strip():
        return True
    return default_table().lookup(text, extra) is not None or _from_patterns(text) is not None


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
    text: str | None,
    value: object = None,
    best: object = None,
    worst: object = None,
    *,
    extra: Mapping[str, Rating] | None = None,
) -> Rating:
    """The text decides when it names a verdict (it is what the publisher wrote for readers);
    otherwise the number on its scale; otherwise UNRATED."""
    from_text = rating_from_text(text or "", extra)
    if from_text is not Rating.UNRATED:
        return from_text
    return rating_from_scale(value, best, worst)


def rating_for_verdict(verdict: Verdict) -> Rating:
    return {
        Verdict.REFUTED: Rating.FALSE,
        Verdict.MISLEADING: Rating.MISLEADING,
        Verdict.SUPPORTED: Rating.TRUE,
    }.get(verdict, Rating.UNRATED)
