"""Ordinary English words, to tell a shouted word from a shouted name
(`pipeline.claims.polarity.names`).

"BUT OF COURSE, Obama endorses…" shouts "COURSE"; "VINDMAN OUT AT NSC" shouts a name, a word
and an acronym. A word in capitals is an ordinary word when WordNet writes it in lower case
only and SemCor attests it (`pipeline/data/common_words_wordnet.txt`, made by
`tools/wordnet_common_words.py`); "TRUMP", "OMAR" and "NSA" stay names.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

# (suffix, replacement), so that "VIEWS", "BANNED" and "SHARES" meet "view", "ban", "share".
_ENDINGS = (
    ("s", ""),
    ("es", ""),
    ("ies", "y"),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
)


@cache
def _words() -> frozenset[str]:
    source = resources.files("pipeline.data").joinpath("common_words_wordnet.txt")
    lines = source.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def ordinary(word: str) -> bool:
    """Whether the lower-case `word` (or the lemma it is a form of) is an ordinary word."""
    words = _words()
    if word in words:
        return True
    for suffix, replacement in _ENDINGS:
        stem = word.removesuffix(suffix)
        if stem == word or len(stem) < 2:
            continue
        if stem + replacement in words:
            return True
        # A doubled final consonant before -ed/-ing ("shipped", "shopping").
        doubled = suffix in ("ed", "ing") and len(stem) >= 3 and stem[-1] == stem[-2]
        if doubled and stem[:-1] in words:
            return True
    return False
