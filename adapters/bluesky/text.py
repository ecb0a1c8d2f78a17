"""Reply text: the approved links as link facets with short labels, within Bluesky's limits.

Links are link facets with UTF-8 byte offsets and short labels; only the URLs the guard
approved become links (lexicon `app.bsky.richtext.facet`). A reply over 300 graphemes or 3,000
bytes (lexicon `app.bsky.feed.post`, `maxGraphemes` / `maxLength`) is refused before any call.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

import regex
from atproto import client_utils

from adapters.base import PlatformError

MAX_GRAPHEMES = 300
MAX_BYTES = 3000
LINK_LABEL_MAX = 24  # graphemes, ellipsis included

# An approved link becomes a facet only when it is a whole absolute http(s) URI of printable
# ASCII (the lexicon's `uri` format); anything else stays plain text.
_LINKABLE = re.compile(r"https?://[\x21-\x7e]+", re.IGNORECASE)
# Characters that, right before an approved URL or after it (past sentence punctuation), would
# make it part of a longer URL-like token, hidden characters included: such an occurrence is not
# the URL the guard approved, so it is not linked.
_HIDDEN = r"\p{Cf}\p{Default_Ignorable_Code_Point}"
_BEFORE_LINK = rf"(?<![A-Za-z0-9+.\-_~/@%{_HIDDEN}])"
_AFTER_LINK = rf"(?![.,;:!?'\"*]*+[A-Za-z0-9\-_~/#?=&%@+${_HIDDEN}])"


class ReplyTooLong(PlatformError):
    """The reply exceeds Bluesky's 300 graphemes or 3,000 bytes even with short link labels."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def link_label(url: str) -> str:
    """A short visible label for a link facet: host and path, cut with an ellipsis."""
    label = re.sub(r"^https?://", "", url, flags=re.IGNORECASE)
    label = re.sub(r"^www\.", "", label, flags=re.IGNORECASE).rstrip("/")
    clusters = regex.findall(r"\X", label)
    if len(clusters) <= LINK_LABEL_MAX:
        return label
    return "".join(clusters[: LINK_LABEL_MAX - 1]) + "…"


def _split_urls(text: str, links: Collection[str]) -> Iterable[tuple[str, bool]]:
    """(piece, is_url) in order: the exact occurrences of `links` that stand alone, and the
    text between them. No URL is looked for here: finding links is the guard's job."""
    wanted = sorted({link for link in links if _LINKABLE.fullmatch(link)}, key=len, reverse=True)
    pos = 0
    if wanted:  # longest first, so a link that extends another is taken whole
        alternatives = "|".join(regex.escape(link) for link in wanted)
        for match in regex.finditer(rf"{_BEFORE_LINK}(?:{alternatives}){_AFTER_LINK}", text):
            if match.start() > pos:
                yield text[pos : match.start()], False
            yield match.group(), True
            pos = match.end()
    if pos < len(text):
        yield text[pos:], False


def reply_text_builder(text: str, links: Collection[str] = ()) -> Any:
    """The reply as a TextBuilder: the approved `links` become link facets with short labels.

    On Bluesky only a facet makes text a link (lexicon `app.bsky.richtext.facet`, feature
    `#link`: "Facet feature for a URL. The text URL may have been simplified or truncated, but
    the facet reference should be a complete URL"); clients do not auto-link plain text. So
    the links are exactly the URL strings the guard approved (`Decision.urls`), linked where
    they occur whole in `text`; any other URL-looking text, however a browser would read it,
    is sent as plain text.

    TextBuilder measures facets in UTF-8 bytes as it writes, so offsets stay right whatever
    precedes the link (accents, emoji, CJK). Raises ReplyTooLong over Bluesky's limits.
    """
    builder = client_utils.TextBuilder()
    for piece, is_url in _split_urls(text, links):
        if is_url:
            builder.link(link_label(piece), piece)
        else:
            builder.text(piece)
    final = builder.build_text()
    graphemes = len(regex.findall(r"\X", final))
    size = len(final.encode("utf-8"))
    if graphemes > MAX_GRAPHEMES or size > MAX_BYTES:
        raise ReplyTooLong(
            f"reply is {graphemes} graphemes / {size} bytes; Bluesky allows "
            f"{MAX_GRAPHEMES} / {MAX_BYTES}"
        )
    return builder
