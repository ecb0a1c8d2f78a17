"""Platform boilerplate in a post's text: what the platform or an embed adds, not what the post
says.

A tweet embedded in a web page ends with a signature, "— Name (@handle) Month D, YYYY", and may
carry `pic.twitter.com/…` media links (often glued to the last hashtag: `#Irpic.twitter.com/…`),
t.co and other shortened links, @handles, and hashtags (read as lower-case words). Read as
meaning, the signature's date is a "changed number" and its name or handle a "swapped entity":
on the CLEF CheckThat! 2022 Task 2A tweets the polarity rules demoted correct matches (exact
quotes scoring 1.000) for exactly these (issue 29). `strip_boilerplate` removes them before any
polarity, number or entity rule reads the text (the ranking keeps the signature's name:
`pipeline.claims.index`); `posted_date` reads the signature's date. Typographic apostrophes and
quotes are folded to straight ones, so that "I’ll" and "I'll" are the same word.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# "— Name (@handle) Month D, YYYY" at the end; the dash may be glued to the text or missing,
# the year cut short ("October 04, 19") and a closing quote left by a CSV export.
_SIGNATURE_RE = re.compile(
    r"\s*(?:[—–-]+\s*)?[^—–\n]{0,80}?\(@\w{1,15}\)\s*"
    rf"(?P<date>(?:{_MONTHS})\s+\d{{1,2}},\s*\d{{2,4}})?\s*[\"”]*\s*$"
)
_DATE_RE = re.compile(rf"(?P<month>{_MONTHS})\s+(?P<day>\d{{1,2}}),\s*(?P<year>\d{{4}})")
# Media and shortened links without a scheme, glued to a preceding word or not, and every
# URL with one (t.co included, also the "t. co/…" copy-paste breaks).
_LINK_RE = re.compile(
    r"(?:https?://|www\.)\S+"
    r"|(?:pic\.twitter\.com|t\.\s?co|bit\.ly|ow\.ly|buff\.ly|goo\.gl|tinyurl\.com|fb\.me"
    r"|youtu\.be|dlvr\.it|ift\.tt|trib\.al|lnkd\.in|instagr\.am|amzn\.to)/\S*",
    re.IGNORECASE,
)
_HASHTAG_RE = re.compile(r"#(\w+)")
_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])")
_HANDLE_RE = re.compile(r"(?<![\w@])@\w{1,15}\b")
_TYPOGRAPHIC = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})


def fold_quotes(text: str) -> str:
    """Curly apostrophes and quotes as straight ones ("I’ll" is "I'll")."""
    return text.translate(_TYPOGRAPHIC)


def strip_boilerplate(text: str, *, handles: bool = True) -> str:
    """`text` without an embed signature, links (media, shortened and any other) and, unless
    `handles` is False, @handles; quotes folded, whitespace collapsed. Text that is nothing but
    boilerplate comes back empty."""
    plain = _SIGNATURE_RE.sub(" ", text, count=1)
    plain = _LINK_RE.sub(" ", plain)
    # A hashtag is a tag, not a name: "#FeelTheBern" reads as "feel the bern".
    plain = _HASHTAG_RE.sub(
        lambda m: " " + _CAMEL_RE.sub(" ", m[1]).replace("_", " ").lower(), plain
    )
    if handles:
        plain = _HANDLE_RE.sub(" ", plain)
    return " ".join(fold_quotes(plain).split())


def posted_date(text: str) -> datetime | None:
    """The date of an embed signature ("— Name (@handle) January 14, 2020"), else None."""
    signature = _SIGNATURE_RE.search(text)
    if signature is None or not signature["date"]:
        return None
    found = _DATE_RE.search(signature["date"])
    if found is None:
        return None
    try:
        day = datetime.strptime(f"{found['month']} {found['day']} {found['year']}", "%B %d %Y")
    except ValueError:
        return None
    return day.replace(tzinfo=UTC)
