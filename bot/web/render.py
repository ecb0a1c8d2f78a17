"""Template helpers for untrusted text: highlighting a quote inside page text, safe links,
and human-readable times. Everything is escaped first and only our own markup is added."""

from __future__ import annotations

import difflib
import re
from datetime import datetime
from urllib.parse import urlsplit

from markupsafe import Markup, escape


def highlight(text: str, quote: str) -> Markup:
    """`text` escaped, with every occurrence of `quote` (whitespace-insensitive, any case)
    wrapped in <mark>. Each piece is escaped before the tags are put around it."""
    words = quote.split()
    if not words:
        return escape(text)
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    pieces: list[Markup] = []
    pos = 0
    for match in pattern.finditer(text):
        pieces.append(escape(text[pos : match.start()]))
        pieces.append(Markup("<mark>{}</mark>").format(match.group()))
        pos = match.end()
    pieces.append(escape(text[pos:]))
    return Markup("").join(pieces)


_TOKENS = re.compile(r"\s+|\w+|[^\w\s]+")  # spaces, words, punctuation: each its own token


def word_diff(before: str, after: str) -> Markup:
    """`after` against `before`, word by word: removed words in <del>, added ones in <ins>,
    everything escaped first."""
    old = _TOKENS.findall(before or "")
    new = _TOKENS.findall(after or "")
    pieces: list[Markup] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            pieces.append(escape("".join(old[a1:a2])))
            continue
        if a2 > a1:
            pieces.append(Markup("<del>{}</del>").format("".join(old[a1:a2])))
        if b2 > b1:
            pieces.append(Markup("<ins>{}</ins>").format("".join(new[b1:b2])))
    return Markup("").join(pieces)


def contains_quote(text: str, quote: str) -> bool:
    words = quote.split()
    if not words:
        return False
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    return pattern.search(text) is not None


def safe_href(url: object) -> str:
    """Only web links become clickable; anything else (javascript:, data:) is neutralised."""
    value = str(url or "")
    try:
        scheme = urlsplit(value).scheme.lower()
    except ValueError:
        return "#"
    return value if scheme in ("http", "https") else "#"


def when(value: object) -> str:
    """A UTC time as "2026-11-29 09:00 UTC"; ISO strings from JSON columns are accepted."""
    if value is None or value == "":
        return "-"
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    if isinstance(moment, datetime):
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def day(value: object) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d")
    return "-" if value is None else str(value)
